"""Several run files against a baseline: a summary per run and the tasks × runs matrix, regressions first.

Opened from the runs table: ``M`` marks files, ``V`` picks the baseline among three or more. The comparison
(``trust.many``) runs in a thread worker through the replay service (recomputed rewards; ``r`` switches to
the recorded ones). Enter on a run's cell opens the side-by-side trajectories of that task (its first pair
that regressed or improved, else its first comparable pair: ``TrialCompareScreen``); ``o`` opens the two-way
comparison of the baseline with the cursor's run (``RunCompareScreen``), whose whole label the detail line under
the summary gives (the summary and the title shorten labels to keep the statistics whole); ``c`` shows the charts (pass^k
against k, cost against score, termination reasons, as Rich text bars: ``views.charts``) in place of the matrix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.screens.runs_comparison import RunsComparisonScreen
from tau_tui.tui.widgets.fitting_footer import FittingFooter
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.summary_pane import SummaryPane
from tau_tui.views.charts import many_charts
from tau_tui.views.compare_labels import fitted_line
from tau_tui.views.layout import at_cursor, distinct_starts, elide, task_column_width
from tau_tui.views.many_view import cell_text, many_summary, run_detail

if TYPE_CHECKING:
    from tau_tui.trust import ManyComparison, Sides

RUN_WIDTH = 6
MOVES_WIDTH = 6
SUMMARY_FRAME = 6  # the summary's border, padding and scrollbar gutter, before it is laid out
PAIR_ORDER = {"a_only": 0, "b_only": 0, "both_pass": 1, "both_fail": 1}  # regressed or improved first


class ManyCompareScreen(RunsComparisonScreen):
    """Run files against ``paths[baseline]``; Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="manycmp.back"),
        Binding("enter", "open_pair", "Compare this task's trajectories with the baseline", id="manycmp.open"),
        Binding("o", "open_runs", "Two-way comparison of this run with the baseline", id="manycmp.runs"),
        Binding("r", "toggle_rewards", "Recomputed / recorded rewards", id="manycmp.rewards"),
        Binding("c", "toggle_charts", "Charts / task matrix", id="manycmp.charts"),
        Binding("e", "open_json", "Comparison JSON in $EDITOR", id="manycmp.editor", show=False),
    ]

    TITLE_ID = "#manycmp-title"

    def __init__(self, paths: list[Path], baseline: int = 0) -> None:
        super().__init__(paths)
        self.baseline = baseline
        self.detail_run = 0  # the run the detail line names: the cursor's column's, else the last one it was on

    def compose(self) -> ComposeResult:
        yield InfoLine(id="manycmp-title")
        yield SummaryPane(id="manycmp-summary")
        yield Static(id="manycmp-detail")
        yield DataTable(id="manycmp-tasks", cursor_type="cell", zebra_stripes=True)
        with VerticalScroll(id="manycmp-charts-box"):
            yield Static(id="manycmp-charts")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#manycmp-tasks").border_title = "tasks × runs (passed/scored), regressions first"
        self.query_one("#manycmp-charts-box").border_title = "charts (c: back to the task matrix)"
        self.query_one("#manycmp-charts-box").display = False
        self.query_one(DataTable).focus()
        self._start()

    def loading_pieces(self) -> list[tuple[str, str, bool]]:
        return [
            (f" comparing {len(self.paths)} runs with ", "dim", False),
            (self.paths[self.baseline].name, "dim", True),
            (f" ({'recorded' if self.recorded else 'recomputed'} rewards)…", "dim", False),
        ]

    def compare(self, sides: Sides) -> ManyComparison:
        return sides.against(self.baseline)

    def _show(self) -> None:
        many = self.comparison
        self.detail_run = self.detail_run if self.detail_run < len(many.runs) else 0
        if self.detail_run == many.baseline and len(many.runs) > 1:
            self.detail_run = 1 if many.baseline == 0 else 0  # at first the first run compared with the baseline
        self.query_one("#manycmp-charts", Static).update(visible_renderable(many_charts(many)))
        self._summarise()
        self._fill()

    def _summarise(self) -> None:
        """The title, the summary and the detail line at the screen's width (the run labels give way)."""
        many = self.comparison
        pieces = [
            (" compare runs ", "bold reverse", False),
            (f"  {len(many.runs)} runs · baseline [{many.baseline + 1}] ", "", False),
            (many.runs[many.baseline].label, "", True),
            (f" · {many.rewards} rewards", "", False),
        ]
        width = self.size.width or 120
        self.query_one("#manycmp-title", InfoLine).set(visible_renderable(fitted_line(pieces, width), single_line=True))
        legend = Text(
            "Δ: mean reward minus the baseline's (points, 95% paired bootstrap) · p: McNemar exact · Holm p: "
            "adjusted for the comparisons · −/+: regressions / improvements · ▸: the run the cursor is on "
            "(its whole label below the summary)",
            style="dim",
        )
        warnings = [Text(f"⚠ {line}", style="bold yellow") for line in many.warnings]
        pane = self.query_one("#manycmp-summary", SummaryPane)
        room = pane.scrollable_content_region.width or width - SUMMARY_FRAME
        summary = Group(many_summary(many, room, cursor=self.detail_run), *warnings, legend)
        pane.show(visible_renderable(summary))
        self.query_one("#manycmp-detail", Static).update(visible_renderable(run_detail(many, self.detail_run)))

    def _fill(self, keep_cursor: bool = False) -> None:
        """The task matrix; the task column takes the width the runs leave, its ids shortened apart."""
        many = self.comparison
        table = self.query_one(DataTable)
        cursor = table.cursor_coordinate if keep_cursor else None
        tasks = {row.task: one_line(row.task) for row in many.tasks}
        task_width = task_column_width(
            tasks.values(), [RUN_WIDTH] * len(many.runs) + [MOVES_WIDTH], self.size.width or 120
        )
        starts = distinct_starts(tasks.values())
        table.clear(columns=True)
        table.add_column("task", width=task_width, key="task")
        for i, run in enumerate(many.runs, 1):
            table.add_column(f"[{i}]{'*' if run.baseline else ''}", width=RUN_WIDTH, key=f"run{i}")
        table.add_column("−/+", width=MOVES_WIDTH, key="moves")
        for row in many.tasks:
            task = tasks[row.task]
            table.add_row(
                Text(elide(task, task_width, starts[task])),
                *(cell_text(cell) for cell in row.cells),
                Text(f"{row.regressions}/{row.improvements}", justify="right"),
            )
        if cursor is not None and many.tasks:
            table.move_cursor(row=min(cursor.row, len(many.tasks) - 1), column=cursor.column)

    def on_resize(self) -> None:
        if self.comparison is not None:
            self._summarise()
            self._fill(keep_cursor=True)

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        """The run of the cursor's column is the one the detail line names (and the summary marks)."""
        run = event.coordinate.column - 1
        if self.comparison is not None and 0 <= run < len(self.comparison.runs) and run != self.detail_run:
            self.detail_run = run
            self._summarise()

    def _cursor(self) -> tuple[Any, int | None]:
        """The task row under the cursor and the run index of its column (None on the task or −/+ column)."""
        table = self.query_one(DataTable)
        row = at_cursor(self.comparison.tasks, table.cursor_row) if self.comparison is not None else None
        column = table.cursor_column - 1
        return row, column if self.comparison is not None and 0 <= column < len(self.comparison.runs) else None

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_open_pair()

    def action_open_pair(self) -> None:
        row, run = self._cursor()
        if row is None:
            return
        if run is None or run == self.comparison.baseline:
            self.notify("move to a run's column (not the baseline's) to compare its trajectories", timeout=3)
            return
        cmp = self.comparison.runs[run].comparison
        pairs = [p for p in cmp.rows if p.task == row.task and p.a is not None and p.b is not None]
        if not pairs:
            self.notify(f"task {row.task}: no attempt on both sides to compare", timeout=3)
            return
        pair = min(pairs, key=lambda p: (PAIR_ORDER.get(p.category, 2), p.ordinal))
        from tau_tui.tui.screens.trial_compare import TrialCompareScreen

        self.app.push_screen(TrialCompareScreen((pair.a.file, pair.a.sim_id), (pair.b.file, pair.b.sim_id)))

    def action_open_runs(self) -> None:
        _, run = self._cursor()
        if run is None or run == self.comparison.baseline:
            self.notify("move to a run's column (not the baseline's) to compare it with the baseline", timeout=3)
            return
        from tau_tui.tui.screens.run_compare import RunCompareScreen

        self.app.push_screen(RunCompareScreen(self.paths[self.baseline], self.paths[run]))

    @property
    def charts_shown(self) -> bool:
        return bool(self.query_one("#manycmp-charts-box").display)

    def action_toggle_charts(self) -> None:
        shown = not self.charts_shown
        self.query_one("#manycmp-charts-box").display = shown
        self.query_one(DataTable).display = not shown
        (self.query_one("#manycmp-charts-box") if shown else self.query_one(DataTable)).focus()

    def action_open_json(self) -> None:
        if self.comparison is not None:
            data = self.comparison.to_json()
            data["tasks"] = [row.to_json(self.comparison.labels) for row in self.comparison.tasks]
            context(self).open_json(data, "runs-comparison")
