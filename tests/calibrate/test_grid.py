"""The grid model: outcomes, bands, rates, pass^k / pass@k over scored attempts, sorting, filtering, events."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tau_tui.calibrate.grid import (
    Band,
    CalibrationGrid,
    Cell,
    CellChanged,
    Row,
    RowAdded,
    RowChanged,
    Setup,
    SimRef,
    TrialOutcome,
    classify,
    filter_rows,
    sort_rows,
)

SETUP = Setup("model-a", "scripted/user")
P, F, U = TrialOutcome.PASS, TrialOutcome.FAIL, TrialOutcome.UNSCORED


def row(*outcomes: TrialOutcome, task: str = "t", fingerprint: str = "f1") -> Row:
    return Row(task, fingerprint, SETUP, [Cell(o, trial=i) for i, o in enumerate(outcomes)])


@pytest.mark.parametrize(
    "reward, termination, expected",
    [
        (1.0, "user_stop", TrialOutcome.PASS),
        (0.9999999, "agent_stop", TrialOutcome.PASS),  # tau2's 1e-6 tolerance
        (0.0, "user_stop", TrialOutcome.FAIL),
        (0.5, "user_stop", TrialOutcome.FAIL),
        (0.0, "max_steps", TrialOutcome.FAIL),  # the agent's own failure: scored
        (0.0, "too_many_errors", TrialOutcome.FAIL),
        (0.0, "infrastructure_error", TrialOutcome.UNSCORED),
        (0.0, "timeout", TrialOutcome.UNSCORED),
        (None, "unexpected_error", TrialOutcome.UNSCORED),
        (None, "user_stop", TrialOutcome.UNSCORED),  # reward not computable (e.g. NL assertions without a judge)
    ],
)
def test_classify(reward: float | None, termination: str, expected: TrialOutcome) -> None:
    outcome, reason = classify(reward, termination, "why")
    assert outcome is expected
    assert (reason is not None) == (expected is TrialOutcome.UNSCORED)


def test_unscored_reason_names_the_termination() -> None:
    assert classify(0.0, "infrastructure_error", "RateLimitError")[1] == "infrastructure_error: RateLimitError"
    assert classify(None, "user_stop")[1] == "reward not computable"


@pytest.mark.parametrize(
    "outcomes, band",
    [
        ((P, P, P), Band.SATURATED),
        ((P, P, U), Band.SATURATED),  # unscored attempts are left out
        ((F, F), Band.ZERO),
        ((F, U, U), Band.ZERO),
        ((P, F), Band.LEARNING_ZONE),
        ((P, U, F, P), Band.LEARNING_ZONE),
        ((U, U), Band.UNSCORED),
        ((), Band.UNSCORED),
    ],
)
def test_bands(outcomes: tuple[TrialOutcome, ...], band: Band) -> None:
    assert row(*outcomes).band is band


def test_pending_and_running_cells_count_for_nothing_yet() -> None:
    r = row(P, F, TrialOutcome.PENDING, TrialOutcome.RUNNING)
    assert (r.n_scored, r.n_passed, r.n_unscored, r.n_pending) == (2, 1, 0, 2)
    assert not r.complete
    assert r.band is Band.LEARNING_ZONE


def test_rates_and_pass_k_over_scored_attempts_only() -> None:
    r = row(P, U, P, F, U, P)  # 4 scored, 3 passed, 2 unscored
    assert (r.n_scored, r.n_passed, r.n_unscored) == (4, 3, 2)
    assert r.pass_rate == 0.75
    assert r.pass_hat_k() == {1: 0.75, 2: 3 / 6, 3: 1 / 4, 4: 0.0}
    assert r.pass_at_k() == {1: 0.75, 2: 1.0, 3: 1.0, 4: 1.0}
    # the same as if the unscored attempts had never been made
    assert r.pass_hat_k() == row(P, P, F, P).pass_hat_k()


def test_pass_k_matches_the_formula() -> None:
    r = row(P, P, F, F, P)
    n, c = 5, 3
    for k in range(1, 6):
        assert r.pass_hat_k()[k] == pytest.approx(math.comb(c, k) / math.comb(n, k))
        assert r.pass_at_k()[k] == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_nothing_scored_has_no_rates() -> None:
    r = row(U, U)
    assert r.pass_rate is None and r.pass_hat_k() == {} and r.pass_at_k() == {}
    data = r.to_json()
    assert data["band"] == "unscored" and data["n_unscored"] == 2 and data["pass_hat_k"] == {}


def test_row_json_has_the_contract_fields() -> None:
    data = row(P, F, U).to_json()
    for key in ("task", "n_scored", "n_passed", "n_unscored", "band", "pass_hat_k", "pass_at_k", "fingerprint"):
        assert key in data
    assert data["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    assert [c["outcome"] for c in data["cells"]] == ["pass", "fail", "unscored"]


def test_sort_and_filter_by_band() -> None:
    rows = [row(P, P, task="2"), row(F, F, task="10"), row(P, F, task="1"), row(U, task="3"), row(P, F, F, task="4")]
    assert [r.task_id for r in sort_rows(rows)] == ["1", "2", "3", "4", "10"]  # numeric ids in numeric order
    assert [r.task_id for r in sort_rows(rows, "band")] == ["1", "4", "10", "2", "3"]
    assert [r.task_id for r in sort_rows(rows, "pass_rate")] == ["10", "4", "1", "2", "3"]
    assert [r.task_id for r in filter_rows(rows, ["learning_zone"])] == ["1", "4"]
    assert [r.task_id for r in filter_rows(rows, [Band.ZERO, Band.SATURATED])] == ["2", "10"]
    with pytest.raises(ValueError):
        sort_rows(rows, "colour")


def test_grid_events_and_version_marks() -> None:
    grid = CalibrationGrid()
    events: list[RowAdded | RowChanged | CellChanged] = []
    unsubscribe = grid.subscribe(events.append)
    r1 = grid.ensure_row("t", "v1", SETUP, parts={"task": "a", "tools": "x", "db": "y", "policy": "z"})
    assert events == [RowAdded(r1.key)]
    index = grid.add_cell(r1.key, Cell())
    grid.update_cell(r1.key, index, outcome=TrialOutcome.PASS, reward=1.0, ref=SimRef(Path("run.json"), "sim-1"))
    assert [type(e) for e in events[1:]] == [CellChanged, CellChanged]
    assert grid.row(r1.key).cells[0].outcome is TrialOutcome.PASS
    assert (r1.versions, r1.current) == (1, None)

    # the task is edited: its current definition has another fingerprint, and a run of it makes a new row
    grid.set_current("t", "v2", {"task": "b", "tools": "x", "db": "y", "policy": "z"})
    r2 = grid.ensure_row("t", "v2", SETUP, parts={"task": "b", "tools": "x", "db": "y", "policy": "z"})
    assert r1 is not r2 and len(grid) == 2
    assert (r1.versions, r1.current, r1.changed) == (2, False, ["task"])
    assert (r2.versions, r2.current, r2.changed) == (2, True, [])
    assert RowChanged(r1.key) in events
    assert grid.ensure_row("t", "v1", SETUP) is r1  # same version and setup: same row
    assert grid.ensure_row("t", "v1", Setup("model-b", "scripted/user")) is not r1  # another setup: own row
    assert grid.band_counts() == {"saturated": 1, "zero": 0, "learning_zone": 0, "unscored": 2}
    other = ("t", "v1", Setup("model-b", "scripted/user"))
    assert {r.key for r in grid.rows(current=False)} == {r1.key, other}
    assert {r.key for r in grid.rows(mixed_versions=True)} == {r1.key, r2.key, other}
    unsubscribe()
    count = len(events)
    grid.add_cell(r2.key, Cell())
    assert len(events) == count
