"""The calibrate screen: k trials per task in a live grid, bands, re-runs, task edits, gold check.

One screen per domain, kept by the app (its grid and a running calibration
survive Esc). On first show a thread worker loads the domain and puts the
loaded recordings of that domain into the grid (``Calibrator.load_run``).
``n`` runs k trials for chosen tasks with a chosen agent and user (scripted
or litellm); ``R`` re-runs the selected rows (space selects) with the
tasks' current definitions. A run fills the grid live: the calibrator runs
in an async worker on the event loop (model calls are async), and every
grid event is posted to this screen as a ``GridEvent``. ``e`` opens a row's
task definition in ``$EDITOR``; after the edit the tasks are reloaded in a
thread and a re-run is offered: an edited task has a new fingerprint, so
its trials land in a new row, never pooled with the old ones. ``c`` runs
the gold sanity check; Enter opens the cursor's trial in the inspector;
``=`` marks it for comparison with another trial of the same task.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer

from tau_tui import formats
from tau_tui.calibrate import (
    Band,
    CalibrationFinished,
    CalibrationStarted,
    Calibrator,
    CellChanged,
    Row,
    RowAdded,
    RowChanged,
)
from tau_tui.calibrate.render import BAND_LABELS
from tau_tui.calibrate.workbench import forks_line
from tau_tui.model.io import error_text
from tau_tui.rollout.progress import RunTally, retry_text
from tau_tui.tui.context import context
from tau_tui.tui.messages import CalibrationFailed, CalibratorReady, GridEvent, TaskLocated, TaskReloaded
from tau_tui.tui.screens.gold_check import GoldCheckScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.rollout import RolloutScreen
from tau_tui.tui.widgets.calibration_table import CalibrationTable
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.calibration_view import (
    BAND_STYLES,
    MAX_TRIALS_WIDTH,
    cell_summary,
    columns,
    grid_k,
    trials_width,
)
from tau_tui.views.live import progress_status
from tau_tui.workspace import RunPlan

REFRESH_SECONDS = 0.1  # coalesce bursts of grid events into one redraw
READ_BACK_SECONDS = 0.5  # how soon a finished trial appears in the runs table
SORTS = {
    "task": "task id",
    "band": "band (learning zone first)",
    "pass_rate": "pass rate",
    "unscored": "most unscored attempts first",
}
MIXED = "mixed"


def runnable_setup(row: Row) -> tuple[str, str] | None:
    """The row's (agent, user) model strings when they name one participant each (a recording that mixes
    agents records them joined by commas: not something to run again)."""
    agent, user = row.setup.agent, row.setup.user
    if not agent or not user or "," in agent or "," in user:
        return None
    return agent, user


class CalibrateScreen(Screen[None]):
    """The calibration grid of one domain."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="cal.back"),
        Binding("n", "new_trials", "Run k trials…", id="cal.run"),
        Binding("R", "rerun", "Re-run the selected rows…", id="cal.rerun"),
        Binding("a", "select_all", "Select all shown rows / none", id="cal.select_all", show=False),
        Binding("f", "filter", "Filter by band…", id="cal.filter"),
        Binding("s", "sort", "Sort…", id="cal.sort"),
        Binding("S", "reverse_sort", "Reverse sort", id="cal.reverse", show=False),
        Binding("e", "edit_task", "Edit the task in $EDITOR", id="cal.edit"),
        Binding("c", "gold_check", "Gold check…", id="cal.gold"),
        Binding(
            "equals_sign",
            "compare",
            "Mark / compare with the marked trial (same task)",
            id="cal.compare",
            key_display="=",
            show=False,
        ),
        Binding("K", "stop", "Stop the running calibration", id="cal.stop", show=False),
    ]

    def __init__(self, domain: str) -> None:
        super().__init__()
        self.domain = domain
        self.calibrator: Calibrator | None = None
        self.error: str | None = None
        self.sort = "task"
        self.reverse = False
        self.band_filter: str | None = None  # a Band value, MIXED, or None: every row
        self.k: int | None = None  # the trials asked for by the last run (pass^k, pass@k at that k)
        self.running = False
        self.stopped = False
        self.run_path: Path | None = None
        self.run_label = ""
        self.tally = RunTally()  # the running calibration's progress, folded from the runner's events
        self.editing: Row | None = None
        self.last_setup: tuple[str, str] | None = None  # (agent, user) of the last run started here
        self._unsubscribe: Any = None
        self._refresh_timer: Timer | None = None
        self._read_timer: Timer | None = None

    @property
    def total(self) -> int:
        return self.tally.total

    @property
    def done(self) -> int:
        return self.tally.done

    @property
    def active(self) -> int:
        return self.tally.running

    @property
    def table(self) -> CalibrationTable:
        return self.query_one(CalibrationTable)

    @property
    def ready(self) -> bool:
        return self.calibrator is not None

    # --- layout and loading --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield InfoLine(id="cal-title")
        yield InfoLine(id="cal-status")
        yield CalibrationTable(id="cal-grid")
        yield InfoLine(id="cal-cell")
        yield Footer()

    def on_mount(self) -> None:
        self.table.focus()
        self._update_title()
        self._set_status(Text(f" loading domain {self.domain} and its recorded runs…", style="dim"))
        runs = [run for run in context(self).session.catalog.files.values() if run.domain]
        self.load_worker(runs)

    @work(thread=True, exclusive=True, group="calibrate-load", name="load calibration")
    def load_worker(self, runs: list[Any]) -> None:
        """The domain, and a cell per simulation of every loaded recording of it (recorded rewards)."""
        from tau_tui.calibrate.workbench import same_domain
        from tau_tui.domains import DomainError

        try:
            calibrator = context(self).session.workspace.calibrator(self.domain)  # with the judge
        except (DomainError, ValueError) as exc:
            self.post_message(CalibratorReady(error=str(exc)))
            return
        loaded, skipped = 0, []
        for run in runs:
            if not same_domain(run.domain, self.domain):
                continue
            try:
                loaded += calibrator.load_run(run)
            except Exception as exc:  # noqa: BLE001 - one unusable recording never stops the others
                skipped.append(f"{run.path.name}: {exc}")
        self.post_message(CalibratorReady(calibrator, loaded, skipped))

    @on(CalibratorReady)
    def _ready(self, message: CalibratorReady) -> None:
        if message.calibrator is None:
            self.error = message.error
            self._set_status(Text(f" cannot calibrate {self.domain}: {message.error}", style="bold red"))
            return
        self.calibrator = message.calibrator

        def forward(event: Any) -> None:
            self.post_message(GridEvent(event))

        self._unsubscribe = self.calibrator.grid.subscribe(forward)
        for skipped in message.skipped or []:
            self.notify(f"not in the grid: {skipped}", severity="warning", timeout=6)
        self.refresh_grid()
        loaded = (
            f"{formats.count(message.loaded, 'recorded trial')} loaded"
            if message.loaded
            else "no recorded runs of this domain loaded"
        )
        forks = self.calibrator.forks_left_out
        self._idle_status(f"{loaded} · {forks_line(forks)}" if forks else loaded)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    # --- the view ---------------------------------------------------------------------------------
    def shown_rows(self) -> list[Row]:
        if self.calibrator is None:
            return []
        grid = self.calibrator.grid
        if self.band_filter == MIXED:
            return grid.rows(sort=self.sort, reverse=self.reverse, mixed_versions=True)
        bands = [self.band_filter] if self.band_filter else None
        return grid.rows(sort=self.sort, reverse=self.reverse, bands=bands)

    def refresh_grid(self) -> None:
        """Rebuild the rows shown (sort, filter, new rows); the cursor stays on its row."""
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None
        rows = self.shown_rows()
        table = self.table
        current = table.current
        k = grid_k(rows, self.k)
        table.show_rows(rows, columns(k, trials_width(rows)), k, keep=current.key if current else None)
        self._update_title()

    def _schedule_refresh(self) -> None:
        if self._refresh_timer is None:
            self._refresh_timer = self.set_timer(REFRESH_SECONDS, self.refresh_grid)

    @property
    def refresh_pending(self) -> bool:
        return self._refresh_timer is not None

    def _update_title(self) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" calibrate ", style="bold reverse")
        text.append(f"  {self.domain}")
        if self.calibrator is not None:
            grid = self.calibrator.grid
            counts = grid.band_counts()
            text.append(f" · {len(self.table.rows)} of {len(grid)} rows · ")
            for band in (Band.LEARNING_ZONE, Band.ZERO, Band.SATURATED, Band.UNSCORED):
                text.append(f" {counts[band.value]} {BAND_LABELS[band]} ", style=BAND_STYLES[band])
                text.append(" ")
            text.append(f"  sort: {self.sort}{' ↓' if self.reverse else ''}", style="dim")
            if self.band_filter:
                text.append(f"  filter: {self.band_filter}", style="bold")
            if any(r.mixed_versions for r in grid.rows()):
                text.append("  * several versions of a task: one row each, never pooled", style="yellow")
        self.query_one("#cal-title", InfoLine).set(text)

    def _set_status(self, text: Text) -> None:
        self.query_one("#cal-status", InfoLine).set(text)

    def _idle_status(self, what: str = "") -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        if what:
            text.append(f" {what} · ", style="dim")
        text.append(
            " n runs k trials · space selects, R re-runs rows · e edits a task · c gold check · "
            "= compares two trials · ✓ pass ✗ fail ? unscored · pending … running",
            style="dim",
        )
        self._set_status(text)

    def _run_status(self) -> None:
        tail = [(f" · saved in {self.run_path.name}", "dim")] if self.run_path is not None else []
        self._set_status(
            progress_status(
                "trials",
                f" {self.run_label} · ",
                self.done,
                self.total,
                self.active if self.running else 0,
                tail,
                "stopped" if self.stopped else "running" if self.running else "finished",
                "stopped: unfinished trials stay pending",
                head_style="bold",
            )
        )

    @on(CalibrationTable.CursorMoved)
    def _cursor_moved(self, message: CalibrationTable.CursorMoved) -> None:
        row = self.table.current
        line = self.query_one("#cal-cell", InfoLine)
        if row is None:
            line.set(Text(" no rows yet: n runs k trials", style="dim"))
            return
        index = message.cell
        line.set(cell_summary(row, row.cells[index] if index is not None else None, index))

    # --- grid events ----------------------------------------------------------------------------------
    @on(GridEvent)
    def _grid_event(self, message: GridEvent) -> None:
        from tau_tui.rollout import LLMRetried, SimulationFinished, SimulationStarted

        event = message.event
        self.tally.apply(event)  # the runner's events (the grid's and the calibrator's own are not counted)
        if isinstance(event, RowAdded):
            self._schedule_refresh()
        elif isinstance(event, (CellChanged, RowChanged)):
            if event.key in self.table.row_index:
                self.table.update_row(event.key)
            if self.sort != "task" or self.band_filter or isinstance(event, RowChanged) or self._outgrown(event.key):
                self._schedule_refresh()
            else:
                self._update_title()
        elif isinstance(event, CalibrationStarted):
            done = event.total - event.pending
            self.tally = RunTally(total=event.total, done=done, already_done=done)
            self.refresh_grid()  # every trial of the run shows at once, pending; cells then change in place
            self._run_status()
        elif isinstance(event, SimulationStarted):
            self._run_status()
        elif isinstance(event, SimulationFinished):
            self._run_status()
            if self._read_timer is None:
                self._read_timer = self.set_timer(READ_BACK_SECONDS, self._read_back)
        elif isinstance(event, LLMRetried):
            self.notify(retry_text(event), severity="warning", timeout=4)
        elif isinstance(event, CalibrationFinished):
            self.running = False
            self._run_status()
            self._read_back()
            summary = event.summary
            self.notify(f"calibration finished: {summary.completed} trial(s) saved in {event.path}", timeout=6)

    def _outgrown(self, key: Any) -> bool:
        """A row has more trials than the trials column is wide (the column grows on the next redraw)."""
        width = next((c.width for c in self.table.columns if c.key == "trials"), 0)
        return (
            self.calibrator is not None
            and key in self.calibrator.grid
            and width < MAX_TRIALS_WIDTH
            and len(self.calibrator.grid.row(key).cells) > width
        )

    def _read_back(self) -> None:
        """The calibration's results file into the runs table (it is read in a thread)."""
        if self._read_timer is not None:
            self._read_timer.stop()
            self._read_timer = None
        if self.run_path is not None and self.run_path.exists():
            context(self).add_run(self.run_path)

    # --- running trials -------------------------------------------------------------------------------
    def _form(self, **kwargs: Any) -> RolloutScreen:
        return RolloutScreen(self.domain, calibrate=True, **kwargs)

    def action_new_trials(self) -> None:
        if not self._can_run():
            return

        def chosen(plan: RunPlan | None) -> None:
            if plan is not None:
                self.start(plan.config, plan.path)

        agent, user = self.last_setup or ("scripted/flaky:0.3", "scripted/user")
        self.app.push_screen(self._form(agent=agent, user=user, trials=self.k or 4), chosen)

    def action_rerun(self) -> None:
        if not self._can_run():
            return
        table = self.table
        rows = [r for r in table.rows if r.key in table.selected] or ([table.current] if table.current else [])
        if not rows:
            self.notify("no rows: n runs k trials", timeout=2)
            return
        self._offer_rerun(rows, f"re-run {formats.count(len(rows), 'row')}")

    def _offer_rerun(self, rows: list[Row], title: str) -> None:
        first = rows[0]
        keys = [r.key for r in rows]

        def chosen(plan: RunPlan | None) -> None:
            if plan is not None:
                self.start(plan.config, plan.path, keys=keys)

        agent, user = runnable_setup(first) or self.last_setup or ("scripted/gold", "scripted/user")
        self.app.push_screen(
            self._form(
                tasks=[r.task_id for r in rows],
                fixed_tasks=True,
                title=title,
                agent=agent,
                user=user,
                trials=max(len(first.cells), 1),
            ),
            chosen,
        )

    def _can_run(self) -> bool:
        if self.calibrator is None:
            self.notify(self.error or "still loading the domain", severity="warning", timeout=3)
            return False
        if self.running:
            self.notify("a calibration is running (K stops it)", severity="warning", timeout=3)
            return False
        return True

    def start(self, config: Any, path: Path, keys: list[Any] | None = None) -> None:
        """Run ``config`` into ``path`` (re-running the rows ``keys`` when given); the grid fills live."""
        self.running, self.stopped = True, False
        self.run_path, self.k = path, config.num_trials
        self.last_setup = (config.agent.model, config.user.model)
        self.run_label = f"{config.agent.model} / {config.user.model} · k={config.num_trials}"
        self.tally = RunTally()
        self._run_status()
        self.calibration_worker(config, path, keys)

    @work(exclusive=True, group="calibration", name="calibration")
    async def calibration_worker(self, config: Any, path: Path, keys: list[Any] | None) -> None:
        from tau_tui.domains import DomainError
        from tau_tui.rollout import ParticipantSpecError, RunError

        calibrator = self.calibrator
        assert calibrator is not None
        try:
            if keys:
                await calibrator.rerun(keys, config, path)
            else:
                # each run of this screen gets the next run seed, so new trials are not copies of earlier ones
                config = dataclasses.replace(config, seed=config.seed + calibrator.runs_started)
                await calibrator.run(config, path)
        except (DomainError, RunError, ParticipantSpecError, ValueError, KeyError) as exc:
            self.post_message(CalibrationFailed(error_text(exc)))
        except Exception as exc:  # noqa: BLE001 - shown on this screen, never a crash
            self.post_message(CalibrationFailed(f"{type(exc).__name__}: {exc}"))

    @on(CalibrationFailed)
    def _failed(self, message: CalibrationFailed) -> None:
        self.running = False
        self._set_status(Text(f" calibration failed: {message.error}", style="bold red"))
        self.notify(f"calibration failed: {message.error}", severity="error", timeout=8)

    def action_stop(self) -> None:
        if not self.running:
            self.notify("no calibration is running", timeout=2)
            return
        self.workers.cancel_group(self, "calibration")
        self.running, self.stopped, self.tally.running = False, True, 0
        self._run_status()
        self._read_back()

    # --- opening, comparing -------------------------------------------------------------------------------
    def _cursor_cell(self) -> tuple[Row, Any] | None:
        row, index = self.table.current, self.table.current_cell
        if row is None or index is None:
            return None
        return row, row.cells[index]

    @on(CalibrationTable.CellChosen)
    def _chosen(self, message: CalibrationTable.CellChosen) -> None:
        if self.calibrator is None:
            return
        cell = self.calibrator.grid.row(message.key).cells[message.cell]
        if cell.ref is None:
            self.notify(f"this trial is {cell.outcome.value}: nothing to open yet", timeout=2)
            return
        context(self).open_simulation_ref(cell.ref.path, cell.ref.sim_id)

    def action_compare(self) -> None:
        hit = self._cursor_cell()
        if hit is None or hit[1].ref is None:
            self.notify("no finished trial under the cursor", timeout=2)
            return
        row, cell = hit
        context(self).mark_for_compare(cell.ref.path, cell.ref.sim_id, row.task_id)

    # --- sort, filter, select ------------------------------------------------------------------------------
    def action_sort(self) -> None:
        def picked(key: str | None) -> None:
            if key:
                self.sort, self.reverse = key, False
                self.refresh_grid()

        self.app.push_screen(PickerScreen("sort rows by", list(SORTS.items()), self.sort), picked)

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self.refresh_grid()

    def action_filter(self) -> None:
        if self.calibrator is None:
            return
        grid = self.calibrator.grid
        counts = grid.band_counts()
        options = [("", f"every row  ·  {len(grid)}")]
        options += [
            (band.value, f"{BAND_LABELS[band]}  ·  {counts[band.value]}")
            for band in (Band.LEARNING_ZONE, Band.ZERO, Band.SATURATED, Band.UNSCORED)
        ]
        mixed = sum(r.mixed_versions for r in grid.rows())
        options.append((MIXED, f"rows of tasks with several versions  ·  {mixed}"))

        def picked(value: str | None) -> None:
            if value is not None:
                self.band_filter = value or None
                self.refresh_grid()

        self.app.push_screen(PickerScreen("show rows in band", options, self.band_filter or ""), picked)

    def action_select_all(self) -> None:
        self.table.select_all()

    # --- task editing loop ----------------------------------------------------------------------------------
    def action_edit_task(self) -> None:
        """Open the cursor row's task in $EDITOR; after the edit, reload the tasks and offer a re-run."""
        row = self.table.current
        if row is None or self.calibrator is None:
            return
        if self.running:
            self.notify("wait for the running calibration (or K stops it) before editing a task", timeout=3)
            return
        self.editing = row
        self.locate_worker(row.task_id)

    @work(thread=True, exclusive=True, group="task-edit", name="find task")
    def locate_worker(self, task_id: str) -> None:
        from tau_tui.calibrate.tasks import TaskSourceError, find_task_source

        assert self.calibrator is not None
        try:
            source = find_task_source(task_id, domain=self.calibrator.domain)
        except TaskSourceError as exc:
            self.post_message(TaskLocated(task_id, error=str(exc)))
            return
        self.post_message(TaskLocated(task_id, source))

    @on(TaskLocated)
    def _located(self, message: TaskLocated) -> None:
        if message.error is not None:
            self.notify(f"cannot edit task {message.task_id}: {message.error}", severity="error", timeout=8)
            return
        source = message.source
        command = source.editor_command()
        editor = context(self).session.task_editor
        try:
            if editor is not None:
                editor(command)
            else:
                with self.app.suspend():
                    subprocess.call(command)
        except Exception as exc:  # noqa: BLE001 - no terminal to hand over (web), or no such editor
            self.notify(
                f"cannot run the editor ({exc}); the task is at {source.path}:{source.id_line}",
                severity="error",
                timeout=8,
            )
            return
        self.app.refresh()
        self.reload_worker(source)

    @work(thread=True, exclusive=True, group="task-edit", name="reload tasks")
    def reload_worker(self, source: Any) -> None:
        """Read the edited task back (a broken edit is reported), reload the domain's tasks, and fingerprint
        the domain again: the slow parts, off the UI thread."""
        from tau_tui.calibrate import Fingerprinter
        from tau_tui.calibrate.tasks import read_task, reload_domain_tasks

        calibrator = self.calibrator
        assert calibrator is not None
        try:
            read_task(source)
            reload_domain_tasks(calibrator.domain)
            fingerprinter = Fingerprinter(calibrator.domain, calibrator.variant)
            fingerprinter.domain_part()
        except Exception as exc:  # noqa: BLE001 - a broken edit (TaskSourceError…) is shown, never a crash
            self.post_message(TaskReloaded(source.task_id, error=str(exc)))
            return
        self.post_message(TaskReloaded(source.task_id, fingerprinter))

    @on(TaskReloaded)
    def _reloaded(self, message: TaskReloaded) -> None:
        calibrator = self.calibrator
        if message.error is not None or calibrator is None:
            self.notify(f"task {message.task_id} not reloaded: {message.error}", severity="error", timeout=8)
            return
        calibrator.fingerprints = message.fingerprinter
        calibrator.mark_current()
        row = self.editing
        self.editing = None
        if row is None or row.task_id != message.task_id:
            return
        current = calibrator.grid.current_fingerprint(row.task_id)
        if current == row.fingerprint:
            self.notify(f"task {row.task_id} is unchanged", timeout=3)
            return
        changed = ", ".join(row.changed) or "its definition"
        self.notify(f"task {row.task_id} changed ({changed}): its new trials get a row of their own", timeout=5)
        self._offer_rerun([row], f"task {row.task_id} changed: re-run it")

    # --- gold check, back ---------------------------------------------------------------------------------
    def action_gold_check(self) -> None:
        table = self.table
        tasks = list(dict.fromkeys(r.task_id for r in table.rows if r.key in table.selected)) or None
        self.app.push_screen(GoldCheckScreen(self.domain, tasks))

    def action_back(self) -> None:
        self.app.pop_screen()
