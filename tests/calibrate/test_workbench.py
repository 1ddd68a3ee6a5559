"""Filling the grid: live from the runner (scripted participants), from recorded runs, and re-running rows."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tau_tui.calibrate import (
    Band,
    CalibrationFinished,
    CalibrationStarted,
    Calibrator,
    Cell,
    CellChanged,
    RowAdded,
    SimRef,
    TrialOutcome,
)
from tau_tui.calibrate.grid import RowKey
from tau_tui.domains import DomainError, DomainRegistry
from tau_tui.model.io import open_run
from tau_tui.rollout import ParticipantSpec, RunConfig, SimulationFinished
from tests.conftest import CORPUS

TELECOM_4_TRIALS = CORPUS / (
    "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
)
TASKS = ["create_task_1", "update_task_1", "update_task_with_history_and_env_assertions"]


def ref(cell: Cell) -> SimRef:
    """The cell's saved trajectory, which a finished cell has."""
    assert cell.ref is not None
    return cell.ref


def config(agent: str = "scripted/flaky:0.5", **kwargs: Any) -> RunConfig:
    kwargs.setdefault("task_ids", list(TASKS))
    kwargs.setdefault("num_trials", 4)
    return RunConfig(
        domain="mock", agent=ParticipantSpec(agent), user=ParticipantSpec("scripted/user"), concurrency=3, **kwargs
    )


def test_cells_fill_live_as_simulations_finish(registry: DomainRegistry, tmp_path: Path) -> None:
    calibrator = Calibrator(registry, "mock")
    events: list[object] = []
    # (row, cell) -> outcomes in the order the events showed them
    history: defaultdict[tuple[RowKey, int], list[TrialOutcome]] = defaultdict(list)
    snapshot_at_start: list[TrialOutcome] = []

    def listen(event: object) -> None:
        events.append(event)
        if isinstance(event, CellChanged):
            history[(event.key, event.index)].append(event.cell.outcome)
        if isinstance(event, CalibrationStarted):
            snapshot_at_start.extend(c.outcome for r in calibrator.grid.rows() for c in r.cells)
        if isinstance(event, SimulationFinished):
            # the grid already shows the finished cell, and its trajectory is on disk
            row = next(r for r in calibrator.grid.rows() if r.task_id == event.task_id)
            cell = next(c for c in row.cells if c.trial == event.trial)
            assert cell.finished and cell.ref is not None
            assert open_run(cell.ref.path).find(cell.ref.sim_id) is not None

    calibrator.grid.subscribe(listen)
    path = tmp_path / "live.json"
    summary = asyncio.run(calibrator.run(config(), path))
    assert summary.completed == 12
    assert snapshot_at_start == [TrialOutcome.PENDING] * 12
    assert sum(isinstance(e, RowAdded) for e in events) == 3
    assert isinstance(events[-1], CalibrationFinished)
    assert len(history) == 12
    for outcomes in history.values():
        assert outcomes[:2] == [TrialOutcome.PENDING, TrialOutcome.RUNNING]
        assert outcomes[2] in (TrialOutcome.PASS, TrialOutcome.FAIL, TrialOutcome.UNSCORED) and len(outcomes) == 3

    rows = {r.task_id: r for r in calibrator.grid.rows()}
    assert {r.task_id: len(r.cells) for r in rows.values()} == {t: 4 for t in TASKS}
    assert rows["update_task_with_history_and_env_assertions"].band is Band.ZERO
    # each cell opens its trajectory: the simulation in the file, of the row's task, with the row's fingerprint
    run = open_run(path)
    for row in rows.values():
        assert row.current is True and row.versions == 1
        for cell in row.cells:
            assert cell.ref is not None
            index = run.find(cell.ref.sim_id)
            assert index is not None
            sim = run.simulation(index)
            assert sim.task_id == row.task_id and sim.trial == cell.trial
            assert sim.info is not None
            assert sim.info["task_fingerprint"] == row.fingerprint
            assert sim.reward_info is not None
            assert (sim.reward_info.reward == 1.0) == (cell.outcome is TrialOutcome.PASS)


def test_loading_the_run_file_again_adds_nothing(registry: DomainRegistry, tmp_path: Path) -> None:
    calibrator = Calibrator(registry, "mock")
    path = tmp_path / "run.json"
    asyncio.run(calibrator.run(config(num_trials=2), path))
    before = {r.key: len(r.cells) for r in calibrator.grid.rows()}
    assert calibrator.load_run(open_run(path)) == 0
    assert {r.key: len(r.cells) for r in calibrator.grid.rows()} == before

    fresh = Calibrator(registry, "mock")  # another calibrator reading the file lands in the same rows
    assert fresh.load_run(open_run(path)) == 6
    assert {r.key: len(r.cells) for r in fresh.grid.rows()} == before
    assert [[c.outcome for c in r.cells] for r in fresh.grid.rows()] == [
        [c.outcome for c in r.cells] for r in calibrator.grid.rows()
    ]


def test_rerun_adds_fresh_trials_to_the_same_row_or_replaces_them(registry: DomainRegistry, tmp_path: Path) -> None:
    calibrator = Calibrator(registry, "mock")
    asyncio.run(calibrator.run(config(task_ids=["update_task_1"]), tmp_path / "a.json"))
    (row,) = calibrator.grid.rows()
    first_seeds = [c.seed for c in row.cells]
    asyncio.run(calibrator.rerun([row.key], config(), tmp_path / "b.json"))
    assert calibrator.grid.rows() == [row] and len(row.cells) == 8
    new_seeds = [c.seed for c in row.cells[4:]]
    assert set(new_seeds).isdisjoint(first_seeds)  # another run seed: new trials, not copies
    assert {ref(c).path.name for c in row.cells} == {"a.json", "b.json"}
    asyncio.run(calibrator.rerun([row.key], config(), tmp_path / "c.json", replace=True))
    assert len(row.cells) == 4 and {ref(c).path.name for c in row.cells} == {"c.json"}


