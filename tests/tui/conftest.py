"""Fixtures for the TUI tests: the app on the bundled mock recordings, and a way to wait for it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "recordings"
MOCK_DEMO = RECORDINGS / "mock_demo.json"
SIZE = (120, 40)


async def settle(pilot) -> None:
    """Wait until files are loaded, background replay is done and the runs view is current."""
    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.busy and not app.workers:
            return
    raise AssertionError("the app did not settle")


async def open_sim(pilot, sim_id: str) -> None:
    """From the runs screen, put the cursor on ``sim_id``, press Enter and wait for the replay."""
    from tau_tui.tui.screens.trajectory import TrajectoryScreen
    from tau_tui.tui.widgets.run_table import RunTable

    app = pilot.app
    table = app.screen.query_one(RunTable)
    index = next(i for i, row in enumerate(table.rows) if row.sim_id == sim_id)
    table.move_cursor(index)
    table.focus()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, TrajectoryScreen)
    assert app.screen.doc is not None


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled recording (tests that edit the file on disk use it)."""
    target = tmp_path / "runs" / "mock_demo.json"
    target.parent.mkdir()
    shutil.copy(MOCK_DEMO, target)
    return target


@pytest.fixture
def make_app(tau2_data):
    """Build the app on some paths with the test tau2 data folder; opened JSON files are collected."""
    from tau_tui.tui.app import TauTuiApp

    def build(paths=None, **kwargs):
        opened: list[Path] = []
        app = TauTuiApp(paths or [RECORDINGS], tau2_data=tau2_data, external_viewer=opened.append, **kwargs)
        app.opened = opened
        return app

    return build
