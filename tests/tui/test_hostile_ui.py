"""A hostile recording over every TUI screen: control characters are drawn visibly, never sent,
and recorded brackets are never read as markup."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.hostile import MARKUP, raw_controls, write_hostile

from .conftest import settle

if TYPE_CHECKING:
    from textual.app import App
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp

BIG = (220, 60)
SHOWN = ("␛[2J", "\\u202e")


def screen_text(app: App[None]) -> str:
    """What the terminal gets for the current screen: the text of every segment the compositor draws."""
    strips = app.screen._compositor.render_strips()
    lines = ["".join(segment.text for segment in strip) for strip in strips]
    assert not any("\n" in line for line in lines), "a drawn line holds a newline"
    return "\n".join(lines)


def check(app: App[None], where: str, marks: tuple[str, ...] = SHOWN) -> str:
    text = screen_text(app)
    drawn = [line for line in text.splitlines() if raw_controls(line, keep="")]
    assert not drawn, f"{where}: raw control characters drawn in {[repr(line.strip()) for line in drawn]}"
    for mark in marks:
        assert mark in text, f"{where}: {mark!r} not shown\n{text}"
    return text


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_hostile(tmp_path / "runs")


async def visit(pilot: Pilot[None], key: str, where: str, marks: tuple[str, ...] = SHOWN, back: str = "escape") -> str:
    app = pilot.app
    before = app.screen
    await pilot.press(key)
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.screen is not before, f"{key} opened no screen"
    text = check(app, where, marks)
    await pilot.press(back)
    await pilot.pause()
    return text


async def test_runs_screen_and_its_modals(make_app: MakeApp, hostile: Path) -> None:
    from tau_tui.tui.widgets.run_table import RunTable

    app = make_app([hostile.parent])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        text = check(app, "runs", ("task␛[2J", "demo-clean-pass␛[2J"))
        table = app.screen.query_one(RunTable)
        table.focus()
        for _ in range(40):  # to the recorded detail columns at the right end, one column per key
            if not table.more_right:
                break
            await pilot.press("l")
        await pilot.pause()
        check(app, "runs, scrolled right", ("model␛[2J", "mock␛[", "user_stop␛["))
        for index in range(len(table.rows)):  # the preview line of every row
            table.move_cursor(index)
            await pilot.pause()
            check(app, f"runs row {index}", ())
        table.move_cursor(0)
        await pilot.pause()
        await visit(pilot, "question_mark", "help", ())
        await visit(pilot, "exclamation_mark", "notices", ("␛[2J",))
        await visit(pilot, "N", "notes list", ("the note␛[2J", "whole sim␛[2J"))
        await visit(pilot, "m", "metrics", ("model␛[2J",))
        await visit(pilot, "s", "sort picker", ())
        await visit(pilot, "C", "calibrate", ("task␛[2J",))
        assert "PWNED" in text


async def test_trajectory_screen_every_tab(make_app: MakeApp, hostile: Path) -> None:
    from tau_tui.tui.screens.trajectory import TrajectoryScreen
    from tau_tui.tui.widgets.run_table import RunTable

    app = make_app([hostile.parent])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RunTable)
        for index in (0, 1, 2, 3):
            table = app.screen.query_one(RunTable)
            table.move_cursor(index)
            table.focus()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, TrajectoryScreen)
            text = check(app, f"trajectory {index}", ("␛[2J",))
            assert MARKUP in text
            for tab in "12345":
                await pilot.press(tab)
                await app.workers.wait_for_complete()
                await pilot.pause()
                check(app, f"trajectory {index} tab {tab}", ())
            await pilot.press("a")  # expand everything: arguments, results, marks
            await pilot.pause()
            text = check(app, f"trajectory {index} expanded", ("␛[2J",))
            if index == 2:
                assert "delete_task␛[2J" in text and "arg␛[2J" in text
            if index == 0:
                assert "boom␛[2J" in text
            await pilot.press("d")
            await app.workers.wait_for_complete()
            await pilot.pause()
            check(app, f"trajectory {index} gold diff", ())
            await pilot.press("escape")
            await app.workers.wait_for_complete()
            await pilot.pause()
