"""Pilot test of a submission folder in the TUI: the runs table groups by it, the metrics screen shows its claims."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from textual.widget import Widget
from textual.widgets import Static

from tau_tui.tui.screens.metrics import MetricsScreen
from tau_tui.tui.widgets.run_table import RunTable
from tests.model.test_submission import build_submission

from .conftest import settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus


def plain(screen: Widget, selector: str) -> str:
    console = Console(width=150, record=True, file=io.StringIO())
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


async def test_a_submission_folder_in_the_runs_table_and_the_metrics_screen(make_app: MakeApp, tmp_path: Path) -> None:
    folder = build_submission(tmp_path)
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert [r.submission for r in app.session.catalog.rows] == ["gpt-4.1-mini · OpenAI"] * 3
        table = app.runs_screen.query_one(RunTable)
        assert "submission" in {c.key for c in table.scrolling}
        retail = next(i for i, r in enumerate(table.rows) if r.domain == "retail")
        table.move_cursor(retail)
        table.focus()
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, MetricsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        summary = plain(screen, "#metrics-summary")
        assert "submission gpt-4.1-mini · OpenAI claims for retail: pass^1 0.500 (ours 1.000)" in summary


async def test_a_claim_without_a_trajectory_file_is_a_notice(make_app: MakeApp, tmp_path: Path) -> None:
    from tests.model.test_submission import UNFILED, unfiled_telecom

    folder = unfiled_telecom(tmp_path)
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        texts = [n.text for n in app.session.catalog.all_notices()]
        assert texts and all(UNFILED in t for t in texts) and len(texts) == 2  # one per run of the submission
