"""The tau-tui Textual app: loads run files in a worker, replays in the background, hosts the screens.

Data flow: the load worker opens files and posts ``FileLoaded`` / ``FileFailed``;
the app adds them to the ``Catalog`` and queues every simulation for the
background worker, which replays and evaluates it and posts ``SimsReplayed``
batches. A rollout runs in an async worker; each finished simulation is added
to the catalog at once (``add_live_run``), as are the recordings of play
sessions and forks. Notes are read from each recording's sidecar with it
and saved there in a thread worker (``save_note``); the recording is never
written. The calibrate screen (one per domain, kept while the app runs)
fills its grid live. Screens read the catalog; workers never touch widgets.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import queue
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable

from rich.text import Text
from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import get_current_worker

from tau_tui.model.indexing import Failed, Growing, Loaded, index_files, plan_workers
from tau_tui.model.io import RunFile, RunFileError, describe_empty, error_text, open_run, scan_paths
from tau_tui.model.submission import submission_notes
from tau_tui.model.notes import NoteBook, NotesError
from tau_tui.textsafe import visible
from tau_tui.catalog import Catalog, RunRow, flag_legend
from tau_tui.views.columns import column_legend
from tau_tui.tui.context import LoadProgress, PendingRefresh
from tau_tui.tui.external import download_name, run_viewer, write_temp_json
from tau_tui.tui.keys import check_keymap, palette_commands
from tau_tui.tui.screens.help import show_help
from tau_tui.views.live import RolloutProgress, carry_over
from tau_tui.tui.messages import (
    FileFailed, FileGrowing, FileLoaded, FolderNotice, LiveFileAdded, LoadFinished, LoadStarted, NotesSaved, ReplayIdle,
    ReplayOutcome, RolloutEvent, RolloutFailed, SimulationOpened, SimsReplayed,
)
from tau_tui.views.render import PILL_HELP, pill
from tau_tui.tui.replay_service import ReplayService
from tau_tui.tui.screens.runs import RunsScreen
from tau_tui.tui.screens.trajectory import show_trajectory
from tau_tui.workspace import RunPlan, Workspace

REPLAY_BATCH_SECONDS = 0.1
PRIORITY_ROWS = 120  # rows on screen and just below, replayed first
POOL_BATCH = 32  # simulations per worker process handed out at a time (the queue's priorities apply between)


SETTLE_AFTER = 200  # rows replayed since the last settling that make it worth it (a live run adds a few)


def _default_workers(workspace: Workspace) -> int:
    """Every core, unless the workspace was built in code (its registry cannot be rebuilt in a worker)."""
    from tau_tui.pool import available_cores

    return 1 if getattr(workspace, "registry_given", False) else available_cores()


def settle_heap() -> None:
    """After a big load: collect once, then move what survived out of the collector's sight.

    Loaded runs, their analyses and domain DBs are long-lived; left tracked, every full
    collection walks all of them (about 250 ms with the whole corpus open), and one landing
    during a cursor step shows as a stall. Frozen objects are still freed when unreferenced.
    """
    gc.collect()
    gc.freeze()


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

    def __init__(self, paths: Iterable[Path | str], tau2_data: Path | str | None = None,
                 domain_paths: list[Path] | None = None,
                 external_viewer: Callable[[Path], Any] | None = None, runs_dir: Path | str = "runs",
                 calibrate: str | None = None, task_editor: Callable[[list[str]], Any] | None = None,
                 judge_model: str | None = None, judge_api_base: str | None = None,
                 workspace: Workspace | None = None, keymap: dict[str, str] | None = None,
                 workers: int | None = None, index_workers: int | None = None) -> None:
        """``workspace``: the configured session (settings, registry, judge…) every screen builds through;
        without it one is made from ``tau2_data``, ``domain_paths``, ``runs_dir``, ``judge_model`` and
        ``judge_api_base`` (``judge_model``: the litellm model that judges NL assertions, in rollouts,
        calibrations, play sessions, forks, gold checks and on request, J on a trajectory);
        ``calibrate``: open the calibrate screen of this domain once the files are read;
        ``task_editor``: runs an editor command instead of suspending the app (tests);
        ``keymap``: binding id → keys from the settings file (``ConfigError`` naming an unknown id);
        ``workers``: processes of the background replay (default every core; 1: this process only);
        ``index_workers``: worker processes that index several large files (default ``$TAU_TUI_INDEX_WORKERS``
        or every core; 0: this process only)."""
        super().__init__()
        self.set_keymap(check_keymap(keymap or {}))
        self.workspace = workspace if workspace is not None else Workspace.from_settings(
            tau2_data, domain_paths, runs_dir, judge_model, judge_api_base)
        self.judge_model = self.workspace.judge_model
        self.judge_api_base = self.workspace.judge_api_base
        self.paths = [Path(p) for p in paths]
        self.runs_dir = self.workspace.runs_dir  # where new rollouts, play sessions and forks are saved by default
        self.catalog = Catalog()
        self.replay_service = ReplayService(analyzer=self.workspace.analyzer)
        self.generation = 0
        self.load_total = 0
        self.load_done = 0
        self.loading_files = False
        self.external_viewer = external_viewer
        self._replay_queue: queue.Queue[tuple[int, RunRow]] = queue.Queue()
        self._replay_first: deque[tuple[int, RunRow]] = deque()
        self._replayed_keys: set[tuple[int, str]] = set()
        self._replaying = False
        self._unsettled = 0  # rows replayed since the heap was last settled
        self._executor: Any = None  # worker processes of the background replay (tau_tui.pool), started on need
        self.replay_workers = workers if workers is not None else _default_workers(self.workspace)
        self.index_workers = index_workers  # None: tau_tui.model.indexing.default_workers()
        self.rollout: RolloutProgress | None = None
        self._rollout_runner: Any = None
        self._live_files: set[str] = set()
        self._open_when_read: Path | None = None
        self._calibrate_on_start = calibrate
        self.task_editor = task_editor
        self.compare_mark: tuple[Path, str] | None = None  # (file, simulation id) marked with =
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
        self.load_progress: LoadProgress | None = None  # the last one published (a screen mounted later catches up)
        self._runs_screen: RunsScreen | None = None

    def get_default_screen(self) -> Screen:
        self._runs_screen = RunsScreen()
        return self._runs_screen

    @property
    def runs_screen(self) -> RunsScreen:
        """The runs screen at the bottom of the stack (for tests; the app itself only publishes)."""
        assert self._runs_screen is not None
        return self._runs_screen

    def on_mount(self) -> None:
        self.load_files()

    # --- loading -------------------------------------------------------------------------------------------
    def load_files(self) -> None:
        self.generation += 1
        self.loading_files = True
        self._replayed_keys.clear()
        self._replay_first.clear()
        self.load_worker(self.generation, list(self.paths))

    @work(thread=True, exclusive=True, group="load", name="load files")
    def load_worker(self, generation: int, paths: list[Path]) -> None:
        worker = get_current_worker()
        scan = scan_paths(paths)
        files = scan.files
        self.post_message(LoadStarted(generation, len(files)))
        notice = scan.data_folder_notice()
        if notice:
            self.post_message(FolderNotice(generation, scan.data_folders[0].parent, notice))
        opened: list[Path] = []  # a run folder's run is keyed by its results.json, not by the folder scanned

        def arrived(event: Growing | Loaded | Failed) -> None:
            if isinstance(event, Growing):
                self.post_message(FileGrowing(generation, event.run, event.count))
                return
            if isinstance(event, Failed):
                self.post_message(FileFailed(generation, event.path, event.problem))
                return
            run = event.run
            notes = [n for n in [describe_empty(run)] if n] + list(run.warnings) + submission_notes(run.path)
            try:
                notebook = NoteBook(run.path)
            except NotesError as exc:
                notebook = None
                notes.append(f"notes not read: {exc}")
            opened.append(run.path)
            self.post_message(FileLoaded(generation, run, notes, notebook))

        # Several large files: indexed on every core (tau_tui.model.indexing), rows in the order of the files.
        workers = plan_workers(files, self.index_workers)
        if not index_files(files, arrived, workers, cancelled=lambda: worker.is_cancelled):
            return
        self.post_message(LoadFinished(generation, files + opened))

    @on(LoadStarted)
    def _load_started(self, message: LoadStarted) -> None:
        if message.generation != self.generation:
            return
        self.load_total, self.load_done = message.total, 0
        self._loading(LoadProgress(0, message.total, finished=False))

    @on(FileLoaded)
    def _file_loaded(self, message: FileLoaded) -> None:
        if message.generation != self.generation:
            return
        run = message.run
        rows = self.catalog.add_run(run)
        if message.notebook is not None:
            self.catalog.set_notebook(message.notebook)
        for note in message.notes:
            self.catalog.add_notice(run.path, note.replace(f"{run.path}: ", ""), "information")
        self.queue_replay(rows)
        self._count_file()
        self.catalog_changed.publish(None)
        if message.notes:
            self.notices_changed.publish(None)
        self.file_rebound.publish(run)
        if rows and self._open_when_read == run.path:
            self._open_when_read = None
            self.open_run_at(run, 0)

    @on(FileGrowing)
    def _file_growing(self, message: FileGrowing) -> None:
        """Rows of a large file appear while it is indexed (the rest, and its notes, come with ``FileLoaded``)."""
        if message.generation != self.generation:
            return
        if self.catalog.grow_run(message.run, message.count):
            self.catalog_changed.publish(None)

    @on(FolderNotice)
    def _folder_notice(self, message: FolderNotice) -> None:
        if message.generation != self.generation:
            return
        self.catalog.set_notice(message.path, message.text.replace(f"{message.path}: ", ""), "information")
        self.notices_changed.publish(None)

    @on(FileFailed)
    def _file_failed(self, message: FileFailed) -> None:
        if message.generation != self.generation:
            return
        self.catalog.remove_file(message.path)
        self.catalog.add_notice(message.path, message.error, "error")
        self._count_file()
        self.notices_changed.publish(None)
        self.catalog_changed.publish(None)

    def _loading(self, progress: LoadProgress) -> None:
        self.load_progress = progress
        self.loading_changed.publish(progress)

    def _count_file(self) -> None:
        self.load_done += 1
        self._loading(LoadProgress(self.load_done, self.load_total, finished=False))

    @on(LoadFinished)
    def _load_finished(self, message: LoadFinished) -> None:
        if message.generation != self.generation:
            return
        seen = {self.catalog.file_key(p) for p in message.seen} | self._live_files
        for key in [k for k in self.catalog.files if k not in seen]:
            self.catalog.remove_file(Path(key))
        self.loading_files = False
        # The loaded runs live as long as the app: keep them out of the cycle collector's full passes
        # (millions of objects; a full pass over them is a visible pause). Refcounting still frees them.
        gc.freeze()
        self._loading(LoadProgress(self.load_done, self.load_total, finished=True))  # and redraw now
        self.notes_changed.publish(None)
        self.queue_replay([])
        if self._calibrate_on_start:
            domain, self._calibrate_on_start = self._calibrate_on_start, None
            self.open_calibrate(domain)

    # --- background replay ------------------------------------------------------------------------------------
    def queue_replay(self, rows: list[RunRow]) -> None:
        """Queue simulations for the background replay (the verdict columns of the runs table).

        Replay starts once the files are indexed, so that it never slows loading down.
        """
        for row in rows:
            self._replay_queue.put((self.generation, row))
        waiting = not self._replay_queue.empty() or bool(self._replay_first)
        if waiting and not self._replaying and not self.loading_files:
            self._replaying = True
            self.replay_worker()

    def prioritize_replay(self, rows: list[RunRow]) -> None:
        """Replay these rows (the ones on screen) before the rest of the queue."""
        for row in reversed(rows[:PRIORITY_ROWS]):
            if row.replay is None and row.replay_error is None:
                self._replay_first.appendleft((self.generation, row))

    def _next_to_replay(self) -> tuple[int, RunRow] | None:
        while True:
            try:
                item = self._replay_first.popleft()
            except IndexError:
                try:
                    item = self._replay_queue.get_nowait()
                except queue.Empty:
                    return None
            generation, row = item
            if generation == self.generation and (generation, row.key) not in self._replayed_keys:
                return item

    @work(thread=True, exclusive=True, group="replay", name="replay simulations")
    def replay_worker(self) -> None:
        """Replay queued simulations until the queue is empty; results go out in batches.

        Batches of simulations read from files go to worker processes (``tau_tui.pool``, every core);
        the rest (runs this app wrote, runs a judge was asked about) are replayed here, one at a time.
        """
        worker = get_current_worker()
        batch: list[ReplayOutcome] = []
        batch_generation = self.generation
        last_post = time.monotonic()
        replayed = 0
        while not worker.is_cancelled:
            items = self._next_batch()
            if not items:
                break
            for (generation, row), summaries in self._summarize(items):
                if worker.is_cancelled:
                    break
                replayed += 1
                if generation != batch_generation and batch:
                    self.post_message(SimsReplayed(batch_generation, batch))
                    batch = []
                batch_generation = generation
                batch.append(ReplayOutcome(row.key, summaries))
                if time.monotonic() - last_post > REPLAY_BATCH_SECONDS:
                    self.post_message(SimsReplayed(batch_generation, batch))
                    batch, last_post = [], time.monotonic()
        if batch:
            self.post_message(SimsReplayed(batch_generation, batch))
        self._unsettled += replayed
        if self._unsettled >= SETTLE_AFTER and not worker.is_cancelled:
            settle_heap()
            self._unsettled = 0
        self.post_message(ReplayIdle())

    def _next_batch(self) -> list[tuple[int, RunRow]]:
        """The next simulations to replay: one, or a pool's worth when worker processes are in use."""
        size = POOL_BATCH * self.replay_workers if self.replay_workers > 1 else 1
        items = []
        while len(items) < size:
            item = self._next_to_replay()
            if item is None:
                break
            self._replayed_keys.add((item[0], item[1].key))
            items.append(item)
        return items

    def _summarize(self, items: list[tuple[int, RunRow]]):
        """(item, Summaries) for each item, in order: on worker processes when enough can go there."""
        from tau_tui.catalog.summaries import Summaries
        from tau_tui.pool import POOL_MIN, Unit

        def local(item: tuple[int, RunRow]):
            row = item[1]
            summaries = self.replay_service.summarize(row.run, row.index)
            row.haystack()  # index the text for search while we are here, off the UI thread
            return item, summaries

        remote = [item for item in items if self._pool_may_replay(item[1])]
        if not remote or self.replay_workers == 1 or (self._executor is None and len(remote) < POOL_MIN):
            for item in items:
                yield local(item)
            return
        try:
            done = self._pool().map(Unit(str(row.path), row.index) for _, row in remote)
            first = next(done)
        except (OSError, ValueError, RuntimeError) as exc:  # no worker processes here: replay in this one
            self.replay_workers = 1
            self.call_from_thread(self.notify, f"background replay in one process ({error_text(exc)})",
                                  severity="warning")
            for item in items:
                yield local(item)
            return
        done = itertools.chain([first], done)
        for position, item in enumerate(items):
            if not self._pool_may_replay(item[1]):
                yield local(item)
                continue
            try:
                outcome = next(done)
            except RuntimeError as exc:  # the workers stopped (the app is closing) or one died: finish here
                if self._executor is None:
                    return
                self.replay_workers = 1
                self.call_from_thread(self.notify, f"background replay in one process ({error_text(exc)})",
                                      severity="warning")
                for rest in items[position:]:
                    yield local(rest)
                return
            row = item[1]
            if outcome.haystack is not None and row._haystack is None:
                row._haystack = outcome.haystack
            yield item, outcome.summaries if outcome.summaries is not None else Summaries(error=outcome.error)

    def _pool_may_replay(self, row: RunRow) -> bool:
        """A worker process reads the file itself: rows of files read from disk, with no judge's verdicts."""
        return (self.catalog.file_key(row.path) not in self._live_files
                and not self.replay_service.knows_verdicts(row.path, row.sim_id))

    def _pool(self):
        from tau_tui.pool import Executor, Job

        if self._executor is None:
            self._executor = Executor(Job("summary", self.workspace.settings), self.replay_workers, self.workspace)
        return self._executor

    def on_unmount(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    @on(ReplayIdle)
    def _replay_idle(self) -> None:
        self._replaying = False
        if not self._replay_queue.empty() or self._replay_first:
            self.queue_replay([])
        else:
            self.replay_idle.publish(None)

    @on(SimsReplayed)
    def _sims_replayed(self, message: SimsReplayed) -> None:
        if message.generation != self.generation:
            return
        rows = []
        new_notice = False
        for outcome in message.outcomes:
            row = self.catalog.by_key.get(outcome.row_key)
            if row is None:
                continue
            done = outcome.summaries
            row.replay, row.replay_error = done.replay, done.error
            row.evaluation, row.eval_error = done.evaluation, done.eval_error
            rows.append(row)
            for prefix, error in (("not replayed", done.error), ("not evaluated", done.eval_error)):
                error = error.removeprefix(f"{row.path}: ") if error else error  # the notice names the file
                if error and not any(n.text.endswith(error) for n in self.catalog.all_notices()):
                    self.catalog.add_notice(row.path, f"{prefix}: {error}", "warning")
                    new_notice = True
        self.rows_replayed.publish(rows)
        if new_notice:
            self.notices_changed.publish(None)

    @property
    def busy(self) -> bool:
        """Loading, replaying or about to refresh the runs view (tests wait until this is False)."""
        base = self.screen_stack[0] if self.screen_stack else None
        return self.loading_files or self._replaying or (isinstance(base, PendingRefresh) and base.refresh_pending)

    # --- runs written while the app is open -----------------------------------------------------------
    def add_live_run(self, run: RunFile) -> list[RunRow]:
        """Add (or grow) a run this app wrote: its rows appear at once, derived columns follow in the background.

        The file also joins the paths a reload reads.
        """
        key = self.catalog.file_key(run.path)
        old = self.catalog.rows_of(run.path)
        rows = self.catalog.add_run(run)
        fresh = carry_over(old, rows)
        for row in fresh:
            self._replayed_keys.discard((self.generation, row.key))
        if key not in self._live_files:
            self._live_files.add(key)
            if not any(self.catalog.file_key(p) == key for p in self.paths):
                self.paths.append(run.path)
        self.queue_replay(fresh)
        self.catalog_changed.publish(None)
        self.file_rebound.publish(run)
        return rows

    def read_live_file(self, path: Path) -> None:
        """Read a results file this app just saved (a play session, a fork) into the runs table."""
        self.read_live_file_worker(path)

    @work(thread=True, group="live-file", name="read saved run")
    def read_live_file_worker(self, path: Path) -> None:
        try:
            run = open_run(path)
        except RunFileError as exc:
            self.post_message(FileFailed(self.generation, path, exc.problem))
            return
        self.post_message(LiveFileAdded(run))

    @on(LiveFileAdded)
    def _live_file_added(self, message: LiveFileAdded) -> None:
        rows = self.add_live_run(message.run)
        if rows and self._open_when_read == message.run.path:
            self._open_when_read = None
            self.open_run_at(message.run, 0)

    # --- rollouts -----------------------------------------------------------------------------------------
    def start_rollout(self, config: Any, path: Path | None = None) -> bool:
        """Run a ``RunPlan`` (or a ``RunConfig`` into ``path``); False when another rollout is still running."""
        plan = config if isinstance(config, RunPlan) else RunPlan(config, Path(path or ""))
        config, path = plan.config, plan.path
        if self.rollout is not None and self.rollout.active:
            self.notify("a rollout is already running (K on the runs screen stops it)", severity="warning")
            return False
        self.rollout = RolloutProgress(path, config.domain, config.agent.model,
                                       "—" if config.solo else config.user.model)
        self.rollout_changed.publish(None)
        self.rollout_worker(plan)
        return True

    @work(exclusive=True, group="rollout", name="rollout")
    async def rollout_worker(self, plan: RunPlan) -> None:
        """Prepare in a thread (domain loading), then run on the event loop (litellm calls are async)."""
        from tau_tui.domains import DomainError
        from tau_tui.rollout import ParticipantSpecError, RunError

        runner = self.workspace.runner(plan, listener=self._rollout_listener)  # with the judge, as tau-tui run
        try:
            await asyncio.to_thread(runner.prepare)
            self._rollout_runner = runner
            await runner.run()
        except (DomainError, RunError, ParticipantSpecError, ValueError, KeyError) as exc:
            self.post_message(RolloutFailed(error_text(exc)))
        except Exception as exc:  # noqa: BLE001 - shown on the runs screen, never a crash
            self.post_message(RolloutFailed(f"{type(exc).__name__}: {exc}"))

    def _rollout_listener(self, event: Any) -> None:
        self.post_message(RolloutEvent(event))

    def stop_rollout(self) -> None:
        """Stop the running rollout; what finished is saved (``tau-tui run --resume`` completes it)."""
        if self.rollout is None or not self.rollout.active:
            self.notify("no rollout is running", timeout=2)
            return
        self.workers.cancel_group(self, "rollout")
        self.rollout.stopped = True
        self.rollout.running = 0
        self.rollout_changed.publish(None)
        self.notify(f"rollout stopped: {self.rollout.done} simulation(s) saved in {self.rollout.path}", timeout=6)

    @on(RolloutEvent)
    def _rollout_event(self, message: RolloutEvent) -> None:
        from tau_tui import formats
        from tau_tui.rollout import LLMRetried, RunFinished, SimulationFinished
        from tau_tui.rollout.progress import retry_text

        progress, event = self.rollout, message.event
        if progress is None or progress.stopped:
            return
        progress.apply(event)  # the one fold of runner events (rollout/progress.py), as tau-tui run's
        if isinstance(event, LLMRetried):
            self.notify(retry_text(event), severity="warning", timeout=4)
        elif isinstance(event, SimulationFinished) and self._rollout_runner is not None:
            run = self._rollout_runner.snapshot()
            self.add_live_run(run)
            if not progress.shown:
                progress.shown = True
                self.rollout_file.publish(run)
        elif isinstance(event, RunFinished):
            avg = progress.average
            self.notify(f"rollout finished: {progress.done} simulation(s), average reward "
                        f"{formats.average(avg)}; saved in {progress.path}", timeout=6)
        self.rollout_changed.publish(None)

    @on(RolloutFailed)
    def _rollout_failed(self, message: RolloutFailed) -> None:
        if self.rollout is not None:
            self.rollout.error = message.error
            self.rollout.running = 0
        self.rollout_changed.publish(None)
        self.notify(f"rollout failed: {message.error}", severity="error", timeout=8)

    # --- opening things ----------------------------------------------------------------------------------------
    def open_simulation(self, row: RunRow, query: str = "") -> None:
        """Open a simulation on the trajectory screen (one screen, kept and reused: reopening is instant)."""
        self.open_run_at(row.run, row.index, query=query)

    def open_run_at(self, run: RunFile, index: int, *, step: int | None = None, query: str = "") -> None:
        """Show simulation ``index`` of ``run``; when the inspector's trajectory screen is already under the
        current one (a fork's comparison, a play session), a second trajectory screen opens on top."""
        show_trajectory(self, run, index, step=step, query=query)

    def open_saved_run(self, path: Path) -> None:
        """Open the first simulation of a file this app saved, or was started on (once it has been read)."""
        rows = self.catalog.rows_of(path)
        if rows:
            self.open_run_at(rows[0].run, rows[0].index)
        else:
            self._open_when_read = path

    def open_json(self, data: Any, hint: str) -> Path:
        """Write ``data`` to a temp JSON file and open it in $EDITOR / $PAGER (the input file is never touched);
        served to a browser (``tau-tui serve``), the file is a download instead."""
        path = write_temp_json(data, hint)
        if self.external_viewer is not None:
            self.external_viewer(path)
            return path
        if self.is_web:
            name = download_name(hint, ".json")
            self.deliver_binary(path, save_filename=name, mime_type="application/json")
            self.notify(f"{name}: sent to the browser as a download", timeout=4)
            return path
        try:
            with self.suspend():
                run_viewer(path)
        except Exception as exc:  # noqa: BLE001 - no terminal to hand over (web, tests): say where the file is
            self.notify(f"cannot open a viewer here ({exc}); the JSON is at {path}", timeout=8)
        self.refresh()
        return path

    def open_simulation_ref(self, path: Path, sim_id: str, step: int | None = None) -> None:
        """Open simulation ``sim_id`` of file ``path``: from the catalog, else read from disk in a thread
        (a calibration's file while it is being written) and added to the runs table first."""
        row = self.catalog.find(path, sim_id)
        if row is not None:
            self.open_run_at(row.run, row.index, step=step)
            return
        self.open_ref_worker(path, sim_id, step)

    @work(thread=True, group="live-file", name="read run to open")
    def open_ref_worker(self, path: Path, sim_id: str, step: int | None) -> None:
        try:
            run = open_run(path)
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
        self.add_live_run(run)
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
        mark = self.compare_mark
        if mark is None:
            self.compare_mark = (path, sim_id)
            self.notify(f"marked {sim_id} (task {task_id}) for comparison: press = on another run of that task",
                        timeout=4)
            return
        if mark == (path, sim_id):
            self.compare_mark = None
            self.notify("comparison mark cleared", timeout=2)
            return
        from tau_tui.tui.screens.trial_compare import TrialCompareScreen

        self.compare_mark = None
        self.push_screen(TrialCompareScreen(mark, (path, sim_id)))

    # --- notes ----------------------------------------------------------------------------------------------
    def save_note(self, path: Path, sim_id: str, request: Any, task_id: str | None = None,
                  trial: int | None = None) -> None:
        """Add a note (``NoteRequest``) on a simulation of ``path`` to its sidecar, off the UI thread."""
        self.note_worker(path, lambda book: book.add(sim_id, request.source, request.error_type, request.text,
                                                       step=request.step, task_id=task_id, trial=trial),
                         "note saved")

    def adopt_notes(self, path: Path, sim_id: str, suggestions: list[Any], task_id: str | None = None,
                    trial: int | None = None) -> None:
        """Keep a recorded review's errors as notes (``NoteBook.adopt``: the ones not noted yet), off the UI thread."""
        self.note_worker(path, lambda book: book.adopt(sim_id, suggestions, task_id=task_id, trial=trial),
                         f"{len(suggestions)} review error(s) kept as notes (already noted ones skipped)")

    def remove_note(self, path: Path, note_id: str) -> None:
        self.note_worker(path, lambda book: book.remove(note_id), "note deleted")

    @work(thread=True, group="notes", name="save note")
    def note_worker(self, path: Path, change: Callable[[NoteBook], Any], done: str) -> None:
        try:
            book = NoteBook(path)
            change(book)
        except (NotesError, OSError) as exc:
            self.post_message(NotesSaved(error=str(exc)))
            return
        self.post_message(NotesSaved(book, done=f"{done} in {book.where}"))

    @on(NotesSaved)
    def _notes_saved(self, message: NotesSaved) -> None:
        if message.error is not None or message.notebook is None:
            self.notify(f"note not saved: {message.error}", severity="error", timeout=8)
            return
        self.catalog.set_notebook(message.notebook)
        self.notes_changed.publish(None)  # the runs table, open trajectories and the notes list show them
        self.notify(message.done, timeout=3)

    # --- app-wide actions ---------------------------------------------------------------------------------------
    def action_reload(self) -> None:
        """Read every file again from disk; screens keep their place (file, simulation, step)."""
        self.replay_service.forget_domain_errors()
        self.notify("reloading files from disk…", timeout=2)
        self.load_files()

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Every toast of every screen: its text often names recorded ids and errors, so it is shown with
        control characters visible and never read as markup."""
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        super().notify(visible(message), title=visible(title), severity=severity, markup=False, **kwargs)

    def action_help(self) -> None:
        show_help(self, self._legend())

    @staticmethod
    def _legend() -> Text:
        text = Text("tool-call pills\n", style="bold underline")
        for name, meaning in PILL_HELP.items():
            text.append_text(pill(name))
            text.append(f"  {meaning}\n")
        text.append("\nrecorded vs derived\n", style="bold underline")
        text.append("Columns and panels marked ")
        text.append("recorded", style="bold blue")
        text.append(" show what the file says; ")
        text.append("derived (*)", style="bold magenta")
        text.append(" shows what tau-tui's own replay and evaluator found. They are never mixed.\n")
        text.append("\nruns-table columns\n", style="bold underline")
        text.append_text(column_legend())
        text.append("\n\nprocess flags (flags* column; ⚑ in a trajectory's footer: the same count)\n",
                    style="bold underline")
        for letter, kind, description in flag_legend():
            text.append(letter, style="bold cyan")
            text.append(f"  {kind}", style="bold")
            text.append(f"  {description}\n")
        text.rstrip()
        return text

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every key action of the current screen and the app, as palette commands."""
        yield from super().get_system_commands(screen)
        yield from palette_commands(screen)
