"""Charts of many runs as Rich text bars, for the TUI's many-runs screen: pass^k against k, cost against score
(the Pareto front marked), termination reasons. Text bars cost nothing at start-up (a plotting widget,
textual-plotext, took 0.6–0.95 s to import on the shared machine); the report draws the same as SVG.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tau_tui import formats
from tau_tui.textsafe import one_line
from tau_tui.trust.many import ManyComparison, pareto_front

BAR = 30  # cells of a full bar
EIGHTHS = " ▏▎▍▌▋▊▉█"
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")


def bar(value: float, width: int = BAR) -> str:
    """A horizontal bar of ``value`` (0..1) in ``width`` cells, to an eighth of a cell."""
    eighths = round(min(max(value, 0.0), 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[part] if part else "")).ljust(width)


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def pass_k_chart(many: ManyComparison) -> Table:
    """One row per (k, run): a bar of pass^k and its interval."""
    table = Table(box=None, pad_edge=False, header_style="bold", title="pass^k against k", title_justify="left")
    for name in ("k", "run", "", "pass^k [95%]"):
        table.add_column(name, no_wrap=True)
    ks = sorted({k for run in many.runs for k in run.confidence.intervals.pass_hat_k})
    for k in ks:
        for i, run in enumerate(many.runs):
            iv = run.confidence.intervals.pass_hat_k.get(k)
            if iv is None:
                continue
            table.add_row(str(k), f"[{i + 1}]", Text(bar(iv.estimate), style=_colour(i)), iv.text())
    return table


def cost_score_chart(many: ManyComparison) -> Table:
    """One row per priced run: its average reward as a bar, its total cost, ◆ on the Pareto front."""
    priced = []
    for i, run in enumerate(many.runs):
        avg = run.confidence.intervals.avg_reward
        if run.cost.total_usd is not None and avg is not None:
            priced.append((i, run.cost.total_usd, avg.estimate))
    front = {priced[j][0] for j in pareto_front([(cost, score) for _, cost, score in priced])}
    title = "cost against score (◆ Pareto front: no run is both cheaper and better)"
    table = Table(box=None, pad_edge=False, header_style="bold", title=title, title_justify="left")
    for name in ("run", "avg reward", "", "total cost", ""):
        table.add_column(name, no_wrap=True)
    for i, cost, score in sorted(priced, key=lambda p: p[1]):
        mark = "◆" if i in front else ""
        table.add_row(f"[{i + 1}]", Text(bar(score), style=_colour(i)), f"{score:.3f}", formats.money(cost), mark)
    unpriced = len(many.runs) - len(priced)
    if unpriced:
        table.caption = f"{formats.count(unpriced, 'run')} without a recorded cost left out"
    return table


def terminations_chart(many: ManyComparison) -> Table:
    """One stacked bar per run, a colour per termination reason, and the legend."""
    counts = [run.terminations for run in many.runs]
    reasons = sorted({reason for run in counts for reason in run})
    table = Table(box=None, pad_edge=False, header_style="bold", title="termination reasons", title_justify="left")
    table.add_column("run", no_wrap=True)
    table.add_column("", no_wrap=True)
    for i, run in enumerate(counts):
        total = sum(run.values()) or 1
        line = Text()
        for j, reason in enumerate(reasons):
            n = run.get(reason, 0)
            if n:
                line.append("█" * max(1, round(n / total * BAR)), style=_colour(j))
        table.add_row(f"[{i + 1}]", line)
    legend = Text()
    for j, reason in enumerate(reasons):
        legend.append("█ ", style=_colour(j))
        legend.append(f"{one_line(reason)}  ")
    if reasons:
        table.add_row("", legend)
    return table


def many_charts(many: ManyComparison) -> Group:
    """The three charts, one under the other."""
    return Group(pass_k_chart(many), Text(""), cost_score_chart(many), Text(""), terminations_chart(many))
