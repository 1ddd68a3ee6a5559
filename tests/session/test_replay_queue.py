"""The background replay's scheduler, headless: generations, on-screen priority, batches, where it runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from tau_tui.catalog.summaries import Summaries
from tau_tui.session.replay_queue import BackgroundReplay, Item, ReplayQueue
from tau_tui.workers.pool import Unit

if TYPE_CHECKING:
    from tau_tui.catalog import RunRow
    from tau_tui.session.replay_service import ReplayService
    from tau_tui.workers.pool import UnitExecutor


@dataclass
class Row:
    """What the queue reads of a runs-table row."""

    key: str
    replay: object = None
    replay_error: str | None = None
    path: Path = Path("f.json")
    index: int = 0
    sim_id: str = ""
    haystacked: list[str] = field(default_factory=list)

    @property
    def run(self) -> str:
        return "run"

    def haystack(self) -> str:
        self.haystacked.append("here")
        return ""

    def set_haystack(self, text: str) -> None:
        self.haystacked.append(text)


def as_rows(rows: list[Row]) -> list[RunRow]:
    """The stand-in rows as the queue takes them (it reads only what ``Row`` has)."""
    return cast("list[RunRow]", rows)


def keys(items: list[Item]) -> list[str]:
    return [row.key for _, row in items]


def test_rows_come_out_in_order_once_per_generation() -> None:
    queue = ReplayQueue()
    queue.new_generation()
    rows = [Row(k) for k in "abcd"]
    queue.put(as_rows(rows))
    queue.put(as_rows(rows[:2]))  # queued twice: handed out once
    assert keys(queue.take(3)) == ["a", "b", "c"]
    assert keys(queue.take(10)) == ["d"] and not queue.waiting


def test_rows_on_screen_go_first_unless_already_derived() -> None:
    queue = ReplayQueue()
    queue.new_generation()
    rows = [Row(k) for k in "abcdef"]
    rows[4].replay = "done"
    queue.put(as_rows(rows))
    queue.prioritize(as_rows([rows[5], rows[4], rows[3]]))
    assert keys(queue.take(2)) == ["f", "d"]
    assert keys(queue.take(10)) == ["a", "b", "c", "e"]


def test_a_reload_drops_what_the_old_generation_queued_and_allows_every_row_again() -> None:
    queue = ReplayQueue()
    queue.new_generation()
    old = [Row(k) for k in "ab"]
    queue.put(as_rows(old))
    assert keys(queue.take(1)) == ["a"]
    generation = queue.new_generation()
    queue.put(as_rows([Row("a"), Row("c")]))
    taken = queue.take(10)
    assert keys(taken) == ["a", "c"] and {g for g, _ in taken} == {generation}


def test_a_live_row_is_replayed_again_in_its_generation() -> None:
    queue = ReplayQueue()
    queue.new_generation()
    row = Row("a")
    queue.put(as_rows([row]))
    assert keys(queue.take(1)) == ["a"]
    queue.put(as_rows([row]))
    assert queue.take(1) == []  # once per generation...
    queue.again(as_rows([row]))
    assert keys(queue.take(1)) == ["a"]  # ...unless the simulation changed


class Service:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def summarize(self, run: object, index: int) -> Summaries:
        self.asked.append(index)
        return Summaries(error=f"sim {index}")


class Outcome:
    def __init__(self, unit: Unit) -> None:
        self.summaries = Summaries(error=f"pooled {unit.index}")
        self.haystack = f"text {unit.index}"
        self.error = None


class Executor:
    def __init__(self, fail_after: int | None = None) -> None:
        self.units: list[Unit] = []
        self.fail_after = fail_after
        self.closed = False

    def map(self, units: Iterable[Unit]) -> Iterator[Outcome]:
        for unit in units:
            if self.fail_after is not None and len(self.units) >= self.fail_after:
                raise RuntimeError("a worker died")
            self.units.append(unit)
            yield Outcome(unit)

    def close(self) -> None:
        self.closed = True


def replay(
    rows: list[Row],
    workers: int,
    executor: Executor | None = None,
    may_pool: Callable[[Row], bool] = lambda row: True,
) -> tuple[BackgroundReplay, Service, list[int]]:
    queue = ReplayQueue()
    queue.new_generation()
    queue.put(as_rows(rows))
    service = Service()
    made: list[int] = []

    def make(count: int) -> Executor | None:
        made.append(count)
        return executor

    # the stand-ins have what the background replay uses of the service, the executor and the rows
    background = BackgroundReplay(
        queue,
        cast("ReplayService", service),
        workers,
        cast("Callable[[int], UnitExecutor]", make),
        cast("Callable[[RunRow], bool]", may_pool),
    )
    return background, service, made


def test_small_loads_stay_in_this_process_and_the_worker_processes_are_never_started() -> None:
    rows = [Row(str(i), index=i) for i in range(10)]
    background, service, made = replay(rows, workers=2, executor=Executor())
    assert background.claim_start(loading=False) and not background.claim_start(loading=False)
    outcomes = [o for _, batch in background.batches(lambda: False, print) for o in batch]
    assert [o.row_key for o in outcomes] == [r.key for r in rows]
    assert service.asked == list(range(10)) and made == []
    assert all(r.haystacked == ["here"] for r in rows)  # searchable text indexed off the UI thread


def test_a_big_load_goes_to_the_worker_processes_except_rows_they_may_not_read() -> None:
    rows = [Row(str(i), index=i) for i in range(100)]
    executor = Executor()
    background, service, made = replay(rows, 2, executor, may_pool=lambda row: row.index != 70)
    outcomes = {o.row_key: o.summaries.error for _, batch in background.batches(lambda: False, print) for o in batch}
    assert made == [2] and len(outcomes) == 100
    assert outcomes["70"] == "sim 70" and outcomes["71"] == "pooled 71" and service.asked == [70]
    assert rows[71].haystacked == ["text 71"]
    background.close()
    assert executor.closed


def test_a_dead_worker_process_means_the_rest_is_replayed_here_with_one_warning() -> None:
    rows = [Row(str(i), index=i) for i in range(100)]
    background, service, _ = replay(rows, 2, Executor(fail_after=30))
    warnings: list[str] = []
    outcomes = [o for _, batch in background.batches(lambda: False, warnings.append) for o in batch]
    assert len(outcomes) == 100 and background.workers == 1
    assert warnings == ["background replay in one process (a worker died)"]
    assert [o.summaries.error for o in outcomes[28:32]] == ["pooled 28", "pooled 29", "sim 30", "sim 31"]


def test_nothing_starts_while_files_load_or_when_disabled() -> None:
    background, _, _ = replay([Row("a")], workers=1)
    assert not background.claim_start(loading=True)
    background.enabled = False
    assert not background.claim_start(loading=False)
    background.enabled = True
    assert background.claim_start(loading=False)


def test_cancelling_stops_between_simulations() -> None:
    rows = [Row(str(i), index=i) for i in range(5)]
    background, service, _ = replay(rows, workers=1)
    seen: list[str] = []
    for _, batch in background.batches(lambda: len(service.asked) >= 2, print):
        seen += [o.row_key for o in batch]
    assert len(service.asked) == 2 and len(seen) <= 2
