"""The run-vs-run comparison screen: M marks files in the runs table, V compares the two marked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.tui.screens.run_compare import RunCompareScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.screens.trial_compare import TrialCompareScreen
from tau_tui.tui.widgets.fitting_footer import FittingFooter
from tau_tui.tui.widgets.run_table import RunTable

from ..conftest import CORPUS
from .conftest import notified, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tau_tui.analysis import Analyzer
    from tau_tui.model.notes import Note
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

BIG = (170, 50)
A = CORPUS / "sierra-research__tau2-bench__gpt-4.1_telecom_default_gpt-4.1_1trials.json"
B = (
    CORPUS
    / "sierra-research__tau2-bench__ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_telecom_default_gpt-4.1_1trials.json"
)


async def test_mark_two_files_matrix_filter_and_enter_opens_the_pair(make_app: MakeApp) -> None:
    app = make_app([A, B])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        for path in (A, B):
            table.move_cursor(next(i for i, r in enumerate(table.rows) if r.path == path))
            await pilot.press("M")
        await pilot.press("V")
        screen = app.screen
        assert isinstance(screen, RunCompareScreen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        cmp = screen.comparison
        # the same matrix as `tau-tui compare` (tests/commands/test_cli_compare.py counts it by hand from the JSON)
        assert cmp.matrix == {"both_pass": 18, "a_only": 0, "b_only": 12, "both_fail": 10, "not_comparable": 0}
        summary = str(screen.query_one("#runcmp-summary").render())
        assert "B only 12" in summary and "p = 0.0004883" in summary and "seed 0" in summary
        assert len(screen.shown) == 40
        await pilot.press("f")  # discordant cells only
        await pilot.pause()
        assert screen.cell_filter == "discordant"
        assert len(screen.shown) == 12 and all(row.category == "b_only" for row in screen.shown)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrialCompareScreen), "the trial comparison")
        trial = app.screen
        assert isinstance(trial, TrialCompareScreen)
        await wait_until(pilot, lambda: trial.comparison is not None, "the pair replayed")
        row = screen.shown[0]
        assert trial.comparison.left.task_id == trial.comparison.right.task_id == row.task
        await pilot.press("escape")
        assert app.screen is screen


async def _recorded_comparison(pilot: Pilot[None], a: Path, b: Path) -> RunCompareScreen:
    """The comparison screen of ``a`` and ``b`` on their recorded rewards (nothing replayed), once shown."""
    screen = RunCompareScreen(a, b)
    screen.recorded = True
    pilot.app.push_screen(screen)
    await wait_until(pilot, lambda: screen.comparison is not None and screen.shown, "the comparison")
    await pilot.pause()
    return screen


def _shown_tasks(screen: RunCompareScreen) -> list[str]:
    """The task column as drawn: what fits its width."""
    table = screen.query_one("#runcmp-rows", DataTable)
    width = next(iter(table.columns.values())).width
    return [table.get_row_at(i)[0].plain[:width] for i in range(table.row_count)]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_telecom_task_ids_read_apart_and_take_the_free_width(make_app: MakeApp, size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = await _recorded_comparison(pilot, A, B)
        shown = _shown_tasks(screen)
        assert len(shown) == 40 and len(set(shown)) == 40, [t for t in shown if shown.count(t) > 1]
        table = screen.query_one("#runcmp-rows", DataTable)
        widths = [column.width for column in table.columns.values()]
        if size[0] >= 160:  # the task column takes what the others leave (cells are padded by one each side)
            assert sum(widths) + 2 * len(widths) == table.size.width - 2
            assert widths[0] > 60
        footer = screen.query_one(FittingFooter)  # its keys whole, none cut at the edge
        palette = next(child for child in footer.children if child.has_class("-command-palette"))
        assert all(
            child.region.right <= palette.region.x
            for child in footer.children
            if child.display and child is not palette
        )
        await pilot.resize_terminal(200, 50) if size[0] < 160 else await pilot.resize_terminal(100, 30)
        await pilot.pause()
        after = _shown_tasks(screen)
        assert len(set(after)) == 40
        assert (max(map(len, after)) > max(map(len, shown))) == (size[0] < 160)  # re-fitted to the new width


async def test_runs_of_two_domains_say_so_and_are_not_task_changed(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await _recorded_comparison(
            pilot,
            CORPUS / "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json",
            CORPUS / "sierra-research__tau2-bench__gpt-4.1_retail_defautl_gpt-4.1_1trials.json",
        )
        summary = str(screen.query_one("#runcmp-summary").render())
        assert summary.count("A is domain airline and B is domain retail") == 1
        assert "task changed" not in summary and "different domain" in summary
        assert "task changed" not in {row.reason for row in screen.comparison.rows}


AIRLINE = CORPUS / "sierra-research__tau2-bench__airline.json"


async def test_passed_but_violated_flag_filter(make_app: MakeApp, analyzer: Analyzer) -> None:
    """The flag filter's "passed but violated the policy": a pass with a policy-compliance flag."""
    from tau_tui.catalog import PASSED_BUT_VIOLATED, RunFilter, flag_options
    from tau_tui.evaluate.compliance import COMPLIANCE_KINDS
    from tau_tui.model.io import open_run

    run = open_run(AIRLINE)
    expected = set()
    for entry in run.entries:
        report = analyzer.evaluate(run, entry.index)
        if report.evaluation.reward == 1.0 and any(f.kind in COMPLIANCE_KINDS for f in report.flags):
            expected.add(entry.id)
    assert expected  # claude-opus-4-6 passes some airline tasks with an unconfirmed write or an early transfer
    app = make_app([AIRLINE])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: all(r.evaluation is not None for r in app.session.catalog.rows), "evaluations")
        counts = dict(app.runs_screen._flag_values())
        assert counts[PASSED_BUT_VIOLATED] == len(expected)
        assert (PASSED_BUT_VIOLATED, f"passed but violated the policy  ·  {len(expected)} runs") in flag_options(counts)
        app.runs_screen.set_filter(RunFilter(flag=PASSED_BUT_VIOLATED))
        await pilot.pause()
        assert {r.sim_id for r in app.runs_screen.query_one(RunTable).rows} == expected


