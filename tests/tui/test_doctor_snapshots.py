"""SVG snapshots of the doctor screen (findings with the detail pane), at the smallest and a common size."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.tui.screens.doctor import DoctorScreen

from .conftest import settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus


def _doctor_on_the_longest_finding() -> Callable[[Pilot[None]], Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("D")
        screen = pilot.app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_until(pilot, lambda: screen.exam is not None, "the examination")
        await pilot.press("t")
        await wait_until(pilot, lambda: screen.exam is not None and screen.task_findings, "task findings")
        await pilot.app.workers.wait_for_complete()
        rows = [i for i, f in enumerate(screen.shown) if f is not None]
        row = max(rows, key=lambda i: len(screen.shown[i].detail))
        screen.query_one("DataTable", DataTable).move_cursor(row=row)
        await pilot.pause()

    return run_before


def test_doctor_detail_pane_at_80x24(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_doctor_on_the_longest_finding())


def test_doctor_detail_pane_at_120x35(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    assert snap_compare(make_app(), terminal_size=(120, 35), run_before=_doctor_on_the_longest_finding())
