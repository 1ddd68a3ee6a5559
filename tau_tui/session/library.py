"""The loaded runs: the catalog, the files a reload reads, live files, notebooks, and how each event changes them.

``load_runs`` runs on a thread: it scans the paths, indexes the files (several large ones on every core,
``model.indexing``) and emits the load events in the order the files were given. ``Library`` folds
those events, the background replay's outcomes, runs written while the session is open and saved notes
into the ``Catalog`` on the front end's thread, and says what changed (``Changes``). Nothing here draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tau_tui.catalog import Catalog
from tau_tui.model.heap import keep_long_lived
from tau_tui.session.events import (
    Changes,
    FileFailed,
    FileGrowing,
    FileLoaded,
    FolderNotice,
    LoadEvent,
    LoadFinished,
    LoadProgress,
    LoadStarted,
    ReplayOutcome,
)

if TYPE_CHECKING:
    from tau_tui.catalog import RunRow
    from tau_tui.model.io import RunFile
    from tau_tui.model.notes import NoteBook
    from tau_tui.session.replay_queue import ReplayQueue


def load_runs(
    paths: list[Path],
    generation: int,
    emit: Callable[[LoadEvent], None],
    cancelled: Callable[[], bool],
    index_workers: int | None = None,
    prepare: Callable[[RunFile], list[str]] | None = None,
) -> None:
    """Open every run file under ``paths`` and emit what happened, file by file (run on a thread); ``prepare(run)``
    works out what a run leaves out (its domain, old uploads' tasks) before its rows are shown, and its notices
    join the file's notes."""
    from tau_tui.model.indexing import Failed, Growing, Loaded, index_files, plan_workers
    from tau_tui.model.io import SUBMISSION_LAYOUT, describe_empty, scan_paths
    from tau_tui.model.notes import NoteBook, NotesError
    from tau_tui.model.submission import lone_submission_notes, submission_notes

    scan = scan_paths(paths)
    files = scan.files
    emit(LoadStarted(generation, len(files)))
    notice = scan.data_folder_notice()
    if notice:
        emit(FolderNotice(generation, scan.data_folders[0].parent, notice))
    for link, text in zip(scan.links_outside, scan.link_notices(), strict=True):
        emit(FolderNotice(generation, link, text))
    opened: list[Path] = []  # a run folder's run is keyed by its results.json, not by the folder scanned

    def arrived(event: Growing | Loaded | Failed) -> None:
        if isinstance(event, Growing):
            emit(FileGrowing(generation, event.run, event.count))
            return
        if isinstance(event, Failed):
            emit(FileFailed(generation, event.path, event.problem))
            return
        run = event.run
        inferred = prepare(run) if prepare is not None else []
        notes = [n for n in [describe_empty(run)] if n] + list(run.warnings) + submission_notes(run.path) + inferred
        if run.layout == SUBMISSION_LAYOUT:  # a lone submission.json: its claims, and that nothing can be replayed
            notes += lone_submission_notes(run.path) + [f"{run.path}: {run.recorded_only}"]
        notebook: NoteBook | None
        try:
            notebook = NoteBook(run.path)
        except NotesError as exc:
            notebook = None
            notes.append(f"notes not read: {exc}")
        opened.append(run.path)
        emit(FileLoaded(generation, run, notes, notebook))

    if not index_files(files, arrived, plan_workers(files, index_workers), cancelled=cancelled):
        return
    emit(LoadFinished(generation, files + opened))


def carry_over(catalog: Catalog, old: list[RunRow], new: list[RunRow]) -> list[RunRow]:
    """Copy derived summaries from the previous rows of a file onto its new rows (in ``catalog``); returns the rows
    still to derive.

    A simulation is the same when its id and message count are (saved simulations never change).
    """
    before = {(row.sim_id, row.entry.n_messages): row for row in old}
    fresh = []
    for row in new:
        prior = before.get((row.sim_id, row.entry.n_messages))
        if prior is not None and (prior.replay is not None or prior.replay_error is not None):
            catalog.set_summaries(row, prior.replay, prior.replay_error, prior.evaluation, prior.eval_error)
        else:
            fresh.append(row)
    return fresh


class Library:
    """The runs the session holds, and the one place their rows, notices and notes change."""

    def __init__(self, paths: list[Path], queue: ReplayQueue):
        self.catalog = Catalog()
        self.paths = list(paths)  # what a reload reads: the paths given, then files written while open
        self.queue = queue
        self.loading = False
        self.progress: LoadProgress | None = None  # the last one reported (a view opened later catches up)
        self._total = 0
        self._done = 0
        self._live: set[str] = set()  # files written while the session is open (kept across reloads)
        self._open_when_read: Path | None = None

    @property
    def generation(self) -> int:
        return self.queue.generation

    def start_load(self) -> int:
        """A new load generation (the first load, a reload); returns it."""
        self.loading = True
        return self.queue.new_generation()

    def is_live(self, path: Path) -> bool:
        return self.catalog.file_key(path) in self._live

    # --- loading ---------------------------------------------------------------------------------------
    def handle(self, event: LoadEvent) -> Changes:
        """Fold one load event in (events of an older generation change nothing)."""
        if event.generation != self.generation:
            return Changes()
        if isinstance(event, LoadStarted):
            self._total, self._done = event.total, 0
            return Changes(loading=self._progress(False))
        if isinstance(event, FileGrowing):
            return Changes(catalog=bool(self.catalog.grow_run(event.run, event.count)))
        if isinstance(event, FileLoaded):
            return self._file_loaded(event)
        if isinstance(event, FolderNotice):
            self.catalog.set_notice(event.path, event.text.replace(f"{event.path}: ", ""), "information")
            return Changes(notices=True)
        if isinstance(event, FileFailed):
            self.catalog.remove_file(event.path)
            self.catalog.add_notice(event.path, event.error, "error")
            self._done += 1
            return Changes(catalog=True, notices=True, loading=self._progress(False))
        return self._load_finished(event)

    def _file_loaded(self, event: FileLoaded) -> Changes:
        run = event.run
        rows = self.catalog.add_run(run)
        if event.notebook is not None:
            self.catalog.set_notebook(event.notebook)
        for note in event.notes:
            self.catalog.add_notice(run.path, note.replace(f"{run.path}: ", ""), "information")
        self.queue.put(rows)
        self._done += 1
        changes = Changes(catalog=True, notices=bool(event.notes), rebound=[run], loading=self._progress(False))
        changes.open_run = self._opened(run, rows)
        return changes

    def _load_finished(self, event: LoadFinished) -> Changes:
        seen = {self.catalog.file_key(p) for p in event.seen} | self._live
        gone = [k for k in self.catalog.files if k not in seen]
        for key in gone:
            self.catalog.remove_file(Path(key))
        self.loading = False
        keep_long_lived()  # the loaded runs live as long as the session
        return Changes(catalog=bool(gone), notes=True, loading=self._progress(True), load_finished=True)

    def _progress(self, finished: bool) -> LoadProgress:
        self.progress = LoadProgress(self._done, self._total, finished)
        return self.progress

    # --- derived columns -----------------------------------------------------------------------------
    def replayed(self, generation: int, outcomes: list[ReplayOutcome]) -> Changes:
        """Put a batch of background replay results on their rows; a new reason a file was not replayed or
        evaluated becomes one notice."""
        if generation != self.generation:
            return Changes()
        rows = []
        new_notice = False
        for outcome in outcomes:
            row = self.catalog.by_key.get(outcome.row_key)
            if row is None:
                continue
            done = outcome.summaries
            self.catalog.set_summaries(row, done.replay, done.error, done.evaluation, done.eval_error)
            rows.append(row)
            for prefix, error in (("not replayed", done.error), ("not evaluated", done.eval_error)):
                error = error.removeprefix(f"{row.path}: ") if error else error  # the notice names the file
                if error and not any(n.text.endswith(error) for n in self.catalog.all_notices()):
                    self.catalog.add_notice(row.path, f"{prefix}: {error}", "warning")
                    new_notice = True
        return Changes(replayed=rows, notices=new_notice)

    # --- runs written while the session is open --------------------------------------------------------
    def add_live_run(self, run: RunFile) -> tuple[list[RunRow], Changes]:
        """Add (or grow) a run this session wrote: its rows at once, the derived columns queued; the file
        joins the paths a reload reads."""
        key = self.catalog.file_key(run.path)
        old = self.catalog.rows_of(run.path)
        rows = self.catalog.add_run(run)
        self.queue.again(carry_over(self.catalog, old, rows))
        if key not in self._live:
            self._live.add(key)
            if not any(self.catalog.file_key(p) == key for p in self.paths):
                self.paths.append(run.path)
        changes = Changes(catalog=True, rebound=[run])
        changes.open_run = self._opened(run, rows)
        return rows, changes

    def _opened(self, run: RunFile, rows: list[RunRow]) -> tuple[RunFile, int] | None:
        """The simulation to open now that ``run`` is read, when the user asked for its file before."""
        if rows and self._open_when_read == run.path:
            self._open_when_read = None
            return run, rows[0].index
        return None

    def open_when_read(self, path: Path) -> tuple[RunFile, int] | None:
        """The first simulation of a file this session saved (or was started on), or None until it is read (then
        the ``Changes`` of reading it carry ``open_run``)."""
        rows = self.catalog.rows_of(path)
        if rows:
            return rows[0].run, rows[0].index
        self._open_when_read = path
        return None

    # --- notes ---------------------------------------------------------------------------------------
    def notes_saved(self, notebook: NoteBook) -> Changes:
        self.catalog.set_notebook(notebook)
        return Changes(notes=True)
