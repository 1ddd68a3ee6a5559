"""Index many run files at once: every core, rows as they come, in the order of the files.

``index_files(paths, emit, workers)`` opens every path the way ``io.open_run``
does and tells ``emit`` (called from the calling thread) what it found:
``Growing(pos, run, count)`` while a file's index grows, then exactly one
``Loaded(pos, run)`` or ``Failed(pos, path, problem)`` per file. The first
event of file ``pos`` never comes before the first event of every file before
it, so a catalog that places files in the order it first hears of them keeps
the order of ``paths`` whichever worker finishes first.

With one worker (or one file, or a few small files: ``plan_workers``) the
files are opened here, one after the other, exactly as before. Otherwise
worker processes (``spawn``, never ``fork``: the TUI has threads) index them,
one file at a time each, and send back only the index of a file the streaming
reader accepts (``model.stream``: its header, byte spans and ``SimEntry``
rows, in chunks while a large file is read, and the header again at the end
when members follow its simulations; small files too, so the memory of this
process is bounded by the index, not by the files), or the whole ``RunFile``
of a file read whole (wrappers, run folders, other formats). While the workers start (about a second) this process indexes the
first files itself, so that the first rows come as soon as they would without
workers.

Each worker has its own pipe: one that dies (out of memory, killed) takes no
lock with it; the file it was indexing fails with a one-line error naming it,
and the others go on (in this process once no worker is left).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from tau_tui.model.io import RunFile, SimEntry
    from tau_tui.model.reviews import SimReview
    from tau_tui.model.runtime import Runtime
    from tau_tui.model.stream import SpanSims

# Less than this in all is indexed here: workers cost more than they save (the corpus, 45 MB: 0.8 s here, 1.1 s
# on workers; 50 files of 106 MB: 2.9 s here, 2.4 s on workers; benchmarks/index_files.py).
PARALLEL_MIN_BYTES = 64 * 1024**2
EVERY = 0.25  # seconds between the chunks of rows of a file being indexed
WAIT = 0.25  # how often a wait for the workers checks for cancellation
SPAWN_AFTER = 0.3  # seconds the thread here indexes alone before the workers are started


@dataclass
class Growing:
    """File ``pos``'s index so far: ``run.entries[:count]`` (the same ``run`` grows until it is ``Loaded``)."""

    pos: int
    run: RunFile
    count: int


@dataclass
class Loaded:
    pos: int
    run: RunFile


@dataclass
class Failed:
    pos: int
    path: Path
    problem: str  # without the path (``RunFileError.problem``)


Event = Growing | Loaded | Failed


def _size(path: Path) -> int:
    """Bytes to index under ``path`` (a run folder: its simulation files); 0 when it cannot be read."""
    try:
        if not path.is_dir():
            return os.stat(path).st_size
        total = 0
        for part in (path, path / "simulations"):
            with os.scandir(part) as entries:
                total += sum(e.stat().st_size for e in entries if e.name.endswith(".json") and e.is_file())
        return total
    except OSError:
        return 0


