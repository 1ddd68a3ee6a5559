"""A calibration grid as the TUI draws it: columns, cell glyphs and colours, bands, the cursor cell.

Pure Python (rich for styling) over ``calibrate.grid`` rows, so the grid
lines are testable as text. One line per row: selection mark, task,
version (``*`` when the task has results of several versions), setup, one
glyph per trial, passes, pass rate, pass^k and pass@k at the screen's k,
the band, and remarks (unscored attempts, a version that is not current).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from rich.text import Text

from tau_tui import formats
from tau_tui.calibrate.grid import Band, Cell, Row, TrialOutcome
from tau_tui.calibrate.render import BAND_LABELS, CELL_GLYPHS
from tau_tui.views.layout import Share, distinct_starts, elide, share_widths

CELL_STYLES: dict[TrialOutcome, str] = {
    TrialOutcome.PASS: "bold green",
    TrialOutcome.FAIL: "bold red",
    TrialOutcome.UNSCORED: "bold yellow",
    TrialOutcome.PENDING: "dim",
    TrialOutcome.RUNNING: "bold cyan",
}
BAND_STYLES: dict[Band, str] = {
    Band.SATURATED: "green",
    Band.ZERO: "red",
    Band.LEARNING_ZONE: "bold black on yellow",
    Band.UNSCORED: "dim",
}
CURSOR_CELL = "reverse"
MIN_TRIALS_WIDTH = 6
MAX_TRIALS_WIDTH = 32
REMARKS_WIDTH = 44


def band_text(band: Band) -> Text:
    return Text(f" {BAND_LABELS[band]} ", style=BAND_STYLES[band])


def rate_text(value: float | None) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(formats.rate(value), style="green" if value >= 1.0 - 1e-9 else ("red" if value == 0 else ""))


def cells_text(row: Row, width: int, cursor: int | None = None) -> Text:
    """One glyph per trial (the cursor's cell reversed); ``+N`` when more trials than fit."""
    text = Text()
    shown = row.cells if len(row.cells) <= width else row.cells[: width - 3]
    for index, cell in enumerate(shown):
        style = CELL_STYLES[cell.outcome]
        text.append(CELL_GLYPHS[cell.outcome], style=f"{style} {CURSOR_CELL}" if index == cursor else style)
    if len(shown) < len(row.cells):
        text.append(f"+{len(row.cells) - len(shown)}", style="dim")
    return text


def version_text(row: Row) -> Text:
    """The fingerprint's first 8 characters; ``*`` (bold) when the task has rows of several versions."""
    text = Text(row.fingerprint[:8], style="dim" if row.current is not False else "yellow")
    if row.mixed_versions:
        text.append("*", style="bold yellow")
    return text


def remarks_text(row: Row) -> Text:
    text = Text()
    if row.n_unscored:
        text.append(f"{row.n_unscored} unscored ", style="yellow")
    if row.n_pending:
        running = sum(c.outcome is TrialOutcome.RUNNING for c in row.cells)
        text.append(f"{row.n_pending - running} pending " if row.n_pending > running else "", style="dim")
        if running:
            text.append(f"{running} running ", style="cyan")
    if row.mixed_versions:
        text.append(f"mixes {row.versions} versions ", style="bold yellow")
    if row.current is False:
        text.append(f"not current ({', '.join(row.changed) or 'changed'})", style="yellow")
    return text


def pass_k(row: Row, k: int, at: bool) -> float | None:
    values = row.pass_at_k() if at else row.pass_hat_k()
    return values.get(k)


@dataclass(frozen=True)
class GridColumn:
    """A grid column: ``width`` wide (its minimum until ``fit_columns`` shares out the line's width)."""

    key: str
    label: str
    width: int
    cell: Callable[[Row, int], Any]  # (row, k) → Text or str
    flex: int = 0
    elide: bool = False  # middle-elide its text, keeping where a value differs from the others
    natural: int = 0  # the most a flex column grows to (0: its longest value)
    starts: dict[str, int] = field(default_factory=dict, compare=False)


def columns(k: int, trials_width: int) -> list[GridColumn]:
    """The grid's columns at ``k`` (pass^k, pass@k) with a trials column ``trials_width`` wide."""
    return [
        GridColumn("task", "task", 12, lambda r, _: r.task_id, flex=3, elide=True),
        GridColumn("version", "version", 9, lambda r, _: version_text(r)),
        GridColumn("setup", "agent / user", 12, lambda r, _: r.setup.label, flex=3, elide=True),
        GridColumn("trials", "trials", trials_width, lambda r, _: Text("")),  # drawn by ``grid_line``
        GridColumn("pass", "pass", 5, lambda r, _: Text(f"{r.n_passed}/{r.n_scored}", justify="right")),
        GridColumn("rate", "rate", 4, lambda r, _: rate_text(r.pass_rate)),
        GridColumn("pass_hat", f"pass^{k}", 6, lambda r, k_: rate_text(pass_k(r, k_, at=False))),
        GridColumn("pass_at", f"pass@{k}", 6, lambda r, k_: rate_text(pass_k(r, k_, at=True))),
        GridColumn("band", "band", 15, lambda r, _: band_text(r.band)),
        # remarks change while trials run: a fixed natural width, so the other columns do not shift
        GridColumn("remarks", "", 10, lambda r, _: remarks_text(r), flex=3, natural=REMARKS_WIDTH),
    ]


def fit_columns(cols: list[GridColumn], rows: list[Row], k: int, width: int) -> list[GridColumn]:
    """The columns with widths for a line ``width`` cells wide: flex columns share what is left, up to their
    longest value (remarks: a fixed width); the last column takes the rest; elided columns learn where
    their values differ. Nothing depends on what changes while trials run, so the grid does not shift as
    cells fill in.
    """
    fitted = []
    shares = []
    for column in cols:
        natural = column.width
        starts: dict[str, int] = {}
        if column.flex and column.natural:
            natural = column.natural
        elif column.flex:
            values = {_plain(column.cell(row, k)) for row in rows}
            natural = max([len(v) for v in values] + [len(column.label), column.width])
            if column.elide:
                starts = distinct_starts(values)
        shares.append(Share(column.width, column.flex, natural))
        fitted.append(replace(column, starts=starts))
    available = width - 2 - len(cols)  # the selection mark, a space after each column
    widths = share_widths(shares, available)
    if widths:  # the last column takes the rest of the line
        widths[-1] = max(widths[-1], available - sum(widths[:-1]))
    return [replace(column, width=w) for column, w in zip(fitted, widths, strict=False)]


def _plain(value: Any) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def trials_width(rows: list[Row]) -> int:
    return max(MIN_TRIALS_WIDTH, min(MAX_TRIALS_WIDTH, max((len(r.cells) for r in rows), default=0)))


def grid_k(rows: list[Row], configured: int | None = None) -> int:
    """The k of pass^k / pass@k: the trials asked for, else the most scored attempts of a row."""
    if configured:
        return configured
    return max((r.n_scored for r in rows), default=1) or 1


def grid_line(row: Row, cols: list[GridColumn], k: int, *, selected: bool = False, cursor: int | None = None) -> Text:
    """One row of the grid, columns padded to their widths (a space between columns)."""
    text = Text(no_wrap=True)
    text.append("● " if selected else "  ", style="bold magenta")
    for column in cols:
        if column.key == "trials":
            cell = cells_text(row, column.width, cursor)
        else:
            value = column.cell(row, k)
            cell = value.copy() if isinstance(value, Text) else Text(str(value))
            if column.elide and cell.cell_len > column.width:
                cell = Text(elide(cell.plain, column.width, column.starts.get(cell.plain, 0)), style=cell.style)
        cell.truncate(column.width, overflow="ellipsis", pad=True)
        text.append_text(cell)
        text.append(" ")
    return text


def header_line(cols: list[GridColumn]) -> Text:
    text = Text("  ", style="bold")
    for column in cols:
        label = Text(column.label, style="bold")
        label.truncate(column.width, overflow="ellipsis", pad=True)
        text.append_text(label)
        text.append(" ")
    return text


def line_width(cols: list[GridColumn]) -> int:
    return 2 + sum(c.width + 1 for c in cols)


def cell_summary(row: Row, cell: Cell | None, index: int | None) -> Text:
    """The status line under the grid: the cursor's cell (outcome, reward, termination, where it is saved)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {row.task_id}", style="bold")
    text.append(f" · {row.setup.label} · version {row.fingerprint[:8]} ({row.fingerprint_source})", style="dim")
    if row.current is True:
        text.append(" · current", style="green")
    elif row.current is False:
        text.append(f" · not current ({', '.join(row.changed) or 'changed'})", style="yellow")
    interval = row.pass_rate_interval
    if interval is not None:
        text.append(
            f" · pass rate {interval.estimate:.2f}, 95% {interval.low:.2f}–{interval.high:.2f} (Wilson, "
            f"{row.n_scored} scored)",
            style="dim",
        )
    if cell is None:
        text.append("\n no trials yet", style="dim")
        return text
    text.append(f"\n trial {index + 1 if index is not None else '?'}/{len(row.cells)}")
    if cell.trial is not None:
        text.append(f" (#{cell.trial}, seed {cell.seed})", style="dim")
    text.append(" · ")
    text.append(cell.outcome.value, style=CELL_STYLES[cell.outcome])
    if cell.reward is not None:
        text.append(f" · reward {formats.reward(cell.reward)}")
    if cell.termination:
        text.append(f" · {cell.termination}", style="dim")
    if cell.reason:
        text.append(f" · {cell.reason}", style="yellow")
    if cell.ref is not None:
        text.append(f" · {cell.ref.path.name} {cell.ref.sim_id[:12]}", style="dim")
        text.append("  enter opens it", style="dim italic")
    return text
