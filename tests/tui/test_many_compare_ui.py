"""Many runs in the TUI: M marks three files, V picks the baseline, the tasks × runs matrix is the CLI's, and
Enter on a run's cell opens the trajectories of that task beside the baseline's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.cli import main
from tau_tui.model.io import open_run
from tau_tui.trust import RunSide, compare_many, load_side
from tau_tui.tui.screens.many_compare import ManyCompareScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.run_compare import RunCompareScreen
from tau_tui.tui.screens.trial_compare import TrialCompareScreen
from tau_tui.tui.widgets.run_table import RunTable

from .conftest import settle, wait_until

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tests.tui.conftest import MakeApp

BIG = (170, 50)
AGENTS = (("gold", "scripted/gold"), ("flaky5", "scripted/flaky:0.5"), ("flaky3", "scripted/flaky:0.3"))


@pytest.fixture
def three_runs(tmp_path: Path, tau2_data: Path) -> list[Path]:
    """Three k=2 runs of the mock tasks: the scripted gold agent and two flaky ones."""
    folder = tmp_path
    paths = []
    for name, agent in AGENTS:
        out = folder / f"{name}.json"
        args = ["run", "--domain", "mock", "--agent-llm", agent, "--user-llm", "scripted/user", "-k", "2"]
        assert main([*args, "--out", str(out), "--tau2-data", str(tau2_data), "--quiet"]) == 0
        paths.append(out)
    return paths


async def test_mark_three_pick_the_baseline_matrix_and_enter(
    make_app: MakeApp, three_runs: list[Path], analyzer: Analyzer
) -> None:
    paths = three_runs
    app = make_app(paths)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        for path in paths:
            table.move_cursor(next(i for i, r in enumerate(table.rows) if r.path == path))
            await pilot.press("M")
        assert app.runs_screen.file_marks == paths
        await pilot.press("V")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen), "the baseline picker")
        await pilot.press("down", "down", "down", "enter")  # to the list, then the third file: the baseline
        await wait_until(pilot, lambda: isinstance(app.screen, ManyCompareScreen), "the many-runs screen")
        screen = app.screen
        assert isinstance(screen, ManyCompareScreen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        many = screen.comparison
        assert many.baseline == 2 and app.runs_screen.file_marks == []
        sides = []
        for path in paths:  # the same matrix as trust.compare_many computes headlessly (the CLI's)
            outcomes, _ = load_side([(path, open_run(path))], analyzer)
            sides.append(RunSide("", str(path), outcomes))
        expected = compare_many(sides, 2)
        assert [t.task for t in many.tasks] == [t.task for t in expected.tasks]
        assert [r.comparison.matrix if r.comparison else None for r in many.runs] == [
            r.comparison.matrix if r.comparison else None for r in expected.runs
        ]
        grid = screen.query_one("#manycmp-tasks", DataTable)
        assert grid.row_count == len(many.tasks) and len(grid.columns) == 1 + 3 + 1
        drawn = app.export_screenshot().replace("&#160;", " ")
        assert "Holm" in drawn and "baseline" in drawn and "regressions first" in drawn
        await pilot.press("c")  # the charts in place of the matrix, and back
        await pilot.pause()
        assert screen.charts_shown and not grid.display
        drawn = app.export_screenshot().replace("&#160;", " ")
        assert "pass^k against k" in drawn and "Pareto front" in drawn and "termination reasons" in drawn
        await pilot.press("c")
        await pilot.pause()
        assert not screen.charts_shown and grid.display
        moved = next(i for i, t in enumerate(many.tasks) if t.cells[0].regressions or t.cells[0].improvements)
        grid.move_cursor(row=moved, column=1)  # run [1] against the baseline [3]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialCompareScreen), "the trial comparison")
        trial = app.screen
        assert isinstance(trial, TrialCompareScreen)
        await wait_until(pilot, lambda: trial.comparison is not None, "the pair replayed")
        assert trial.comparison.left.task_id == trial.comparison.right.task_id == many.tasks[moved].task
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, RunCompareScreen), "the two-way comparison")
        assert app.screen.paths == (paths[2], paths[0])