async def test_S_accepts_the_suggested_source_of_a_flag_as_a_note(make_app: MakeApp, tmp_path: Path) -> None:
    """``user_stopped_early`` suggests the user: S on its step saves that note, with no form."""
    from tests.helpers import greet, results_file, say, user

    from .conftest import open_sim

    messages = [
        greet(),
        user("finish task_1"),
        say("Shall I mark task_1 as completed?"),
        user("Yes please. ###STOP###"),
    ]
    path = results_file(tmp_path / "early.json", messages)
    app = make_app([path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, "sim-1")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await wait_until(pilot, lambda: screen.report is not None, "the evaluation")
        assert screen.report is not None
        assert [(f.kind, f.step) for f in screen.report.flags if f.kind == "user_stopped_early"] == [
            ("user_stopped_early", 3)
        ]
        screen.go(1)
        await pilot.pause()
        await pilot.press("S")  # no flag with a suggestion here: nothing saved
        await pilot.pause()
        screen.go(3)
        await pilot.pause()
        await pilot.press("S")

        def notes() -> list[Note]:
            row = app.session.catalog.find(path, "sim-1")
            assert row is not None
            return row.notes

        await wait_until(pilot, lambda: bool(notes()), "the note")
        note = notes()[0]
        assert (note.source, note.error_type, note.step) == ("user", "premature_end", 3)
        assert note.text.startswith("user_stopped_early:") and len(notes()) == 1


TOOLORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"


async def test_audit_screen_matches_the_cli_and_opens_a_simulation(
    make_app: MakeApp, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tau_tui.cli import main
    from tau_tui.tui.screens.audit import AuditScreen
    from tau_tui.tui.screens.trajectory import TrajectoryScreen

    main(["audit", "--json", "--tau2-data", str(tau2_data), str(TOOLORCHESTRA)])
    expected = {
        json.loads(line)["sim"]
        for line in capsys.readouterr().out.splitlines()
        if json.loads(line)["kind"] == "simulation"
    }
    app = make_app([TOOLORCHESTRA])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("u")
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        await wait_until(pilot, lambda: screen.audit is not None, "the audit")
        assert {s.sim_id for s in screen.shown} == expected and len(expected) == 25
        summary = str(screen.query_one("#audit-summary").render())
        assert "avg reward 56.0 recorded → 14.0 ours" in summary
        await pilot.press("a")  # every simulation a rule applies to, the agreeing ones as notes
        await pilot.pause()
        assert len(screen.shown) > 25
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen), "the trajectory")
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.sim_id == screen.shown[0].sim_id


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_audit_screen_shows_only_the_effect_above_a_table_that_keeps_its_rows(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    from tau_tui.tui.screens.audit import AuditScreen

    app = make_app([TOOLORCHESTRA])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("u")
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        await wait_until(pilot, lambda: screen.audit is not None, "the audit")
        await pilot.pause()
        summary = str(screen.query_one("#audit-summary").render()).splitlines()
        assert summary[0].startswith("effect: avg reward 56.0 recorded → 14.0 ours")
        assert not any(
            "values_changed" in line or "task_changed:" in line or line.startswith("task ") for line in summary
        )
        effect = screen.query_one("#audit-effect")
        assert effect.outer_size.height <= 0.4 * size[1] + 1
        table = screen.query_one(DataTable)
        assert table.size.height - 1 >= min(5, len(screen.shown))  # a header line, then at least five rows


async def test_a_file_that_cannot_be_read_is_said_and_the_screen_goes_back(make_app: MakeApp, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    app = make_app([A])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        runs = app.screen
        app.push_screen(RunCompareScreen(A, broken))
        await wait_until(pilot, lambda: app.screen is runs, "back to the runs table")
        await wait_until(pilot, lambda: notified(app, "cannot compare", "broken.json"), "the toast naming the file")