def default_workers() -> int:
    """One worker process per core (none on one core): the settings' ``index_workers`` when it is not set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores if cores > 1 else 0


def plan_workers(paths: Sequence[Path], workers: int | None = None, min_bytes: int | None = None) -> int:
    """Worker processes worth starting for ``paths`` (at most ``workers``, default ``default_workers()``):
    0, all in this process, for one file, few bytes in all, or one core."""
    workers = default_workers() if workers is None else workers
    if workers < 1 or len(paths) < 2:
        return 0
    if len({str(p) for p in paths}) < len(paths):
        return 0  # the same file twice: in order, here, as before
    total = sum(_size(Path(p)) for p in paths)
    if total < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes):
        return 0
    return min(workers, len(paths))


def index_files(
    paths: Sequence[Path | str],
    emit: Callable[[Event], None],
    workers: int = 0,
    cancelled: Callable[[], bool] = lambda: False,
    every: float = EVERY,
) -> bool:
    """Index ``paths`` on ``workers`` processes (0: here, one after the other) and tell ``emit`` (see the
    module's doc); False when ``cancelled()`` stopped it."""
    files = [Path(p) for p in paths]
    if workers < 1 or len(files) < 2:
        for pos, path in enumerate(files):
            if cancelled():
                return False

            def progress(run: RunFile, pos: int = pos) -> None:
                emit(Growing(pos, run, len(run.entries)))

            emit(_open_here(pos, path, progress, every))
        return True
    return _Coordinator(files, emit, workers, cancelled, every).run()


def _open_here(
    pos: int,
    path: Path,
    on_progress: Callable[[RunFile], None] | None,
    every: float = EVERY,
    spans_for_small: bool = False,
) -> Event:
    """``open_run`` of one path as one event (``Loaded`` or ``Failed``); ``spans_for_small``: a small
    results file is indexed by its spans too (what the workers do)."""
    from tau_tui.model.io import RunFileError, open_run

    try:
        run = _open_spans(path, on_progress, every) if spans_for_small else None
        if run is None:  # read whole (a streaming attempt already made reports no second, different progress)
            run = open_run(path, on_progress=None if spans_for_small else on_progress)
    except RunFileError as exc:
        return Failed(pos, path, exc.problem)
    except Exception as exc:  # noqa: BLE001 - one unreadable file never stops the others
        return Failed(pos, path, f"unreadable ({type(exc).__name__}: {exc})")
    return Loaded(pos, run)


def _open_spans(path: Path, on_progress: Callable[[RunFile], None] | None, every: float) -> RunFile | None:
    """The streamed index of ``path`` whatever its size, or None where ``open_run`` would not stream it."""
    import stat

    from tau_tui.model.io import RUN_OPENERS, RunFile, RunFileError, max_read_bytes
    from tau_tui.model.io.runfile import _index_entry
    from tau_tui.model.stream import FileChanged, open_streamed

    if path.suffix.lower() in RUN_OPENERS or (path.name == "results.json" and (path.parent / "simulations").is_dir()):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_read_bytes():
        return None
    from tau_tui.model.reviews import read_review

    reviews: dict[int, SimReview] = {}

    def entry(i: int, raw: Any) -> SimEntry:  # the row, and its review fields while the simulation is parsed
        row = _index_entry(i, raw)
        if row.reviewed:
            reviews[i] = read_review(raw)
        return row

    def progress(run: RunFile) -> None:
        _spans(run).reviews = reviews  # before its rows are shown
        if on_progress is not None:
            on_progress(run)

    try:
        run = open_streamed(path, RunFile, entry, progress, every)
    except FileChanged as exc:
        raise RunFileError(path, str(exc)) from None
    if run is not None:
        _spans(run).reviews = reviews
    return run


def _spans(run: RunFile) -> SpanSims:
    """The spans of a streamed run (``model.stream``)."""
    from tau_tui.model.stream import SpanSims

    assert isinstance(run.raw_sims, SpanSims), "a streamed run holds spans"
    return run.raw_sims


# --- worker processes --------------------------------------------------------------------------------------------
def _head(run: RunFile) -> dict[str, Any]:
    """What rebuilds a streamed run's shell in another process (its spans and rows come in chunks)."""
    return {
        "path": str(run.path),
        "layout": run.layout,
        "info": run.raw_info,
        "tasks": run.raw_tasks,
        "timestamp": run.timestamp,
        "extra_top": run.extra_top,
        "signature": _spans(run).signature,
    }


def _worker_main(conn: Connection, every: float, limits: Runtime | None = None) -> None:
    """A worker process: index the files it is sent, one at a time, and send back their index; ``limits``: the
    spawning process's ``model.runtime`` values (this process reads files as it does)."""
    from tau_tui.model import runtime

    if limits is not None:
        runtime.restore(limits)
    try:
        conn.send(("ready", os.getpid()))
        while True:
            task = conn.recv()
            if task is None:
                return
            pos, raw_path = task
            _send_index(conn, pos, Path(raw_path), every)  # its run is dropped before the next file comes
    except (EOFError, OSError):  # the TUI quit or gave up on this worker: its pipe is gone, nothing to say
        return


def _send_index(conn: Connection, pos: int, path: Path, every: float) -> None:
    """Index file ``pos`` and send it: a streamed file's rows in chunks as they grow, any other run whole."""
    from tau_tui.model.stream import SpanSims

    sent = 0
    first_head: dict[str, Any] | None = None

    def chunk(run: RunFile, final: bool, warnings: list[str]) -> None:
        nonlocal sent, first_head
        have = len(run.entries)
        sims = _spans(run)
        reviews = {i: sims.reviews[i] for i in range(sent, have) if i in sims.reviews}
        head: dict[str, Any] | None = _head(run)
        if first_head is None:
            first_head = head
        elif not final or head == first_head:
            head = None  # sent with the first chunk; the last one sends it again if members came after the rows
        conn.send(
            (
                "rows",
                pos,
                head,
                run.entries[sent:have],
                sims.starts[sent:have].tobytes(),
                sims.ends[sent:have].tobytes(),
                reviews,
                final,
                warnings,
            )
        )
        sent = have

    event = _open_here(pos, path, lambda run: chunk(run, False, []), every, spans_for_small=True)
    if isinstance(event, Failed):
        conn.send(("failed", pos, event.problem))
    elif isinstance(event.run.raw_sims, SpanSims):
        chunk(event.run, True, list(event.run.warnings))
    else:
        try:
            conn.send(("whole", pos, event.run))
        except Exception:  # noqa: BLE001 - a run that does not pickle is opened by the parent itself
            conn.send(("here", pos))


@dataclass
class _Proc:
    process: BaseProcess
    conn: Connection
    ready: bool = False
    task: int | None = None  # the position of the file it is indexing
    alive: bool = True


@dataclass
class _Order:
    """Passes events on so that file ``pos`` first appears only after every file before it has."""

    emit: Callable[[Event], None]
    next_pos: int = 0
    waiting: dict[int, list[Event]] = field(default_factory=dict)

    def put(self, event: Event) -> None:
        if event.pos < self.next_pos:
            self.emit(event)
            return
        self.waiting.setdefault(event.pos, []).append(event)
        while self.next_pos in self.waiting:
            for held in self.waiting.pop(self.next_pos):
                self.emit(held)
            self.next_pos += 1


class _Coordinator:
    """Hands files to worker processes (and to a thread here while they start) and orders what comes back."""

    BRIDGE = True  # index files in this process while the workers start (and when none is left)
    wake_r: Connection  # the pipe that wakes ``run``'s wait when the thread here has an event (made by ``run``)
    wake_w: Connection

    def __init__(
        self,
        paths: list[Path],
        emit: Callable[[Event], None],
        workers: int,
        cancelled: Callable[[], bool],
        every: float,
    ):
        self.paths = paths
        self.order = _Order(emit)
        self.workers = workers
        self.cancelled = cancelled
        self.every = every
        self.todo: deque[int] = deque(range(len(paths)))
        self.lock = threading.Lock()
        self.finished: set[int] = set()
        self.building: dict[int, RunFile] = {}  # streamed runs rebuilt from a worker's chunks
        self.procs: list[_Proc] = []
        self.any_ready = threading.Event()
        self.stop = threading.Event()
        self.local_events: queue.Queue[Event | None] = queue.Queue()  # None: the thread here is done
        self.local: threading.Thread | None = None

    # the thread of this process: indexes files until a worker is ready (or when none is left)
    def _take(self) -> int | None:
        with self.lock:
            return self.todo.popleft() if self.todo else None

    def _local_loop(self) -> None:
        pos = None
        try:
            while not self.stop.is_set() and not (self.any_ready.is_set() and any(p.alive for p in self.procs)):
                pos = self._take()
                if pos is None:
                    break

                def progress(run: RunFile, pos: int = pos) -> None:
                    self._local_put(Growing(pos, run, len(run.entries)))

                self._local_put(_open_here(pos, self.paths[pos], progress, self.every, spans_for_small=True))
                pos = None
        except BaseException as exc:  # noqa: BLE001 - its file fails in one line; the coordinator never waits for it
            if pos is not None:
                self.local_events.put(Failed(pos, self.paths[pos], f"not indexed ({type(exc).__name__}: {exc})"))
        finally:
            self.local_events.put(None)
            try:
                self.wake_w.send_bytes(b"")
            except OSError:
                pass

    def _local_put(self, event: Event) -> None:
        self.local_events.put(event)
        try:
            self.wake_w.send_bytes(b"")
        except OSError:
            pass

    def _start_local(self) -> None:
        if self.local is None or not self.local.is_alive():
            self.local = threading.Thread(target=self._local_loop, name="index files", daemon=True)
            self.local.start()

    # --- the workers
    def _spawn(self) -> None:
        import multiprocessing

        from tau_tui.model import runtime

        ctx = multiprocessing.get_context("spawn")
        streams = sys.stdout, sys.stderr  # the TUI replaces them: children get the real ones
        sys.stdout, sys.stderr = sys.__stdout__ or streams[0], sys.__stderr__ or streams[1]
        try:
            for _ in range(self.workers):
                parent, child = ctx.Pipe()
                process = ctx.Process(
                    target=_worker_main, args=(child, self.every, runtime.current()), daemon=True, name="tau-tui index"
                )
                process.start()
                child.close()
                self.procs.append(_Proc(process, parent))
        finally:
            sys.stdout, sys.stderr = streams

    def _try_spawn(self) -> None:
        try:
            self._spawn()
        except Exception:  # noqa: BLE001 - no processes to be had: this process does it all
            for proc in self.procs:
                proc.process.kill()
            self.procs = []

    def _give(self, proc: _Proc) -> None:
        pos = self._take()
        proc.task = pos
        try:
            proc.conn.send((pos, str(self.paths[pos])) if pos is not None else None)
        except OSError:
            self._died(proc)

    def _finish(self, event: Event) -> None:
        self.finished.add(event.pos)
        self.building.pop(event.pos, None)
        self.order.put(event)

    def _died(self, proc: _Proc) -> None:
        if not proc.alive:
            return
        proc.alive = False
        proc.conn.close()
        proc.process.join(0.1)
        pos, proc.task = proc.task, None
        if pos is not None and pos not in self.finished:
            code = proc.process.exitcode
            self._finish(
                Failed(
                    pos,
                    self.paths[pos],
                    "not indexed: the process indexing it died "
                    f"({'exit code ' + str(code) if code is not None else 'killed'}; out of memory?)",
                )
            )

    def _receive(self, proc: _Proc) -> None:
        try:
            message = proc.conn.recv()
        except Exception:  # noqa: BLE001 - EOF, or a message cut short by the worker's death
            self._died(proc)
            return
        kind = message[0]
        if kind == "ready":
            proc.ready = True
            self.any_ready.set()
            self._give(proc)
            return
        pos = message[1]
        if kind == "rows":
            self._rows(pos, *message[2:])
            if message[7]:
                self._give(proc)
            return
        if kind == "whole":
            self._finish(Loaded(pos, message[2]))
        elif kind == "failed":
            self._finish(Failed(pos, self.paths[pos], message[2]))
        else:  # "here": the worker's run would not travel; open it in this process
            self._finish(_open_here(pos, self.paths[pos], None))
        self._give(proc)

    def _rows(
        self,
        pos: int,
        head: dict[str, Any] | None,
        entries: list[SimEntry],
        starts: bytes,
        ends: bytes,
        reviews: dict[int, SimReview],
        final: bool,
        warnings: list[str],
    ) -> None:
        from array import array

        from tau_tui.model.io import RunFile
        from tau_tui.model.stream import SpanSims

        run = self.building.get(pos)
        if run is not None and head is not None:  # the file's members after its simulations
            run.set_header(head["info"], head["tasks"], head["timestamp"], head["extra_top"])
        elif run is None:
            assert head is not None
            sims = SpanSims(Path(head["path"]), tuple(head["signature"]))
            run = RunFile(
                Path(head["path"]),
                head["layout"],
                sims,
                head["info"],
                head["tasks"],
                timestamp=head["timestamp"],
                extra_top=head["extra_top"],
            )
            self.building[pos] = run
        sims = _spans(run)
        sims.reviews.update(reviews)
        more_starts, more_ends = array("q"), array("q")
        more_starts.frombytes(starts)
        more_ends.frombytes(ends)
        sims.starts.extend(more_starts)
        sims.ends.extend(more_ends)
        run.entries.extend(entries)
        if final:
            run.warnings.extend(warnings)
            self._finish(Loaded(pos, run))
        else:
            self.order.put(Growing(pos, run, len(run.entries)))

    # --- the loop
    def run(self) -> bool:
        from multiprocessing import Pipe
        from multiprocessing.connection import wait

        self.wake_r, self.wake_w = Pipe(duplex=False)
        try:
            # With the bridge, the thread here starts on the first files at once and the workers SPAWN_AFTER
            # that: booting them competes for the cores with the front end drawing its first rows.
            spawned, local_done = False, True
            if self.BRIDGE:
                self._start_local()
                local_done = False
            spawn_at = time.monotonic() + (SPAWN_AFTER if self.BRIDGE else 0.0)
            while len(self.finished) < len(self.paths):
                if self.cancelled():
                    return False
                if not spawned and time.monotonic() >= spawn_at:
                    spawned = True
                    if self.todo:
                        self._try_spawn()
                    if local_done and self.todo and not self.procs:
                        local_done = False
                        self._start_local()  # no processes to be had: this process does it all
                timeout = WAIT if spawned else max(0.0, min(WAIT, spawn_at - time.monotonic()))
                waits = [self.wake_r] + [x for p in self.procs if p.alive for x in (p.conn, p.process.sentinel)]
                for ready in wait(waits, timeout=timeout):
                    if ready is self.wake_r:
                        self.wake_r.recv_bytes()
                        continue
                    proc = next((p for p in self.procs if p.alive and ready in (p.conn, p.process.sentinel)), None)
                    if proc is None:
                        continue
                    if ready is proc.conn:
                        self._receive(proc)
                    else:  # the process ended: what it sent first still counts
                        while proc.alive and _poll(proc.conn):
                            self._receive(proc)
                        self._died(proc)
                while True:
                    try:
                        event = self.local_events.get_nowait()
                    except queue.Empty:
                        break
                    if event is None:
                        local_done = True
                    elif isinstance(event, Growing):
                        self.order.put(event)
                    else:
                        self._finish(event)
                if spawned and local_done and self.todo and not any(p.alive for p in self.procs):
                    local_done = False
                    self._start_local()  # no worker left: this process does the rest
            return True
        finally:
            self.stop.set()
            self._close()

    def _close(self) -> None:
        for proc in self.procs:
            if proc.alive:
                try:
                    proc.conn.send(None)
                except OSError:
                    pass
        for proc in self.procs:
            proc.process.join(0.5 if proc.task is None else 0)
            if proc.process.is_alive():
                proc.process.kill()
                proc.process.join(1)
            if proc.alive:
                proc.conn.close()
        self.wake_r.close()
        if self.local is None or not self.local.is_alive():
            self.wake_w.close()  # else the thread here is still on a file (cancelled): it stops after it


def _poll(conn: Connection) -> bool:
    try:
        return conn.poll()
    except (OSError, EOFError):
        return False
