"""``tau-tui play`` in the TUI: one ``PlayScreen`` in an app of its own.

``tau_tui.commands.play`` builds the ``PlaySession`` and awaits ``run_play(session, out)``
on its event loop; the app runs on that same loop, so the session's episode,
its model calls and the screen share it. ``ctrl+o`` on the saved recording closes
the play app asking for the inspector: the command then runs it on that file
(``recording_inspector``), once the play app's loop is over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from tau_tui.tui.keys import check_keymap, palette_commands
from tau_tui.tui.screens.help import show_help
from tau_tui.tui.screens.play import EXIT_LEFT, EXIT_SAVED, PlayScreen

if TYPE_CHECKING:
    from tau_tui.config import Settings
    from tau_tui.rollout import PlaySession
    from tau_tui.tui.app import TauTuiApp


@dataclass(frozen=True)
class PlayOutcome:
    """How a play app ended: its exit status, and the recording to open in the inspector (``ctrl+o``)."""

    code: int
    open_saved: Path | None = None


class PlayApp(App[int]):
    """A play session and nothing else; exits with 0 once the recording is saved, 130 when left without it."""

    TITLE = "tau-tui play"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("f1", "help", "Help", id="play_app.help"),
        Binding("ctrl+q", "quit", "Quit without saving", id="play_app.quit", show=False),
    ]

    def __init__(self, session: PlaySession, out: Path | str, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.set_keymap(check_keymap(keymap or {}))
        self.session = session
        self.out = Path(out)
        self.open_saved: Path | None = None

    def on_mount(self) -> None:
        self.push_screen(PlayScreen(self.session, self.out, finish=self.exit))

    def open_saved_run(self, path: Path) -> None:
        """``ctrl+o`` on the saved recording: leave, asking for the inspector on ``path``."""
        self.open_saved = path
        self.exit(EXIT_SAVED)

    def action_help(self) -> None:
        show_help(self)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The play screen's keys as palette commands."""
        yield from super().get_system_commands(screen)
        yield from palette_commands(screen)


async def run_play(session: PlaySession, out: Path | str, keymap: dict[str, str] | None = None) -> PlayOutcome:
    """Play ``session`` in the TUI; the recording is saved to ``out`` when the conversation ends.

    ``keymap``: binding id → keys from the settings file."""
    app = PlayApp(session, out, keymap)
    code = await app.run_async()
    if code is None:
        session.abort()
        return PlayOutcome(EXIT_LEFT)
    return PlayOutcome(code, app.open_saved)


def recording_inspector(path: Path, settings: Settings) -> TauTuiApp:
    """The inspector on the recording a play session saved, built as ``tau-tui PATH`` builds it
    (``Session.from_settings``); it opens the simulation once the file is read."""
    from tau_tui.session import Session
    from tau_tui.tui.app import TauTuiApp

    app = TauTuiApp(Session.from_settings(settings, [path]))
    app.open_saved_run(path)
    return app
