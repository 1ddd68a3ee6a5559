"""``tau-tui play`` in the TUI: one ``PlayScreen`` in an app of its own.

``tau_tui.commands.play`` builds the ``PlaySession`` and awaits ``run_play(session, out)``
on its event loop; the app runs on that same loop, so the session's episode,
its model calls and the screen share it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from tau_tui.tui.keys import check_keymap, palette_commands
from tau_tui.tui.screens.help import show_help
from tau_tui.tui.screens.play import EXIT_LEFT, PlayScreen


class PlayApp(App[int]):
    """A play session and nothing else; exits with 0 once the recording is saved, 130 when left without it."""

    TITLE = "tau-tui play"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("f1", "help", "Help", id="play_app.help"),
        Binding("ctrl+q", "quit", "Quit without saving", id="play_app.quit", show=False),
    ]

    def __init__(self, session: Any, out: Path | str, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.set_keymap(check_keymap(keymap or {}))
        self.session = session
        self.out = Path(out)

    def on_mount(self) -> None:
        self.push_screen(PlayScreen(self.session, self.out, finish=self.exit))

    def action_help(self) -> None:
        show_help(self)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The play screen's keys as palette commands."""
        yield from super().get_system_commands(screen)
        yield from palette_commands(screen)


async def run_play(session: Any, out: Path | str, keymap: dict[str, str] | None = None) -> int:
    """Play ``session`` in the TUI; the recording is saved to ``out`` when the conversation ends.

    ``keymap``: binding id → keys from the settings file."""
    app = PlayApp(session, out, keymap)
    code = await app.run_async()
    if code is None:
        session.abort()
        return EXIT_LEFT
    return code
