"""Pilot tests of the calibrate screen on our own warehouse domain (no tau2 data, scripted participants only).

The grid fills live as the calibrator runs (pending → running → pass / fail),
shows all three bands, sorts and filters by band, opens a trial, re-runs
selected rows, and sends an edited task's trials to a row of their own.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from textual.widgets import Input, OptionList

from tau_tui.calibrate import Band, CellChanged, TrialOutcome
from tau_tui.calibrate.grid import Row, RowKey
from tau_tui.calibrate.render import CELL_GLYPHS
from tau_tui.tui.app import TauTuiApp
from tau_tui.tui.screens.calibrate import CalibrateScreen
from tau_tui.tui.screens.gold_check import GoldCheckScreen, render_check
from tau_tui.tui.screens.rollout import RolloutScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.screens.trial_compare import TrialCompareScreen
from tau_tui.tui.widgets.calibration_table import CalibrationTable
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.calibration_view import grid_line

from .conftest import ROOT, set_input, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tau_tui.domains import DomainRegistry
    from tests.tui.conftest import MakeApp

BIG = (160, 45)
OUR_RECORDINGS = ROOT / "recordings"
WAREHOUSE_TASKS = 14


async def open_calibrate(pilot: Pilot[None], domain_row_sim: str = "wh-gold-split") -> CalibrateScreen:
    """From the runs screen: C on a simulation of the domain, then wait for the grid."""
    app = pilot.app
    assert isinstance(app, TauTuiApp)
    table = app.runs_screen.query_one(RunTable)
    table.move_cursor(next(i for i, row in enumerate(table.rows) if row.sim_id == domain_row_sim))
    await pilot.press("C")
    screen = app.screen
    assert isinstance(screen, CalibrateScreen)
    await wait_until(pilot, lambda: screen.ready, "the calibrator")
    await pilot.pause()
    return screen


async def run_trials(
    pilot: Pilot[None], screen: CalibrateScreen, agent: str, k: int, out: Path, tasks: list[str] | None = None
) -> None:
    """n, fill the form, ctrl+s, and wait until the run is over and the grid redrawn."""
    app = pilot.app
    await pilot.press("n")
    form = app.screen
    assert isinstance(form, RolloutScreen) and form.calibrate
    await wait_until(pilot, lambda: len(form.tasks) == WAREHOUSE_TASKS, "the task list")
    form.selected = set(tasks or [])
    await set_input(pilot, "#r-agent", agent)
    await set_input(pilot, "#r-k", str(k))
    await set_input(pilot, "#r-out", str(out))
    await pilot.press("ctrl+s")
    assert app.screen is screen and screen.run_path == out
    await wait_until(pilot, lambda: not screen.running, "the calibration")
    await wait_until(pilot, lambda: not screen.refresh_pending, "the grid redraw")
    await pilot.pause()
    status = screen.query_one("#cal-status", InfoLine).plain
    assert "finished" in status and f"{screen.total}/{screen.total} done" in status, status


def line_text(row: Row, table: CalibrationTable) -> str:
    return grid_line(row, table.columns, table.k).plain


async def test_grid_fills_live_from_gold_and_flaky_and_shows_all_three_bands(
    make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_calibrate(pilot)
        assert screen.calibrator is not None
        grid = screen.calibrator.grid
        recorded = len(grid)
        assert recorded and all(
            r.task_id in ("south_times_out_twice", "split_across_warehouses") for r in grid.rows()
        )  # the loaded warehouse recordings are in the grid
        seen: list[TrialOutcome] = []
        grid.subscribe(lambda e: seen.append(e.cell.outcome) if isinstance(e, CellChanged) else None)
        drawn: list[str] = []  # the trials column of each row the table redrew while the run went on
        update_row = screen.table.update_row

        def spy(key: RowKey) -> None:
            update_row(key)
            drawn.append("".join(CELL_GLYPHS[c.outcome] for c in grid.row(key).cells))

        monkeypatch.setattr(screen.table, "update_row", spy)
        flaky_out = tmp_path / "flaky.json"
        await run_trials(pilot, screen, "scripted/flaky:0.5", 4, flaky_out)
        # live: cells went pending → running → finished, and the table redrew rows while trials were unfinished
        assert TrialOutcome.PENDING in seen and TrialOutcome.RUNNING in seen
        assert {TrialOutcome.PASS, TrialOutcome.FAIL} <= set(seen)
        assert any("·" in glyphs or "…" in glyphs for glyphs in drawn)
        assert any(set(glyphs) <= {"✓", "✗"} and len(glyphs) == 4 for glyphs in drawn)
        flaky = [r for r in grid.rows() if r.setup.agent == "scripted/flaky:0.5"]
        assert len(flaky) == WAREHOUSE_TASKS and all(len(r.cells) == 4 for r in flaky)
        bands = {r.band for r in flaky}
        assert {Band.SATURATED, Band.ZERO, Band.LEARNING_ZONE} <= bands
        # the gold agent on two tasks: saturated rows of their own setup
        await run_trials(
            pilot,
            screen,
            "scripted/gold",
            2,
            tmp_path / "gold.json",
            ["allocate_from_home_warehouse", "quote_available_stock"],
        )
        gold = [r for r in grid.rows() if r.setup.agent == "scripted/gold"]
        assert len(gold) == 2 and all(r.band is Band.SATURATED for r in gold)
        assert len(screen.table.rows) == len(grid) == recorded + WAREHOUSE_TASKS + 2
        title = screen.query_one("#cal-title", InfoLine).plain
        counts = grid.band_counts()
        assert f"{counts['learning_zone']} learning zone" in title and f"{counts['zero']} zero" in title
        texts = [line_text(r, screen.table) for r in screen.table.rows]
        assert any("learning zone" in t for t in texts) and any(" zero " in t for t in texts)
        assert any("saturated" in t and "✓✓" in t for t in texts)
        # sort by band: the learning zone first; filter: only zero rows
        screen.sort = "band"
        screen.refresh_grid()
        assert screen.table.rows[0].band is Band.LEARNING_ZONE
        await pilot.press("f")
        await pilot.press(*"zero", "enter")
        assert screen.band_filter == "zero"
        assert screen.table.rows and all(r.band is Band.ZERO for r in screen.table.rows)
        # the calibration's trials are in the runs table too
        await settle(pilot)
        assert len(app.session.catalog.rows_of(flaky_out)) == WAREHOUSE_TASKS * 4


async def test_enter_on_a_cell_opens_that_trial_and_equals_compares_two(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_calibrate(pilot)
        out = tmp_path / "flaky.json"
        await run_trials(pilot, screen, "scripted/flaky:0.5", 4, out, ["allocate_from_home_warehouse"])
        table = screen.table
        index = next(i for i, r in enumerate(table.rows) if r.setup.agent == "scripted/flaky:0.5")
        table.move_to(index, 2)
        table.focus()
        await pilot.pause()
        row = table.current
        assert row is not None
        cell = row.cells[2]
        assert "trial 3/4" in screen.query_one("#cal-cell", InfoLine).plain
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: isinstance(app.screen, TrajectoryScreen) and app.screen.doc is not None, "the trajectory"
        )
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        assert cell.ref is not None
        assert trajectory.run is not None
        assert trajectory.run.path == out and trajectory.sim_id == cell.ref.sim_id
        assert trajectory.current.entries[trajectory.index].trial == cell.trial
        await pilot.press("escape")
        assert app.screen is screen
        # = on a failing and a passing trial of the task: the comparison marks where they part
        failing = next(i for i, c in enumerate(row.cells) if c.outcome is TrialOutcome.FAIL)
        passing = next(i for i, c in enumerate(row.cells) if c.outcome is TrialOutcome.PASS)
        table.move_to(index, failing)
        await pilot.press("equals_sign")
        table.move_to(index, passing)
        await pilot.press("equals_sign")
        await wait_until(pilot, lambda: getattr(app.screen, "comparison", None) is not None, "the comparison")
        assert isinstance(app.screen, TrialCompareScreen)
        assert app.screen.comparison.divergence is not None
        assert "first differing call #1" in app.screen.query_one("#trials-header", InfoLine).plain
        await pilot.press("escape")
        assert app.screen is screen


async def test_rerun_selected_rows_adds_trials_with_new_seeds(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_calibrate(pilot)
        await run_trials(
            pilot,
            screen,
            "scripted/flaky:0.5",
            2,
            tmp_path / "first.json",
            ["allocate_from_home_warehouse", "cancel_allocated_order"],
        )
        table = screen.table
        flaky = [r for r in table.rows if r.setup.agent == "scripted/flaky:0.5"]
        table.move_to(table.row_index[flaky[0].key])
        table.focus()
        await pilot.press("space")  # select the first row only
        assert table.selected == {flaky[0].key}
        await pilot.press("R")
        form = app.screen
        assert isinstance(form, RolloutScreen) and form.fixed_tasks and form.selected == {flaky[0].task_id}
        assert form.query_one("#r-agent", Input).value == "scripted/flaky:0.5"
        await set_input(pilot, "#r-out", str(tmp_path / "again.json"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.running, "the re-run")
        assert len(flaky[0].cells) == 4 and len(flaky[1].cells) == 2  # the same row grew; the other did not
        assert len({c.seed for c in flaky[0].cells}) == 4  # a re-run is not a copy of the first trials


async def test_editing_a_task_sends_its_new_trials_to_a_new_row(make_app: MakeApp, tmp_path: Path) -> None:
    domains = tmp_path / "domains"
    shutil.copytree(ROOT / "domains" / "warehouse", domains / "warehouse", ignore=shutil.ignore_patterns("__pycache__"))
    task_file = domains / "warehouse" / "data" / "tasks.json"
    edited: list[list[str]] = []

    def editor(command: list[str]) -> None:
        """Stands in for $EDITOR: adds a note to the task's description, as a person would."""
        edited.append(command)
        data = json.loads(task_file.read_text())
        tasks = data["tasks"] if isinstance(data, dict) else data
        task = next(t for t in tasks if t["id"] == "cancel_allocated_order")
        task["description"] = {**(task.get("description") or {}), "notes": "edited in the calibrate screen"}
        task_file.write_text(json.dumps(data, indent=2))

    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path, domain_paths=[domains], task_editor=editor)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_calibrate(pilot)
        await run_trials(pilot, screen, "scripted/gold", 1, tmp_path / "before.json", ["cancel_allocated_order"])
        table = screen.table
        old = next(r for r in table.rows if r.task_id == "cancel_allocated_order")
        table.move_to(table.row_index[old.key])
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, RolloutScreen), "the re-run offer")
        assert edited and edited[0][-1] == str(task_file) and edited[0][-2].startswith("+")
        assert old.current is False and old.changed == ["task"]
        form = app.screen
        assert isinstance(form, RolloutScreen)
        assert form.fixed_tasks and form.selected == {"cancel_allocated_order"}
        await set_input(pilot, "#r-out", str(tmp_path / "after.json"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.running, "the re-run")
        await wait_until(pilot, lambda: not screen.refresh_pending, "the grid redraw")
        assert screen.calibrator is not None
        rows = [r for r in screen.calibrator.grid.rows() if r.task_id == "cancel_allocated_order"]
        assert len(rows) == 2 and {r.current for r in rows} == {True, False}
        new = next(r for r in rows if r.current)
        assert new.fingerprint != old.fingerprint and len(new.cells) == 1 and len(old.cells) == 1  # never pooled
        assert all(r.mixed_versions for r in rows)
        assert "mixes 2 versions" in line_text(old, table) and "not current (task)" in line_text(old, table)
        assert "not current" not in line_text(new, table)
        assert "several versions of a task" in screen.query_one("#cal-title", InfoLine).plain


async def test_gold_check_view_lists_each_task(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path, calibrate="warehouse")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CalibrateScreen)  # --calibrate opens it once the files are read
        await wait_until(pilot, lambda: screen.ready, "the calibrator")
        await pilot.press("c")
        gold = app.screen
        assert isinstance(gold, GoldCheckScreen)
        await wait_until(pilot, lambda: gold.finished, "the gold check")
        assert len(gold.checks) == WAREHOUSE_TASKS and all(c.ok for c in gold.checks)
        assert (
            f"{WAREHOUSE_TASKS}/{WAREHOUSE_TASKS} tasks checked · 0 failing"
            in gold.query_one("#gold-title", InfoLine).plain
        )
        assert "OK" in gold.query_one("#gold-detail", RichPane).plain
        await pilot.press("f")  # failing only: none
        assert gold.query_one("#gold-tasks", OptionList).option_count == 0
        await pilot.press("escape")
        assert app.screen is screen


