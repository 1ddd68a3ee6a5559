"""Pilot tests of the `?` help: one list of keys per screen, each key once as it applies; the column legend."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich.console import Console
from textual.widgets import Static

from tau_tui.tui.screens.help import HelpScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.views.columns import COLUMNS

from .conftest import SIZE, open_sim, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


def help_text(screen: HelpScreen) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    for static in screen.query(Static):
        console.print(static.content)
    return console.export_text()


def listed_keys(screen: HelpScreen) -> list[str]:
    return [key for _, entries in screen.sections for entry in entries for key in entry.keys.split(" / ")]


async def test_runs_help_explains_every_column_glyph_from_the_registry(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        assert screen.legend is not None
        legend = screen.legend.plain
        for column in COLUMNS:
            line = next((l for l in legend.splitlines() if l.split()[:1] == [column.label.split()[0]]), None)
            assert line is not None, column.label
            assert (column.help or column.label) in line
        for glyph in ("✐", "✎*", "≠*", "?*", "!*", "↯*", "⊘*", "✦*", "=*"):
            assert glyph in legend
        listed = {entry.description for _, entries in screen.sections for entry in entries}
        assert {"Columns: one to the right", "Sort…", "Help", "Quit"} <= listed


async def test_trajectory_help_lists_each_key_once_without_action_ids(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        await pilot.press("question_mark")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        keys = listed_keys(screen)
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
        assert [title for title, _ in screen.sections] == ["Trajectory screen", "everywhere"]
        text = help_text(screen)
        assert "traj.next_write" not in text and "app.help" not in text
        assert "Next write" in text
        # the binding listed for a key is the one a key press runs: ↓ steps (the view has nothing to scroll)
        entry = next(e for _, entries in screen.sections for e in entries if "↓" in e.keys.split(" / "))
        assert entry.description == "Next message" and entry.keys == "j / ↓"
        assert "Scroll Down" not in text
        await pilot.press("escape")
        before = trajectory.cursor
        await pilot.press("down")
        assert trajectory.cursor == before + 1
