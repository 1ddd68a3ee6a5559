"""The runs table's background replay: what to replay next, and where.

``ReplayQueue`` is the pure scheduler: simulations queued by load generation (a reload starts a new
one and the old entries are dropped as they come up), the rows on screen first, each row replayed once
per generation. ``BackgroundReplay`` drains it in batches on a thread of the front end's: a pool's
worth of simulations read from files goes to worker processes (``pool.Executor``, every core); the rest
(runs this session wrote, runs a judge was asked about, small loads) are replayed in this process.
Answers come out in time-boxed batches so that a burst reaches the screen as one refresh.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from typing import TYPE_CHECKING, Callable, Iterator

from tau_tui.catalog.summaries import Summaries
from tau_tui.model.heap import keep_long_lived
from tau_tui.model.io import error_text
from tau_tui.session.events import ReplayOutcome

if TYPE_CHECKING:
    from tau_tui.catalog import RunRow
    from tau_tui.session.replay_service import ReplayService
    from tau_tui.workers.pool import UnitExecutor

PRIORITY_ROWS = 120  # rows on screen and just below, replayed first
POOL_BATCH = 32  # simulations per worker process handed out at a time (the queue's priorities apply between)
BATCH_SECONDS = 0.1  # answers are handed on at least this often
SETTLE_AFTER = 200  # rows replayed since the heap was last settled that make settling it worth it

Item = tuple[int, "RunRow"]  # (load generation, row)


class ReplayQueue:
    """Simulations waiting for the background replay, in order: prioritised rows first, then as queued.

    The front end's thread puts and prioritises, the replay thread takes (``deque`` appends and pops are
    atomic); a row is handed out once per generation.
    """

    def __init__(self) -> None:
        self.generation = 0
        self._queue: deque[Item] = deque()
        self._first: deque[Item] = deque()
        self._handed_out: set[tuple[int, str]] = set()

    def new_generation(self) -> int:
        """A reload: what was queued before is dropped as it comes up, and every row may be replayed again."""
        self.generation += 1
        self._handed_out.clear()
        self._first.clear()
        return self.generation

    def put(self, rows: list[RunRow]) -> None:
        self._queue.extend((self.generation, row) for row in rows)

    def again(self, rows: list[RunRow]) -> None:
        """Replay these rows again in this generation (a live run's simulations that changed)."""
        for row in rows:
            self._handed_out.discard((self.generation, row.key))
        self.put(rows)

    def prioritize(self, rows: list[RunRow], limit: int = PRIORITY_ROWS) -> None:
        """Replay these rows (the ones on screen) before the rest, in their order; rows done already are skipped."""
        for row in reversed(rows[:limit]):
            if row.replay is None and row.replay_error is None:
                self._first.appendleft((self.generation, row))

    @property
    def waiting(self) -> bool:
        return bool(self._queue) or bool(self._first)

    def take(self, size: int) -> list[Item]:
        """Up to ``size`` rows of this generation not handed out yet, in order."""
        items: list[Item] = []
        while len(items) < size:
            item = self._next()
            if item is None:
                break
            self._handed_out.add((item[0], item[1].key))
            items.append(item)
        return items

    def _next(self) -> Item | None:
        while True:
            if self._first:
                item = self._first.popleft()
            elif self._queue:
                item = self._queue.popleft()
            else:
                return None
            generation, row = item
            if generation == self.generation and (generation, row.key) not in self._handed_out:
                return item


class BackgroundReplay:
    """Drains a ``ReplayQueue`` (one thread at a time): here, or on worker processes when it is worth it."""

    def __init__(
        self,
        queue: ReplayQueue,
        service: ReplayService,
        workers: int,
        executor: Callable[[int], UnitExecutor],
        may_pool: Callable[[RunRow], bool],
        enabled: bool = True,
    ):
        """``workers``: processes to use (1: this process only); ``executor(workers)`` starts them when first
        needed; ``may_pool(row)``: whether a worker process may replay the row (it reads the file itself);
        ``enabled``: False never starts (what is measured or tested is not the replay)."""
        self.enabled = enabled
        self.queue = queue
        self.service = service
        self.workers = workers
        self._make_executor = executor
        self._executor: UnitExecutor | None = None
        self.may_pool = may_pool
        self.running = False  # a thread is draining the queue (set by whoever starts one)
        self._unsettled = 0

    def claim_start(self, loading: bool) -> bool:
        """Whether to start a draining thread now (work waits, none runs, files are indexed); claims it if so."""
        if self.enabled and self.queue.waiting and not self.running and not loading:
            self.running = True
            return True
        return False

    def batches(
        self, cancelled: Callable[[], bool], warn: Callable[[str], None]
    ) -> Iterator[tuple[int, list[ReplayOutcome]]]:
        """(generation, outcomes) batches until the queue is empty or ``cancelled()``; ``warn``: a one-line
        notice (the worker processes failed and replay goes on in this process)."""
        batch: list[ReplayOutcome] = []
        batch_generation = self.queue.generation
        last = time.monotonic()
        replayed = 0
        while not cancelled():
            items = self.queue.take(POOL_BATCH * self.workers if self.workers > 1 else 1)
            if not items:
                break
            for (generation, row), summaries in self._summarize(items, warn):
                if cancelled():
                    break
                replayed += 1
                if generation != batch_generation and batch:
                    yield batch_generation, batch
                    batch = []
                batch_generation = generation
                batch.append(ReplayOutcome(row.key, summaries))
                if time.monotonic() - last > BATCH_SECONDS:
                    yield batch_generation, batch
                    batch, last = [], time.monotonic()
        if batch:
            yield batch_generation, batch
        self._unsettled += replayed
        if self._unsettled >= SETTLE_AFTER and not cancelled():
            keep_long_lived(collect=True)
            self._unsettled = 0

    def _local(self, item: Item) -> tuple[Item, Summaries]:
        row = item[1]
        summaries = self.service.summarize(row.run, row.index)
        row.haystack()  # index the text for search while we are here, off the UI thread
        return item, summaries

    def _summarize(self, items: list[Item], warn: Callable[[str], None]) -> Iterator[tuple[Item, Summaries]]:
        """(item, Summaries) for each item, in order: on worker processes when enough can go there."""
        from tau_tui.workers.pool import POOL_MIN, Unit

        remote = [item for item in items if self.may_pool(item[1])]
        if not remote or self.workers == 1 or (self._executor is None and len(remote) < POOL_MIN):
            yield from map(self._local, items)
            return
        try:
            if self._executor is None:
                self._executor = self._make_executor(self.workers)
            done = self._executor.map(Unit(str(row.path), row.index) for _, row in remote)
            first = next(done)
        except (OSError, ValueError, RuntimeError) as exc:  # no worker processes here: replay in this one
            self._one_process(warn, exc)
            yield from map(self._local, items)
            return
        answers = itertools.chain([first], done)
        for position, item in enumerate(items):
            if not self.may_pool(item[1]):
                yield self._local(item)
                continue
            try:
                outcome = next(answers)
            except RuntimeError as exc:  # the workers stopped (closing) or one died: finish here
                if self._executor is None:
                    return
                self._one_process(warn, exc)
                yield from map(self._local, items[position:])
                return
            if outcome.haystack is not None:
                item[1].set_haystack(outcome.haystack)
            yield item, outcome.summaries if outcome.summaries is not None else Summaries(error=outcome.error)

    def _one_process(self, warn: Callable[[str], None], exc: Exception) -> None:
        self.workers = 1
        warn(f"background replay in one process ({error_text(exc)})")

    def close(self) -> None:
        """Stop the worker processes (a thread still draining finishes in this process)."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None
