"""A streaming index of large results files: byte spans and row fields, not the parsed tree.

A results object (``{..., "simulations": [...]}``) or a bare list of
simulations, written with one item per indented block as tau2 (and every JSON
writer with an indent) does, is read once: each simulation is parsed in turn
for its index row (``SimEntry``) and its byte span is kept; the parsed tree is
dropped. ``SpanSims`` stands where the list of raw simulations was: indexing
it reads one span back from the file and parses it, keeping a few parsed
simulations (an LRU). Memory is bounded by the index, not by the file.

A file whose layout this reader does not recognise (compact JSON, a hostile
shape) is not streamed: ``open_streamed`` returns None and ``open_run`` reads
it whole, with the same one-line errors as before. Files smaller than
``$TAU_TUI_STREAM_BYTES`` (4 MiB) are read whole too.
"""

from __future__ import annotations

import mmap
import os
import re
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, TypeVar, overload

import orjson

KEEP_PARSED = 32  # parsed raw simulations kept per file
_DROP_EVERY = 64 * 1024**2  # give back the pages of the mapping already indexed, every so many bytes
_WS = re.compile(rb"[ \t\r\n]*")
_BOM = b"\xef\xbb\xbf"  # io.UTF8_BOM (this module does not import io)
K = TypeVar("K")
V = TypeVar("V")


class GrowingRun(Protocol):
    """What this module needs of the run it fills (``io.RunFile``, which imports this module)."""

    layout: str
    entries: list[Any]


R = TypeVar("R", bound=GrowingRun)


def stream_threshold() -> int:
    """Files at least this big are indexed by streaming (the settings' ``stream_bytes``, 4 MiB by default)."""
    from tau_tui.model import runtime

    return runtime.current().stream_bytes