def test_a_failing_gold_check_shows_its_reasons_and_the_differing_paths(registry: DomainRegistry) -> None:
    from tau_tui.calibrate import GoldChecker

    checker = GoldChecker.for_name(registry, "telecom")
    task = checker.domain.tasks()["[mobile_data_issue]user_abroad_roaming_disabled_on[PERSONA:Easy]"]
    check = checker.run([task])[0]
    assert not check.ok
    console = Console(width=160)
    with console.capture() as capture:
        console.print(render_check(check))
    text = capture.get()
    assert "FAIL" in text and "gold state vs live path: DIFFERENT" in text
    assert "surroundings.roaming_allowed" in text and "gold state differs from the live path" in text


def _forked_warehouse(folder: Path) -> None:
    """The warehouse recording and a fork of its wh-gold-split by scripted/gold (``tau-tui fork``)."""
    from tau_tui.cli import main

    folder.mkdir()
    shutil.copyfile(OUR_RECORDINGS / "warehouse.json", folder / "warehouse.json")
    assert (
        main(
            [
                "fork",
                str(folder / "warehouse.json"),
                "--sim",
                "wh-gold-split",
                "--after",
                "2",
                "--agent-llm",
                "scripted/gold",
                "--out",
                str(folder / "fork.json"),
            ]
        )
        == 0
    )


async def test_a_fork_is_no_trial_of_the_grid_and_the_status_line_says_it_was_left_out(
    make_app: MakeApp, tmp_path: Path
) -> None:
    folder = tmp_path / "runs"
    await asyncio.to_thread(_forked_warehouse, folder)
    app = make_app([folder], runs_dir=tmp_path / "new")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        assert len(app.session.catalog.rows) == 4  # the fork is in the runs table
        screen = await open_calibrate(pilot)
        assert screen.calibrator is not None
        cells = [c for r in screen.calibrator.grid.rows() for c in r.cells]
        assert len(cells) == 3 and all(c.ref is not None and c.ref.path.name == "warehouse.json" for c in cells)
        status = screen.query_one("#cal-status", InfoLine).plain
        assert "3 recorded trials loaded · 1 fork left out" in status, status
