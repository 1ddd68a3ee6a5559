"""Indexing many files on worker processes (model.indexing) gives what indexing them here one by one gives."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from tau_tui.catalog import Catalog
from tau_tui.model.indexing import Event, Failed, Growing, Loaded, _Coordinator, _Proc, index_files, plan_workers
from tau_tui.model.io import RunFile, scan_paths
from tau_tui.model.reviews import read_review
from tau_tui.model.stream import SpanSims
from tests.conftest import CORPUS, corpus_required


def _index(paths: Sequence[Path], workers: int, every: float = 0.25) -> list[Event]:
    events: list[Event] = []
    assert index_files(paths, events.append, workers, every=every)
    return events


def _outcome(event: Event) -> tuple[Any, ...]:
    """What a file's last event says: the run as the runs table and the trajectory screen read it."""
    if isinstance(event, Failed):
        return ("failed", str(event.path), event.problem)
    run: RunFile = event.run
    return (
        "loaded",
        str(run.path),
        run.layout,
        run.raw_info,
        run.raw_tasks,
        run.timestamp,
        run.extra_top,
        run.warnings,
        run.entries,
    )


def _check_order(events: list[Event], count: int) -> dict[int, Event]:
    """Every file ends with one Loaded or Failed, after its Growing events; files first appear in order."""
    first_seen: list[int] = []
    last: dict[int, Event] = {}
    for event in events:
        assert event.pos not in last, f"an event of file {event.pos} after its last one"
        if event.pos not in first_seen:
            first_seen.append(event.pos)
        if not isinstance(event, Growing):
            last[event.pos] = event
    assert first_seen == list(range(count))
    assert sorted(last) == list(range(count))
    return last


def _same_runs(paths: Sequence[Path], parallel: list[Event], sequential: list[Event]) -> None:
    last_par = _check_order(parallel, len(paths))
    last_seq = _check_order(sequential, len(paths))
    for pos in range(len(paths)):
        assert _outcome(last_par[pos]) == _outcome(last_seq[pos]), paths[pos]


def _review_check(run_par: RunFile, run_seq: RunFile) -> None:
    """Review fields read while indexing equal the ones read from the simulation itself."""
    from tau_tui.catalog.rows import RunRow

    for entry in run_par.entries:
        if entry.reviewed:
            assert isinstance(run_par.raw_sims, SpanSims)
            assert entry.index in run_par.raw_sims.reviews  # the table reads it without parsing the simulation
            row = RunRow("k", run_par, entry, order=(0, entry.index))
            assert row.review == read_review(run_seq.raw_sims[entry.index])


