"""Fixtures for the TUI tests: the app on the bundled mock recordings, and a way to wait for it."""

from __future__ import annotations

import shutil
import time
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest

if TYPE_CHECKING:
    from textual.app import App
    from textual.pilot import Pilot

    from tau_tui.tui.app import TauTuiApp
    from tau_tui.tui.screens.play import PlayScreen
    from tau_tui.tui.screens.rollout import RolloutScreen

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "fixtures" / "mock_recordings"  # the mock demo; recordings/ holds our own domains
MOCK_DEMO = RECORDINGS / "mock_demo.json"
TELECOM_IDS = ROOT / "tests" / "fixtures" / "telecom_ids" / "telecom_default_gpt-4.1_1trials.json"  # ids only
SIZE = (120, 40)

ReturnType = TypeVar("ReturnType")  # of an app: None for TauTuiApp, the exit status for PlayApp


class MakeApp(Protocol):
    """The ``make_app`` fixture: the app on ``paths`` (the mock recordings by default) with the test data folder."""

    def __call__(self, paths: Iterable[Path | str] | None = None, **kwargs: Any) -> TauTuiApp: ...


async def settle(pilot: Pilot[None]) -> None:
    """Wait until files are loaded, background replay is done and the runs view is current."""
    from tau_tui.tui.app import TauTuiApp

    app = pilot.app
    assert isinstance(app, TauTuiApp)
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.busy and not app.workers:
            return
    raise AssertionError("the app did not settle")


async def open_rollout_form(pilot: Pilot[None]) -> RolloutScreen:
    """From a settled runs screen, press n and wait for the new-rollout form (its task list read)."""
    from tau_tui.tui.screens.rollout import RolloutScreen

    app = pilot.app
    await settle(pilot)
    await pilot.press("n")
    form = app.screen
    assert isinstance(form, RolloutScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return form


async def open_sim(pilot: Pilot[None], sim_id: str) -> None:
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


async def wait_until(
    pilot: Pilot[ReturnType], condition: Callable[[], object], what: str, seconds: float = 60.0
) -> None:
    """Let the app run until ``condition()`` holds (sessions and rollouts run on the event loop), looking every
    10 ms; fail after ``seconds`` of wall time, so a loaded machine (more test workers than cores) is only slower."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({seconds:g} s)")
        await pilot.pause(0.01)


def notified(app: App[ReturnType], *parts: str) -> bool:
    """A toast holding every one of ``parts`` is up. ``notify`` posts a message the app handles in its turn, so a
    test waits for this (``wait_until``) rather than looking once after what raised it."""
    return any(all(part in str(n.message) for part in parts) for n in app._notifications)


async def set_input(pilot: Pilot[ReturnType], selector: str, value: str) -> None:
    from textual.widgets import Input

    field = pilot.app.screen.query_one(selector, Input)
    field.value = value
    await pilot.pause()


def current_screen(app: App[ReturnType]) -> object:
    """``app.screen`` read afresh, to compare with ``is``: mypy keeps an ``isinstance`` or ``is`` on ``app.screen``
    for the rest of the test, though a key press since may have changed the screen (an ``object``, so that ``is``
    does not narrow the other side either)."""
    return app.screen


async def open_play(pilot: Pilot[None], side: str, task: str, out: Path) -> PlayScreen:
    """From the runs screen: the play form (p), then the session screen once the person's first turn is up."""
    from textual.widgets import Select

    from tau_tui.tui.screens.play import PlayScreen
    from tau_tui.tui.screens.play_setup import PlaySetupScreen

    app = pilot.app
    await pilot.press("p")
    form = app.screen
    assert isinstance(form, PlaySetupScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    form.query_one("#p-side", Select).value = side
    await pilot.pause()
    await set_input(pilot, "#p-filter", task)
    await set_input(pilot, "#p-out", str(out))
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), "the play screen")
    screen = app.screen
    assert isinstance(screen, PlayScreen)
    await wait_until(pilot, lambda: screen.session.pending is not None, "the first turn")
    await pilot.pause()
    return screen


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the bundled recording (tests that edit the file on disk use it)."""
    target = tmp_path / "runs" / "mock_demo.json"
    target.parent.mkdir()
    shutil.copy(MOCK_DEMO, target)
    return target


def build_app(
    paths: Iterable[Path | str],
    *,
    calibrate: str | None = None,
    keymap: dict[str, str] | None = None,
    task_editor: Callable[[list[str]], Any] | None = None,
    viewer: Callable[[Path], Any] | None = None,
    background_replay: bool = True,
    **settings: Any,
) -> TauTuiApp:
    """The app as ``tau-tui`` builds it (``Session.from_settings``): ``settings`` are ``config.Settings`` fields."""
    from tau_tui.config import Settings
    from tau_tui.session import Session
    from tau_tui.tui.app import TauTuiApp

    settings.setdefault("protocol", "own")  # as tests/conftest.py's TAU_TUI_PROTOCOL: the same with tau2 or not
    session = Session.from_settings(
        Settings(**settings), paths, task_editor=task_editor, viewer=viewer, background_replay=background_replay
    )
    return TauTuiApp(session, calibrate=calibrate, keymap=keymap)


_OPENED: weakref.WeakKeyDictionary[TauTuiApp, list[Path]] = weakref.WeakKeyDictionary()


def opened_files(app: TauTuiApp) -> list[Path]:
    """The JSON files an app of ``make_app`` opened in the viewer (``E``, ``e``), in order."""
    return _OPENED[app]


@pytest.fixture
def make_app(tau2_data: Path) -> MakeApp:
    """Build the app on some paths with the test tau2 data folder; opened JSON files are collected."""

    def build(paths: Iterable[Path | str] | None = None, **kwargs: Any) -> TauTuiApp:
        opened: list[Path] = []
        kwargs.setdefault("tau2_data", tau2_data)
        app = build_app(paths or [RECORDINGS], viewer=opened.append, **kwargs)
        _OPENED[app] = opened
        return app

    return build


from tests.evaluate.conftest import server  # noqa: E402,F401 - the local OpenAI-compatible server, for the judge
