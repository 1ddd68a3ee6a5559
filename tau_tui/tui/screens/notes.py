"""Every note of the loaded recordings: filter as you type, open the annotated step, delete, export.

Notes live in sidecars beside their recordings (``<name>.notes.json``), or in
the user's data folder for bundled or read-only recordings; the recordings are
never written. Export writes the notes shown (after the filter) as JSON or CSV
into the app's runs folder.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input

from tau_tui.catalog import RunRow, file_label
from tau_tui.model.notes import Note, NoteBook, export_csv, export_json
from tau_tui.session.notes import remove_note
from tau_tui.textsafe import one_line
from tau_tui.tui.context import context, subscribe
from tau_tui.tui.screens.confirm import ConfirmScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.layout import Share, distinct_starts, elide, share_widths
from tau_tui.views.notes_view import NOTE_STYLE

# (label, minimum width, share of the width left over, elided in the middle keeping where values differ)
NOTE_COLUMNS = (
    ("file", 8, 1, True),
    ("simulation", 12, 4, True),
    ("task", 8, 2, True),
    ("where", 10, 0, False),
    ("source", 8, 0, False),
    ("error type", 10, 1, False),
    ("text", 12, 6, False),
)
SCROLLBAR = 2


def note_matches(row: RunRow | None, book: NoteBook, note: Note, needle: str) -> bool:
    """Whether a note holds every word of ``needle`` (in its text, kind, source, task, simulation or file)."""
    if not needle:
        return True
    hay = " ".join(
        [
            note.text,
            note.source,
            note.error_type,
            note.task_id or "",
            note.sim_id,
            book.recording.name,
            f"step {note.step}" if note.step is not None else "simulation",
        ]
    ).lower()
    return all(word in hay for word in needle.lower().split())


class NotesScreen(Screen[None]):
    """A table of notes; Enter opens the simulation at the annotated step."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="notes.back"),
        Binding("slash", "search", "Filter the notes", id="notes.search"),
        Binding("enter", "open", "Open the annotated step", id="notes.open"),
        Binding("delete,x", "delete", "Delete the note…", id="notes.delete"),
        Binding("e", "export", "Export the notes shown (JSON / CSV)…", id="notes.export"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[tuple[RunRow | None, NoteBook, Note]] = []

    def compose(self) -> ComposeResult:
        yield InfoLine(id="notes-title")
        yield Input(placeholder="filter: words in the text, type, source, task, simulation or file", id="notes-filter")
        yield DataTable(id="notes-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_notes()
        self.query_one(DataTable).focus()
        subscribe(self, context(self).notes_changed, lambda _: self.refresh_notes())

    def on_resize(self) -> None:
        if self.is_mounted:
            self.refresh_notes()

    def refresh_notes(self) -> None:
        """Rebuild the table from the catalog's notebooks (after a save, a delete, a reload)."""
        needle = self.query_one("#notes-filter", Input).value.strip()
        notes = [item for item in context(self).session.catalog.all_notes() if note_matches(*item, needle)]
        notes.sort(
            key=lambda item: (
                str(item[1].recording),
                item[2].sim_id,
                -1 if item[2].step is None else item[2].step,
                item[2].created_at,
            )
        )
        self.shown = notes
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        cells = []
        for row, book, note in notes:
            where = "simulation" if note.step is None else f"step {note.step}"
            label = file_label(row.run) if row is not None else book.recording.stem
            cells.append(
                [
                    one_line(v)
                    for v in (
                        label,
                        note.sim_id,
                        note.task_id or "?",
                        where,
                        note.source,
                        note.error_type,
                        " ".join(note.text.split()),
                    )
                ]
            )
        widths = self._widths(cells)
        for (label, *_), width in zip(NOTE_COLUMNS, widths, strict=False):
            table.add_column(label, width=width, key=label)
        starts = [
            distinct_starts(c[i] for c in cells) if elided else {} for i, (_, _, _, elided) in enumerate(NOTE_COLUMNS)
        ]
        for index, values in enumerate(cells):
            shown = [
                elide(v, w, starts[i].get(v, 0)) if NOTE_COLUMNS[i][3] else (v if len(v) <= w else v[: w - 1] + "…")
                for i, (v, w) in enumerate(zip(values, widths, strict=False))
            ]
            table.add_row(
                *(Text(v, style=NOTE_STYLE if i == 5 else "") for i, v in enumerate(shown)), key=str(index)
            )  # Text, never markup: notes and ids are recorded text
        if notes:
            table.move_cursor(row=min(cursor, len(notes) - 1))
        total = len(context(self).session.catalog.all_notes())
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" notes ", style="bold reverse")
        title.append(
            f"  {len(notes)} of {total} notes · kept beside each recording in <name>.notes.json (or in the data folder)"
        )
        title.append("   enter opens · x deletes · e exports the notes shown", style="dim")
        self.query_one("#notes-title", InfoLine).set(title)

    def _widths(self, cells: list[list[str]]) -> list[int]:
        """Column widths sharing the screen's width (each cell is padded by one on both sides)."""
        shares = [
            Share(minimum, flex, max([len(label)] + [len(c[i]) for c in cells]))
            for i, (label, minimum, flex, _) in enumerate(NOTE_COLUMNS)
        ]
        available = (self.size.width or 120) - SCROLLBAR - 2 * len(NOTE_COLUMNS)
        return share_widths(shares, available)

    @property
    def current(self) -> tuple[RunRow | None, NoteBook, Note] | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row < 0:
            return None
        return self.shown[min(table.cursor_row, len(self.shown) - 1)]

    @on(Input.Changed, "#notes-filter")
    def _filter_changed(self) -> None:
        self.refresh_notes()

    @on(Input.Submitted, "#notes-filter")
    def _filter_submitted(self) -> None:
        self.query_one(DataTable).focus()

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_open()

    def action_search(self) -> None:
        self.query_one("#notes-filter", Input).focus()

    def action_back(self) -> None:
        field = self.query_one("#notes-filter", Input)
        if field.has_focus:
            self.query_one(DataTable).focus()
            return
        self.dismiss(None)

    def action_open(self) -> None:
        current = self.current
        if current is None:
            return
        row, _, note = current
        if row is None:
            self.notify(f"simulation {note.sim_id} is not in the loaded recording", severity="warning")
            return
        context(self).open_run_at(row.run, row.index, step=note.step)

    def action_delete(self) -> None:
        current = self.current
        if current is None:
            return
        _, book, note = current

        def answered(yes: bool | None) -> None:
            if yes:
                context(self).change_notes(book.recording, remove_note(note.id))

        self.app.push_screen(
            ConfirmScreen(f"Delete the note on {note.sim_id} ({note_label_text(note)})?", "Delete"), answered
        )

    def action_export(self) -> None:
        if not self.shown:
            self.notify("no notes to export", timeout=2)
            return

        def picked(fmt: str | None) -> None:
            if fmt:
                rows = [
                    {"recording": str(book.recording), **note.model_dump(mode="json")} for _, book, note in self.shown
                ]
                self.export_worker(rows, fmt, context(self).session.runs_dir)

        self.app.push_screen(
            PickerScreen(
                f"export {len(self.shown)} notes as",
                [("json", "JSON  ·  one object per note"), ("csv", "CSV  ·  one row per note")],
            ),
            picked,
        )

    @work(thread=True, exclusive=True, group="notes-export", name="export notes")
    def export_worker(self, rows: list[dict[str, Any]], fmt: str, folder: Path) -> None:
        """Write ``<folder>/notes_<YYYYmmdd_HHMMSS>.<fmt>``, a new file (another name when that one is taken)."""
        from tau_tui.model.io import write_new

        text = export_csv(rows) if fmt == "csv" else export_json(rows)
        if self.app.is_web:  # served to a browser: the server's folders are not the user's, so a download
            name = f"notes_{datetime.now():%Y%m%d_%H%M%S}.{fmt}"
            mime = "text/csv" if fmt == "csv" else "application/json"
            self.app.call_from_thread(
                self.app.deliver_binary, io.BytesIO(text.encode()), save_filename=name, mime_type=mime
            )
            self.app.call_from_thread(self.notify, f"{len(rows)} note(s): {name} sent to the browser", timeout=6)
            return
        try:
            path = write_new(folder, f"notes_{datetime.now():%Y%m%d_%H%M%S}", f".{fmt}", text.encode())
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"notes not exported: {exc}", severity="error")
            return
        self.app.call_from_thread(self.notify, f"{len(rows)} note(s) exported to {path}", timeout=6)


def note_label_text(note: Note) -> str:
    where = "the simulation" if note.step is None else f"step {note.step}"
    return f"{where}, {note.source}/{note.error_type}"
