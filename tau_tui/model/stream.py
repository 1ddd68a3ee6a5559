"""A streaming index of large results files: byte spans and row fields, not the parsed tree.

A results object (``{..., "simulations": [...]}``) or a bare list of
simulations, in any valid JSON layout (tau2's indent, one compact line, keys
in any order), is read once: each simulation is parsed in turn for its index
row (``SimEntry``) and its byte span is kept; the parsed tree is dropped.
``SpanSims`` stands where the list of raw simulations was: indexing it reads
one span back from the file and parses it, keeping a few parsed simulations
(an LRU). Memory is bounded by the index, not by the file.

Where each value ends is found by orjson itself (``_parse_value``), never by
assuming whitespace: strings, escapes and nesting are the parser's business.
A file that is not valid JSON, or whose shape is not one of the two above (a
wrapper, a hostile shape), is not streamed: ``open_streamed`` returns None and
``open_run`` reads it whole, with the same one-line errors as before. Files
smaller than ``$TAU_TUI_STREAM_BYTES`` (4 MiB) are read whole too.
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
_WS = re.compile(rb"[ \t\r\n]*")  # JSON's whitespace
_BOM = b"\xef\xbb\xbf"  # io.UTF8_BOM (this module does not import io)
_WS_BYTES = b" \t\r\n"
MIN_WINDOW = 64 * 1024  # bytes of the file orjson is first given to find where a value ends
FIRST_REPORT = 0.05  # seconds of indexing before the first rows are reported
_CUT_SHORT = 16  # an error this close to a window's end may be the window's: try a longer one
K = TypeVar("K")
V = TypeVar("V")


class GrowingRun(Protocol):
    """What this module needs of the run it fills (``io.RunFile``, which imports this module)."""

    layout: str
    entries: list[Any]

    def set_header(
        self, info: dict[str, Any], tasks: list[Any], timestamp: str | None, extra_top: dict[str, Any]
    ) -> None: ...


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


def _byte_offset(chunk: memoryview, chars: int) -> int:
    """The byte offset in ``chunk`` of character ``chars`` (orjson reports error positions in characters)."""
    if bytes(chunk[:chars]).isascii():
        return chars
    text = bytes(chunk[: 4 * chars]).decode("utf-8", "replace")
    return min(len(chunk), len(text[:chars].encode("utf-8")))


def _char_start(view: memoryview, end: int) -> int:
    """``end``, or the start of the UTF-8 character it falls inside (orjson refuses input that cuts one)."""
    for _ in range(3):
        if end >= len(view) or not 0x80 <= view[end] < 0xC0:
            break
        end -= 1
    return min(end, len(view))


def _parse_value(view: memoryview, pos: int, hint: int) -> tuple[int, Any] | None:
    """(end offset, parsed value) of the JSON value that starts at ``pos``; None where it is not valid JSON.

    orjson parses a window of the file from ``pos`` (``hint`` bytes, at least ``MIN_WINDOW``, cut where a
    character starts). Where the value is followed by more of the file, orjson stops at that content without
    building anything and says where; the prefix up to there is then parsed for the value. A value longer than
    the window fails cut short near the window's end and is tried again in a window four times as long.
    """
    size = len(view)
    window = max(hint, MIN_WINDOW)
    while True:
        chunk = view[pos : _char_start(view, pos + window)]
        try:
            value = orjson.loads(chunk)
        except orjson.JSONDecodeError as exc:
            at = _byte_offset(chunk, exc.pos)
        else:
            return pos + len(bytes(chunk).rstrip(_WS_BYTES)), value  # the value and whitespace fill the window
        try:
            value = orjson.loads(chunk[:at])
        except orjson.JSONDecodeError:
            if pos + window >= size or at < len(chunk) - _CUT_SHORT:
                return None  # invalid where the parser stopped, not cut short by the window
            window *= 4
            continue
        return pos + len(bytes(chunk[:at]).rstrip(_WS_BYTES)), value


def _parse_item(buf: Any, view: memoryview, pos: int, hint: int, marker: bytes | None) -> tuple[int, Any] | None:
    """``_parse_value`` of one array item, trying first the end an indented file's layout points at.

    In a file written with an indent each item ends at the first line that holds its closing brace at the
    item's own indentation (``marker``). That span is taken only if it parses as one JSON value, which it can
    only be if it is the whole item; else (compact, mixed or odd layouts) the item goes by ``_parse_value``.
    """
    if marker is not None:
        end = buf.find(marker, pos, pos + max(4 * hint, MIN_WINDOW))
        if end >= 0:
            end += len(marker)
            try:
                return end, orjson.loads(view[pos:end])
            except orjson.JSONDecodeError:
                pass
    return _parse_value(view, pos, 2 * hint)


class _Index:
    """One pass over a mapped results file: its top-level members and the spans of its simulations."""

    def __init__(
        self,
        buf: Any,
        view: memoryview,
        sims: SpanSims,
        index_entry: Callable[[int, Any], object],
        on_progress: Callable[[Any], None] | None,
        every: float,
    ) -> None:
        self.buf, self.view, self.sims = buf, view, sims
        self.index_entry, self.on_progress, self.every = index_entry, on_progress, every

    def items(self, run: GrowingRun, opened: int) -> int | None:
        """Index the simulations of the array opened at ``opened`` into ``run``; the offset of its ``]``, or
        None where the array is not one this reader streams (the whole-file reader then says why)."""
        buf, sims = self.buf, self.sims
        pos = _skip_ws(buf, opened + 1)
        if buf[pos : pos + 1] == b"]":
            return pos
        line = buf.rfind(b"\n", opened, pos)
        marker = b"\n" + bytes(buf[line + 1 : pos]) + b"}" if line >= 0 else None
        # The first rows go out after FIRST_REPORT (what a user waits for), the rest every ``every`` seconds.
        last_report, dropped, hint = time.monotonic() - self.every + min(FIRST_REPORT, self.every), 0, MIN_WINDOW
        while True:
            if buf[pos : pos + 1] != b"{":
                return None
            parsed = _parse_item(buf, self.view, pos, hint, marker)
            if parsed is None:
                return None
            end, raw = parsed
            hint = end - pos
            run.entries.append(self.index_entry(len(sims), raw))
            sims.starts.append(pos)
            sims.ends.append(end)
            if run.layout == "list" and len(sims) == 1 and not _first_is_tau2(raw):
                return None
            nxt = _skip_ws(buf, end)
            if buf[nxt : nxt + 1] == b"]":
                return nxt
            if buf[nxt : nxt + 1] != b",":
                return None
            pos = _skip_ws(buf, nxt + 1)
            if end - dropped > _DROP_EVERY and hasattr(buf, "madvise"):
                upto = end - end % mmap.PAGESIZE
                buf.madvise(mmap.MADV_DONTNEED, 0, upto)
                dropped = upto
            if self.on_progress is not None and time.monotonic() - last_report > self.every:
                self.on_progress(run)
                last_report = time.monotonic()

    def results(self, run_file: Callable[..., R], path: Path, opened: int) -> tuple[R, int] | None:
        """The run of the results object opened at ``opened`` and the offset of its ``}``; None where it is no
        results object (no simulations array, a wrapper) or not valid JSON."""
        buf, view = self.buf, self.view
        top: dict[str, Any] = {}
        run: R | None = None
        known = 0  # members in the run's header when its simulations were indexed
        pos = _skip_ws(buf, opened + 1)
        if buf[pos : pos + 1] == b"}":
            return None
        while True:
            key = _parse_value(view, pos, MIN_WINDOW)
            if key is None or not isinstance(key[1], str):
                return None
            pos = _skip_ws(buf, key[0])
            if buf[pos : pos + 1] != b":":
                return None
            pos = _skip_ws(buf, pos + 1)
            if key[1] == "simulations":
                if run is not None or buf[pos : pos + 1] != b"[":
                    return None  # a second array (the whole-file reader keeps the last) or no array at all
                run, known = _shell(run_file, path, top, self.sims), len(top)
                close = self.items(run, pos)
                if close is None:
                    return None
                pos = close + 1
            else:
                member = _parse_value(view, pos, MIN_WINDOW)
                if member is None:
                    return None
                pos, top[key[1]] = member
            pos = _skip_ws(buf, pos)
            if buf[pos : pos + 1] == b"}":
                break
            if buf[pos : pos + 1] != b",":
                return None
            pos = _skip_ws(buf, pos + 1)
        if run is None or "simulation_run" in top:
            return None
        if len(top) != known:  # members after the simulations (keys sorted, or written in another order)
            run.set_header(*_header_fields(top))
        return run, pos


def open_streamed(
    path: Path,
    run_file: Callable[..., R],
    index_entry: Callable[[int, Any], object],
    on_progress: Callable[[R], None] | None = None,
    every: float = 0.25,
) -> R | None:
    """The run of ``path`` indexed by streaming, or None when it is not a results object or a list of
    simulations in valid JSON (``open_run`` then reads it whole and reports its problems).

    ``run_file`` makes the run (``io.RunFile``) and ``index_entry(i, raw)`` its index rows (``io`` passes
    them: this module does not import it). ``on_progress(run)`` is called from this thread while the
    index grows (every ``every`` seconds) with the same run, its ``entries`` so far; members of the results
    object that come after its simulations reach the run (``set_header``) when they are read.
    """
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
            with memoryview(buf) as view:
                return _index(buf, view, path, signature, run_file, index_entry, on_progress, every)
        finally:
            buf.close()


def _index(
    buf: Any,
    view: memoryview,
    path: Path,
    signature: tuple[int, int],
    run_file: Callable[..., R],
    index_entry: Callable[[int, Any], object],
    on_progress: Callable[[R], None] | None,
    every: float,
) -> R | None:
    sims = SpanSims(path, signature)
    scan = _Index(buf, view, sims, index_entry, on_progress, every)
    first = _skip_ws(buf, len(_BOM) if buf[: len(_BOM)] == _BOM else 0)  # a byte-order mark (tau2-bench#375)
    opener = buf[first : first + 1]
    if opener == b"[":
        run = run_file(path, "list", sims, {}, [])
        close = scan.items(run, first)
    elif opener == b"{":
        found = scan.results(run_file, path, first)
        if found is None:
            return None
        run, close = found
    else:
        return None
    if close is None or _skip_ws(buf, close + 1) != len(buf):
        return None  # more after the top-level value: not JSON
    return run


def _first_is_tau2(raw: Any) -> bool:
    """A list whose first item looks like a tau2 simulation (tau-bench v1 and others go the whole-file way)."""
    return isinstance(raw, dict) and ("messages" in raw or "ticks" in raw) and "traj" not in raw


def _header_fields(top: dict[str, Any]) -> tuple[dict[str, Any], list[Any], str | None, dict[str, Any]]:
    """(info, tasks, timestamp, the other members) of a results object's top level, as the whole-file reader
    takes them."""
    info, tasks, timestamp = top.get("info"), top.get("tasks"), top.get("timestamp")
    extra = {k: v for k, v in top.items() if k not in ("timestamp", "info", "tasks", "simulations")}
    return (
        info if isinstance(info, dict) else {},
        tasks if isinstance(tasks, list) else [],
        timestamp if isinstance(timestamp, str) else None,
        extra,
    )


def _shell(run_file: Callable[..., R], path: Path, top: dict[str, Any], sims: SpanSims) -> R:
    """The ``RunFile`` of a streamed results object before its simulations are indexed (its entries grow in
    place), with the members read so far."""
    info, tasks, timestamp, extra = _header_fields(top)
    return run_file(path, "results", sims, info, tasks, timestamp=timestamp, extra_top=extra)
