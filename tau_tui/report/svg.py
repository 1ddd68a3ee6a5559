"""Small inline SVG charts for the static report: lines with intervals, a heatmap, a scatter with its Pareto
front, stacked bars. Pure functions returning SVG text; every label is escaped here (it is recorded text).

Each mark (a point, a cell, a bar) carries ``class="mark"`` and a ``<title>`` tooltip, so a reader hovering it
sees its value, and a test can count what was drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

from tau_tui.trust.many import pareto_front

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def colour(i: int) -> str:
    """The run ``i``'s colour, the same on every chart."""
    return PALETTE[i % len(PALETTE)]


def _svg(kind: str, width: float, height: float, body: list[str], title: str) -> str:
    return (
        f'<svg class="chart" data-chart="{escape(kind)}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" {FONT}>'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


CHAR_WIDTH = 6.5  # a generous width of one character at font-size 11, for fitting labels


def _legend(labels: Sequence[str], x: float, y: float, numbered: bool = True) -> list[str]:
    """A colour swatch and a label per series; ``numbered``: the runs' ``[n]`` before each label."""
    out = []
    for i, label in enumerate(labels):
        out.append(f'<rect x="{x:.1f}" y="{y + i * 16 - 9:.1f}" width="10" height="10" fill="{colour(i)}"/>')
        out.append(_text(x + 14, y + i * 16, f"[{i + 1}] {label}" if numbered else label))
    return out


def _with_legend(
    kind: str,
    width: float,
    height: float,
    body: list[str],
    title: str,
    labels: Sequence[str],
    at: tuple[float, float],
    numbered: bool = True,
) -> str:
    """The chart with its legend at ``at`` (right of the plot) when every label fits there, else below the
    plot, the chart grown to hold each label whole (a run's label is never cut)."""
    texts = [f"[{i + 1}] {label}" if numbered else label for i, label in enumerate(labels)]
    longest = max((len(t) for t in texts), default=0) * CHAR_WIDTH
    x, y = at
    if x + 14 + longest <= width:
        return _svg(kind, width, height, body + _legend(labels, x, y, numbered), title)
    below = height + 8
    return _svg(
        kind,
        max(width, 16 + 14 + longest + 8),
        below + 16 * len(labels) + 4,
        body + _legend(labels, 16, below + 8, numbered),
        title,
    )


@dataclass(frozen=True)
class Point:
    """A value with an optional interval (``low``..``high``) and the tooltip of its mark."""

    x: float
    y: float
    low: float | None = None
    high: float | None = None
    tip: str = ""


def line_chart(kind: str, title: str, series: Sequence[tuple[str, Sequence[Point]]], x_label: str, y_label: str) -> str:
    """One line per series over integer x (pass^k against k), y in 0..1, interval whiskers where given."""
    width, height, left, top, bottom = 640.0, 300.0, 48.0, 20.0, 40.0
    right = 220.0
    xs = [p.x for _, points in series for p in points] or [1.0]
    x_min, x_max = min(xs), max(xs)
    span = (x_max - x_min) or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x_min) / span * plot_w if x_max > x_min else left + plot_w / 2

    def py(y: float) -> float:
        return top + (1 - y) * plot_h

    body = _axes(left, top, plot_w, plot_h, x_label, y_label)
    for k in sorted(set(xs)):
        body.append(_text(px(k), top + plot_h + 14, f"{k:g}", "middle"))
    for i, (_, points) in enumerate(series):
        c = colour(i)
        if len(points) > 1:
            path = " ".join(f"{px(p.x):.1f},{py(p.y):.1f}" for p in points)
            body.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        for p in points:
            if p.low is not None and p.high is not None:
                body.append(
                    f'<line x1="{px(p.x):.1f}" x2="{px(p.x):.1f}" y1="{py(p.low):.1f}" y2="{py(p.high):.1f}" '
                    f'stroke="{c}" stroke-opacity="0.5"/>'
                )
            body.append(
                f'<circle class="mark" cx="{px(p.x):.1f}" cy="{py(p.y):.1f}" r="4" fill="{c}">'
                f"<title>{escape(p.tip)}</title></circle>"
            )
    labels = [label for label, _ in series]
    return _with_legend(kind, width, height, body, title, labels, (width - right + 16, top + 10))