def test_the_corpus_folder_indexes_to_the_same_runs_in_parallel_and_here() -> None:
    corpus_required()
    paths = scan_paths([CORPUS]).files
    sequential = _index(paths, 0)
    parallel = _index(paths, 2)
    _same_runs(paths, parallel, sequential)
    last_par, last_seq = _check_order(parallel, len(paths)), _check_order(sequential, len(paths))
    spans = 0
    for pos in range(len(paths)):
        par, seq = last_par[pos], last_seq[pos]
        if isinstance(par, Loaded) and isinstance(par.run.raw_sims, SpanSims):
            spans += 1
            assert isinstance(seq, Loaded)
            run_par, run_seq = par.run, seq.run
            assert list(run_par.raw_sims) == list(run_seq.raw_sims)  # the spans point at the same simulations
            _review_check(run_par, run_seq)
            middle = len(run_par.entries) // 2
            assert not run_par.entries or run_par.simulation(middle) == run_seq.simulation(middle)
    assert spans >= 20  # the indented results files came back as their index, not their trees
    assert not any(isinstance(e, Failed) for e in last_par.values())
    v1 = [e.run for e in last_par.values() if isinstance(e, Loaded) and e.run.layout == "tau-bench-v1"]
    assert len(v1) == 1 and v1[0].recorded_only and len(v1[0].entries) == 200  # read whole in a worker, as here


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Real simulations over several files (benchmarks.make_corpus), one of them large enough to come in chunks."""
    corpus_required()
    from benchmarks.make_corpus import make

    folder = tmp_path_factory.mktemp("generated")
    make("airline", 200, folder / "small", files=5)
    make("airline", 400, folder / "large", files=1)
    return sorted((folder / "small").iterdir()) + sorted((folder / "large").iterdir())


def test_a_generated_folder_indexes_to_the_same_rows_whatever_order_the_workers_finish_in(
    generated: list[Path],
) -> None:
    paths = list(reversed(generated))  # the large file first: the small ones after it finish before it
    sequential = _index(paths, 0)
    parallel = _index(paths, 2, every=0.0)
    _same_runs(paths, parallel, sequential)
    grew = [e.count for e in parallel if isinstance(e, Growing) and e.pos == 0]
    assert len(grew) > 1 and grew == sorted(grew) and grew[-1] < 400  # the large file came in chunks
    # a catalog fed the events in the order they come has the rows in the order of the files
    catalogs = []
    for events in (sequential, parallel):
        catalog = Catalog()
        for event in events:
            if isinstance(event, Growing):
                catalog.grow_run(event.run, event.count)
            elif isinstance(event, Loaded):
                catalog.add_run(event.run)
        catalogs.append([(str(r.path), r.sim_id, r.entry) for r in catalog.rows])
    assert catalogs[0] == catalogs[1] and len(catalogs[0]) == 600
    assert [p for p, _, _ in catalogs[1]][0] == str(paths[0])


def test_broken_files_among_good_ones_fail_with_the_same_line_and_the_rest_load(
    generated: list[Path], tmp_path: Path
) -> None:
    good = generated[:3]
    text = good[0].read_bytes()
    broken = {
        "truncated.json": text[: len(text) // 2],
        "not_json.json": b"{ this is not json",
        "empty.json": b"",
        "scalar.json": b"42",
        "not_utf8.json": b'{"simulations": [\xff]}',
    }
    for name, data in broken.items():
        (tmp_path / name).write_bytes(data)
    v1 = tmp_path / "v1.json"  # tau-bench v1 results load (recorded only), among the broken ones
    v1.write_bytes(orjson.dumps([{"task_id": 1, "reward": 1.0, "traj": []}]))
    paths = [good[0], *(tmp_path / name for name in broken), v1, good[1], good[2]]
    sequential = _index(paths, 0)
    parallel = _index(paths, 2)
    _same_runs(paths, parallel, sequential)
    last = _check_order(parallel, len(paths))
    failed = {str(e.path) for e in last.values() if isinstance(e, Failed)}
    assert failed == {str(tmp_path / name) for name in broken}
    loaded_v1 = last[paths.index(v1)]
    assert isinstance(loaded_v1, Loaded) and loaded_v1.run.recorded_only and len(loaded_v1.run.entries) == 1
    assert isinstance(last[1], Failed)
    assert "truncated JSON" in last[1].problem and str(paths[1]) not in last[1].problem  # the path is the caller's


def test_a_worker_that_dies_fails_its_file_with_one_line_and_the_others_load(
    generated: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = list(reversed(generated))  # the large file first
    killed: list[int] = []
    receive = _Coordinator._receive

    def kill_on_first_chunk(self: _Coordinator, proc: _Proc) -> None:
        receive(self, proc)
        if not killed and proc.task == 0 and 0 in self.building:
            pid = proc.process.pid
            assert pid is not None  # a started worker
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    monkeypatch.setattr(_Coordinator, "_receive", kill_on_first_chunk)
    monkeypatch.setattr(_Coordinator, "BRIDGE", False)  # every file to a worker
    events: list[Event] = []
    done: list[bool] = []
    thread = threading.Thread(target=lambda: done.append(index_files(paths, events.append, 2, every=0.0)), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(120)
    assert done == [True], "index_files hung after a worker died"
    assert killed, "the large file was not indexed by a worker in chunks"
    last = _check_order(events, len(paths))
    assert isinstance(last[0], Failed) and "the process indexing it died" in last[0].problem
    assert "\n" not in last[0].problem
    assert all(isinstance(last[pos], Loaded) for pos in range(1, len(paths)))
    assert time.monotonic() - started < 120


def test_cancelling_stops_the_workers(generated: list[Path]) -> None:
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    events: list[Event] = []
    assert index_files(list(generated), events.append, 2, cancelled=cancelled) is False


def test_one_file_or_few_bytes_stay_in_this_process(generated: list[Path], tmp_path: Path) -> None:
    assert plan_workers(generated[:1], 2) == 0
    assert plan_workers(generated, 2, min_bytes=1 << 40) == 0
    assert plan_workers(generated, 2, min_bytes=0) == 2
    assert plan_workers(generated, 0, min_bytes=0) == 0
    assert plan_workers([generated[0], generated[0]], 2, min_bytes=0) == 0  # the same file twice: as before


def test_a_file_the_streaming_reader_gives_up_on_halfway_is_read_whole_with_the_same_rows(
    generated: list[Path], tmp_path: Path
) -> None:
    """Rows sent while it was streamed are replaced by the whole file's: the catalog ends with those."""
    data = orjson.loads(generated[-1].read_bytes())
    sims = data["simulations"]
    data["simulations"] = [s if i != 200 else 42 for i, s in enumerate(sims)]  # the whole-file reader's problem row
    odd = tmp_path / "odd.json"
    odd.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    paths = [odd, generated[0]]
    sequential = _index(paths, 0)
    parallel = _index(paths, 2, every=0.0)
    _same_runs(paths, parallel, sequential)
    last = _check_order(parallel, 2)
    assert any(isinstance(e, Growing) and e.pos == 0 for e in parallel)  # it was streamed first
    assert isinstance(last[0], Loaded)
    assert isinstance(last[0].run.raw_sims, list) and len(last[0].run.entries) == len(sims)
    assert last[0].run.entries[200].problem == "simulation #200 is a int, not an object"
    catalog = Catalog()
    for event in parallel:
        if isinstance(event, Growing):
            catalog.grow_run(event.run, event.count)
        elif isinstance(event, Loaded):
            catalog.add_run(event.run)
    assert [r.sim_id for r in catalog.rows if r.path == odd] == [s["id"] for s in sims[:200]] + ["#200"] + [
        s["id"] for s in sims[201:]
    ]


