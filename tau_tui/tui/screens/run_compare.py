"""Two run files over their task set: the pass/fail matrix, paired statistics, one row per task and trial.

Opened from the runs table with ``M`` on a row of one file, then ``M`` on a row of another. The
comparison (``trust.compare``) runs in a thread worker through the replay service (recomputed
rewards; ``r`` switches to the recorded ones). Enter on a row opens the side-by-side trajectory
comparison of that pair (``TrialCompareScreen``); ``f`` cycles which cells are listed. The title shortens the
run labels to keep its words whole; the detail line above the rows gives them whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.screens.runs_comparison import RunsComparisonScreen
from tau_tui.tui.widgets.fitting_footer import FittingFooter
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.summary_pane import SummaryPane
from tau_tui.views.compare_labels import fitted_line
from tau_tui.views.layout import TASK_MIN, at_cursor, distinct_starts, elide, task_column_width

if TYPE_CHECKING:
    from tau_tui.trust import PairRow, RunComparison, Sides

CELL_FILTERS = ("all", "discordant", "not_comparable", "both_pass", "both_fail")
CELL_STYLES = {
    "both_pass": "green",
    "a_only": "bold yellow",
    "b_only": "bold cyan",
    "both_fail": "red",
    "not_comparable": "dim",
}
# (label, width) of the columns after the task; the task takes the rest of the width, the cell its longest text
PAIR_COLUMNS = (("#", 3), ("A", 9), ("B", 9), ("DB A/B", 7), ("same DB", 7))


def _reward(outcome: Any) -> Text:
    if outcome is None:
        return Text("—", style="dim")
    if outcome.unscored:
        return Text("unscored", style="dim italic")
    return Text(f"{outcome.reward:g}", style="green" if outcome.reward >= 1 - 1e-6 else "red")


def _db(outcome: Any) -> str:
    if outcome is None or outcome.db_match is None:
        return "?"
    return "ok" if outcome.db_match else "x"


class RunCompareScreen(RunsComparisonScreen):
    """The comparison of two run files; Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="runcmp.back"),
        Binding("enter", "open_pair", "Compare this pair's trajectories", id="runcmp.open"),
        Binding("f", "cycle_filter", "Cells shown: all / discordant / not comparable / …", id="runcmp.filter"),
        Binding("r", "toggle_rewards", "Recomputed / recorded rewards", id="runcmp.rewards"),
        Binding("e", "open_json", "Comparison JSON in $EDITOR", id="runcmp.editor", show=False),
    ]

    TITLE_ID = "#runcmp-title"

    def __init__(self, a: Path, b: Path) -> None:
        super().__init__((a, b))
        self.cell_filter = "all"
        self.shown: list[PairRow] = []

    def compose(self) -> ComposeResult:
        yield InfoLine(id="runcmp-title")
        yield SummaryPane(id="runcmp-summary")
        yield Static(id="runcmp-detail")
        yield DataTable(id="runcmp-rows", cursor_type="row", zebra_stripes=True)
        yield FittingFooter()

    def on_mount(self) -> None:
        self._add_columns(TASK_MIN, len("cell"))
        self.query_one(DataTable).focus()
        self._start()

    def on_resize(self) -> None:
        if self.comparison is not None:
            self._title()
            self._fill(keep_cursor=True)

    def _add_columns(self, task_width: int, cell_width: int) -> None:
        table = self.query_one(DataTable)
        for label, width in (("task", task_width), *PAIR_COLUMNS, ("cell", cell_width)):
            table.add_column(label, width=width, key=label)

    def loading_pieces(self) -> list[tuple[str, str, bool]]:
        a, b = self.paths
        return [
            (" comparing ", "dim", False),
            (a.name, "dim", True),
            (" with ", "dim", False),
            (b.name, "dim", True),
            (f" ({'recorded' if self.recorded else 'recomputed'} rewards)…", "dim", False),
        ]

    def compare(self, sides: Sides) -> RunComparison:
        return sides.two_way()

    def _show(self) -> None:
        cmp = self.comparison
        m = cmp.matrix
        self._title()
        from tau_tui.trust import statistics_lines

        summary = Text()
        summary.append(f"both pass {m['both_pass']}", style=CELL_STYLES["both_pass"])
        summary.append(" · ")
        summary.append(f"A only {m['a_only']}", style=CELL_STYLES["a_only"])
        summary.append(" · ")
        summary.append(f"B only {m['b_only']}", style=CELL_STYLES["b_only"])
        summary.append(" · ")
        summary.append(f"both fail {m['both_fail']}", style=CELL_STYLES["both_fail"])
        summary.append(" · ")
        reasons = ", ".join(f"{n} {r}" for r, n in cmp.not_comparable.items())
        summary.append(f"not comparable {m['not_comparable']}" + (f" ({reasons})" if reasons else ""), style="dim")
        for line in statistics_lines(cmp):
            summary.append("\n")
            if line.startswith("warning: "):  # runs of different protocols, said beside the difference
                summary.append(f"⚠ {line.removeprefix('warning: ')}", style="bold yellow")
            else:
                summary.append(line)
        if cmp.domain_warning:
            summary.append(f"\n⚠ {cmp.domain_warning}", style="bold yellow")
        self.query_one("#runcmp-summary", SummaryPane).show(visible_renderable(summary))
        detail = Text.assemble(("A ", "bold"), one_line(cmp.a_label), "\n", ("B ", "bold"), one_line(cmp.b_label))
        self.query_one("#runcmp-detail", Static).update(visible_renderable(detail))
        self._fill()

    def _title(self) -> None:
        """The title at the screen's width: the run labels give way (the detail line gives them whole)."""
        cmp = self.comparison
        pieces = [
            (" compare runs ", "bold reverse", False),
            ("  A ", "", False),
            (cmp.a_label, "", True),
            (" · B ", "", False),
            (cmp.b_label, "", True),
            (f" · {cmp.rewards} rewards · cells: {self.cell_filter}", "", False),
        ]
        line = fitted_line(pieces, self.size.width or 120)
        self.query_one("#runcmp-title", InfoLine).set(visible_renderable(line, single_line=True))

    def _keep(self, row: PairRow) -> bool:
        if self.cell_filter == "all":
            return True
        if self.cell_filter == "discordant":
            return row.category in ("a_only", "b_only")
        return row.category == self.cell_filter

    def _fill(self, keep_cursor: bool = False) -> None:
        """The rows shown; the task column takes the width the others leave, its ids shortened where they agree
        (never so far that two read the same: then the table scrolls sideways)."""
        table = self.query_one(DataTable)
        cursor = table.cursor_row if keep_cursor else 0
        self.shown = [row for row in self.comparison.rows if self._keep(row)]
        tasks = {row.task: one_line(row.task) for row in self.comparison.rows}
        cells = [row.category + (f" ({row.reason})" if row.reason else "") for row in self.shown]
        cell_width = max([len("cell"), *map(len, cells)])
        others = [width for _, width in PAIR_COLUMNS] + [cell_width]
        task_width = task_column_width(tasks.values(), others, self.size.width or 120)
        starts = distinct_starts(tasks.values())
        table.clear(columns=True)
        self._add_columns(task_width, cell_width)
        for row, cell in zip(self.shown, cells, strict=False):
            same = "" if row.same_final_db is None else "yes" if row.same_final_db else "no"
            task = tasks[row.task]
            table.add_row(
                Text(elide(task, task_width, starts[task])),
                str(row.ordinal),
                _reward(row.a),
                _reward(row.b),
                f"{_db(row.a)}/{_db(row.b)}",
                same,
                Text(cell, style=CELL_STYLES[row.category]),
            )
        if self.shown:
            table.move_cursor(row=min(max(cursor, 0), len(self.shown) - 1))

    @property
    def current(self) -> PairRow | None:
        return at_cursor(self.shown, self.query_one(DataTable).cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_pair()

    def action_open_pair(self) -> None:
        row = self.current
        if row is None:
            return
        if row.a is None or row.b is None:
            self.notify(f"task {row.task} #{row.ordinal} is {row.reason}: nothing to compare it with", timeout=3)
            return
        from tau_tui.tui.screens.trial_compare import TrialCompareScreen

        self.app.push_screen(TrialCompareScreen((row.a.file, row.a.sim_id), (row.b.file, row.b.sim_id)))

    def action_cycle_filter(self) -> None:
        if self.comparison is None:
            return
        self.cell_filter = CELL_FILTERS[(CELL_FILTERS.index(self.cell_filter) + 1) % len(CELL_FILTERS)]
        self._show()

    def action_open_json(self) -> None:
        if self.comparison is not None:
            data = self.comparison.to_json()
            data["rows"] = [row.to_json() for row in self.comparison.rows]
            context(self).open_json(data, "run-comparison")
