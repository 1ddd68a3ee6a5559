"""The tau-tui Textual app: the session's workers, its signals, and the screens.

The headless ``Session`` (``tau_tui.session``) holds what is loaded, replayed, running and open; the
app runs its thread-bound parts in Textual workers, hands what they report back to it on the UI
thread, and publishes the ``Changes`` it returns as Signals (``tui/context.py``), which screens
subscribe to. Workers post messages; they never touch widgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import get_current_worker

from tau_tui.model.io import RunFile, RunFileError
from tau_tui.model.notes import NotesError
from tau_tui.session import Changes, RolloutBusy, Session
from tau_tui.session.events import FileFailed, LoadEvent, LoadProgress
from tau_tui.textsafe import visible
from tau_tui.tui.context import PendingRefresh
from tau_tui.tui.keys import check_keymap, palette_commands
from tau_tui.tui.messages import (
    LiveFileAdded,
    LoadReport,
    NotesSaved,
    ReplayIdle,
    RolloutEvent,
    RolloutFailed,
    SimsReplayed,
    SimulationOpened,
)
from tau_tui.tui.screens.help import show_help
from tau_tui.tui.screens.runs import RunsScreen

if TYPE_CHECKING:
    from tau_tui.catalog import RunRow
    from tau_tui.session.notes import NoteChange
    from tau_tui.workspace import RunPlan


class TauTuiApp(App[None]):
    """Browse recorded runs; step through each trajectory with the replayed DB beside it."""

    TITLE = "tau-tui"
    CSS_PATH = "app.tcss"

    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("f1", "help", "Help (works while typing)", id="app.help_f1", show=False),
        Binding("r", "reload", "Reload files", id="app.reload"),
        Binding("ctrl+p", "command_palette", "Commands", id="app.palette", show=False),
    ]

    def __init__(self, session: Session, *, calibrate: str | None = None, keymap: dict[str, str] | None = None) -> None:
        """``session``: ``Session.from_settings(...)``; ``calibrate``: open the calibrate screen of this domain
        once the files are read; ``keymap``: binding id → keys (default: the settings'; ``ConfigError`` naming
        an unknown id)."""
        super().__init__()
        self.session = session
        self.set_keymap(check_keymap(keymap if keymap is not None else session.workspace.settings.keymap))
        self._calibrate_on_start = calibrate
        # What screens subscribe to (tau_tui.tui.context); the app publishes, never calls a screen.
        self.loading_changed: Signal[LoadProgress] = Signal(self, "loading-changed")
        self.catalog_changed: Signal[None] = Signal(self, "catalog-changed")
        self.rows_replayed: Signal[list[RunRow]] = Signal(self, "rows-replayed")
        self.replay_idle: Signal[None] = Signal(self, "replay-idle")
        self.notices_changed: Signal[None] = Signal(self, "notices-changed")
        self.notes_changed: Signal[None] = Signal(self, "notes-changed")
        self.rollout_changed: Signal[None] = Signal(self, "rollout-changed")
        self.rollout_file: Signal[RunFile] = Signal(self, "rollout-file")
        self.file_rebound: Signal[RunFile] = Signal(self, "file-rebound")
        self._runs_screen: RunsScreen | None = None

    def get_default_screen(self) -> Screen[Any]:
        self._runs_screen = RunsScreen()
        return self._runs_screen

    @property
    def runs_screen(self) -> RunsScreen:
        """The runs screen at the bottom of the stack (for tests; the app itself only publishes)."""
        assert self._runs_screen is not None
        return self._runs_screen

    @property
    def busy(self) -> bool:
        """Loading, replaying or about to refresh the runs view (tests wait until this is False)."""
        base = self.screen_stack[0] if self.screen_stack else None
        return self.session.busy or (isinstance(base, PendingRefresh) and base.refresh_pending)

    def on_mount(self) -> None:
        self.load_worker(*self.session.start_load())

    def on_unmount(self) -> None:
        self.session.close()

    # --- what the session says changed ----------------------------------------------------------------
    def publish(self, changes: Changes) -> None:
        """Tell the screens (and start the replay worker when the session asks for it)."""
        if changes.loading is not None:
            self.loading_changed.publish(changes.loading)
        if changes.catalog:
            self.catalog_changed.publish(None)
        if changes.replayed:
            self.rows_replayed.publish(changes.replayed)
        if changes.notices:
            self.notices_changed.publish(None)
        for run in changes.rebound:
            self.file_rebound.publish(run)
        if changes.notes:
            self.notes_changed.publish(None)
        if changes.start_replay:
            self.replay_worker()
        if changes.replay_idle:
            self.replay_idle.publish(None)
        if changes.open_run is not None:
            self.open_run_at(*changes.open_run)
        if changes.load_finished and self._calibrate_on_start:
            domain, self._calibrate_on_start = self._calibrate_on_start, None
            self.open_calibrate(domain)

    # --- loading and the background replay ---------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load", name="load files")
    def load_worker(self, generation: int, paths: list[Path]) -> None:
        worker = get_current_worker()

        def emit(event: LoadEvent) -> None:
            self.post_message(LoadReport(event))

        self.session.load(generation, paths, emit, cancelled=lambda: worker.is_cancelled)

    @on(LoadReport)
    def _load_report(self, message: LoadReport) -> None:
        self.publish(self.session.handle(message.event))

    @work(thread=True, exclusive=True, group="replay", name="replay simulations")
    def replay_worker(self) -> None:
        """Replay queued simulations until the queue is empty; results go out in batches."""
        worker = get_current_worker()

        def warn(text: str) -> None:
            self.call_from_thread(self.notify, text, severity="warning")

        for generation, outcomes in self.session.replay_batches(lambda: worker.is_cancelled, warn):
            self.post_message(SimsReplayed(generation, outcomes))
        self.post_message(ReplayIdle())

    @on(SimsReplayed)
    def _sims_replayed(self, message: SimsReplayed) -> None:
        self.publish(self.session.replayed(message.generation, message.outcomes))

    @on(ReplayIdle)
    def _replay_idle(self) -> None:
        self.publish(self.session.replay_done())

    # --- runs written while the app is open -----------------------------------------------------------
    def add_run(self, source: RunFile | Path, open_first: bool = False) -> None:
        """Show a run this app wrote (or a file a screen names): its rows at once, derived columns in the
        background. A path is read in a thread first; ``open_first``: then open its first simulation."""
        if isinstance(source, RunFile):
            self.publish(self.session.add_live_run(source)[1])
            return
        if open_first:
            found = self.session.library.open_when_read(source)
            if found is not None:
                self.open_run_at(*found)
                return
            if source in self.session.library.paths:  # the load reads it (the file the app was started on)
                return
        self.read_run_worker(source)

    def open_saved_run(self, path: Path) -> None:
        """Open the first simulation of a file this app saved, or was started on (once it has been read)."""
        self.add_run(path, open_first=True)

    @work(thread=True, group="live-file", name="read saved run")
    def read_run_worker(self, path: Path) -> None:
        try:
            run = self.session.read_run(path)
        except RunFileError as exc:
            self.post_message(LoadReport(FileFailed(self.session.library.generation, path, exc.problem)))
            return
        self.post_message(LiveFileAdded(run))

    @on(LiveFileAdded)
    def _live_file_added(self, message: LiveFileAdded) -> None:
        self.publish(self.session.add_live_run(message.run)[1])

    # --- rollouts -----------------------------------------------------------------------------------------
    def start_rollout(self, plan: RunPlan) -> bool:
        """Run ``plan`` (the rollout form's); False when another rollout is still running."""
        try:
            self.session.rollouts.start(plan)
        except RolloutBusy as exc:
            self.notify(str(exc), severity="warning")
            return False
        self.rollout_changed.publish(None)
        self.rollout_worker(plan)
        return True

    @work(exclusive=True, group="rollout", name="rollout")
    async def rollout_worker(self, plan: RunPlan) -> None:
        def listen(event: Any) -> None:
            self.post_message(RolloutEvent(event))

        error = await self.session.rollouts.run(plan, listen)
        if error is not None:
            self.post_message(RolloutFailed(error))

    def stop_rollout(self) -> None:
        """Stop the running rollout; what finished is saved (``tau-tui run --resume`` completes it)."""
        active = self.session.rollouts.busy() is not None
        said = self.session.rollouts.stop()
        if active:
            self.workers.cancel_group(self, "rollout")
            self.rollout_changed.publish(None)
        self.notify(said, timeout=6 if active else 2)

    @on(RolloutEvent)
    def _rollout_event(self, message: RolloutEvent) -> None:
        update = self.session.rollouts.fold(message.event)
        if not update.progress:
            return
        if update.notice:
            self.notify(
                update.notice,
                severity="warning" if update.warning else "information",
                timeout=4 if update.warning else 6,
            )
        if update.run is not None:
            self.add_run(update.run)
            if update.first_file:
                self.rollout_file.publish(update.run)
        self.rollout_changed.publish(None)

    @on(RolloutFailed)
    def _rollout_failed(self, message: RolloutFailed) -> None:
        self.session.rollouts.failed(message.error)
        self.rollout_changed.publish(None)
        self.notify(f"rollout failed: {message.error}", severity="error", timeout=8)

    # --- opening things ----------------------------------------------------------------------------------------
    def open_simulation(self, row: RunRow, query: str = "") -> None:
        """Open a simulation on the trajectory screen (one screen, kept and reused: reopening is instant)."""
        self.open_run_at(row.run, row.index, query=query)

    def open_run_at(self, run: RunFile, index: int, *, step: int | None = None, query: str = "") -> None:
        """Show simulation ``index`` of ``run``; when the inspector's trajectory screen is already under the
        current one (a fork's comparison, a play session), a second trajectory screen opens on top."""
        from tau_tui.tui.screens.trajectory import show_trajectory  # loaded when first opened: start-up

        show_trajectory(self, run, index, step=step, query=query)

    def open_json(self, data: Any, hint: str) -> Path | None:
        """Write ``data`` to a temp JSON file and open it in $EDITOR / $PAGER (the input file is never touched);
        served to a browser (``tau-tui serve``), the file is a download instead. A file that cannot be written
        (or would hold a credential) is a notification, and None."""
        from tau_tui.session.external import download_name, run_viewer, write_temp_json

        try:
            path = write_temp_json(data, hint)
        except OSError as exc:
            self.notify(f"JSON not opened: {exc}", severity="error", timeout=8)
            return None
        if self.session.viewer is not None:
            self.session.viewer(path)
            return path
        if self.is_web:
            name = download_name(hint, ".json")
            self.deliver_binary(path, save_filename=name, mime_type="application/json")
            self.notify(f"{name}: sent to the browser as a download", timeout=4)
            return path
        settings = self.session.workspace.settings
        try:
            with self.suspend():
                run_viewer(path, settings.editor, settings.pager)
        except Exception as exc:  # noqa: BLE001 - no terminal to hand over (web, tests): say where the file is
            self.notify(f"cannot open a viewer here ({exc}); the JSON is at {path}", timeout=8)
        self.refresh()
        return path

    def open_simulation_ref(self, path: Path, sim_id: str, step: int | None = None) -> None:
        """Open simulation ``sim_id`` of file ``path``: from the catalog, else read from disk in a thread
        (a calibration's file while it is being written) and added to the runs table first."""
        row = self.session.catalog.find(path, sim_id)
        if row is not None:
            self.open_run_at(row.run, row.index, step=step)
            return
        self.open_ref_worker(path, sim_id, step)

    @work(thread=True, group="live-file", name="read run to open")
    def open_ref_worker(self, path: Path, sim_id: str, step: int | None) -> None:
        try:
            run = self.session.read_run(path)
        except RunFileError as exc:
            self.post_message(SimulationOpened(None, sim_id, step, exc.problem))
            return
        self.post_message(SimulationOpened(run, sim_id, step))

    @on(SimulationOpened)
    def _simulation_opened(self, message: SimulationOpened) -> None:
        run = message.run
        if run is None:
            self.notify(f"cannot open {message.sim_id}: {message.error}", severity="error")
            return
        self.add_run(run)
        index = run.find(message.sim_id)
        if index is None:
            self.notify(f"{run.path.name} has no simulation {message.sim_id}", severity="error")
            return
        self.open_run_at(run, index, step=message.step)

    def open_calibrate(self, domain: str) -> None:
        """The calibrate screen of ``domain`` (one per domain: its grid and a running calibration survive Esc)."""
        from tau_tui.tui.screens.calibrate import CalibrateScreen

        name = f"calibrate:{domain}"
        if not self.is_screen_installed(name):
            self.install_screen(CalibrateScreen(domain), name)
        screen = self.get_screen(name)
        if screen in self.screen_stack:
            while self.screen is not screen:
                self.pop_screen()
            return
        self.push_screen(screen)

    def mark_for_compare(self, path: Path, sim_id: str, task_id: str) -> None:
        """``=``: mark a simulation; ``=`` on another simulation of the same task compares the two."""
        mark = self.session.compare_mark
        if mark is None:
            self.session.compare_mark = (path, sim_id)
            self.notify(
                f"marked {sim_id} (task {task_id}) for comparison: press = on another run of that task", timeout=4
            )
            return
        if mark == (path, sim_id):
            self.session.compare_mark = None
            self.notify("comparison mark cleared", timeout=2)
            return
        from tau_tui.tui.screens.trial_compare import TrialCompareScreen

        self.session.compare_mark = None
        self.push_screen(TrialCompareScreen(mark, (path, sim_id)))

    # --- notes ----------------------------------------------------------------------------------------------
    def change_notes(self, path: Path, change: NoteChange) -> None:
        """Change the sidecar notes of ``path`` (``session.notes``: add, adopt, remove), off the UI thread."""
        self.note_worker(path, change)

    @work(thread=True, group="notes", name="save note")
    def note_worker(self, path: Path, change: NoteChange) -> None:
        try:
            book = self.session.change_notes(path, change)
        except (NotesError, OSError) as exc:
            self.post_message(NotesSaved(error=str(exc)))
            return
        self.post_message(NotesSaved(book, done=f"{change.done} in {book.where}"))

    @on(NotesSaved)
    def _notes_saved(self, message: NotesSaved) -> None:
        if message.error is not None or message.notebook is None:
            self.notify(f"note not saved: {message.error}", severity="error", timeout=8)
            return
        self.publish(self.session.notes_saved(message.notebook))
        self.notify(message.done, timeout=3)

    # --- app-wide actions ---------------------------------------------------------------------------------------
    def action_reload(self) -> None:
        """Read every file again from disk; screens keep their place (file, simulation, step)."""
        self.notify("reloading files from disk…", timeout=2)
        self.load_worker(*self.session.reload())

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast of every screen: its text often names recorded ids and errors, so it is shown with
        control characters visible and never read as markup."""
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        super().notify(visible(message), title=visible(title), severity=severity, markup=False, **kwargs)

    def action_help(self) -> None:
        from tau_tui.views.legend import help_legend

        show_help(self, help_legend())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every key action of the current screen and the app, as palette commands."""
        yield from super().get_system_commands(screen)
        yield from palette_commands(screen)


__all__ = ["TauTuiApp"]
