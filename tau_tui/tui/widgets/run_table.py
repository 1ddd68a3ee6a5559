"""The runs table: columns fitted to the width, one row per simulation, rendering only the visible rows.

A Line API scroll view rather than ``DataTable``: DataTable measures every
cell of every row it is given, so re-filtering 1,600 runs took seconds;
here a new filter or sort swaps a list, and an update re-renders one row.

The columns share the width the widget has (``layout.share_widths``, again
on every resize): the frozen ones (file, task, simulation; the file only
while more than one is loaded) always show, the others follow in registry
order as far as they fit, and ``h``/``l`` scroll them one whole column at a
time. Names are shortened in the middle, keeping the part that tells a row
apart from the others.
"""

from __future__ import annotations

from operator import attrgetter

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from tau_tui.catalog import Catalog, RunRow, SortSpec
from tau_tui.textsafe import one_line, visible_text
from tau_tui.tui.widgets.line_table import LineTable
from tau_tui.views.column_stats import ColumnStats
from tau_tui.views.columns import COLUMNS, Column
from tau_tui.views.layout import Share, elide, fitting_count, share_widths
from tau_tui.views.panels import DERIVED_STYLE

PAD = 1  # cells before each column (a rule between recorded and derived columns)
MORE = 1  # cells kept at the right for the "more columns" mark


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
        Binding("h,left", "column(-1)", "Columns: one to the left", show=False, id="table.left"),
        Binding("l,right", "column(1)", "Columns: one to the right", show=False, id="table.right"),
    ]

    DEFAULT_CSS = """
    RunTable > .line-table--cursor {
        background: $primary 45%;
    }
    RunTable > .line-table--cursor-unfocused {
        background: $primary 20%;
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
        self._row_index: dict[str, int] | None = None
        self.sort = SortSpec()
        self._cache: dict[str, Strip] = {}
        self.frozen = [c for c in self.columns if c.frozen]
        self.scrolling = [c for c in self.columns if not c.frozen]
        self.first_column = 0  # index in ``scrolling`` of the first one shown
        self.shown_columns: list[tuple[Column, int]] = []  # (column, width) as drawn
        self.stats = ColumnStats(self.columns)  # what the text columns hold over the loaded rows
        self._layout_width = -1

    # --- data ------------------------------------------------------------------------------------
    @property
    def row_index(self) -> dict[str, int]:
        """Each shown row's place by key, made when first asked (a million rows take a quarter of a second)."""
        if self._row_index is None:
            self._row_index = {row.key: i for i, row in enumerate(self.rows)}
        return self._row_index

    def _place(self, key: str, near: int) -> int | None:
        """Where row ``key`` is shown: looked for at ``near`` first (rows added after it leave it there)."""
        if 0 <= near < len(self.rows) and self.rows[near].key == key:
            return near
        if self._row_index is not None:
            return self._row_index.get(key)
        try:
            return list(map(attrgetter("key"), self.rows)).index(key)
        except ValueError:
            return None

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def current_key(self) -> str | None:
        if not self.rows:
            return None
        return self.rows[min(self.cursor_row, len(self.rows) - 1)].key

    def show_rows(
        self, rows: list[RunRow], keep: str | None = None, files: int | None = None, catalog: Catalog | None = None
    ) -> None:
        """Show ``rows``; keep the cursor on row ``keep`` when it is still shown.

        ``catalog``: the rows come from it (a view of its loaded rows); the text columns are then fitted to
        every loaded row, measured once as rows arrive (so a filter or a sort measures nothing again, and the
        columns keep their widths). Without it, they are fitted to ``rows``. ``files``: how many files are
        loaded (default: the catalog's, else how many ``rows`` come from); with one, the ``many_files``
        columns (the file name) are hidden and their width goes to the other names.
        """
        self.rows = rows
        self._row_index = None
        if catalog is not None:
            self.stats.sync(catalog.files, catalog.file_rows)
            files = len(catalog.files) if files is None else files
        else:
            self.stats.feed(rows)
            files = len({row.path for row in rows}) if files is None else files
        self.frozen = [c for c in self.columns if c.frozen and (files > 1 or not c.many_files)]
        # a column that shows what only some recordings hold (a submission, a review) only when one is loaded
        self.scrolling = [c for c in self.columns if not c.frozen and self.stats.shows(c)]
        self._relayout(force=True)
        target = self._place(keep, self.cursor_row) if keep is not None else None
        if target is None:
            target = min(self.cursor_row, max(len(rows) - 1, 0))
        self.set_reactive(RunTable.cursor_row, target)
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.RowHighlighted(self.current_key))

    def show_sort(self, sort: SortSpec) -> None:
        self.sort = sort
        self._relayout(force=True)
        self.refresh()

    # --- columns --------------------------------------------------------------------------------------
    def _min_width(self, column: Column) -> int:
        """A column's minimum: its registry width, room for its label and, when sorted, the arrow."""
        arrow = 1 if self.sort.column == column.key else 0
        return max(column.width, cell_len(column.label) + arrow)

    def _share(self, column: Column) -> Share:
        natural = self.stats.natural(column) if column.flex or column.elide else 0
        natural = max(natural, cell_len(column.label) + (self.sort.column == column.key))
        return Share(self._min_width(column), column.flex, natural)

    def _available(self) -> int:
        width = self.scrollable_content_region.width
        return (width if width > 0 else 200) - MORE

    def _relayout(self, force: bool = False) -> None:
        """Choose the columns shown and their widths for the current width, first column and sort.

        The frozen columns and, from ``first_column`` on, as many others as fit
        at their minimum; then recorded-detail columns at the end of that window
        give way while the names (file, task, simulation) lack room for their
        whole text: which run is which matters more than its cost.
        """
        width = self.scrollable_content_region.width
        if not force and width == self._layout_width:
            return
        self._layout_width = width
        self.first_column = max(0, min(self.first_column, len(self.scrolling) - 1))
        available = self._available()
        frozen_width = sum(self._min_width(c) + PAD for c in self.frozen) + self._names_reserve()
        rest = self.scrolling[self.first_column :]
        count = fitting_count([self._min_width(c) for c in rest], available - frozen_width, PAD)
        # the names may claim at most half the width before other columns give way to them
        name_cap = max(1, available // (2 * max(1, sum(1 for c in self.frozen if c.flex))))
        while True:
            shown = self.frozen + rest[:count]
            shares = [self._share(c) for c in shown]
            widths = share_widths(shares, available - PAD * len(shown))
            short = any(
                w < max(min(s.natural, name_cap), s.min)
                for c, s, w in zip(shown, shares, widths, strict=False)
                if c.frozen and c.flex
            )
            # detail gives way only to make room beside outcome columns (once scrolled to it, it is what you read)
            if not (short and rest[count - 1].detail and any(not c.detail for c in rest[: count - 1])):
                break
            count -= 1
        self.shown_columns = list(zip(shown, widths, strict=False))
        self._cache.clear()
        self.virtual_size = Size(sum(w + PAD for w in widths) + MORE, len(self.rows) + 1)
        self.refresh()

    def _names_reserve(self) -> int:
        """The width of the hidden name columns (the file's, one file loaded) that the shown names can use:
        it stays with them rather than making room for one more column."""
        hidden = sum(self._min_width(c) + PAD for c in self.columns if c.frozen and c not in self.frozen)
        wanted = sum(max(0, share.natural - share.min) for share in (self._share(c) for c in self.frozen if c.flex))
        return min(hidden, wanted)

    @property
    def more_right(self) -> bool:
        return len(self.shown_columns) - len(self.frozen) < len(self.scrolling) - self.first_column

    def action_column(self, delta: int) -> None:
        """Scroll the non-frozen columns by one whole column (right only while some are hidden there)."""
        if (delta > 0 and not self.more_right) or (delta < 0 and not self.first_column):
            return
        self.first_column += 1 if delta > 0 else -1
        self._relayout(force=True)

    def column_span(self, key: str) -> tuple[int, int] | None:
        """Where column ``key`` is drawn: (first cell, width), or None when it is not shown."""
        x = 0
        for column, width in self.shown_columns:
            x += PAD
            if column.key == key:
                return x, width
            x += width
        return None

    def on_resize(self) -> None:
        self._relayout()

    def update_row(self, row: RunRow) -> None:
        """Re-render one row (its replay summary arrived)."""
        self.update_rows([row])

    def update_rows(self, rows: list[RunRow]) -> None:
        """Re-render these rows; only the ones on screen are drawn again (no lookup among all rows)."""
        top = self.scroll_offset.y
        shown = {self.rows[i].key: i for i in range(top, min(top + self._body_height + 1, len(self.rows)))}
        for row in rows:
            self._cache.pop(row.key, None)
            index = shown.get(row.key)
            if index is not None:
                self._refresh_row(index)

    def redraw_rows(self) -> None:
        """Re-render every row (what they show changed, their notes), drawing only those on screen."""
        self._cache.clear()
        self.refresh()

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
    def _left_pad(self, index: int, header: bool = False) -> Text:
        """A rule between recorded and derived columns, "‹" (header) before scrolled columns, else a space."""
        column = self.shown_columns[index][0]
        if header and index == len(self.frozen) and self.first_column:
            return Text("‹", style="bold")
        previous = self.shown_columns[index - 1][0] if index else None
        if previous is not None and column.derived != previous.derived:
            return Text("│", style=DERIVED_STYLE.replace("bold ", ""))
        return Text(" " * PAD)

    def _header(self) -> Strip:
        text = Text()
        for index, (column, width) in enumerate(self.shown_columns):
            arrow = ""
            if self.sort.column == column.key:
                arrow = "↓" if self.sort.reverse else "↑"
            label = Text(column.label + arrow, style=DERIVED_STYLE if column.derived else "bold")
            label.truncate(width, overflow="ellipsis", pad=True)
            text.append_text(self._left_pad(index, header=True))
            text.append_text(label)
        if self.more_right:
            text.append("›", style="bold")
        style = self.get_component_rich_style("line-table--header")
        return Strip(list(text.render(self.app.console, end=""))).apply_style(style)

    def _cell(self, column: Column, row: RunRow, width: int) -> Text:
        value = column.cell(row)
        if column.plain_text is not None:  # drawn as measured: rich's Text would drop BEL, BS and CR unseen
            style = value.style if isinstance(value, Text) else ""
            cell = Text(one_line(str(column.plain_text(row))), style=style)
        elif isinstance(value, Text):
            cell = visible_text(value.copy(), single_line=True)
        else:
            cell = Text(one_line(str(value)))
        if column.elide and cell.cell_len > width:
            start = self.stats.start(column, cell.plain)
            cell = Text(elide(cell.plain, width, start), style=cell.style)
        cell.truncate(width, overflow="ellipsis", pad=True)
        return cell

    def _row_strip(self, row: RunRow) -> Strip:
        strip = self._cache.get(row.key)
        if strip is None:
            text = Text(no_wrap=True)
            for index, (column, width) in enumerate(self.shown_columns):
                text.append_text(self._left_pad(index))
                text.append_text(self._cell(column, row, width))
            strip = Strip(list(text.render(self.app.console, end="")), text.cell_len)
            self._cache[row.key] = strip
        return strip

    def _header_strip(self) -> Strip:
        return self._header()

    def _body_strip(self, index: int) -> Strip:
        strip = self._row_strip(self.rows[index])
        if index == self.cursor_row:
            cursor = self.cursor_style_name()
            return strip.apply_style(self.get_component_rich_style(cursor))
        if index % 2:
            return strip.apply_style(self.get_component_rich_style("line-table--even"))
        return strip

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = event.x + self.scroll_offset.x
            for column, width in self.shown_columns:
                x -= width + PAD
                if x < 0:
                    self.post_message(self.HeaderClicked(column.key))
                    return
            return
        index = self.scroll_offset.y + event.y - 1
        if 0 <= index < len(self.rows):
            self.move_cursor(index)
            if event.chain == 2:
                self.action_select()
