"""What the session's threads report, and what a front end must redraw: plain data, no textual.

The loader (``session.library.load_runs``) emits the load events from its thread; the front end
hands each back to ``Session.handle`` on its own thread, which folds it into the library and returns
the ``Changes`` to show. A front end maps ``Changes`` to its own notifications (the TUI: Signals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from tau_tui.catalog import RunRow
    from tau_tui.catalog.summaries import Summaries
    from tau_tui.model.io import RunFile
    from tau_tui.model.notes import NoteBook


@dataclass(frozen=True)
class LoadProgress:
    """How far indexing the files got."""

    done: int
    total: int
    finished: bool


@dataclass(frozen=True)
class LoadStarted:
    """The loader found ``total`` run files to open."""

    generation: int
    total: int


@dataclass(frozen=True)
class FileLoaded:
    """One run file was opened and indexed; ``notebook`` holds its sidecar notes (None when unreadable)."""

    generation: int
    run: RunFile
    notes: list[str]
    notebook: NoteBook | None = None


@dataclass(frozen=True)
class FileGrowing:
    """A large file is being indexed (``model.stream``): ``count`` of its simulations are indexed so far."""

    generation: int
    run: RunFile
    count: int


@dataclass(frozen=True)
class FileFailed:
    """One run file could not be read; ``error`` is one line."""

    generation: int
    path: Path
    error: str


@dataclass(frozen=True)
class FolderNotice:
    """A note about a scanned folder as a whole (such as the tau2 data folders found in it)."""

    generation: int
    path: Path
    text: str


@dataclass(frozen=True)
class LoadFinished:
    """Every file of this load generation was tried."""

    generation: int
    seen: list[Path]


LoadEvent = Union[LoadStarted, FileLoaded, FileGrowing, FileFailed, FolderNotice, LoadFinished]


@dataclass(frozen=True)
class ReplayOutcome:
    """The derived columns of one row, computed by the background replay."""

    row_key: str
    summaries: Summaries


@dataclass
class Changes:
    """What changed in the session, for the front end to redraw (each field one notification)."""

    catalog: bool = False  # rows were added, replaced or removed
    notices: bool = False  # the catalog's load notices changed
    notes: bool = False  # notes were read or saved
    replayed: list[RunRow] = field(default_factory=list)  # these rows' derived columns arrived
    rebound: list[RunFile] = field(default_factory=list)  # these files were read again: views of them rebind
    loading: LoadProgress | None = None  # indexing progress to show
    load_finished: bool = False  # this load generation is complete
    start_replay: bool = False  # the background replay has work and is not running: start its worker
    replay_idle: bool = False  # the background replay has nothing left to do
    open_run: tuple[RunFile, int] | None = None  # a simulation the user asked to open is ready

    def merge(self, other: Changes) -> Changes:
        """Both sets of changes (``other``'s progress wins)."""
        return Changes(
            self.catalog or other.catalog,
            self.notices or other.notices,
            self.notes or other.notes,
            [*self.replayed, *other.replayed],
            [*self.rebound, *other.rebound],
            other.loading or self.loading,
            self.load_finished or other.load_finished,
            self.start_replay or other.start_replay,
            self.replay_idle or other.replay_idle,
            other.open_run or self.open_run,
        )
