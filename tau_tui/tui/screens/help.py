"""The `?` help: every key of the current screen and of the app, once each, with what it does; then legends."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tau_tui.tui.keys import KeyHelp, help_sections


class HelpScreen(ModalScreen[None]):
    """Keys grouped by where they work; Esc, q or ? closes."""

    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close help", id="help.close"),
    ]

    def __init__(self, sections: list[tuple[str, list[KeyHelp]]], legend: Text | None = None) -> None:
        super().__init__()
        self.sections = sections
        self.legend = legend

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            for title, keys in self.sections:
                table = Table(
                    box=None,
                    show_header=False,
                    padding=(0, 2),
                    expand=True,
                    title=title,
                    title_justify="left",
                    title_style="bold underline",
                )
                table.add_column("keys", style="bold cyan", no_wrap=True, width=16)
                table.add_column("what", ratio=1)
                for key in keys:
                    table.add_row(key.keys, key.description)
                yield Static(table, classes="help-section")
            if self.legend is not None:
                yield Static(self.legend, id="help-legend")

    def on_mount(self) -> None:
        self.query_one("#help-body").border_title = "keys · esc to close · ctrl+p lists them as commands"

    def action_close(self) -> None:
        self.dismiss(None)


def show_help(app: Any, legend: Any = None) -> None:
    """Push the `?` help for the current screen (not over itself)."""
    if not isinstance(app.screen, HelpScreen):
        app.push_screen(HelpScreen(help_sections(app.screen), legend))