class LRU(OrderedDict[K, V]):
    """A bounded mapping that forgets the least recently used entry (thread-safe get/put)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        super().__init__()

    def get_recent(self, key: K) -> V | None:
        with self.lock:
            value = OrderedDict.get(self, key)
            if value is not None:
                self.move_to_end(key)
            return value

    def __setitem__(self, key: K, value: V) -> None:
        with self.lock:
            OrderedDict.__setitem__(self, key, value)
            self.move_to_end(key)
            while len(self) > self.size:
                self.popitem(last=False)


class FileChanged(OSError):
    """The file changed on disk since it was indexed (its spans no longer point at simulations)."""


class SpanSims(Sequence[Any]):
    """The raw simulations of a streamed file: byte spans read and parsed on demand."""

    indexed_lazily = True

    def __init__(self, path: Path, signature: tuple[int, int]) -> None:
        self.path = path
        self.signature = signature  # (size, mtime_ns) when indexed
        self.starts = array("q")
        self.ends = array("q")
        self.reviews: dict[int, Any] = {}  # index → its review fields, when the indexer read them (model.indexing)
        self._parsed: LRU[int, Any] = LRU(KEEP_PARSED)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_parsed"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._parsed = LRU(KEEP_PARSED)

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        cached = self._parsed.get_recent(index)
        if cached is None:
            cached = orjson.loads(self.raw_bytes(index))
            self._parsed[index] = cached
        return cached

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def raw_bytes(self, index: int) -> bytes:
        """The JSON text of simulation ``index``, as the file holds it."""
        start, end = self.starts[index], self.ends[index]
        with open(self.path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if (info.st_size, info.st_mtime_ns) != self.signature:
                raise FileChanged("changed on disk since it was read; reload it")
            return os.pread(handle.fileno(), end - start, start)


def _signature(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


def _skip_ws(buf: Any, pos: int) -> int:
    match = _WS.match(buf, pos)
    return match.end() if match else pos


def _header(buf: Any) -> tuple[dict[str, Any] | None, int, int] | None:
    """(top-level object without its simulations or None for a list, array '[' offset, array ']' offset).

    A UTF-8 byte-order mark before the JSON (tau2-bench#375) is skipped."""
    start = len(_BOM) if buf[: len(_BOM)] == _BOM else 0
    first = _skip_ws(buf, start)
    opener = buf[first : first + 1]
    if opener == b"[":
        close = buf.rfind(b"]")
        return None, first, close
    if opener != b"{":
        return None
    key = re.compile(rb"\{\r?\n([ \t]+)\"").match(buf, first)
    if key is None:
        return None
    indent = key.group(1)
    found = re.compile(rb"\n" + re.escape(indent) + rb"\"simulations\": ?\[").search(buf, first)
    if found is None:
        return None
    opened = found.end() - 1
    after = _skip_ws(buf, opened + 1)
    if buf[after : after + 1] == b"]":
        close = after
    else:
        close = buf.rfind(b"\n" + indent + b"]", opened)  # from the end: the pages between are not touched
        if close < 0:
            return None
        close += len(indent) + 1
    try:
        top = orjson.loads(buf[start:opened] + b"[]" + buf[close + 1 :])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(top, dict) or top.get("simulations") != [] or "simulation_run" in top:
        return None
    return top, opened, close


def open_streamed(
    path: Path,
    run_file: Callable[..., R],
    index_entry: Callable[[int, Any], object],
    on_progress: Callable[[R], None] | None = None,
    every: float = 0.25,
) -> R | None:
    """The run of ``path`` indexed by streaming, or None when its layout is not one this reader knows.

    ``run_file`` makes the run (``io.RunFile``) and ``index_entry(i, raw)`` its index rows (``io`` passes
    them: this module does not import it). ``on_progress(run)`` is called from this thread while the
    index grows (every ``every`` seconds) with the same run, its ``entries`` so far; ``open_run`` reports
    the problems of a file this reader leaves to it.
    """
    RunFile, _index_entry = run_file, index_entry
    try:
        signature = _signature(path)
        handle = open(path, "rb")
    except OSError:
        return None
    with handle:
        if signature[0] == 0:
            return None
        try:
            buf = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        try:
            head = _header(buf)
            if head is None:
                return None
            top, opened, close = head
            sims = SpanSims(path, signature)
            run = _shell(RunFile, path, top, sims)
            pos = _skip_ws(buf, opened + 1)
            if pos >= close:
                return run
            line = buf.rfind(b"\n", opened, pos)
            if line < 0:
                return None  # compact: not streamable
            end_marker = b"\n" + bytes(buf[line + 1 : pos]) + b"}"
            last_report, dropped = time.monotonic(), 0
            while True:
                if buf[pos : pos + 1] != b"{":
                    return None
                end = buf.find(end_marker, pos, close)
                if end < 0:
                    return None
                end += len(end_marker)
                try:
                    raw = orjson.loads(buf[pos:end])
                except orjson.JSONDecodeError:
                    return None
                run.entries.append(_index_entry(len(sims), raw))
                sims.starts.append(pos)
                sims.ends.append(end)
                if run.layout == "list" and len(sims) == 1 and not _first_is_tau2(raw):
                    return None
                nxt = _skip_ws(buf, end)
                if nxt == close:
                    break
                if buf[nxt : nxt + 1] != b",":
                    return None
                pos = _skip_ws(buf, nxt + 1)
                if end - dropped > _DROP_EVERY and hasattr(buf, "madvise"):
                    upto = end - end % mmap.PAGESIZE
                    buf.madvise(mmap.MADV_DONTNEED, 0, upto)
                    dropped = upto
                if on_progress is not None and time.monotonic() - last_report > every:
                    on_progress(run)
                    last_report = time.monotonic()
        finally:
            buf.close()
    return run


def _first_is_tau2(raw: Any) -> bool:
    """A list whose first item looks like a tau2 simulation (tau-bench v1 and others go the whole-file way)."""
    return isinstance(raw, dict) and "messages" in raw and "traj" not in raw


def _shell(run_file: Callable[..., R], path: Path, top: dict[str, Any] | None, sims: SpanSims) -> R:
    """The ``RunFile`` of a streamed file before its simulations are indexed (its entries grow in place)."""
    if top is None:
        return run_file(path, "list", sims, {}, [])
    info, tasks = top.get("info"), top.get("tasks")
    extra = {k: v for k, v in top.items() if k not in ("timestamp", "info", "tasks", "simulations")}
    return run_file(
        path,
        "results",
        sims,
        info if isinstance(info, dict) else {},
        tasks if isinstance(tasks, list) else [],
        timestamp=top.get("timestamp") if isinstance(top.get("timestamp"), str) else None,
        extra_top=extra,
    )
