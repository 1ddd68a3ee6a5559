"""A full-screen read-only view of a long text (a whole tool output, the notices)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import TextArea

from tau_tui.textsafe import visible, visible_renderable


class TextViewScreen(ModalScreen[None]):
    """Scrollable, selectable text (recorded control characters shown visibly); Esc or q closes."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="text.close"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        yield TextArea(visible(self.text), read_only=True, soft_wrap=True, show_line_numbers=True, id="text-view")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.border_title = visible_renderable(self.title_text, single_line=True)
        area.border_subtitle = "esc to close"
        area.focus()

    def action_close(self) -> None:
        self.dismiss(None)
