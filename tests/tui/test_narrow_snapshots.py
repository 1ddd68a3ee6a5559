"""SVG snapshots of the compare screens and the rollout form at 80×24 and 120×35 (recorded rewards: nothing
replayed), where the run labels give way to the statistics."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.tui.screens.many_compare import ManyCompareScreen
from tau_tui.tui.screens.run_compare import RunCompareScreen
from tau_tui.tui.screens.runs_comparison import RunsComparisonScreen

from ..conftest import CORPUS
from .conftest import open_rollout_form, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

SIZES = [(80, 24), (120, 35)]
GPT41 = CORPUS / "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json"
QWEN = CORPUS / "sierra-research__tau2-bench__qwen2.5-7b_airline_default_gpt-4.1-2025-04-14_1trials.json"
ORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"


async def _show(pilot: Pilot[None], screen: RunsComparisonScreen) -> None:
    screen.recorded = True
    pilot.app.push_screen(screen)
    await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x35"])
def test_many_compare_at(snap_compare: Callable[..., bool], make_app: MakeApp, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        screen = ManyCompareScreen([GPT41, QWEN, ORCHESTRA], 0)
        await _show(pilot, screen)
        screen.query_one("#manycmp-tasks", DataTable).move_cursor(row=0, column=3)  # the detail line names run [3]
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x35"])
def test_run_compare_at(snap_compare: Callable[..., bool], make_app: MakeApp, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await _show(pilot, RunCompareScreen(GPT41, ORCHESTRA))

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x35"])
def test_rollout_form_at(snap_compare: Callable[..., bool], make_app: MakeApp, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        form = await open_rollout_form(pilot)
        form.query_one("#r-agent").focus()  # scrolled to the model fields
        await pilot.pause()

    app = make_app(runs_dir=Path("runs"))  # relative: the output placeholder names no temporary folder
    assert snap_compare(app, terminal_size=size, run_before=run_before)