def test_resume_shows_what_the_file_holds_and_runs_the_rest(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    asyncio.run(Calibrator(registry, "mock").run(config(num_trials=2), path))
    calibrator = Calibrator(registry, "mock")
    summary = asyncio.run(calibrator.run(config(num_trials=2), path, resume=True))
    assert summary.completed == 0 and summary.already_done == 6
    assert sum(len(r.cells) for r in calibrator.grid.rows()) == 6
    assert all(c.finished for r in calibrator.grid.rows() for c in r.cells)


def test_recorded_runs_of_the_domain(registry: DomainRegistry) -> None:
    calibrator = Calibrator(registry, "telecom")
    report = calibrator.load_paths([TELECOM_4_TRIALS, CORPUS / "generated" / "tau2-gold_mock.json"])
    assert report.total == 20
    assert [(p.name, "mock" in reason) for p, reason in report.skipped] == [("tau2-gold_mock.json", True)]
    rows = calibrator.grid.rows()
    assert len(rows) == 5 and all(len(r.cells) == 4 for r in rows)
    assert {r.setup.label for r in rows} == {"gpt-4.1-2025-04-14 / gpt-4.1-2025-04-14"}
    assert sorted(r.band.value for r in rows) == ["saturated"] * 4 + ["zero"]
    # no fingerprint was recorded: derived from the embedded task (same as the domain's) and the current domain
    assert all(r.fingerprint_source == "derived" and r.current is True for r in rows)
    assert all(c.trial is not None and ref(c).path == TELECOM_4_TRIALS for r in rows for c in r.cells)
    with pytest.raises(DomainError, match="not 'telecom'"):
        calibrator.load_run(open_run(CORPUS / "generated" / "tau2-gold_mock.json"))


def test_recorded_unscored_simulations_say_why(registry: DomainRegistry, tmp_path: Path) -> None:
    data = json.loads(TELECOM_4_TRIALS.read_text())
    sims = data["simulations"][:3]
    sims[0]["termination_reason"] = "infrastructure_error"
    sims[0]["info"] = {"error": "RateLimitError: too many requests"}
    sims[1]["reward_info"] = None
    sims[1]["info"] = {"evaluation": {"status": "not_computable", "notes": ["NL assertions not evaluated"]}}
    data["simulations"] = sims
    path = tmp_path / "three.json"
    path.write_text(json.dumps(data))
    calibrator = Calibrator(registry, "telecom")
    calibrator.load_run(open_run(path))
    cells = {ref(c).sim_id: c for r in calibrator.grid.rows() for c in r.cells}
    assert cells[sims[0]["id"]].reason == "infrastructure_error: RateLimitError: too many requests"
    assert cells[sims[1]["id"]].reason == "NL assertions not evaluated"
    assert cells[sims[2]["id"]].outcome in (TrialOutcome.PASS, TrialOutcome.FAIL)


def test_a_new_calibration_path_never_collides(tmp_path: Path) -> None:
    from tau_tui.model.io import new_output_path

    first = new_output_path(tmp_path, "calibrate", "mock")
    first.write_text("{}")
    second = new_output_path(tmp_path, "calibrate", "mock")
    assert second != first and not second.exists() and second.name.startswith("calibrate_")


def test_recomputed_rewards_replace_the_recorded_ones(registry: DomainRegistry, tmp_path: Path) -> None:
    data = json.loads(TELECOM_4_TRIALS.read_text())
    data["simulations"] = data["simulations"][:4]
    for sim in data["simulations"]:
        sim["reward_info"]["reward"] = 0.5  # a recorded reward our evaluator does not agree with
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    recorded = Calibrator(registry, "telecom")
    recorded.load_run(open_run(path))
    assert {c.outcome for r in recorded.grid.rows() for c in r.cells} == {TrialOutcome.FAIL}
    recomputed = Calibrator(registry, "telecom")
    recomputed.load_run(open_run(path), recompute=True)
    assert {c.reward for r in recomputed.grid.rows() for c in r.cells} <= {0.0, 1.0}
    assert TrialOutcome.PASS in {c.outcome for r in recomputed.grid.rows() for c in r.cells}


def test_a_run_file_written_out_of_trial_order_loads_as_the_live_grid_shows_it(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    """Simulations are saved as they finish (trial 3 of a task can come before its trial 2): the loaded row has
    its cells in trial order, as the live run added them, so resuming a calibration prints the same grid."""
    calibrator = Calibrator(registry, "mock")
    path = tmp_path / "run.json"
    asyncio.run(calibrator.run(config(num_trials=3), path))
    live = {r.key: [(c.trial, c.seed, ref(c).sim_id) for c in r.cells] for r in calibrator.grid.rows()}
    assert all([t for t, _, _ in cells] == [0, 1, 2] for cells in live.values())

    shuffled = tmp_path / "shuffled.json"
    data = json.loads(path.read_text())
    data["simulations"].reverse()  # the last trial of each task written first
    shuffled.write_text(json.dumps(data))
    fresh = Calibrator(registry, "mock")
    assert fresh.load_run(open_run(shuffled)) == 9
    loaded = {r.key: [(c.trial, c.seed, ref(c).sim_id) for c in r.cells] for r in fresh.grid.rows()}
    assert loaded == live
