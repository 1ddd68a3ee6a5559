"""The compare screens and the rollout form at 80 and 120 columns: the statistics stay whole and the run labels
give way (shortened; the run under the cursor named whole on a detail line); the rollout form's task list says
what an empty selection runs, and its model fields are reachable with tab on a small terminal."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest
from rich.console import Console
from textual.widget import Widget
from textual.widgets import DataTable, Input

from tau_tui.trust.many import summary_table
from tau_tui.tui.screens.many_compare import ManyCompareScreen
from tau_tui.tui.screens.run_compare import RunCompareScreen
from tau_tui.tui.screens.runs_comparison import RunsComparisonScreen

from ..conftest import CORPUS
from .conftest import open_rollout_form, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tau_tui.tui.app import TauTuiApp
    from tests.tui.conftest import MakeApp

SIZES = [(80, 24), (120, 35)]
GPT41 = CORPUS / "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json"
QWEN = CORPUS / "sierra-research__tau2-bench__qwen2.5-7b_airline_default_gpt-4.1-2025-04-14_1trials.json"
ORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"

ComparisonScreen = TypeVar("ComparisonScreen", bound=RunsComparisonScreen)


def screen_lines(app: TauTuiApp) -> list[str]:
    """The screen as drawn, one string per row (what ``export_screenshot`` draws, as plain text)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()


def drawn_in(app: TauTuiApp, widget: Widget) -> str:
    """The text drawn inside ``widget``'s region, its rows joined with newlines."""
    region = widget.region
    rows = screen_lines(app)[region.y : region.bottom]
    return "\n".join(row[region.x : region.right] for row in rows)


def squeezed(text: str) -> str:
    """``text`` without whitespace: a label wrapped over rows reads the same."""
    return "".join(text.split())


async def _recorded(pilot: Pilot[None], screen: ComparisonScreen) -> ComparisonScreen:
    """Push a compare screen on its recorded rewards (nothing replayed) and wait until it shows them."""
    screen.recorded = True
    pilot.app.push_screen(screen)
    await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
    await pilot.pause()
    return screen


pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("size", SIZES)
async def test_many_compare_keeps_the_statistics_whole_and_the_label_gives_way(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = await _recorded(pilot, ManyCompareScreen([GPT41, QWEN, ORCHESTRA], 0))
        many = screen.comparison
        lines = screen_lines(app)
        summary = drawn_in(app, screen.query_one("#manycmp-summary")).splitlines()
        header = next((line for line in summary if "Δ vs base" in line), "")
        assert "Holm p" in header and "−/+" in header and " p " in header
        _, *rows = summary_table(many)
        for run, row in zip(many.runs, rows, strict=True):
            if run.baseline:
                continue
            delta, p, holm_p, moves = row[3:7]
            line = next((line for line in summary if delta in line), None)
            assert line is not None, (delta, summary)  # the difference and its interval, whole
            rest = line[line.index(delta) + len(delta) :].split()
            assert rest[:3] == [p, holm_p, moves], line  # then p, Holm p and −/+, whole, in that order
            assert run.label not in line and "…" in line and run.label[:4] in line  # the label shortened
        matrix_head = next((line for line in lines if "[1]*" in line), "")
        assert "−/+" in matrix_head  # the task matrix's last column too
        grid = screen.query_one("#manycmp-tasks", DataTable)
        for column in (2, 3):  # the run under the cursor, named whole on the detail line
            grid.move_cursor(row=0, column=column)
            await pilot.pause()
            detail = drawn_in(app, screen.query_one("#manycmp-detail"))
            assert squeezed(many.runs[column - 1].label) in squeezed(detail), detail
            assert detail.lstrip().startswith(f"[{column}]")
        assert screen.query_one("#manycmp-detail").region.bottom < size[1] - 1  # above the footer
        assert grid.region.height >= 6  # and the matrix keeps room for some rows


@pytest.mark.parametrize("size", SIZES)
async def test_run_compare_keeps_p_and_the_interval_whole_and_the_labels_give_way(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = await _recorded(pilot, RunCompareScreen(GPT41, ORCHESTRA))
        cmp = screen.comparison
        m, d = cmp.matrix, cmp.difference
        lines = screen_lines(app)
        title = lines[0]
        assert title.rstrip().endswith("recorded rewards · cells: all"), title  # the labels gave way, not these
        assert " A " in title and " B " in title and "…" in title
        assert cmp.a_label not in title and cmp.b_label not in title
        drawn = "\n".join(lines)
        assert f"A-only {m['a_only']}, B-only {m['b_only']}, p = {cmp.mcnemar_p:.4g}" in drawn
        assert f"{d.estimate * 100:+.1f} points [{d.low * 100:+.1f}, {d.high * 100:+.1f}]" in drawn
        detail = drawn_in(app, screen.query_one("#runcmp-detail"))
        assert squeezed(f"A {cmp.a_label}") in squeezed(detail) and squeezed(f"B {cmp.b_label}") in squeezed(detail)
        table = screen.query_one("#runcmp-rows", DataTable)
        assert table.region.height >= 6  # the summary leaves room for some rows
        assert any(line.lstrip("│ ").startswith(str(cmp.rows[0].task)) for line in lines[table.region.y + 2 :])


# --- the rollout form -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
async def test_rollout_form_says_an_empty_selection_runs_every_task_and_ticks_none(
    make_app: MakeApp, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=size) as pilot:
        form = await open_rollout_form(pilot)
        total = len(form.tasks)
        assert total > 1 and not form.selected
        tasks = form.query_one("#r-tasks")
        drawn = drawn_in(app, tasks).splitlines()
        shown = [line for line in drawn if any(task in line for task, _ in form.tasks)]
        assert shown and all("▐ ▌" in line and "X" not in line.split("▌")[0] for line in shown), drawn
        count = drawn_in(app, form.query_one("#r-task-count"))
        assert f"no task ticked: all {total} tasks run" in count
        assert form.request().tasks is None  # what the line says: every task of the domain
        tasks.focus()
        await pilot.press("space")  # tick the first
        await pilot.pause()
        drawn = drawn_in(app, tasks).splitlines()
        first = next(line for line in drawn if form.tasks[0][0] in line)
        assert "▐X▌" in first and sum("▐X▌" in line for line in drawn) == 1
        assert f"1 of {total} tasks ticked" in drawn_in(app, form.query_one("#r-task-count"))
        assert form.request().tasks == [form.tasks[0][0]]


@pytest.mark.parametrize("size", SIZES)
async def test_rollout_form_model_fields_are_reachable_with_tab(
    make_app: MakeApp, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=size) as pilot:
        form = await open_rollout_form(pilot)
        box = form.query_one("#rollout-form")
        for field_id in ("#r-agent", "#r-agent-args", "#r-user", "#r-user-args"):
            field = form.query_one(field_id, Input)
            for _ in range(12):
                if field.has_focus:
                    break
                await pilot.press("tab")
            assert field.has_focus, field_id
            await pilot.pause()
            region = field.region
            assert region.height and app.screen.region.contains_region(region), (field_id, region)
            assert box.content_region.contains_region(region), (field_id, region, box.content_region)
            assert field.value in drawn_in(app, field) or field.placeholder[:8] in drawn_in(app, field)


# --- the labels that give way (pure) ------------------------------------------------------------------------


def test_shortened_labels_keep_the_model_and_fit_their_room() -> None:
    from tau_tui.views.compare_labels import fitted_line, shortened

    labels = [f"gpt-4.1 ({GPT41.name})", f"ollama_chat/qwen2.5:7b ({QWEN.name})"]
    for room in (20, 30, 60, 100):
        short = shortened(labels, room)
        assert sum(map(len, short)) <= max(room, 12), (room, short)
        assert all(s == label or "…" in s for s, label in zip(short, labels, strict=True))
    assert shortened(labels, 60)[0].startswith("gpt-4.1 (")  # the model whole while the file name keeps a few
    assert shortened(labels, 500) == labels
    line = fitted_line([("A ", "", False), (labels[0], "", True), (" · 2 rewards", "", False)], 40)
    assert line.cell_len <= 40 and line.plain.endswith(" · 2 rewards") and line.plain.startswith("A gpt-4.1")
