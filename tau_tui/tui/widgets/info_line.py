"""A fixed-height line of rich text that repaints without a layout pass (titles, previews)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget

from tau_tui.textsafe import visible, visible_text


def _visible(content: RenderableType) -> RenderableType:
    """Text with recorded control characters shown; a plain string is text, never markup."""
    if isinstance(content, str):
        return Text(visible(content))
    return visible_text(content) if isinstance(content, Text) else content


class InfoLine(Widget):
    """Like ``Static`` with a fixed height, but ``set()`` only repaints: cheap to update on every keypress."""

    DEFAULT_CSS = """
    InfoLine {
        height: 1;
    }
    """

    def __init__(self, content: RenderableType = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content: RenderableType = _visible(content)

    def set(self, content: RenderableType) -> None:
        self._content = _visible(content)
        self.refresh()

    def render(self) -> RenderableType:
        return self._content

    @property
    def plain(self) -> str:
        return self._content.plain if isinstance(self._content, Text) else str(self._content)
