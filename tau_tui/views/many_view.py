"""Many runs against a baseline, as rich content: the summary table of ``trust.many`` (the TUI's many-runs
screen; the CLI prints the same table as plain text)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from tau_tui.textsafe import one_line
from tau_tui.trust.many import ManyComparison, TaskCell, summary_table
from tau_tui.views.compare_labels import shortened

REGRESSION_STYLE = "bold yellow"
IMPROVEMENT_STYLE = "bold cyan"


# Columns a narrow summary drops, in this order, once the run label is down to ``LABEL_MIN``; the difference with
# its interval, p, Holm p and −/+ are never dropped nor cut. pass^1 first loses its interval (the detail line
# keeps it), then goes. A column saying nothing ("—" in every row: no flips of one trial, no costs) goes as soon
# as the label has less than ``LABEL_ROOMY``.
DROPPED = ("flip rate", "$/solved")
LABEL_MIN = 16
LABEL_ROOMY = 32
CURSOR_MARK = "▸"


def _pass1_estimate(many: ManyComparison, index: int) -> str:
    pass1 = many.runs[index].confidence.intervals.pass_hat_k.get(1)
    return ("—" if pass1 is None else f"{pass1.estimate * 100:.1f}%") + (" ⚠" if many.affected(index) else "")


def _layouts(header: list[str], rows: list[list[str]]) -> list[tuple[list[int], int, bool, int]]:
    """The column sets (indices into ``header``), the gap between columns, whether pass^1 keeps its interval,
    and the label width the layout wants, from the widest layout to the narrowest."""
    full = list(range(len(header)))
    empty = [c for c in full if header[c] in DROPPED and all(row[c] in ("—", "") for row in rows)]
    out = [(full, 2, True, LABEL_ROOMY if empty else LABEL_MIN)]
    kept = [c for c in full if c not in empty]
    for name in DROPPED:
        kept = [c for c in kept if header[c] != name]
        out.append((kept, 2, True, LABEL_MIN))
    out += [(kept, 1, True, LABEL_MIN), (kept, 1, False, LABEL_MIN)]
    out.append(([c for c in kept if header[c] != "pass^1"], 1, True, 0))
    return out


def many_summary(many: ManyComparison, width: int | None = None, cursor: int | None = None) -> Table:
    """One row per run: pass^1, the difference to the baseline, McNemar and Holm p, regressions/improvements,
    flip rate, cost per solved task; the baseline's row in bold, the ``cursor`` run's marked ``▸``.

    In ``width`` cells the run label gives way first (shortened apart from the others, down to ``LABEL_MIN``),
    then flip rate and $/solved go, then pass^1's interval and pass^1; never the difference, p, Holm p or −/+.
    """
    header, *rows = summary_table(many)
    rows = [[f"{CURSOR_MARK if i == cursor else ' '}{row[0]}", *row[1:]] for i, row in enumerate(rows)]
    run_column = header.index("run")
    pass1_column = header.index("pass^1")
    short_pass1 = [_pass1_estimate(many, i) for i in range(len(rows))]
    labels = [one_line(row[run_column]) for row in rows]
    label_natural = max(len(header[run_column]), *map(len, labels))

    def natural(column: int, interval: bool) -> int:
        cells = [row[column] for row in rows] if interval or column != pass1_column else short_pass1
        return max(len(header[column]), *map(len, cells))

    columns, gap, interval = list(range(len(header))), 2, True
    label_width = label_natural
    if width is not None:
        for columns, gap, interval, wanted in _layouts(header, rows):
            others = sum(natural(c, interval) for c in columns if c != run_column) + gap * (len(columns) - 1)
            label_width = width - others
            if label_width >= min(label_natural, wanted):
                break
        label_width = max(min(label_width, label_natural), 3)
    short = dict(zip(labels, shortened(labels, label_width * len(labels), each=label_width), strict=False))
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", padding=(0, gap, 0, 0))
    for c in columns:
        table.add_column(
            header[c],
            justify="left" if c <= run_column else "right",
            no_wrap=True,
            overflow="ellipsis",
            width=label_width if c == run_column else natural(c, interval),
        )
    holm_column = header.index("Holm p")
    for i, (run, row) in enumerate(zip(many.runs, rows, strict=True)):
        cells = []
        for c in columns:
            text = row[c] if interval or c != pass1_column else short_pass1[i]
            cell = Text(short[labels[i]] if c == run_column else one_line(text))
            if c == holm_column and run.holm_p is not None and run.holm_p < 0.05:
                cell.stylize("bold red")
            cells.append(cell)
        table.add_row(*cells, style="bold" if run.baseline else "")
    return table


def run_detail(many: ManyComparison, index: int) -> Text:
    """The detail line of run ``index``: its number, its whole label, and its pass^1 with the interval, flip
    rate and cost per solved task (the columns a narrow summary drops)."""
    header, *rows = summary_table(many)
    row = dict(zip(header, rows[index], strict=True))
    run = many.runs[index]
    text = Text()
    text.append(f"[{index + 1}]{'*' if run.baseline else ''} ", style="bold")
    text.append(one_line(run.label), style="bold" if run.baseline else "")
    text.append(" (the baseline)" if run.baseline else "", style="dim")
    for name in ("pass^1", "flip rate", "$/solved"):
        text.append(f" · {name} ", style="dim")
        text.append(one_line(row[name]))
    return text


def cell_text(cell: TaskCell) -> Text:
    """A task × run cell: passed/scored, yellow when it regressed against the baseline, cyan when it improved."""
    style = REGRESSION_STYLE if cell.regressions else IMPROVEMENT_STYLE if cell.improvements else ""
    if not style and cell.scored:
        style = "green" if cell.passed == cell.scored else "red" if not cell.passed else ""
    return Text(cell.text(), style=style or "dim", justify="right")
