"""The compare view on two corpus trials of one telecom task: = marks one run, = on another compares."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.calibrate import compare_simulations
from tau_tui.model.io import RunFile, open_run
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.screens.trial_compare import TrialCompareScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.run_table import RunTable

from ..conftest import CORPUS
from .conftest import current_screen, settle, wait_until

if TYPE_CHECKING:
    from tau_tui.calibrate.compare import TrialComparison
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

BIG = (160, 45)
TELECOM = (
    CORPUS / "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
)


def first_trials_with_different_calls(analyzer: Analyzer) -> tuple[RunFile, str, int, int, TrialComparison]:
    """(run, task, index a, index b, comparison) of the first two trials of one task that part at some call
    (gpt-4.1 at temperature 0 repeats itself: in this file only one task has trials that differ)."""
    run = open_run(TELECOM)
    by_task: dict[str, dict[int, int]] = {}
    for entry in run.entries:
        assert entry.trial is not None
        by_task.setdefault(entry.task_id, {})[entry.trial] = entry.index
    for task, trials in by_task.items():
        for x, y in itertools.combinations(sorted(trials), 2):
            comparison = compare_simulations(analyzer, (run, trials[x]), (run, trials[y]))
            if comparison.divergence is not None:
                return run, task, trials[x], trials[y], comparison
    raise AssertionError("no two trials of a task differ")


def unlabelled(data: dict[str, Any]) -> dict[str, Any]:
    """A comparison's JSON without the side labels (the screen names its sides its own way)."""
    return {**data, "left": {**data["left"], "label": None}, "right": {**data["right"], "label": None}}


async def test_two_trials_of_a_task_side_by_side_with_the_first_differing_call(
    make_app: MakeApp, analyzer: Analyzer
) -> None:
    run, task, a, b, expected = first_trials_with_different_calls(analyzer)
    app = make_app([TELECOM])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        for index in (a, b):
            table.move_cursor(next(i for i, r in enumerate(table.rows) if r.index == index))
            await pilot.press("equals_sign")
        screen = app.screen
        assert isinstance(screen, TrialCompareScreen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        comparison = screen.comparison
        assert comparison.left.task_id == comparison.right.task_id == task
        assert unlabelled(comparison.to_json()) == unlabelled(expected.to_json())  # the headless comparison
        d = comparison.divergence
        header = screen.query_one("#trials-header", InfoLine).plain
        turn = next(t.index for t in comparison.turns if t.divergent)
        assert f"first differing call #{d.position + 1} at turn {turn}" in header
        text = screen.plain
        marked = [line for line in text.splitlines() if line.lstrip().startswith(f"▶{turn} ")]
        assert len(marked) == 1  # the divergent turn, marked once
        assert f"▶ first differing tool call: #{d.position + 1}" in text
        assert f"DB right after it (left step {d.left_step}, right step {d.right_step})" in text
        trial = run.entries[a].trial
        title = screen.query_one("#trials-view").border_title
        assert title is not None and f"trial {trial}" in title
        # o opens the left run at the differing call
        await pilot.press("o")
        await wait_until(
            pilot, lambda: isinstance(app.screen, TrajectoryScreen) and app.screen.doc is not None, "the trajectory"
        )
        expected_step = d.left.step if d.left is not None else d.left_step
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.index == a and app.screen.cursor == expected_step
        await pilot.press("escape")
        assert current_screen(app) is screen


async def test_runs_of_different_tasks_are_not_compared(make_app: MakeApp) -> None:
    app = make_app([TELECOM])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        tasks: dict[str, int] = {}
        for i, row in enumerate(table.rows):
            tasks.setdefault(row.task, i)
        first, second = list(tasks.values())[:2]
        for index in (first, second):
            table.move_cursor(index)
            await pilot.press("equals_sign")
        await wait_until(pilot, lambda: app.screen is app.runs_screen, "the refusal")
        assert app.session.compare_mark is None
