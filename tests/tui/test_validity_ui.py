"""The validity lines beside the scores in the TUI: the two-way compare screen, the N-way one and the metrics
screen say what of a run changes what its number means (the CLI's: tests/evaluate/test_validity.py)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from textual.widgets import Static

from tau_tui.tui.screens.many_compare import ManyCompareScreen
from tau_tui.tui.screens.metrics import MetricsScreen
from tau_tui.tui.screens.run_compare import RunCompareScreen
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.summary_pane import SummaryPane

from ..conftest import CORPUS
from .conftest import settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

ORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"
GPT41 = CORPUS / "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json"
WRONG_ID = "43 of 50 simulations carry another task's id"


def _text(widget: Static | RichPane) -> str:
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(widget.content)
    return " ".join(console.export_text().split())


async def test_the_compare_screen_says_it_beside_the_difference(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = RunCompareScreen(GPT41, ORCHESTRA)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        await pilot.pause()
        summary = _text(screen.query_one("#runcmp-summary", SummaryPane))
        assert f"⚠ B: {WRONG_ID}" in summary
        assert summary.index("mean reward B − A") < summary.index(WRONG_ID)


async def test_the_many_compare_screen_names_the_run(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        screen = ManyCompareScreen([GPT41, ORCHESTRA], 0)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        await pilot.pause()
        assert any(line.startswith(f"[2]: {WRONG_ID}") for line in screen.comparison.warnings)


async def test_the_metrics_screen_says_it_beside_the_score(make_app: MakeApp) -> None:
    app = make_app([ORCHESTRA])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, MetricsScreen)
        await wait_until(pilot, lambda: screen.complete, "the metrics")
        await pilot.pause()
        summary = _text(screen.query_one("#metrics-summary", Static))
        assert f"⚠ {WRONG_ID}" in summary
        assert screen.validity().wrong_task_id == 43
