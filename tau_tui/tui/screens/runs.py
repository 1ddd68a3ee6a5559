"""The runs screen: every simulation of every loaded file; filter, sort, search, open.

From here: the metrics of a file (m), a new rollout (n) whose simulations
appear here as they finish, a play session as user or agent (p), the
calibrate screen of the cursor's domain (C), notes (A adds one on the
simulation, N lists them all) and the comparison of two runs of one task
(= marks one, = on another compares).
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Label, ProgressBar, Static

from tau_tui import formats
from tau_tui.catalog import ANY_FLAG, PASSED_BUT_VIOLATED, RunFilter, RunRow, SortSpec, file_label, flag_options
from tau_tui.evaluate.reward import NOT_GRADED_WORDS
from tau_tui.model.io import RunFile, RunFileError
from tau_tui.replay.facts import CLASS_WORDS
from tau_tui.session.events import LoadProgress
from tau_tui.session.notes import add_note
from tau_tui.session.replay_queue import PRIORITY_ROWS
from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context, subscribe
from tau_tui.tui.screens.filters import FilterScreen
from tau_tui.tui.screens.note_form import NoteFormScreen, NoteRequest
from tau_tui.tui.screens.notes import NotesScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.text_view import TextViewScreen
from tau_tui.tui.widgets.fitting_footer import FittingFooter
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import COLUMN_BY_KEY, COLUMNS
from tau_tui.views.live import NodeLine, rollout_status
from tau_tui.views.notes_view import note_line
from tau_tui.views.panels import DERIVED_STYLE, RECORDED_STYLE
from tau_tui.workspace import RunPlan

MAX_NOTICE_LINES = 3
REFRESH_DELAY = 0.15  # seconds: rows arriving in bursts are shown together
REFRESH_IDLE_FACTOR = 3  # the wait before the next rebuild is at least this many times the last one's cost


def _first_fitting(lines: list[Text], width: int) -> Text:
    """The first of ``lines`` (longest first) that fits in ``width`` cells; the last one, cut, when none does."""
    fitting = next((line for line in lines if line.cell_len <= width), None)
    if fitting is not None:
        return fitting
    last = lines[-1].copy()
    last.truncate(width, overflow="ellipsis")
    return last


class RunsScreen(Screen[None]):
    """The default screen. Usable while files are still loading; verdict columns fill in as replay runs."""

    BINDINGS = [
        Binding("slash", "search", "Search", id="runs.search"),
        Binding("f", "toggle_failed", "Failed only", id="runs.failed"),
        Binding("F", "filters", "Filters…", id="runs.filters"),
        Binding("c", "clear_filters", "Clear filters", id="runs.clear", show=False),
        Binding("s", "sort", "Sort…", id="runs.sort"),
        Binding("S", "reverse_sort", "Reverse sort", id="runs.reverse", show=False),
        Binding("x", "flag_filter", "Filter by process flag…", id="runs.flag_filter", show=False),
        Binding("m", "metrics", "File metrics (pass^k)", id="runs.metrics"),
        Binding("n", "new_rollout", "New rollout…", id="runs.rollout"),
        Binding("p", "play", "Play a session…", id="runs.play"),
        Binding("C", "calibrate", "Calibrate this domain (k trials, bands)", id="runs.calibrate"),
        Binding("A", "add_note", "Add a note on this simulation…", id="runs.note"),
        Binding("N", "notes", "Notes (list, filter, export)", id="runs.notes", show=False),
        Binding(
            "equals_sign",
            "compare",
            "Mark / compare with the marked run (same task)",
            id="runs.compare",
            key_display="=",
            show=False,
        ),
        Binding("u", "audit", "Re-grade audit of this file (why rewards differ)", id="runs.audit", show=False),
        Binding("M", "mark_file", "Mark / unmark this file for a run comparison", id="runs.compare_files", show=False),
        Binding("D", "doctor", "Benchmark doctor: findings by rule, failure clusters", id="runs.doctor", show=False),
        Binding(
            "V",
            "compare_files",
            "Compare the marked files (two: A and B; more: pick the baseline)",
            id="runs.compare_marked",
            show=False,
        ),
        Binding("K", "stop_rollout", "Stop the running rollout", id="runs.stop_rollout", show=False),
        Binding("e", "open_json", "Simulation JSON in $EDITOR", id="runs.editor", show=False),
        Binding("exclamation_mark", "notices", "Load notices", id="runs.notices", show=False),
        Binding("escape", "escape", "Close search / clear text", id="runs.escape", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.filter = RunFilter()
        self.sort = SortSpec()
        self.shown: list[RunRow] = []
        self.file_marks: list[Path] = []  # the run files marked with M for a run comparison, in marking order
        self._refresh_timer: Timer | None = None
        self._refresh_cost = 0.0  # seconds the last rebuild of the view took
        self._search_timer: Timer | None = None
        self._current: tuple[Path, str] | None = None  # (file, simulation id) under the cursor

    def compose(self) -> ComposeResult:
        yield InfoLine(id="runs-title")
        yield InfoLine(id="filter-bar")
        with Horizontal(id="loading"):
            yield Label("indexing files…", id="loading-label")
            yield ProgressBar(id="loading-bar", show_eta=False)
        with Horizontal(id="rollout"):
            yield InfoLine(id="rollout-status")
            yield ProgressBar(id="rollout-bar", show_eta=False, show_percentage=False)
        yield InfoLine(id="rollout-nodes")
        yield RunTable(id="runs")
        yield Input(placeholder='search message contents (all words; "quoted phrase")', id="runs-search")
        yield InfoLine(id="row-preview")
        yield Static(id="notices")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#runs-search").display = False
        self.query_one("#notices").display = False
        self.query_one("#rollout").display = False
        self.query_one("#rollout-nodes").display = False
        self.query_one(RunTable).focus()
        self.refresh_rows()
        ctx = context(self)
        subscribe(self, ctx.loading_changed, self._loading_changed)
        subscribe(self, ctx.catalog_changed, lambda _: self.rows_changed())
        subscribe(self, ctx.rows_replayed, self.rows_replayed)
        subscribe(self, ctx.replay_idle, self._replay_idle)
        subscribe(self, ctx.notices_changed, lambda _: self.notices_changed())
        subscribe(self, ctx.notes_changed, lambda _: self.notes_changed())
        subscribe(self, ctx.rollout_changed, lambda _: self.rollout_changed())
        subscribe(self, ctx.rollout_file, self.show_only_file)
        if ctx.session.load_progress is not None:  # published before this screen was mounted
            self._loading_changed(ctx.session.load_progress)
        self.notices_changed()
        self.rollout_changed()

    # --- the app's signals, as data arrives ----------------------------------------------------
    def _loading_changed(self, progress: LoadProgress) -> None:
        self.show_index_progress(progress.done, progress.total, progress.finished)
        if progress.finished:
            self.refresh_now()

    def _replay_idle(self, _: None) -> None:
        if self.refresh_pending:
            self.refresh_now()

    def show_index_progress(self, done: int, total: int, finished: bool) -> None:
        """The indexing bar while files are indexed (Textual's own ``loading`` stays False: keys still work)."""
        box = self.query_one("#loading")
        box.display = not finished
        if not finished:
            self.query_one("#loading-bar", ProgressBar).update(total=max(total, 1), progress=done)
            self.query_one("#loading-label", Label).update(f"indexing files {done}/{total}… ")
        self._update_title()

    def rows_changed(self) -> None:
        """Rows were added or replaced: rebuild the view soon (coalescing bursts). The wait grows with what
        the last rebuild cost (100k rows take a while), so that keys are served between rebuilds."""
        if self._refresh_timer is None:
            delay = max(REFRESH_DELAY, REFRESH_IDLE_FACTOR * self._refresh_cost)
            self._refresh_timer = self.set_timer(delay, self._timed_refresh)

    def _timed_refresh(self) -> None:
        self._refresh_timer = None
        self.refresh_rows()

    @property
    def refresh_pending(self) -> bool:
        return self._refresh_timer is not None

    def refresh_now(self) -> None:
        """Rebuild the view now, dropping a pending timed refresh (loading or replay just finished)."""
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None
        self.refresh_rows()

    def rows_replayed(self, rows: list[RunRow]) -> None:
        table = self.query_one(RunTable)
        table.update_rows(rows)
        if table.current_key in {row.key for row in rows}:
            self._update_preview()
        if self.filter.needs_replay or (self.sort.column and COLUMN_BY_KEY[self.sort.column].derived):
            self.rows_changed()
        self._update_title()

    def rollout_changed(self) -> None:
        """The rollout's progress changed: one status line and a bar while it runs; over Ray, a line of its
        nodes (as many as the width holds)."""
        progress = context(self).session.rollouts.progress
        box = self.query_one("#rollout")
        box.display = progress is not None
        nodes = self.query_one("#rollout-nodes", InfoLine)
        nodes.display = progress is not None and bool(progress.nodes)
        if progress is None:
            return
        if progress.nodes:
            nodes.set(NodeLine(progress))
        self.query_one("#rollout-status", InfoLine).set(rollout_status(progress))
        bar = self.query_one("#rollout-bar", ProgressBar)
        bar.display = progress.active
        bar.update(total=max(progress.total, 1), progress=progress.done)

    def notes_changed(self) -> None:
        """Notes were read or saved: the notes column shows them, a notes filter re-applies."""
        self.query_one(RunTable).redraw_rows()
        flt = self.filter
        if flt.has_note or flt.note_source or flt.note_type or self.sort.column == "notes":
            self.rows_changed()
        self._update_preview()

    def notices_changed(self) -> None:
        notices = context(self).session.catalog.all_notices()
        widget = self.query_one("#notices", Static)
        widget.display = bool(notices)
        if not notices:
            return
        text = Text(no_wrap=True, overflow="ellipsis")
        for notice in notices[:MAX_NOTICE_LINES]:
            style = "red" if notice.severity == "error" else "yellow"
            text.append({"error": "⚠ ", "warning": "⚠ "}.get(notice.severity, "ℹ "), style=style)
            text.append(f"{notice.path.name}: {notice.text}\n", style=style)
        if len(notices) > MAX_NOTICE_LINES:
            text.append(f"… {len(notices) - MAX_NOTICE_LINES} more notices (!: list them all)", style="dim")
        text.rstrip()
        widget.update(visible_renderable(text))

    # --- the view -------------------------------------------------------------------------------
    def refresh_rows(self) -> None:
        started = time.perf_counter()
        try:
            self._rebuild_rows()
        finally:
            self._refresh_cost = time.perf_counter() - started

    def _rebuild_rows(self) -> None:
        table = self.query_one(RunTable)
        catalog = context(self).session.catalog
        current = catalog.find(*self._current) if self._current is not None else None
        keep = current.key if current is not None else table.current_key
        self.shown = catalog.view(self.filter, self.sort)
        table.show_rows(self.shown, keep, catalog=catalog)
        first = max(table.cursor_row - 20, 0)
        context(self).session.prioritize(self.shown[first : first + PRIORITY_ROWS])
        table.show_sort(self.sort)
        self._update_title()
        self._update_filter_bar()
        self._update_preview()

    def set_filter(self, flt: RunFilter) -> None:
        self.filter = flt
        self.refresh_rows()

    def show_only_file(self, run: RunFile) -> None:
        """Narrow the table to one file (a rollout's, as its simulations arrive); c clears it."""
        self.set_filter(RunFilter(file=file_label(run)))

    def on_resize(self) -> None:
        self._update_title()
        self._update_filter_bar()

    def _line_width(self, selector: str) -> int:
        return self.query_one(selector).size.width or self.size.width or 200

    def _update_title(self) -> None:
        """The counts, then what fits of the column legend and the sort (shorter forms on a narrow screen)."""
        catalog = context(self).session.catalog
        total = len(catalog.rows)
        files = len(catalog.files)
        replayed = catalog.derived_count

        def title(counts: str, legend: tuple[str, str] | None, sort: bool) -> Text:
            """``legend``: the words before "recorded" and after "* derived"; None leaves the legend out."""
            text = Text(no_wrap=True)
            text.append(" tau-tui ", style="bold reverse")
            text.append(f"  {counts} · {formats.count(files, 'file')}")
            if total and replayed < total:
                text.append(f" · replaying {replayed}/{total}", style="dim")
            if legend is not None:
                text.append(legend[0])
                text.append("recorded", style=RECORDED_STYLE)
                text.append(" │ ")
                text.append("* derived" + legend[1], style=DERIVED_STYLE)
            if sort:
                text.append(f"   sort: {self.sort.label()}", style="dim")
            return text

        counts, few = f"{len(self.shown)} of {total} simulations", f"{len(self.shown)}/{total} sims"
        full, short = ("   columns: ", " by our replay and evaluator"), ("   ", "")
        self.query_one("#runs-title", InfoLine).set(
            _first_fitting(
                [
                    title(counts, full, True),
                    title(counts, short, True),
                    title(counts, short, False),
                    title(few, short, False),
                    title(few, None, False),
                ],
                self._line_width("#runs-title"),
            )
        )

    def _update_filter_bar(self) -> None:
        """The filter's chips and how to clear them, or (no filter) as many of the keys to filter as fit."""
        chips = self.filter.chips()
        bar = self.query_one("#filter-bar", InfoLine)
        width = self._line_width("#filter-bar")
        if not chips:
            keys = [
                "f failed only",
                "x process flag",
                "F filters",
                "/ search",
                "s sort",
                "C calibrate",
                "A note",
                "= compare",
            ]
            bar.set(
                _first_fitting(
                    [
                        Text(" · ".join([" no filter", *keys[:n], "? help"]), style="dim")
                        for n in range(len(keys), -1, -1)
                    ],
                    width,
                )
            )
            return

        def bar_text(shown: int) -> Text:
            text = Text(" filter: ", style="bold")
            for chip in chips[:shown]:
                text.append(f" {chip} ", style="reverse")
                text.append(" ")
            if shown < len(chips):
                text.append(f"+{len(chips) - shown} more ", style="bold")
            text.append("  c clears", style="dim")
            return text

        bar.set(_first_fitting([bar_text(n) for n in range(len(chips), 0, -1)], width))

    def _update_preview(self) -> None:
        row = self.current_row
        preview = self.query_one("#row-preview", InfoLine)
        if row is None:
            preview.set(Text(" no simulation selected", style="dim"))
            return
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" task {one_line(str(row.task))}", style="bold")
        text.append(f" · sim {one_line(row.sim_id)} · {one_line(row.path.name)}", style="dim")
        if row.replay_error:
            text.append(f"\n no replay: {one_line(row.replay_error)}", style="yellow")
        elif row.replay is not None and row.replay.first_mismatch_step is not None:
            kind = row.replay.first_mismatch_class or "divergence"
            aside = "" if kind == "divergence" else f" ({CLASS_WORDS.get(kind, kind)})"
            text.append(
                f"\n first mismatch at step {row.replay.first_mismatch_step}{aside}",
                style="red" if kind == "divergence" else "yellow",
            )
        evaluation = row.evaluation
        if evaluation is not None:
            if evaluation.agrees is False:
                text.append(
                    f"\n recomputed reward {evaluation.reward:g} ≠ recorded {row.entry.reward:g}", style="bold red"
                )
            elif evaluation.reward is None and evaluation.status in NOT_GRADED_WORDS:
                text.append(f"\n not re-graded: {NOT_GRADED_WORDS[evaluation.status]}", style="yellow")
            elif evaluation.reward is None:
                missing = ", ".join(evaluation.not_evaluated) or evaluation.status
                text.append(f"\n recomputed reward not computable ({missing} not evaluated)", style="yellow")
            if evaluation.first_reason and row.status == "fail":
                text.append(f"\n why: {one_line(evaluation.first_reason)}", style="red")
            if evaluation.flags:
                text.append(
                    "\n flags: " + ", ".join(f"{one_line(k)} ×{n}" for k, n in evaluation.flags.items()), style="cyan"
                )
        if row.error:
            text.append(f"\n error: {one_line(row.error)}", style="yellow")
        replay = row.replay
        if replay is not None and (replay.faults or replay.refused or replay.discovered):
            marks = [
                f"{formats.count(replay.faults, 'injected fault')}" if replay.faults else "",
                f"{replay.refused} refused (cassette)" if replay.refused else "",
                f"{formats.count(replay.discovered, 'tool')} discovered" if replay.discovered else "",
            ]
            text.append("\n " + " · ".join(m for m in marks if m), style="orange1")
        for note in row.notes[:2]:
            text.append("\n ")
            text.append_text(note_line(note))
        if len(row.notes) > 2:
            text.append(f" (+{len(row.notes) - 2} more notes: N lists them)", style="dim")
        mark = context(self).session.compare_mark
        if mark is not None:
            here = mark == (row.path, row.sim_id)
            text.append(
                f"\n = {'this run is' if here else one_line(mark[1]) + ' is'} marked for comparison", style="cyan"
            )
        try:
            first_user = self._first_user_message(row)
        except RunFileError as exc:  # the file changed on disk since it was indexed
            text.append(f"\n {one_line(str(exc))}", style="yellow")
            first_user = ""
        if first_user:
            text.append("\n user: ", style="cyan")
            text.append(one_line(first_user[:300].replace("\n", " ")))
        preview.set(text)

    @staticmethod
    def _first_user_message(row: RunRow) -> str:
        raw = row.run.raw_simulation(row.index)
        messages = raw.get("messages") if isinstance(raw, dict) else None
        for message in messages if isinstance(messages, list) else []:
            content = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
            if isinstance(content, str):
                return content
        return ""

    @property
    def current_row(self) -> RunRow | None:
        key = self.query_one(RunTable).current_key
        return context(self).session.catalog.by_key.get(key) if key else None

    @on(RunTable.RowHighlighted)
    def _highlighted(self) -> None:
        row = self.current_row
        if row is not None:
            self._current = (row.path, row.sim_id)
        self._update_preview()

    @on(RunTable.RowSelected)
    def _selected(self) -> None:
        self.action_open_run()

    @on(RunTable.HeaderClicked)
    def _header(self, event: RunTable.HeaderClicked) -> None:
        self._sort_by(event.column)

    # --- actions ----------------------------------------------------------------------------------
    def action_open_run(self) -> None:
        row = self.current_row
        if row is not None:
            context(self).open_simulation(row, query=self.filter.text)

    def action_search(self) -> None:
        search = self.query_one("#runs-search", Input)
        search.display = True
        search.value = self.filter.text
        search.focus()

    @on(Input.Changed, "#runs-search")
    def _search_changed(self, event: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        value = event.value.strip()
        self._search_timer = self.set_timer(0.2, lambda: self._apply_search(value))

    def _apply_search(self, value: str) -> None:
        self._search_timer = None
        if value != self.filter.text:
            self.set_filter(self.filter.with_(text=value))

    @on(Input.Submitted, "#runs-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self._apply_search(event.value.strip())
        event.input.display = False
        self.query_one(RunTable).focus()

    def action_escape(self) -> None:
        search = self.query_one("#runs-search", Input)
        if search.display:
            search.display = False
            self.query_one(RunTable).focus()
        elif self.filter.text:
            self.set_filter(self.filter.with_(text=""))

    def action_toggle_failed(self) -> None:
        self.set_filter(self.filter.with_(failed_only=not self.filter.failed_only))

    def action_clear_filters(self) -> None:
        self.set_filter(RunFilter())

    def _flag_values(self) -> list[tuple[str, int]]:
        counts = context(self).session.catalog.flag_counts()
        rows = [r.evaluation for r in context(self).session.catalog.rows if r.evaluation is not None]
        with_any = sum(1 for e in rows if e.flags)
        violated = sum(1 for e in rows if e.passed_but_violated)
        return [(ANY_FLAG, with_any), (PASSED_BUT_VIOLATED, violated)] + list(counts.items())

    def action_filters(self) -> None:
        catalog = context(self).session.catalog
        values = {
            name: catalog.values(name) for name in ("domain", "termination", "model", "file", "submission", "retrieval")
        }
        values["flag"] = self._flag_values()
        values["note_source"] = catalog.note_values("note_source")
        values["note_type"] = catalog.note_values("note_type")
        for name in ("review_source", "review_tag", "review_severity", "auth"):
            values[name] = catalog.review_values(name)
        self.app.push_screen(FilterScreen(self.filter, values, self.set_filter))

    def action_flag_filter(self) -> None:
        """Pick a process-flag kind; only runs with such a flag stay (derived: rows fill in as they are evaluated)."""
        counts = dict(self._flag_values())
        options = flag_options(counts)
        catalog = context(self).session.catalog
        pending = sum(
            1 for r in catalog.rows if r.evaluation is None and r.replay_error is None and r.eval_error is None
        )
        title = "process flag" + (f" (still evaluating {pending} runs)" if pending else "")

        def picked(kind: str | None) -> None:
            if kind is not None:
                self.set_filter(self.filter.with_(flag=kind or None))

        self.app.push_screen(PickerScreen(title, options, self.filter.flag or ""), picked)

    def action_sort(self) -> None:
        options = [("", "load order (file, then position in file)")]
        options += [(c.key, f"{c.label}  ·  {c.help or c.label}{'  (derived)' if c.derived else ''}") for c in COLUMNS]

        def picked(key: str | None) -> None:
            if key is not None:
                self._sort_by(key or None)

        self.app.push_screen(PickerScreen("sort by", options, self.sort.column or ""), picked)

    def _sort_by(self, key: str | None) -> None:
        if key == self.sort.column and key is not None:
            self.sort = SortSpec(key, not self.sort.reverse)
        else:
            self.sort = SortSpec(key, False)
        self.refresh_rows()

    def action_reverse_sort(self) -> None:
        self.sort = SortSpec(self.sort.column, not self.sort.reverse)
        self.refresh_rows()

    def action_open_json(self) -> None:
        row = self.current_row
        if row is None:
            return
        try:
            raw = row.run.raw_simulation(row.index)
        except RunFileError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return
        context(self).open_json(raw, f"{row.file_label}-{row.sim_id}")

    def action_metrics(self) -> None:
        row = self.current_row
        if row is None:
            self.notify("no file: nothing is selected", timeout=2)
            return
        from tau_tui.tui.screens.metrics import MetricsScreen  # loaded when first opened: start-up

        self.app.push_screen(MetricsScreen(row.run))

    def action_new_rollout(self) -> None:
        app = context(self)
        busy = app.session.rollouts.busy()
        if busy is not None:
            self.notify(busy, severity="warning")
            return
        domain = self.current_row.domain if self.current_row is not None else None

        def chosen(plan: RunPlan | None) -> None:
            if plan is not None:
                app.start_rollout(plan)

        from tau_tui.tui.screens.rollout import RolloutScreen

        self.app.push_screen(RolloutScreen(domain), chosen)

    def action_play(self) -> None:
        row = self.current_row
        from tau_tui.tui.screens.play_setup import PlaySetupScreen

        self.app.push_screen(PlaySetupScreen(row.domain if row else None, row.task if row else None))

    def action_calibrate(self) -> None:
        """The calibrate screen of the cursor's domain (a picker when there is no row)."""
        row = self.current_row
        if row is not None and row.domain != "?":
            context(self).open_calibrate(row.domain)
            return
        names = context(self).session.service.registry.names()

        def picked(domain: str | None) -> None:
            if domain:
                context(self).open_calibrate(domain)

        self.app.push_screen(PickerScreen("calibrate which domain", [(n, n) for n in names]), picked)

    def action_add_note(self) -> None:
        row = self.current_row
        if row is None:
            self.notify("no simulation selected", timeout=2)
            return

        def chosen(request: NoteRequest | None) -> None:
            if request is not None:
                context(self).change_notes(
                    row.path,
                    add_note(
                        row.sim_id,
                        request.source,
                        request.error_type,
                        request.text,
                        step=request.step,
                        task_id=row.task,
                        trial=row.entry.trial,
                    ),
                )

        self.app.push_screen(NoteFormScreen(f"simulation {row.sim_id} (task {row.task})"), chosen)

    def action_notes(self) -> None:
        self.app.push_screen(NotesScreen())

    def action_compare(self) -> None:
        row = self.current_row
        if row is not None:
            context(self).mark_for_compare(row.path, row.sim_id, row.task)
            self._update_preview()

    def action_audit(self) -> None:
        row = self.current_row
        if row is None:
            return
        from tau_tui.tui.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen(row.run))

    def action_doctor(self) -> None:
        """``D``: the benchmark doctor over every loaded run file."""
        runs = list({id(row.run): row.run for row in context(self).session.catalog.rows}.values())
        if not runs:
            self.notify("no runs loaded", timeout=3)
            return
        from tau_tui.tui.screens.doctor import DoctorScreen

        self.app.push_screen(DoctorScreen(runs))

    def action_mark_file(self) -> None:
        """``M``: mark the cursor's file for a run comparison, or clear its mark."""
        row = self.current_row
        if row is None:
            return
        if row.path in self.file_marks:
            self.file_marks.remove(row.path)
        else:
            self.file_marks.append(row.path)
        n = len(self.file_marks)
        self.notify(
            f"{'unmarked' if row.path not in self.file_marks else 'marked'} {row.path.name}: "
            + (
                "no file marked"
                if not n
                else f"{n} marked; " + ("mark another with M" if n == 1 else "V compares them")
            ),
            timeout=4,
        )

    def action_compare_files(self) -> None:
        """``V``: two marked files compared as A and B; three or more against the baseline picked."""
        marks = list(self.file_marks)
        if len(marks) < 2:
            self.notify("mark two or more files with M first", timeout=3)
            return
        if len(marks) == 2:
            from tau_tui.tui.screens.run_compare import RunCompareScreen

            self.file_marks = []
            self.app.push_screen(RunCompareScreen(*marks))
            return
        from tau_tui.tui.screens.picker import PickerScreen

        def picked(value: str | None) -> None:
            if value is None:
                return
            from tau_tui.tui.screens.many_compare import ManyCompareScreen

            self.file_marks = []
            self.app.push_screen(ManyCompareScreen(marks, int(value)))

        options = [(str(i), f"[{i + 1}] {path.name}") for i, path in enumerate(marks)]
        self.app.push_screen(PickerScreen("baseline of the comparison", options, "0"), picked)

    def action_stop_rollout(self) -> None:
        context(self).stop_rollout()

    def action_notices(self) -> None:
        notices = context(self).session.catalog.all_notices()
        if not notices:
            self.notify("no load notices: every file was read without a problem", timeout=3)
            return
        text = "\n".join(f"[{n.severity}] {n.path}: {n.text}" for n in notices)
        self.app.push_screen(TextViewScreen(f"load notices ({len(notices)})", text))
