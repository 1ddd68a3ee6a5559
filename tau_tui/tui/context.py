"""What a screen may know of the app: the session, the signals the app publishes, and its verbs.

A screen gets the context with ``context(self)`` and never imports ``tau_tui.tui.app``; it learns
about changes by subscribing to the context's signals on mount (``subscribe(self, ctx.notes_changed,
self.notes_changed)``), and the app publishes them without knowing who listens (posting's
``env_changed_signal``). The app names a screen class only to push it.

The signals (each published by the app, on the UI thread):

- ``loading_changed`` (``LoadProgress``): files indexed so far, and when indexing finished;
- ``catalog_changed`` (``None``): rows were added, replaced or removed (a burst: coalesce it);
- ``rows_replayed`` (``list[RunRow]``): these rows' derived columns arrived (a replay, a judge verdict);
- ``replay_idle`` (``None``): the background replay has nothing left to do;
- ``notices_changed`` (``None``): the catalog's load notices changed;
- ``notes_changed`` (``None``): notes were read or saved;
- ``rollout_changed`` (``None``): the rollout's progress (``ctx.rollout``) changed;
- ``rollout_file`` (``RunFile``): a rollout's first simulation is in: views may narrow to its file;
- ``file_rebound`` (``RunFile``): a file was read again (a reload, a live run growing): views of it rebind.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar, cast, runtime_checkable

from textual.signal import Signal

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.screen import Screen

    from tau_tui.catalog import RunRow
    from tau_tui.model.io import RunFile
    from tau_tui.session import Changes, Session
    from tau_tui.session.events import LoadProgress
    from tau_tui.session.notes import NoteChange
    from tau_tui.workspace import RunPlan

T = TypeVar("T")


class TauContext(Protocol):
    """Everything a screen uses of the app (the app implements it; tests may stand in for it)."""

    session: Session  # what is loaded, replayed, running and open (headless: tau_tui.session)

    # --- signals -------------------------------------------------------------------------------------
    loading_changed: Signal[LoadProgress]
    catalog_changed: Signal[None]
    rows_replayed: Signal[list[RunRow]]
    replay_idle: Signal[None]
    notices_changed: Signal[None]
    notes_changed: Signal[None]
    rollout_changed: Signal[None]
    rollout_file: Signal[RunFile]
    file_rebound: Signal[RunFile]

    # --- opening things ------------------------------------------------------------------------------
    def open_simulation(self, row: RunRow, query: str = "") -> None: ...
    def open_run_at(self, run: RunFile, index: int, *, step: int | None = None, query: str = "") -> None: ...
    def open_simulation_ref(self, path: Path, sim_id: str, step: int | None = None) -> None: ...
    def open_json(self, data: Any, hint: str) -> Path | None: ...
    def open_calibrate(self, domain: str) -> None: ...
    def mark_for_compare(self, path: Path, sim_id: str, task_id: str) -> None: ...

    # --- work the app runs in its workers, and what it publishes ---------------------------------------
    def publish(self, changes: Changes) -> None: ...
    def add_run(self, source: RunFile | Path, open_first: bool = False) -> None: ...
    def start_rollout(self, plan: RunPlan) -> bool: ...
    def stop_rollout(self) -> None: ...
    def change_notes(self, path: Path, change: NoteChange) -> None: ...


@runtime_checkable
class PendingRefresh(Protocol):
    """A view that coalesces refreshes and has one waiting (the app is ``busy`` until it is drawn)."""

    @property
    def refresh_pending(self) -> bool: ...


def context(node: DOMNode) -> TauContext:
    """The context of the app ``node`` runs in (the one typed cast of the TUI)."""
    return cast("TauContext", node.app)


def subscribe(screen: Screen[Any], signal: Signal[T], callback: Callable[[T], Any]) -> None:
    """Call ``callback`` at once whenever ``signal`` is published while ``screen`` is on the screen stack.

    Call it on mount, then catch up with what was published before (the app mounts before its first screen,
    and starts loading then). A screen that is installed but not on the stack (the trajectory screen after Esc)
    is skipped, as it catches up when it is opened again. The call is immediate (the app's order of
    updates is kept); an error in it is raised in the screen's message loop rather than swallowed.
    """

    def call(data: T) -> None:
        if screen not in screen.app.screen_stack:
            return
        try:
            callback(data)
        except Exception as error:  # noqa: BLE001 - re-raised where Textual reports it
            screen.call_next(_raise, error)

    signal.subscribe(screen, call, immediate=True)


def _raise(error: Exception) -> None:
    raise error
