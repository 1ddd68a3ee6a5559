"""The session, headless: one factory, the rollout controller, opening a simulation, the replay hand-off."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tau_tui.config import Settings
from tau_tui.model.io import open_run
from tau_tui.session import RolloutBusy, Session
from tau_tui.session.events import FileLoaded, LoadFinished
from tau_tui.session.simulation import judged, open_simulation
from tau_tui.workspace import RunRequest
from tests.tui.conftest import MOCK_DEMO, RECORDINGS


@pytest.fixture
def session(tau2_data: Path, tmp_path: Path) -> Session:
    return Session.from_settings(Settings(tau2_data=tau2_data, runs_dir=tmp_path / "runs", workers=1), [RECORDINGS])


def test_the_factory_builds_everything_from_the_settings(session: Session, tmp_path: Path) -> None:
    assert session.runs_dir == tmp_path / "runs"
    assert session.replay.workers == 1 and session.service.analyzer is session.workspace.analyzer
    assert session.rollouts.workspace is session.workspace
    assert not session.busy


def test_loading_then_replaying_hands_over_in_turn(session: Session) -> None:
    generation, paths = session.start_load()
    events: list[Any] = []
    session.load(generation, paths, events.append, lambda: False)
    changes = [session.handle(event) for event in events]
    assert not any(c.start_replay for c in changes[:-1])  # nothing replays while files are indexed
    assert changes[-1].start_replay and session.busy  # then the queue is claimed once
    outcomes = [o for _, batch in session.replay_batches(lambda: False, print) for o in batch]
    assert len(outcomes) == len(session.catalog.rows)
    replayed = session.replayed(generation, outcomes)
    assert len(replayed.replayed) == len(outcomes)
    done = session.replay_done()
    assert done.replay_idle and not done.start_replay and not session.busy
    assert all(row.replay is not None for row in session.catalog.rows)


def test_a_live_run_added_after_the_replay_went_idle_starts_it_again(session: Session, tmp_path: Path) -> None:
    generation, _ = session.start_load()
    session.handle(LoadFinished(generation, []))
    path = tmp_path / "live.json"
    shutil.copy(MOCK_DEMO, path)
    rows, changes = session.add_live_run(open_run(path))
    assert changes.start_replay and rows
    assert not session.add_live_run(open_run(path))[1].start_replay  # already running: not claimed twice


def test_one_rollout_at_a_time_and_its_events_fold_into_progress(session: Session, tmp_path: Path) -> None:
    plan = session.workspace.run_plan(
        RunRequest("mock", "scripted/gold", "scripted/user", tasks=["create_task_1"], out=tmp_path / "r.json")
    )
    progress = session.rollouts.start(plan)
    assert progress.active and session.rollouts.busy()
    with pytest.raises(RolloutBusy, match="already running"):
        session.rollouts.start(plan)
    updates = []
    error = asyncio.run(session.rollouts.run(plan, lambda event: updates.append(session.rollouts.fold(event))))
    assert error is None and progress.finished and progress.done == 1
    files = [u.run for u in updates if u.run is not None]
    assert len(files) == 1 and files[0].path == tmp_path / "r.json"
    assert [u.first_file for u in updates if u.run is not None] == [True]
    assert any(u.notice and u.notice.startswith("rollout finished: 1 simulation(s)") for u in updates)
    assert session.rollouts.busy() is None
    assert session.rollouts.stop() == "no rollout is running"


def test_a_failed_rollout_says_why_in_one_line(session: Session, tmp_path: Path) -> None:
    plan = session.workspace.run_plan(RunRequest("nosuch", "scripted/gold", "scripted/user", out=tmp_path / "x.json"))
    session.rollouts.start(plan)
    error = asyncio.run(session.rollouts.run(plan, lambda event: None))
    assert error is not None and "nosuch" in error and "\n" not in error
    session.rollouts.failed(error)
    assert session.rollouts.progress is not None
    assert session.rollouts.progress.error == error and not session.rollouts.progress.active


def test_opening_a_simulation_builds_its_document_and_report(session: Session) -> None:
    run = open_run(MOCK_DEMO)
    opened = open_simulation(session.service, run, 0)
    assert opened.load_error is None and opened.replay_error is None and opened.eval_error is None
    assert opened.doc is not None and len(opened.doc) == len(run.simulation(0).trajectory)
    assert opened.report is not None and opened.analysis is not None


def test_opening_a_simulation_of_an_unknown_domain_still_shows_it(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.json"
    path.write_bytes(MOCK_DEMO.read_bytes().replace(b'"mock"', b'"nowhere"'))
    opened = open_simulation(session.service, open_run(path), 0)
    assert opened.doc is not None and opened.analysis is None and opened.report is None
    assert opened.eval_error is not None and opened.replay_error is not None
    assert "nowhere" in opened.replay_error and opened.eval_error.startswith("no replay (")


def test_a_judge_verdict_reaches_the_row(session: Session) -> None:
    generation, _ = session.start_load()
    run = open_run(MOCK_DEMO)
    session.handle(FileLoaded(generation, run, []))
    report = open_simulation(session.service, run, 0).report
    assert report is not None
    sim_id = run.entries[0].id
    changes = judged(session.catalog, run, sim_id, report)
    row = session.catalog.find(run.path, sim_id)
    assert row is not None
    assert changes.replayed == [row] and row.evaluation is not None and row.eval_error is None
    assert judged(session.catalog, run, "no-such-sim", report).replayed == []


def test_the_tau2_data_found_beside_the_files_is_named_in_the_notices(tau2_data: Path) -> None:
    settings = Settings(tau2_data=tau2_data, sources={"tau2_data": f"found at {tau2_data}"}, workers=1)
    session = Session.from_settings(settings, [tau2_data / "generated" / "tau2-gold_mock.json"])
    generation, paths = session.start_load()
    events: list[Any] = []
    session.load(generation, paths, events.append, lambda: False)
    assert any(session.handle(event).notices for event in events)
    notices = [(n.path, n.text) for n in session.catalog.all_notices()]
    assert (
        tau2_data,
        "used as the tau2 data folder for replay (found beside the files opened; --tau2-data DIR chooses another)",
    ) in notices
