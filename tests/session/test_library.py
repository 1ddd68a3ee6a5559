"""The loaded runs, headless: how each load event, replay outcome and live run changes the catalog, and what
a front end is told to redraw."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tau_tui.catalog.summaries import Summaries
from tau_tui.model.io import open_run
from tau_tui.model.notes import NoteBook
from tau_tui.session.events import (
    FileFailed,
    FileGrowing,
    FileLoaded,
    FolderNotice,
    LoadFinished,
    LoadProgress,
    LoadStarted,
    ReplayOutcome,
)
from tau_tui.session.library import Library, load_runs
from tau_tui.session.replay_queue import ReplayQueue
from tests.tui.conftest import MOCK_DEMO, RECORDINGS


def library(paths: list[Path] | None = None) -> Library:
    return Library(paths or [RECORDINGS], ReplayQueue())


def test_a_load_generation_from_start_to_finish() -> None:
    lib = library()
    generation = lib.start_load()
    assert lib.loading and lib.progress is None
    changes = lib.handle(LoadStarted(generation, 2))
    assert changes.loading == LoadProgress(0, 2, False) and not changes.catalog
    run = open_run(MOCK_DEMO)
    changes = lib.handle(FileLoaded(generation, run, [f"{run.path}: a note"], None))
    assert changes.catalog and changes.notices and changes.rebound == [run]
    assert changes.loading == LoadProgress(1, 2, False)
    assert [n.text for n in lib.catalog.all_notices()] == ["a note"]  # the notice names the file apart
    assert lib.queue.waiting  # its rows wait for the background replay
    changes = lib.handle(FileFailed(generation, Path("bad.json"), "not JSON"))
    assert changes.catalog and changes.notices and changes.loading == LoadProgress(2, 2, False)
    changes = lib.handle(LoadFinished(generation, [run.path]))
    assert changes.load_finished and changes.notes and changes.loading == LoadProgress(2, 2, True)
    assert not changes.catalog and not lib.loading  # nothing was removed


def test_events_of_an_older_generation_change_nothing() -> None:
    lib = library()
    old = lib.start_load()
    lib.start_load()
    run = open_run(MOCK_DEMO)
    for event in (
        LoadStarted(old, 1),
        FileLoaded(old, run, []),
        FolderNotice(old, RECORDINGS, "x"),
        LoadFinished(old, []),
    ):
        changes = lib.handle(event)
        assert not (changes.catalog or changes.notices or changes.loading or changes.load_finished)
    assert not lib.catalog.rows and lib.loading
    assert lib.replayed(old, [ReplayOutcome(f"{run.path}#0", Summaries(error="x"))]).replayed == []


def test_a_growing_file_shows_its_rows_before_it_is_loaded_and_keeps_them() -> None:
    lib = library()
    generation = lib.start_load()
    run = open_run(MOCK_DEMO)
    assert lib.handle(FileGrowing(generation, run, 2)).catalog
    assert len(lib.catalog.rows) == 2
    assert not lib.handle(FileGrowing(generation, run, 2)).catalog  # no new rows: nothing to redraw
    lib.handle(FileLoaded(generation, run, []))
    assert len(lib.catalog.rows) == len(run.entries)


def test_a_reload_removes_files_that_are_gone_but_keeps_live_ones(tmp_path: Path) -> None:
    demo = tmp_path / "demo.json"
    shutil.copy(MOCK_DEMO, demo)
    live_path = tmp_path / "live.json"
    shutil.copy(MOCK_DEMO, live_path)
    lib = library([demo])
    generation = lib.start_load()
    lib.handle(FileLoaded(generation, open_run(demo), []))
    live = open_run(live_path)
    rows, changes = lib.add_live_run(live)
    assert rows and changes.catalog and changes.rebound == [live] and live_path in lib.paths
    generation = lib.start_load()
    changes = lib.handle(LoadFinished(generation, []))  # the demo is gone from disk
    assert changes.catalog
    assert set(lib.catalog.files) == {str(live_path)}


def test_replay_outcomes_land_on_their_rows_and_a_new_reason_becomes_one_notice() -> None:
    lib = library()
    generation = lib.start_load()
    run = open_run(MOCK_DEMO)
    lib.handle(FileLoaded(generation, run, []))
    keys = [row.key for row in lib.catalog.rows[:3]]
    error = f"{run.path}: no tau2 data for domain 'mock'"
    changes = lib.replayed(
        generation, [ReplayOutcome(k, Summaries(error=error)) for k in keys] + [ReplayOutcome("gone#1", Summaries())]
    )
    assert [row.key for row in changes.replayed] == keys and changes.notices
    assert [n.text for n in lib.catalog.all_notices()] == ["not replayed: no tau2 data for domain 'mock'"]
    assert lib.catalog.rows[0].replay_error == error
    assert not lib.replayed(generation, [ReplayOutcome(keys[0], Summaries(error=error))]).notices
    assert lib.catalog.derived_count == 3  # the title's "replaying n/total", counted as rows are derived


def test_a_live_run_that_grows_keeps_what_was_derived_and_queues_only_new_simulations(tmp_path: Path) -> None:
    path = tmp_path / "live.json"
    shutil.copy(MOCK_DEMO, path)
    lib = library([])
    lib.start_load()
    rows, _ = lib.add_live_run(open_run(path))
    for row in rows:
        lib.catalog.set_summaries(row, None, "derived", None, None)
    assert lib.catalog.derived_count == len(rows)
    lib.queue.take(len(rows))  # handed out already
    rows_again, _ = lib.add_live_run(open_run(path))
    assert all(row.replay_error == "derived" for row in rows_again)
    assert not lib.queue.waiting
    assert lib.catalog.derived_count == len(rows_again)  # carried over onto the new rows, not counted twice
    lib.catalog.remove_file(path)
    assert lib.catalog.derived_count == 0


def test_a_saved_file_opens_once_it_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "saved.json"
    shutil.copy(MOCK_DEMO, path)
    lib = library([])
    assert lib.open_when_read(path) is None
    run = open_run(path)
    _, changes = lib.add_live_run(run)
    assert changes.open_run == (run, 0)
    assert lib.open_when_read(path) == (run, 0)


def test_saved_notes_reach_the_catalog(tmp_path: Path) -> None:
    demo_copy = tmp_path / "demo.json"
    shutil.copy(MOCK_DEMO, demo_copy)
    lib = library([demo_copy])
    generation = lib.start_load()
    lib.handle(FileLoaded(generation, open_run(demo_copy), []))
    book = NoteBook(demo_copy)
    sim = lib.catalog.rows[0].sim_id
    book.add(sim, "agent", "other", "seen")
    assert lib.notes_saved(book).notes
    row = lib.catalog.find(demo_copy, sim)
    assert row is not None
    assert [n.text for n in row.notes] == ["seen"]


def test_the_loader_emits_every_file_in_order_with_its_notes(tmp_path: Path) -> None:
    shutil.copy(MOCK_DEMO, tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{not json")
    events: list[Any] = []
    load_runs([tmp_path], 7, events.append, lambda: False, index_workers=0)
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "LoadStarted" and kinds[-1] == "LoadFinished"
    assert {e.generation for e in events} == {7}
    loaded = [e for e in events if isinstance(e, FileLoaded)]
    failed = [e for e in events if isinstance(e, FileFailed)]
    assert [e.run.path.name for e in loaded] == ["a.json"] and loaded[0].notebook is not None
    assert [e.path.name for e in failed] == ["b.json"] and "\n" not in failed[0].error


def test_a_cancelled_load_never_finishes(tmp_path: Path) -> None:
    shutil.copy(MOCK_DEMO, tmp_path / "a.json")
    events: list[Any] = []
    load_runs([tmp_path], 1, events.append, lambda: True, index_workers=0)
    assert not any(isinstance(e, LoadFinished) for e in events)
