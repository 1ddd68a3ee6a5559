"""The runs catalog: every simulation of every loaded file, with per-file notices and notes.

Headless: rows in load order (``tau_tui.catalog.rows``), looked up by key;
``view`` filters and sorts them (``tau_tui.catalog.query``).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterable, Mapping

from tau_tui.catalog.query import RunFilter, SortSpec, sort_rows
from tau_tui.catalog.rows import EvalSummary, ReplaySummary, RunRow
from tau_tui.evaluate import FLAG_KINDS
from tau_tui.model.io import RunFile
from tau_tui.model.notes import Note, NoteBook
from tau_tui.model.reviews import SimReview


@dataclass
class Notice:
    path: Path
    text: str
    severity: str = "warning"  # "error": file not loaded; "warning"/"information": loaded with a note


_order = attrgetter("order")


class Catalog:
    """All loaded runs: rows in load order, per-file notices, replay summaries."""

    def __init__(self) -> None:
        self.files: dict[str, RunFile] = {}
        self.rows: list[RunRow] = []
        self.by_key: dict[str, RunRow] = {}
        self.notices: dict[str, list[Notice]] = {}
        self.notebooks: dict[str, NoteBook] = {}
        self._file_seq: dict[str, int] = {}
        self._grown: dict[str, int] = {}  # files whose rows are being added as they are indexed: how many
        self._file_rows: dict[str, list[RunRow]] = {}  # each file's rows in order (no scan of every row per file)
        self._derived: dict[str, int] = {}  # each file's rows with a replay summary or error (the title's count)

    @staticmethod
    def file_key(path: Path) -> str:
        return str(path)

    @staticmethod
    def row_key(path: Path, index: int) -> str:
        return f"{path}#{index}"

    @property
    def file_rows(self) -> Mapping[str, list[RunRow]]:
        """Each loaded file's rows in order, by ``file_key`` (read only)."""
        return self._file_rows

    def grow_run(self, run: RunFile, count: int) -> list[RunRow]:
        """Rows for the first ``count`` entries of a file being indexed (the ones not yet added); returns them."""
        fkey = self.file_key(run.path)
        if self.files.get(fkey) is not run:
            self.remove_file(run.path)
            self.files[fkey] = run
            self._grown[fkey] = 0
        seq = self._file_seq.setdefault(fkey, len(self._file_seq))
        have = self._grown.get(fkey, 0)
        new = []
        for entry in run.entries[have:count]:
            row = RunRow(self.row_key(run.path, entry.index), run, entry, order=(seq, entry.index))
            new.append(row)
            self.by_key[row.key] = row
        self._grown[fkey] = max(have, count)
        self._file_rows.setdefault(fkey, []).extend(new)
        if new:
            self._insert(new)
            self._attach_notes(fkey, new)
        return new

    def _insert(self, new: list[RunRow]) -> None:
        """Put one file's new rows (in order, with no other row's order between theirs) where their order
        says: at the end, or, while several files grow at once, in the gap found by bisection (sorting every
        row again per piece took seconds at a million rows)."""
        if not new:
            return
        if not self.rows or self.rows[-1].order < new[0].order:
            self.rows.extend(new)
            return
        at = bisect_left(self.rows, new[0].order, key=_order)
        self.rows[at:at] = new

    def add_run(self, run: RunFile) -> list[RunRow]:
        """Add (or replace) the rows of one file; returns the new rows.

        A file whose rows grew while it was indexed (``grow_run``, the same ``RunFile``) keeps them and gets
        the rest: all of its rows are returned.
        """
        fkey = self.file_key(run.path)
        if self.files.get(fkey) is run and fkey in self._grown:
            self.grow_run(run, len(run.entries))
            del self._grown[fkey]
            return self.rows_of(run.path)
        self.remove_file(run.path)
        seq = self._file_seq.setdefault(fkey, len(self._file_seq))
        self.files[fkey] = run
        new = []
        for entry in run.entries:
            row = RunRow(self.row_key(run.path, entry.index), run, entry, order=(seq, entry.index))
            new.append(row)
            self.by_key[row.key] = row
        self._file_rows[fkey] = list(new)
        self._insert(new)
        self._attach_notes(fkey, new)
        return new

    def set_notebook(self, book: NoteBook) -> list[RunRow]:
        """The notes of one recording (read or just saved): attached to its rows; returns those rows."""
        fkey = self.file_key(book.recording)
        self.notebooks[fkey] = book
        rows = list(self._file_rows.get(fkey, ()))
        self._attach_notes(fkey, rows)
        return rows

    def _attach_notes(self, fkey: str, rows: list[RunRow]) -> None:
        book = self.notebooks.get(fkey)
        by_sim = book.by_simulation() if book is not None else {}
        for row in rows:
            row.notes = by_sim.get(row.sim_id, [])

    def all_notes(self) -> list[tuple[RunRow | None, NoteBook, Note]]:
        """Every note of every loaded recording, with its row (None when the simulation is not loaded)."""
        out = []
        for fkey, book in self.notebooks.items():
            if fkey not in self.files:
                continue
            rows = {r.sim_id: r for r in self._file_rows.get(fkey, ())}
            for note in book.notes:
                out.append((rows.get(note.sim_id), book, note))
        return out

    def note_values(self, name: str) -> list[tuple[str, int]]:
        """Distinct note sources or error types with how many runs have such a note (for filter pickers)."""
        counts: dict[str, int] = {}
        for row in self.rows:
            for value in {n.source if name == "note_source" else n.error_type for n in row.notes}:
                counts[value] = counts.get(value, 0) + 1
        return sorted((value, n) for value, n in counts.items() if value != "")

    def set_summaries(
        self,
        row: RunRow,
        replay: ReplaySummary | None,
        replay_error: str | None,
        evaluation: EvalSummary | None,
        eval_error: str | None,
    ) -> None:
        """Put a row's derived summaries on it (background replay, or carried over from the file's rows before
        it was read again), keeping count of the rows that have them."""
        before = row.replay is not None or row.replay_error is not None
        row.replay, row.replay_error, row.evaluation, row.eval_error = replay, replay_error, evaluation, eval_error
        after = replay is not None or replay_error is not None
        if before != after and self.by_key.get(row.key) is row:
            fkey = self.file_key(row.path)
            self._derived[fkey] = self._derived.get(fkey, 0) + (1 if after else -1)

    @property
    def derived_count(self) -> int:
        """Rows with a replay summary or a replay error (the rest are still to replay)."""
        return sum(self._derived.values())

    def remove_file(self, path: Path) -> None:
        fkey = self.file_key(path)
        self.files.pop(fkey, None)
        self._derived.pop(fkey, None)
        self.notices.pop(fkey, None)
        self._grown.pop(fkey, None)
        mine = self._file_rows.pop(fkey, None)
        if not mine:  # a file not shown yet (the first rows of a new file): nothing to take out
            return
        gone = {r.key for r in mine}
        self.rows = [r for r in self.rows if r.key not in gone]
        for key in gone:
            self.by_key.pop(key, None)

    def set_notice(self, path: Path, text: str, severity: str = "warning") -> None:
        """The one notice of ``path`` (a folder's summary, replaced on reload rather than repeated)."""
        self.notices[self.file_key(path)] = [Notice(path, text, severity)]

    def add_notice(self, path: Path, text: str, severity: str = "warning") -> None:
        self.notices.setdefault(self.file_key(path), []).append(Notice(path, text, severity))

    def all_notices(self) -> list[Notice]:
        return [n for notes in self.notices.values() for n in notes]

    def find(self, path: Path, sim_id: str) -> RunRow | None:
        """The row of simulation ``sim_id`` in file ``path`` (used to keep the cursor across reloads)."""
        for row in self._file_rows.get(self.file_key(path), ()):
            if row.sim_id == sim_id:
                return row
        return None

    def view(self, flt: RunFilter, sort: SortSpec) -> list[RunRow]:
        """The rows ``flt`` matches in ``sort``'s order. The rows are kept in load order, so that order needs no
        sort (nor, with no filter, a test of each row): a million rows' view in load order is a copy."""
        rows = [r for r in self.rows if flt.matches(r)] if flt.active else self.rows
        return sort_rows(rows, sort, in_order=True)

    def values(self, column: str) -> list[tuple[str, int]]:
        """Distinct values of a text column with their row counts, sorted by value (for filter pickers)."""
        getter: dict[str, Callable[[RunRow], str]] = {
            "termination": lambda r: r.termination,
            "model": lambda r: r.model,
            "domain": lambda r: r.domain,
            "file": lambda r: r.file_label,
            "retrieval": lambda r: r.retrieval,
            "submission": lambda r: r.submission,
        }
        counts: dict[str, int] = {}
        for row in self.rows:
            value = getter[column](row)
            if value == "" and column == "submission":
                continue  # runs outside any submission folder
            counts[value] = counts.get(value, 0) + 1
        return sorted(counts.items())

    def review_values(self, name: str) -> list[tuple[str, int]]:
        """Distinct review sources, tags, severities or auth statuses with their row counts (filter pickers)."""
        get: dict[str, Callable[[SimReview], Iterable[str]]] = {
            "review_source": lambda r: {e.source for e in r.errors},
            "review_tag": lambda r: r.tags,
            "review_severity": lambda r: r.severities,
            "auth": lambda r: [r.auth_status] if r.auth_status else [],
        }
        counts: dict[str, int] = {}
        for row in self.rows:
            for value in set(get[name](row.review)):
                counts[value] = counts.get(value, 0) + 1
        return sorted(counts.items())

    def flag_counts(self) -> dict[str, int]:
        """Evaluated rows with each process-flag kind (for the flag filter), in FLAG_KINDS order."""
        counts = {kind: 0 for kind in FLAG_KINDS}
        for row in self.rows:
            if row.evaluation is not None:
                for kind in row.evaluation.flags:
                    if kind in counts:  # a kind unregistered since the row was evaluated is not offered
                        counts[kind] += 1
        return counts

    def rows_of(self, path: Path) -> list[RunRow]:
        return list(self._file_rows.get(self.file_key(path), ()))

    def run_of(self, path: Path) -> RunFile | None:
        """The ``RunFile`` of a file the catalog has rows of (None: it is to be opened afresh)."""
        rows = self.rows_of(path)
        return rows[0].run if rows else None
