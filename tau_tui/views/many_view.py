"""Many runs against a baseline, as rich content: the summary table of ``trust.many`` (the TUI's many-runs
screen; the CLI prints the same table as plain text)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tau_tui.textsafe import one_line
from tau_tui.trust.many import ManyComparison, TaskCell, summary_table

REGRESSION_STYLE = "bold yellow"
IMPROVEMENT_STYLE = "bold cyan"


def many_summary(many: ManyComparison) -> Table:
    """One row per run: pass^1, the difference to the baseline, McNemar and Holm p, regressions/improvements,
    flip rate, cost per solved task; the baseline's row in bold."""
    header, *rows = summary_table(many)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i < 2 else "right", no_wrap=True, overflow="ellipsis")
    for run, row in zip(many.runs, rows, strict=True):
        style = "bold" if run.baseline else ""
        holm = run.holm_p
        cells = [Text(one_line(cell)) for cell in row]
        if holm is not None and holm < 0.05:
            cells[5].stylize("bold red")
        table.add_row(*cells, style=style)
    return table


def cell_text(cell: TaskCell) -> Text:
    """A task × run cell: passed/scored, yellow when it regressed against the baseline, cyan when it improved."""
    style = REGRESSION_STYLE if cell.regressions else IMPROVEMENT_STYLE if cell.improvements else ""
    if not style and cell.scored:
        style = "green" if cell.passed == cell.scored else "red" if not cell.passed else ""
    return Text(cell.text(), style=style or "dim", justify="right")