def _axes(left: float, top: float, w: float, h: float, x_label: str, y_label: str) -> list[str]:
    out = [f'<rect x="{left}" y="{top}" width="{w:.1f}" height="{h:.1f}" fill="none" stroke="#bbb"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + (1 - tick) * h
        out.append(f'<line x1="{left}" x2="{left + w:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(_text(left - 6, y + 4, f"{tick:.2f}", "end"))
    out.append(_text(left + w / 2, top + h + 32, x_label, "middle"))
    out.append(_text(12, top + h / 2, y_label, "middle", f' transform="rotate(-90 12 {top + h / 2:.1f})"'))
    return out


def _shade(value: float | None) -> str:
    """Red (0) through yellow to green (1); grey when there is no value."""
    if value is None:
        return "#ddd"
    v = min(max(value, 0.0), 1.0)
    red = int(215 if v < 0.5 else 215 - (v - 0.5) * 2 * 160)
    green = int(60 + v * 2 * 130 if v < 0.5 else 190)
    return f"rgb({red},{green},70)"


def heatmap(
    kind: str, title: str, rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]]
) -> str:
    """A cell per (row, column), shaded by its value in 0..1 (the reward of a task in a run)."""
    cell_w, cell_h, left, top = 40.0, 14.0, 260.0, 30.0
    width = left + cell_w * len(columns) + 20
    height = top + cell_h * len(rows) + 10
    body = [_text(left + cell_w * (j + 0.5), top - 10, f"[{j + 1}]", "middle") for j in range(len(columns))]
    for i, (row, cells) in enumerate(zip(rows, values, strict=True)):
        y = top + i * cell_h
        label = row if len(row) <= 40 else row[:39] + "…"
        body.append(_text(left - 6, y + cell_h - 3, label, "end"))
        for j, value in enumerate(cells):
            shown = "none" if value is None else f"{value:.2f}"
            body.append(
                f'<rect class="mark" x="{left + j * cell_w:.1f}" y="{y:.1f}" width="{cell_w - 2:.1f}" '
                f'height="{cell_h - 2:.1f}" fill="{_shade(value)}"><title>{escape(row)} · [{j + 1}] '
                f"{escape(columns[j])}: {shown}</title></rect>"
            )
    return _svg(kind, width, height, body, title)


def scatter(kind: str, title: str, points: Sequence[tuple[str, float, float]], x_label: str, y_label: str) -> str:
    """One mark per (label, x, y), the Pareto front (low x, high y) joined and ringed."""
    width, height, left, top, bottom, right = 640.0, 300.0, 48.0, 20.0, 40.0, 220.0
    plot_w, plot_h = width - left - right, height - top - bottom
    x_max = max((x for _, x, _ in points), default=1.0) or 1.0
    body = _axes(left, top, plot_w, plot_h, x_label, y_label)
    for tick in (0.0, 0.5, 1.0):
        body.append(_text(left + tick * plot_w, top + plot_h + 14, f"${tick * x_max:.4g}", "middle"))

    def at(x: float, y: float) -> tuple[float, float]:
        return left + x / x_max * plot_w * 0.95, top + (1 - y) * plot_h

    front = pareto_front([(x, y) for _, x, y in points])
    if len(front) > 1:
        path = " ".join("{:.1f},{:.1f}".format(*at(points[i][1], points[i][2])) for i in front)
        body.append(f'<polyline class="front" points="{path}" fill="none" stroke="#333" stroke-dasharray="4 3"/>')
    for i, (label, x, y) in enumerate(points):
        cx, cy = at(x, y)
        on_front = i in front
        ring = ' stroke="#000" stroke-width="2"' if on_front else ""
        tip = f"[{i + 1}] {label}: ${x:.4f}, {y:.3f}" + (" (Pareto front)" if on_front else "")
        body.append(
            f'<circle class="mark{" pareto" if on_front else ""}" cx="{cx:.1f}" cy="{cy:.1f}" r="6" '
            f'fill="{colour(i)}"{ring}><title>{escape(tip)}</title></circle>'
        )
    labels = [label for label, _, _ in points]
    return _with_legend(kind, width, height, body, title, labels, (width - right + 16, top + 10))


def stacked_bars(kind: str, title: str, bars: Sequence[tuple[str, dict[str, int]]]) -> str:
    """One horizontal bar per run, split by category (termination reasons), a legend of the categories."""
    categories = sorted({c for _, counts in bars for c in counts})
    left, top, bar_h, plot_w = 60.0, 20.0, 18.0, 380.0
    width = left + plot_w + 240
    height = top + max(len(bars) * (bar_h + 8), len(categories) * 16) + 20
    body = []
    for i, (label, counts) in enumerate(bars):
        y = top + i * (bar_h + 8)
        total = sum(counts.values()) or 1
        body.append(_text(left - 6, y + bar_h - 5, f"[{i + 1}]", "end"))
        x = left
        for j, category in enumerate(categories):
            n = counts.get(category, 0)
            if not n:
                continue
            w = n / total * plot_w
            body.append(
                f'<rect class="mark" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bar_h}" fill="{colour(j)}">'
                f"<title>[{i + 1}] {escape(label)}: {escape(category)} {n}</title></rect>"
            )
            x += w
    return _with_legend(kind, width, height, body, title, categories, (left + plot_w + 20, top + 10), numbered=False)
