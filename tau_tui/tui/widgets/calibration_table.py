"""The calibration grid: one line per row, one glyph per trial, a row cursor and a cell cursor.

A Line API scroll view like the runs table: it renders only the visible
lines, caches each row's line, and re-renders one row when one of its cells
changes. ``j/k`` move between rows, ``h/l`` between the trials of a row,
space selects rows (for re-running them), Enter opens the cursor's cell.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tau_tui.calibrate.grid import Row, RowKey
from tau_tui.textsafe import visible_text
from tau_tui.tui.widgets.line_table import LineTable
from tau_tui.views.calibration_view import GridColumn, fit_columns, grid_line, header_line, line_width


class CalibrationTable(LineTable, can_focus=True):
    """Rows of a calibration grid; posts ``CursorMoved`` and ``CellChosen``."""

    BINDINGS = [
        Binding("enter", "choose", "Open this trial", id="grid.open"),
        Binding("space", "toggle_select", "Select / unselect the row", id="grid.select"),
        Binding("j,down", "row(1)", "Next row", show=False, id="grid.down"),
        Binding("k,up", "row(-1)", "Previous row", show=False, id="grid.up"),
        Binding("l,right", "cell(1)", "Next trial", show=False, id="grid.right"),
        Binding("h,left", "cell(-1)", "Previous trial", show=False, id="grid.left"),
        Binding("g,home", "first", "First row", show=False, id="grid.first"),
        Binding("G,end", "last", "Last row", show=False, id="grid.last"),
        Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="grid.page_down"),
        Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="grid.page_up"),
    ]

    class CursorMoved(Message):
        def __init__(self, key: RowKey | None, cell: int | None) -> None:
            super().__init__()
            self.key = key
            self.cell = cell

    class CellChosen(Message):
        def __init__(self, key: RowKey, cell: int) -> None:
            super().__init__()
            self.key = key
            self.cell = cell

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.row_index: dict[RowKey, int] = {}
        self.columns: list[GridColumn] = []  # fitted to the width
        self._base_columns: list[GridColumn] = []
        self._fitted_width = -1
        self.k = 1
        self.cursor_row = 0
        self.cursor_cell = 0
        self.selected: set[RowKey] = set()
        self._cache: dict[RowKey, Strip] = {}

    # --- data -------------------------------------------------------------------------------------
    @property
    def current(self) -> Row | None:
        return self.rows[self.cursor_row] if self.rows else None

    @property
    def current_cell(self) -> int | None:
        row = self.current
        if row is None or not row.cells:
            return None
        return min(self.cursor_cell, len(row.cells) - 1)

    def show_rows(self, rows: list[Row], columns: list[GridColumn], k: int, keep: RowKey | None = None) -> None:
        """Show ``rows``; the cursor stays on row ``keep`` when it is still shown."""
        self.rows, self._base_columns, self.k = rows, columns, k
        self.row_index = {row.key: i for i, row in enumerate(rows)}
        self.selected &= set(self.row_index)
        self._fit(force=True)
        target = self.row_index.get(keep) if keep is not None else None
        self.cursor_row = target if target is not None else min(self.cursor_row, max(len(rows) - 1, 0))
        self._scroll_to_cursor()
        self.refresh()
        self._moved()

    def _fit(self, force: bool = False) -> None:
        """Share the width among the columns (again when it changed): task and agent / user grow first."""
        width = self.scrollable_content_region.width
        if not force and width == self._fitted_width:
            return
        self._fitted_width = width
        self.columns = fit_columns(self._base_columns, self.rows, self.k, width if width > 0 else 200)
        self._cache.clear()
        self.virtual_size = Size(line_width(self.columns), len(self.rows) + 1)
        self.refresh()

    def on_resize(self) -> None:
        self._fit()

    def update_row(self, key: RowKey) -> None:
        """Re-render one row (a cell of it changed)."""
        self._cache.pop(key, None)
        index = self.row_index.get(key)
        if index is not None:
            self._refresh_row(index)
            if index == self.cursor_row:
                self._moved()

    # --- cursor -----------------------------------------------------------------------------------
    def _moved(self) -> None:
        row = self.current
        self.post_message(self.CursorMoved(row.key if row is not None else None, self.current_cell))

    def move_to(self, row: int, cell: int | None = None) -> None:
        if not self.rows:
            return
        old = self.cursor_row
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        if cell is not None:
            cells = len(self.rows[self.cursor_row].cells)
            self.cursor_cell = max(0, min(cell, max(cells - 1, 0)))
        self._refresh_row(old)
        self._refresh_row(self.cursor_row)
        self._scroll_to_cursor()
        self._moved()

    def action_row(self, delta: int) -> None:
        self.move_to(self.cursor_row + delta)

    def action_cell(self, delta: int) -> None:
        cell = self.current_cell
        self.move_to(self.cursor_row, (cell if cell is not None else 0) + delta)

    def _go(self, row: int) -> None:
        self.move_to(row)

    def action_choose(self) -> None:
        row, cell = self.current, self.current_cell
        if row is not None and cell is not None:
            self.post_message(self.CellChosen(row.key, cell))

    def action_toggle_select(self) -> None:
        row = self.current
        if row is None:
            return
        self.selected ^= {row.key}
        self.update_row(row.key)
        self.move_to(self.cursor_row + 1)

    def select_all(self) -> None:
        """Select every row shown, or none when all are selected already."""
        keys = set(self.row_index)
        self.selected = set() if keys <= self.selected else keys
        self._cache.clear()
        self.refresh()

    # --- drawing ----------------------------------------------------------------------------------
    def _strip(self, text: Text) -> Strip:
        text = visible_text(text, single_line=True)
        return Strip(list(text.render(self.app.console, end="")), text.cell_len)

    def _row_strip(self, index: int) -> Strip:
        row = self.rows[index]
        if index == self.cursor_row:
            text = grid_line(row, self.columns, self.k, selected=row.key in self.selected, cursor=self.current_cell)
            cursor = self.cursor_style_name()
            return self._strip(text).apply_style(self.get_component_rich_style(cursor))
        strip = self._cache.get(row.key)
        if strip is None:
            strip = self._cache[row.key] = self._strip(
                grid_line(row, self.columns, self.k, selected=row.key in self.selected)
            )
        return strip

    def _header_strip(self) -> Strip:
        return self._strip(header_line(self.columns)).apply_style(self.get_component_rich_style("line-table--header"))

    def _body_strip(self, index: int) -> Strip:
        return self._row_strip(index)

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y - 1
        if event.y >= 1 and 0 <= index < len(self.rows):
            self.move_to(index)
            if event.chain == 2:
                self.action_choose()