def test_compact_files_with_members_after_their_simulations_index_the_same_on_workers(
    generated: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys sorted on one line (json.dumps(sort_keys=True)): tasks and timestamp come after the simulations, so a
    worker sends them again with the file's last rows."""
    paths = []
    for i, path in enumerate(reversed(generated)):  # the large file first
        copy = tmp_path / f"{i}_{path.name}"
        copy.write_bytes(json.dumps(orjson.loads(path.read_bytes()), sort_keys=True).encode())
        paths.append(copy)
    sequential = _index(paths, 0)
    monkeypatch.setattr(_Coordinator, "BRIDGE", False)  # every file to a worker
    parallel = _index(paths, 2, every=0.0)
    _same_runs(paths, parallel, sequential)
    last = _check_order(parallel, len(paths))
    assert all(isinstance(e, Loaded) and isinstance(e.run.raw_sims, SpanSims) for e in last.values())
    assert len([e for e in parallel if isinstance(e, Growing) and e.pos == 0]) > 1  # rows before the tasks
    original = orjson.loads(generated[-1].read_bytes())
    assert isinstance(last[0], Loaded)
    run = last[0].run
    assert (run.raw_tasks, run.timestamp) == (original["tasks"], original["timestamp"]) and run.tasks()
    assert list(run.raw_sims) == original["simulations"]


def test_a_failure_of_the_thread_here_fails_its_file_and_the_rest_still_load(
    generated: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker process to be had, and the thread indexing here breaks on its first file: no hang."""
    paths = list(generated)
    monkeypatch.setattr(_Coordinator, "_spawn", lambda self: None)
    put = _Coordinator._local_put
    broke: list[int] = []

    def breaking(self: _Coordinator, event: Event) -> None:
        if isinstance(event, Loaded) and not broke:
            broke.append(event.pos)
            raise MemoryError("no room")
        put(self, event)

    monkeypatch.setattr(_Coordinator, "_local_put", breaking)
    events: list[Event] = []
    done: list[bool] = []
    thread = threading.Thread(target=lambda: done.append(index_files(paths, events.append, 2, every=0.0)), daemon=True)
    thread.start()
    thread.join(120)
    assert done == [True], "index_files hung after its thread here failed"
    last = _check_order(events, len(paths))
    assert broke == [0]
    assert isinstance(last[0], Failed) and last[0].problem == "not indexed (MemoryError: no room)"
    assert all(isinstance(last[pos], Loaded) for pos in range(1, len(paths)))
