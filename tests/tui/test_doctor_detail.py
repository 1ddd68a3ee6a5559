"""The doctor screen's detail pane: the cursor's finding whole (no cut, no sideways scrolling), its effect and
what to do, following the cursor; and the clusters view saying why it is empty."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.doctor.rules import RULES
from tau_tui.tui.screens.doctor import DoctorScreen
from tau_tui.tui.widgets.rich_pane import RichPane

from .conftest import settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus


def _flat(text: str) -> str:
    return " ".join(text.split())


async def _doctor_with_tasks(pilot: Pilot[None]) -> DoctorScreen:
    await settle(pilot)
    await pilot.press("D")
    screen = pilot.app.screen
    assert isinstance(screen, DoctorScreen)
    await wait_until(pilot, lambda: screen.exam is not None, "the examination")
    await pilot.press("t")
    await wait_until(pilot, lambda: screen.exam is not None and screen.task_findings, "task findings")
    await pilot.pause()
    return screen


async def test_detail_pane_shows_a_long_finding_whole_and_follows_the_cursor(make_app: MakeApp) -> None:
    app = make_app()  # the mock demo: its domain's task rules find long reasons
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _doctor_with_tasks(pilot)
        table = screen.query_one("DataTable", DataTable)
        pane = screen.query_one("#doctor-detail", RichPane)
        row, finding = max(
            ((i, f) for i, f in enumerate(screen.shown) if f is not None), key=lambda pair: len(pair[1].detail)
        )
        assert len(finding.detail) > 300  # far wider than the screen
        table.move_cursor(row=row)
        await pilot.pause()
        shown = _flat(pane.plain)
        assert _flat(finding.detail) in shown  # the whole message, wrapped
        advice = RULES[finding.rule].advice
        assert f"effect: {_flat(advice.effect)}" in shown and f"what to do: {_flat(advice.todo_line)}" in shown
        assert "evidence:" in shown and f"domain mock, task {finding.task}" in shown
        assert table.max_scroll_x == 0  # the columns fit: nothing to scroll sideways to
        # a header row shows its rule; the pane follows the cursor
        header = next(i for i, f in enumerate(screen.shown) if f is None and screen.row_rules[i] == "empty_component")
        table.move_cursor(row=header)
        await pilot.pause()
        shown = _flat(pane.plain)
        assert shown.startswith("rule: empty_component (warning): ") and _flat(finding.detail) not in shown
        await pilot.press("down")
        await pilot.pause()
        assert _flat(screen.shown[header + 1].detail) in _flat(pane.plain)


async def test_empty_clusters_view_says_why(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_until(pilot, lambda: screen.exam is not None, "the examination")
        await pilot.press("c")
        await pilot.pause()
        assert screen.shown == [] and screen.exam.failures == 1
        shown = _flat(screen.query_one("#doctor-detail", RichPane).plain)
        assert "no failure clusters: only 1 failed simulation(s) of 5: a cluster needs 2 or more failures" in shown
