"""The TUI's session, headless: the loaded runs, the background replay, the rollout, opening simulations.

No textual and no rich (a contract in pyproject.toml). A front end builds one with
``Session.from_settings(settings, paths)`` — ``tau-tui`` (``commands/tui.py``), the TUI tests and the
benchmarks all do — runs its thread-bound parts on threads of its own (``load``, ``replay_batches``,
``read_run``, ``change_notes``), hands what they report back to it on its own thread (``handle``,
``replayed``, ``replay_done``, ``add_live_run``), and redraws what the returned ``Changes`` name.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from tau_tui.session.events import (
    Changes,
    FileGrowing,
    FileLoaded,
    LoadEvent,
    LoadProgress,
    LoadStarted,
    ReplayOutcome,
)
from tau_tui.session.library import Library, load_runs
from tau_tui.session.replay_queue import BackgroundReplay, ReplayQueue
from tau_tui.session.replay_service import ReplayService
from tau_tui.session.rollouts import RolloutBusy, RolloutController

if TYPE_CHECKING:
    from tau_tui.catalog import Catalog, RunRow
    from tau_tui.config import Settings
    from tau_tui.domains import DomainRegistry
    from tau_tui.model.io import RunFile
    from tau_tui.model.notes import NoteBook
    from tau_tui.session.notes import NoteChange
    from tau_tui.workers.pool import UnitExecutor
    from tau_tui.workspace import Workspace

FREEZE_ROWS = 50_000  # loaded rows from which the collector no longer walks those it has seen (``handle``)


class Session:
    """One front end's session over a workspace: what is loaded, replayed, running and open."""

    def __init__(
        self,
        workspace: Workspace,
        paths: Iterable[Path | str],
        *,
        task_editor: Callable[[list[str]], Any] | None = None,
        viewer: Callable[[Path], Any] | None = None,
        background_replay: bool = True,
    ):
        """``task_editor``: runs an editor command instead of the terminal's editor (tests); ``viewer``: opens
        a JSON file instead of ``$EDITOR``/``$PAGER`` (tests); ``background_replay``: False leaves the runs
        table's derived columns empty (benchmarks of loading)."""
        self.workspace = workspace
        self.service = ReplayService(workspace.analyzer)
        self.queue = ReplayQueue()
        self.library = Library([Path(p) for p in paths], self.queue)
        self.replay = BackgroundReplay(
            self.queue,
            self.service,
            workspace.replay_workers(),
            self._executor,
            self._may_pool,
            enabled=background_replay,
        )
        self.rollouts = RolloutController(workspace)
        self.task_editor = task_editor
        self.viewer = viewer
        self.compare_mark: tuple[Path, str] | None = None  # (file, simulation id) marked for a comparison

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        paths: Iterable[Path | str],
        *,
        registry: DomainRegistry | None = None,
        task_editor: Callable[[list[str]], Any] | None = None,
        viewer: Callable[[Path], Any] | None = None,
        background_replay: bool = True,
    ) -> Session:
        """The one way a session is built (``registry``: domains built in code, for tests)."""
        from tau_tui.workspace import Workspace

        return cls(
            Workspace(settings, registry=registry),
            paths,
            task_editor=task_editor,
            viewer=viewer,
            background_replay=background_replay,
        )

    # --- what it holds ------------------------------------------------------------------------------
    @property
    def catalog(self) -> Catalog:
        return self.library.catalog

    @property
    def runs_dir(self) -> Path:
        """Where new rollouts, play sessions and forks are saved by default."""
        return self.workspace.runs_dir

    @property
    def load_progress(self) -> LoadProgress | None:
        return self.library.progress

    @property
    def busy(self) -> bool:
        """Loading or replaying (tests and benchmarks wait until this is False)."""
        return self.library.loading or self.replay.running

    # --- loading -------------------------------------------------------------------------------------
    def start_load(self) -> tuple[int, list[Path]]:
        """A new load generation over the paths (the first load, a reload): (generation, paths) for ``load``."""
        return self.library.start_load(), list(self.library.paths)

    def load(
        self, generation: int, paths: list[Path], emit: Callable[[LoadEvent], None], cancelled: Callable[[], bool]
    ) -> None:
        """Open the files (on a thread); ``emit`` gets each load event, to hand back to ``handle``."""
        load_runs(paths, generation, emit, cancelled, self.workspace.settings.index_workers, self.service.prepare)

    def handle(self, event: LoadEvent) -> Changes:
        changes = self.library.handle(event)
        if changes.catalog and len(self.catalog.rows) >= FREEZE_ROWS and isinstance(event, (FileGrowing, FileLoaded)):
            # The rows stay for the session's life. Left to the collector, every full collection walks them
            # all again as more arrive: at a million rows that was half the indexing time, up to 4 s at once.
            # Frozen, collections walk only what came since (a cycle among them that dies later stays: rows
            # and their files make none). Below this size collections are cheap and nothing is frozen.
            gc.freeze()
        settings = self.workspace.settings
        if isinstance(event, LoadStarted) and changes.loading and settings.origin("tau2_data").startswith("found"):
            assert settings.tau2_data is not None
            self.catalog.set_notice(
                settings.tau2_data,
                "used as the tau2 data folder for replay (found beside the "
                "files opened; --tau2-data DIR chooses another)",
                "information",
            )
            changes.notices = True
        return self._kick(changes)

    def reload(self) -> tuple[int, list[Path]]:
        """Read every file again: domains that failed before are tried again."""
        self.service.forget_domain_errors()
        return self.start_load()

    # --- the background replay -----------------------------------------------------------------------
    def prioritize(self, rows: list[RunRow]) -> None:
        """Replay these rows (the ones on screen) before the rest of the queue."""
        self.queue.prioritize(rows)

    def replay_batches(
        self, cancelled: Callable[[], bool], warn: Callable[[str], None]
    ) -> Iterator[tuple[int, list[ReplayOutcome]]]:
        """The background replay's answers in batches (on a thread); then call ``replay_done``."""
        return self.replay.batches(cancelled, warn)

    def replayed(self, generation: int, outcomes: list[ReplayOutcome]) -> Changes:
        return self.library.replayed(generation, outcomes)

    def replay_done(self) -> Changes:
        """The replay thread stopped: start it again when more was queued meanwhile, else it is idle."""
        self.replay.running = False
        changes = self._kick(Changes())
        changes.replay_idle = not changes.start_replay
        return changes

    def _kick(self, changes: Changes) -> Changes:
        changes.start_replay = self.replay.claim_start(self.library.loading)
        return changes

    def _may_pool(self, row: RunRow) -> bool:
        """A worker process reads the file itself: rows of files read from disk, with no judge's verdicts."""
        return not self.library.is_live(row.path) and not self.service.knows_verdicts(row.path, row.sim_id)

    def _executor(self, workers: int) -> UnitExecutor:
        from tau_tui.workers.pool import Job

        return self.workspace.executor(Job("summary", self.workspace.settings), workers)

    # --- runs written while open -------------------------------------------------------------------
    def add_live_run(self, run: RunFile) -> tuple[list[RunRow], Changes]:
        rows, changes = self.library.add_live_run(run)
        return rows, self._kick(changes)

    @staticmethod
    def read_run(path: Path) -> RunFile:
        """A results file this session wrote, or one a screen names (on a thread); ``RunFileError`` in one line."""
        from tau_tui.model.io import open_run

        return open_run(path)

    # --- notes ---------------------------------------------------------------------------------------
    @staticmethod
    def change_notes(path: Path, change: NoteChange) -> NoteBook:
        """Apply ``change`` to the sidecar notes of ``path`` and save them (on a thread);
        ``NotesError``/``OSError`` when they cannot be read or written."""
        from tau_tui.model.notes import NoteBook

        book = NoteBook(path)
        change.apply(book)
        return book

    def notes_saved(self, notebook: NoteBook) -> Changes:
        return self.library.notes_saved(notebook)

    def close(self) -> None:
        """Stop the background replay's worker processes."""
        self.replay.close()


__all__ = ["Changes", "RolloutBusy", "Session"]
