"""Plain-text views of a calibration grid and of gold-check results (the CLI's human output)."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from tau_tui import formats
from tau_tui.calibrate.gold import GoldCheck, failure_kind
from tau_tui.calibrate.grid import Band, CalibrationGrid, Row, TrialOutcome
from tau_tui.textsafe import clip_json

CELL_GLYPHS = {
    TrialOutcome.PASS: "✓",
    TrialOutcome.FAIL: "✗",
    TrialOutcome.UNSCORED: "?",
    TrialOutcome.PENDING: "·",
    TrialOutcome.RUNNING: "…",
}
BAND_LABELS = {
    Band.SATURATED: "saturated",
    Band.ZERO: "zero",
    Band.LEARNING_ZONE: "learning zone",
    Band.UNSCORED: "unscored",
}


def cells_text(row: Row, limit: int = 16) -> str:
    glyphs = "".join(CELL_GLYPHS[c.outcome] for c in row.cells)
    return glyphs if len(glyphs) <= limit else glyphs[: limit - 1] + "+"


def _rate(value: float | None) -> str:
    return formats.rate(value, "-")


def interval_text(row: Row) -> str:
    """The Wilson 95% interval of the row's pass rate, ``0.40–0.97``; ``-`` when nothing is scored."""
    iv = row.pass_rate_interval
    return "-" if iv is None else f"{iv.low:.2f}–{iv.high:.2f}"


def version_mark(row: Row) -> str:
    """``*`` when the task has several versions in the grid; ``(not current: parts)`` when this row's version
    is not the one the task has now, naming the parts that differ."""
    mark = "*" if row.mixed_versions else ""
    if row.current is False:
        mark += f" (not current: {', '.join(row.changed) or 'version'})"
    return mark


def render_grid(
    grid: CalibrationGrid, rows: Iterable[Row] | None = None, k: int | None = None, task_width: int = 44
) -> str:
    """One line per row: cells, passes, rate, pass^k and pass@k at ``k``, band; then the band counts."""
    rows = list(grid.rows() if rows is None else rows)
    if not rows:
        return "no rows"
    if k is None:
        k = max((r.n_scored for r in rows), default=1) or 1
    setups = {r.setup for r in rows}
    cell_width = max(5, min(16, max(len(r.cells) for r in rows)))
    header = (
        f"{'task':<{task_width}} {'version':<9} {'trials':<{cell_width}} {'pass':>5} {'rate':>5} "
        f"{'95% CI':<11} "
        f"{'pass^' + str(k):>7} {'pass@' + str(k):>7}  band"
    )
    if len(setups) > 1:
        header += "  setup"
    lines = [header]
    for row in rows:
        task = row.task_id if len(row.task_id) <= task_width else row.task_id[: task_width - 1] + "…"
        hat, at = row.pass_hat_k().get(k), row.pass_at_k().get(k)
        line = (
            f"{task:<{task_width}} {row.fingerprint[:8]:<9} {cells_text(row, cell_width):<{cell_width}} "
            f"{f'{row.n_passed}/{row.n_scored}':>5} {_rate(row.pass_rate):>5} {interval_text(row):<11} "
            f"{_rate(hat):>7} {_rate(at):>7}  "
            f"{BAND_LABELS[row.band]}"
        )
        if row.n_unscored:
            line += f" ({row.n_unscored} unscored)"
        line += version_mark(row)
        if len(setups) > 1:
            line += f"  {row.setup.label}"
        lines.append(line)
    counts = _counts(rows)
    lines.append("")
    lines.append("bands: " + ", ".join(f"{counts[b.value]} {BAND_LABELS[b]}" for b in Band))
    if any(r.mixed_versions for r in rows):
        lines.append(
            "* the task has results of several versions (task, tools, DB or policy changed): never pooled, one row each"
        )
    lines.append(
        f"cells: {CELL_GLYPHS[TrialOutcome.PASS]} pass, {CELL_GLYPHS[TrialOutcome.FAIL]} fail, "
        f"{CELL_GLYPHS[TrialOutcome.UNSCORED]} unscored (left out of rates), "
        f"{CELL_GLYPHS[TrialOutcome.PENDING]} pending"
    )
    lines.append("95% CI: Wilson interval of the pass rate over the scored trials of the row")
    return "\n".join(lines)


def _counts(rows: list[Row]) -> dict[str, int]:
    counts = {band.value: 0 for band in Band}
    for row in rows:
        counts[row.band.value] += 1
    return counts


def _short(value: object, limit: int = 60) -> str:
    return clip_json(value, limit)


def render_gold_check(check: GoldCheck, max_paths: int = 8) -> str:
    """A failing task: its reasons, then the differing paths (gold value → live value)."""
    lines = [f"FAIL {check.task_id}"]
    lines += [f"     {reason}" for reason in check.reasons]
    for difference in check.differences[:max_paths]:
        data = difference.to_json()
        gold, live = _short(data["gold"]), _short(data["live"])
        lines.append(f"       {data['side']} {data['path']}: gold {gold} → live {live}")
    if len(check.differences) > max_paths:
        lines.append(f"       … {len(check.differences) - max_paths} more paths")
    return "\n".join(lines)


def gold_summary(domain: str, checks: list[GoldCheck], groups: int = 8) -> str:
    """Counts, then the most common kinds of failure (``failure_kind``) with how many tasks have each."""
    failing = [c for c in checks if not c.ok]
    agent = sum(not c.gold_agent_ok for c in checks)
    inconsistent = sum(not c.gold_consistent for c in checks)
    setup = sum(bool(c.setup_problems) for c in checks)
    matters = sum(c.inconsistency_matters for c in checks)
    lines = [
        f"gold check {domain}: {formats.count(len(checks), 'task')}, {len(failing)} failing "
        f"(gold agent below 1.0: {agent}; gold state ≠ live path: {inconsistent}, of which {matters} with DB "
        f"in the reward basis; task setup problems: {setup})"
    ]
    kinds = Counter(failure_kind(c) for c in failing)
    for kind, count in kinds.most_common(groups):
        lines.append(f"  {count:>5}  {kind}")
    if len(kinds) > groups:
        lines.append(f"  {sum(kinds.values()) - sum(n for _, n in kinds.most_common(groups)):>5}  (other kinds)")
    return "\n".join(lines)
