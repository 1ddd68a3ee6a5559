"""A scrollable pane showing one rich renderable, redrawn without a layout pass.

``Static`` in a scroll container re-lays the screen out on every update; this
pane renders its content to strips at its own width (again on resize) and
repaints only itself, so it can change on every cursor step. Content given
while the pane has no width (its tab hidden) is kept and drawn as soon as the
pane is measured again: on resize or when shown, whatever its width was before.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tau_tui.textsafe import visible_segments


class RichPane(ScrollView, can_focus=True):
    """Shows ``content``; ``show(new)`` replaces it and scrolls back to the top."""

    DEFAULT_CSS = """
    RichPane {
        overflow-x: hidden;
        scrollbar-gutter: stable;
        padding: 0 1;
    }
    """

    def __init__(self, content: RenderableType = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.content: RenderableType = content
        self.lines: list[Strip] = []
        self._drawn: list[Strip] = []  # the lines the screen last got, kept while hidden: what a repaint compares to
        self._width = 0
        self._stale = True  # ``content`` is not what ``lines`` show yet

    def show(self, content: RenderableType) -> None:
        self.content = content
        self._stale = True
        self._render_content()
        self.scroll_to(y=0, animate=False, immediate=True)

    def _render_content(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            # Hidden: nothing can be drawn at no width, and the old lines belong to the old content.
            if self._stale and self.lines:
                self.lines = []
            return
        resized = width != self._width
        self._width, self._stale = width, False
        console = self.app.console
        options = console.options.update_width(width)
        base = self.visual_style.rich_style
        old = self._drawn
        self.lines = self._drawn = [
            _strip(line, width).apply_style(base) for line in console.render_lines(self.content, options, pad=True)
        ]
        size = Size(width, len(self.lines))
        if size != self.virtual_size:
            # Set the scrollable size without a layout pass (a reflow repaints the whole screen), as
            # Textual itself does in ``Widget._size_updated(layout=False)``; the pinned textual 8.2 has it.
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        if resized or self.scroll_offset.y:
            self.refresh()
            return
        # Repaint only the rows that differ from what the screen shows: stepping often shows the same text again.
        for y in range(max(len(old), len(self.lines))):
            if y >= len(old) or y >= len(self.lines) or old[y]._segments != self.lines[y]._segments:
                self.refresh(Region(0, y, self.size.width, 1))

    def on_resize(self, event: events.Resize) -> None:
        if self._stale or self.scrollable_content_region.width != self._width:
            self._render_content()

    def on_show(self, event: events.Show) -> None:
        if self._stale:
            self._render_content()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if index >= len(self.lines):
            return Strip.blank(width, self.visual_style.rich_style)
        line = self.lines[index]
        return line if line.cell_length == width else line.crop_extend(0, width, self.visual_style.rich_style)

    @property
    def plain(self) -> str:
        """The shown text, one line per row (for tests and copying)."""
        return "\n".join("".join(seg.text for seg in line if isinstance(seg, Segment)).rstrip() for line in self.lines)


def _strip(line: list[Segment], width: int) -> Strip:
    """One screen line; recorded control characters anywhere in the content are drawn visibly."""
    clean = visible_segments(line)
    return Strip(line, width) if clean is line else Strip(clean).crop_extend(0, width, None)
