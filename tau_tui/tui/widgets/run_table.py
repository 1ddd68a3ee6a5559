"""The runs table: fixed-width columns, one row per simulation, rendering only the visible rows.

A Line API scroll view rather than ``DataTable``: DataTable measures every
cell of every row it is given, so re-filtering 1,600 runs took seconds;
here a new filter or sort swaps a list, and an update re-renders one row.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from tau_tui.textsafe import one_line, visible_text

from tau_tui.tui.catalog import COLUMNS, Column, RunRow, SortSpec
from tau_tui.tui.panels import DERIVED_STYLE
from tau_tui.tui.widgets.line_table import LineTable

PAD = 1  # cells of padding on each side of a column


class RunTable(LineTable, can_focus=True):
    """Rows of the catalog view with a row cursor; derived (replay) cells update in place."""

    BINDINGS = [
        Binding("enter", "select", "Open", id="table.open"),
        Binding("j,down", "cursor(1)", "Next run", show=False, id="table.down"),
        Binding("k,up", "cursor(-1)", "Previous run", show=False, id="table.up"),
        Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("g,home", "first", "First run", show=False, id="table.first"),
        Binding("G,end", "last", "Last run", show=False, id="table.last"),
        Binding("h,left", "scroll_left", "Scroll left", show=False, id="table.left"),
        Binding("l,right", "scroll_right", "Scroll right", show=False, id="table.right"),
    ]

    COMPONENT_CLASSES = {"run-table--header", "run-table--cursor", "run-table--cursor-unfocused",
                         "run-table--even"}

    DEFAULT_CSS = """
    RunTable {
        height: 1fr;
        background: $surface;
        scrollbar-gutter: stable;
    }
    RunTable > .run-table--header {
        background: $panel;
        text-style: bold;
    }
    RunTable > .run-table--cursor {
        background: $primary 45%;
    }
    RunTable > .run-table--cursor-unfocused {
        background: $primary 20%;
    }
    RunTable > .run-table--even {
        background: $boost;
    }
    """

    cursor_row: reactive[int] = reactive(0, init=False, repaint=False)

    class RowHighlighted(Message):
        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    class RowSelected(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class HeaderClicked(Message):
        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    def __init__(self, columns: list[Column] | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = list(columns or COLUMNS)
        self.rows: list[RunRow] = []
        self.row_index: dict[str, int] = {}
        self.sort = SortSpec()
        self._cache: dict[str, Strip] = {}
        self._total_width = sum(c.width + 2 * PAD for c in self.columns)

    # --- data ------------------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def current_key(self) -> str | None:
        if not self.rows:
            return None
        return self.rows[min(self.cursor_row, len(self.rows) - 1)].key

    def show_rows(self, rows: list[RunRow], keep: str | None = None) -> None:
        """Show ``rows``; keep the cursor on row ``keep`` when it is still shown."""
        self.rows = rows
        self.row_index = {row.key: i for i, row in enumerate(rows)}
        self.virtual_size = Size(self._total_width, len(rows) + 1)
        target = self.row_index.get(keep, None) if keep is not None else None
        if target is None:
            target = min(self.cursor_row, max(len(rows) - 1, 0))
        self.set_reactive(RunTable.cursor_row, target)
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.RowHighlighted(self.current_key))

    def show_sort(self, sort: SortSpec) -> None:
        self.sort = sort
        self.refresh(Region(0, 0, self.size.width, 1))

    def update_row(self, row: RunRow) -> None:
        """Re-render one row (its replay summary arrived)."""
        self._cache.pop(row.key, None)
        index = self.row_index.get(row.key)
        if index is not None:
            self._refresh_row(index)

    def move_cursor(self, row: int) -> None:
        if self.rows:
            self.cursor_row = max(0, min(row, len(self.rows) - 1))

    # --- cursor -------------------------------------------------------------------------------------
    def watch_cursor_row(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)
        self._scroll_to_cursor()
        self.post_message(self.RowHighlighted(self.current_key))

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def _go(self, row: int) -> None:
        self.move_cursor(row)

    def action_select(self) -> None:
        key = self.current_key
        if key is not None:
            self.post_message(self.RowSelected(key))

    # --- drawing --------------------------------------------------------------------------------------
    def _left_pad(self, index: int) -> Text:
        """A rule between the recorded and the derived columns, a space elsewhere."""
        if index and self.columns[index].derived != self.columns[index - 1].derived:
            return Text("│" + " " * (PAD - 1), style=DERIVED_STYLE.replace("bold ", ""))
        return Text(" " * PAD)

    def _header(self) -> Strip:
        text = Text()
        for index, column in enumerate(self.columns):
            arrow = ""
            if self.sort.column == column.key:
                arrow = "↓" if self.sort.reverse else "↑"
            label = Text(column.label + arrow, style=DERIVED_STYLE if column.derived else "bold")
            label.truncate(column.width, overflow="ellipsis", pad=True)
            text.append_text(self._left_pad(index))
            text.append_text(label)
            text.append(" " * PAD)
        style = self.get_component_rich_style("run-table--header")
        return Strip(list(text.render(self.app.console, end=""))).apply_style(style)

    def _row_strip(self, row: RunRow) -> Strip:
        strip = self._cache.get(row.key)
        if strip is None:
            text = Text(no_wrap=True)
            for index, column in enumerate(self.columns):
                value = column.cell(row)
                cell = visible_text(value.copy(), single_line=True) if isinstance(value, Text) \
                    else Text(one_line(str(value)))
                cell.truncate(column.width, overflow="ellipsis", pad=True)
                text.append_text(self._left_pad(index))
                text.append_text(cell)
                text.append(" " * PAD)
            strip = Strip(list(text.render(self.app.console, end="")), self._total_width)
            self._cache[row.key] = strip
        return strip

    def _header_strip(self) -> Strip:
        return self._header()

    def _body_strip(self, index: int) -> Strip:
        strip = self._row_strip(self.rows[index])
        if index == self.cursor_row:
            cursor = "run-table--cursor" if self.has_focus else "run-table--cursor-unfocused"
            return strip.apply_style(self.get_component_rich_style(cursor))
        if index % 2:
            return strip.apply_style(self.get_component_rich_style("run-table--even"))
        return strip

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = event.x + self.scroll_offset.x
            for column in self.columns:
                x -= column.width + 2 * PAD
                if x < 0:
                    self.post_message(self.HeaderClicked(column.key))
                    return
            return
        index = self.scroll_offset.y + event.y - 1
        if 0 <= index < len(self.rows):
            self.move_cursor(index)
            if event.chain == 2:
                self.action_select()

