"""What the runs table and the calibration grid share: a header line over rows, one line each, with a row cursor.

A Line API scroll view renders only the visible lines. Subclasses keep
``rows`` and ``cursor_row``, draw the header and one row (``_header_strip``,
``_body_strip``) and move the cursor (``_go``); scrolling, paging and
partial refreshes live here.
"""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineTable(ScrollView, can_focus=True):
    rows: list[Any]
    cursor_row: int

    # The look every line table shares; a subclass sets only its cursor's strength (``RunTable``).
    COMPONENT_CLASSES = {"line-table--header", "line-table--cursor", "line-table--cursor-unfocused", "line-table--even"}

    DEFAULT_CSS = """
    LineTable {
        height: 1fr;
        background: $surface;
        scrollbar-gutter: stable;
    }
    LineTable > .line-table--header {
        background: $panel;
        text-style: bold;
    }
    LineTable > .line-table--cursor {
        background: $primary 35%;
    }
    LineTable > .line-table--cursor-unfocused {
        background: $primary 15%;
    }
    LineTable > .line-table--even {
        background: $boost;
    }
    """

    def cursor_style_name(self) -> str:
        """The component class of the cursor row: brighter while the table has the focus."""
        return "line-table--cursor" if self.has_focus else "line-table--cursor-unfocused"

    # --- for subclasses ---------------------------------------------------------------------------
    def _go(self, row: int) -> None:
        """Move the cursor to ``row`` (clamped), scrolling it into view."""
        raise NotImplementedError

    def _header_strip(self) -> Strip:
        raise NotImplementedError

    def _body_strip(self, index: int) -> Strip:
        raise NotImplementedError

    # --- scrolling ----------------------------------------------------------------------------------
    @property
    def _body_height(self) -> int:
        return max(self.scrollable_content_region.height - 1, 1)

    def _scroll_to_cursor(self) -> None:
        """Scroll the cursor row into view. Forced: right after new rows arrive (a filter cleared after it
        matched nothing), the scroll bar that permits scrolling is only worked out at the next layout."""
        y = self.scroll_offset.y
        height = self._body_height
        if self.cursor_row < y:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True, force=True)
        elif self.cursor_row >= y + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True, force=True)

    def _refresh_row(self, index: int) -> None:
        y = index - self.scroll_offset.y + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def action_page(self, direction: int) -> None:
        self._go(self.cursor_row + direction * self._body_height)

    def action_first(self) -> None:
        self._go(0)

    def action_last(self) -> None:
        self._go(len(self.rows) - 1)

    # --- drawing ----------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.visual_style.rich_style
        if y == 0:
            strip = self._header_strip()
        else:
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(width, base)
            strip = self._body_strip(index)
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_style(base)

    def on_focus(self) -> None:
        self._refresh_row(self.cursor_row)

    def on_blur(self) -> None:
        self._refresh_row(self.cursor_row)
