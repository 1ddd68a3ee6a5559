"""The report's HTML pages: the index (summary, charts, task matrix), run pages listing simulations, one page
per simulation. Every recorded text is made visible (``textsafe.visible``) and HTML-escaped here; pages carry
their style inline and load nothing (no script, no font, no image), so they open from ``file://`` offline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any, Sequence

from tau_tui import formats
from tau_tui.report import svg
from tau_tui.textsafe import visible
from tau_tui.trust.many import ManyComparison, summary_table

if TYPE_CHECKING:
    from tau_tui.analysis import SimAnalysis
    from tau_tui.evaluate import SimReport
    from tau_tui.model.io import RunFile
    from tau_tui.model.notes import Note
    from tau_tui.model.results import SimulationRun

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}nav{margin:.6em 0}nav a{margin-right:1em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#e3f4e1}.fail{background:#fbe3e1}.mixed{background:#fdf5d6}.none{color:#999}
.reg{outline:2px solid #d08a00}.imp{outline:2px solid #1b8fb5}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;padding:.5em;border:1px solid #eee;margin:.2em 0}
.msg{border-left:4px solid #ccc;padding:.2em .6em;margin:.6em 0}.msg.assistant{border-color:#4e79a7}
.msg.user{border-color:#59a14f}.msg.tool{border-color:#999}.role{font-weight:600}.muted{color:#777}
.chart{max-width:100%;height:auto;border:1px solid #eee;margin:.4em 0}
.warn{background:#fdf5d6;border-left:4px solid #d08a00;padding:.2em .6em}
"""
SIM_LIST_PAGE = 200  # simulations per run page
MATRIX_PAGE = 200  # tasks per task-matrix page
HEATMAP_TASKS = 120  # tasks drawn in the heatmap (the first, regressions first)


def text(value: Any) -> str:
    """Recorded text as HTML: control characters made visible, then escaped."""
    return escape(visible(str(value)))


def page(title: str, body: str, up: str = "") -> str:
    """A whole page; ``up``: the relative path back to the report's root (``../../``)."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{STYLE}</style></head><body>"
        f'<nav><a href="{up}index.html">report</a></nav>{body}</body></html>'
    )


@dataclass(frozen=True)
class SimLink:
    """One simulation as the run pages list it: where its page is and what to show of it."""

    run: int  # the run's position in the report
    number: int  # its position in the run (the page's name: never the recorded id)
    sim_id: str
    task: str
    trial: int | None
    reward: float | None
    recorded_reward: float | None
    termination: str | None

    @property
    def href(self) -> str:
        """From the report's root."""
        return f"runs/{self.run + 1}/sims/{self.number}.html"


def sim_list_pages(run: int, label: str, sims: Sequence[SimLink]) -> list[tuple[str, str]]:
    """The run's simulation list, ``SIM_LIST_PAGE`` per page: (file name under ``runs/<n>/``, html)."""
    pages = max(1, -(-len(sims) // SIM_LIST_PAGE))
    out = []
    for p in range(pages):
        chunk = sims[p * SIM_LIST_PAGE : (p + 1) * SIM_LIST_PAGE]
        rows = "".join(
            f'<tr><td class="n"><a href="sims/{s.number}.html">{s.number}</a></td><td>{text(s.sim_id)}</td>'
            f'<td>{text(s.task)}</td><td class="n">{"" if s.trial is None else s.trial}</td>'
            f'<td class="n">{formats.reward(s.reward)}</td><td class="n">{formats.reward(s.recorded_reward)}</td>'
            f"<td>{text(s.termination or '?')}</td></tr>"
            for s in chunk
        )
        links = " ".join(
            f"<b>{q + 1}</b>" if q == p else f'<a href="page-{q + 1}.html">{q + 1}</a>' for q in range(pages)
        )
        body = (
            f"<h1>[{run + 1}] {text(label)}</h1><p>{formats.count(len(sims), 'simulation')} · page {p + 1} of "
            f"{pages}: {links}</p><table><tr><th>#</th><th>simulation</th><th>task</th><th>trial</th>"
            f"<th>reward</th><th>recorded</th><th>termination</th></tr>{rows}</table>"
        )
        out.append((f"page-{p + 1}.html", page(f"{label}: simulations", body, "../../")))
    return out


def _tokens(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _summary(many: ManyComparison, sims: Sequence[int]) -> str:
    header, *rows = summary_table(many)
    head = "".join(
        f"<th>{escape(h)}</th>" for h in [*header, "simulations", "cost", "tokens", "tokens/solved", "time (mean)"]
    )
    body = []
    for i, (run, row) in enumerate(zip(many.runs, rows, strict=True)):
        cells = [f"<td>{text(row[0])}</td>", f'<td><a href="runs/{i + 1}/page-1.html">{text(row[1])}</a></td>']
        cells += [f'<td class="n">{text(cell)}</td>' for cell in row[2:]]
        mean = run.cost.duration_json()["mean_s"]
        cells += [
            f'<td class="n">{sims[i]}</td>',
            f'<td class="n">{text(formats.money(run.cost.total_usd))}</td>',
            f'<td class="n">{_tokens(run.cost.total_tokens)}</td>',
            f'<td class="n">{_tokens(run.cost.per_solved_tokens)}</td>',
            f'<td class="n">{text(formats.seconds(mean))}</td>',
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def charts(many: ManyComparison) -> list[tuple[str, str]]:
    """The four charts, (caption, svg): pass^k against k, the reward heatmap, cost against score, terminations."""
    labels = many.labels
    series = []
    for run in many.runs:
        points = [
            svg.Point(float(k), iv.estimate, iv.low, iv.high, f"{run.label}: pass^{k} {iv.text()}")
            for k, iv in sorted(run.confidence.intervals.pass_hat_k.items())
        ]
        series.append((run.label, points))
    caption = "pass^k against k, per run (95% bootstrap intervals over tasks)"
    out = [(caption, svg.line_chart("pass-k", caption, series, "k", "pass^k"))]
    tasks = many.tasks[:HEATMAP_TASKS]
    shown = f"the first {len(tasks)} of {len(many.tasks)} tasks" if len(many.tasks) > len(tasks) else "every task"
    out.append(
        (
            f"mean reward by task and run ({shown}, regressions first; grey: not scored)",
            svg.heatmap(
                "heatmap",
                "mean reward by task and run",
                [t.task for t in tasks],
                labels,
                [[c.mean_reward for c in t.cells] for t in tasks],
            ),
        )
    )
    priced = []
    for run in many.runs:
        avg = run.confidence.intervals.avg_reward
        if run.cost.total_usd is not None and avg is not None:
            priced.append((run.label, run.cost.total_usd, avg.estimate))
    unpriced = len(many.runs) - len(priced)
    caption = "total recorded cost against average reward (the Pareto front ringed and joined)" + (
        f"; {formats.count(unpriced, 'run')} without a recorded cost left out" if unpriced else ""
    )
    out.append((caption, svg.scatter("cost-score", caption, priced, "total cost", "avg reward")))
    caption = "termination reasons per run (as recorded)"
    out.append(
        (caption, svg.stacked_bars("terminations", caption, [(run.label, run.terminations) for run in many.runs]))
    )
    return out


def _matrix(many: ManyComparison, first: dict[tuple[int, str], int], start: int, end: int) -> str:
    head = "".join(f"<th>[{i + 1}]{'*' if r.baseline else ''}</th>" for i, r in enumerate(many.runs))
    rows = []
    for task in many.tasks[start:end]:
        cells = []
        for i, cell in enumerate(task.cells):
            kind = (
                "none"
                if not cell.scored
                else "pass"
                if cell.passed == cell.scored
                else "fail"
                if not cell.passed
                else "mixed"
            )
            mark = " reg" if cell.regressions else " imp" if cell.improvements else ""
            number = first.get((i, task.task))
            shown = text(cell.text())
            link = f'<a href="runs/{i + 1}/sims/{number}.html">{shown}</a>' if number is not None else shown
            cells.append(f'<td class="n {kind}{mark}">{link}</td>')
        rows.append(
            f'<tr><td>{text(task.task)}</td>{"".join(cells)}<td class="n">{task.regressions}/{task.improvements}</td></tr>'
        )
    return f"<table><tr><th>task</th>{head}<th>−/+</th></tr>{''.join(rows)}</table>"


def index_pages(
    many: ManyComparison,
    sims: Sequence[int],
    first: dict[tuple[int, str], int],
    errors: Sequence[str],
) -> list[tuple[str, str]]:
    """``index.html`` (summary, charts, the first page of the task matrix) and the matrix's further pages."""
    pages = max(1, -(-len(many.tasks) // MATRIX_PAGE))
    links = " ".join(f'<a href="{_matrix_name(q)}">{q + 1}</a>' for q in range(pages)) if pages > 1 else ""
    base = many.runs[many.baseline]
    legend = (
        '<p class="muted">Δ: mean reward minus the baseline\'s, in points, 95% paired bootstrap over tasks; p: McNemar '
        "exact; Holm p: adjusted for the number of comparisons; −/+: regressions (passed in the baseline, failed in "
        "the run) / improvements. Cells: passed/scored attempts; a cell links to the task's first simulation.</p>"
    )
    problems = "".join(f"<li>{text(e)}</li>" for e in errors)
    warnings = "".join(f'<p class="warn">warning: {text(w)}</p>' for w in many.warnings)
    head = (
        f"<h1>Runs report</h1><p>{formats.count(len(many.runs), 'run')}, baseline [{many.baseline + 1}] "
        f"{text(base.label)} · {text(many.rewards)} rewards · bootstrap seed {many.seed}</p>"
        f"<h2>Summary</h2>{_summary(many, sims)}{warnings}{legend}"
        + (f"<h2>Not scored</h2><ul>{problems}</ul>" if problems else "")
        + "<h2>Charts</h2>"
        + "".join(
            f"<figure><figcaption>{escape(caption)}</figcaption>{chart}</figure>" for caption, chart in charts(many)
        )
    )
    out = []
    for p in range(pages):
        matrix = _matrix(many, first, p * MATRIX_PAGE, (p + 1) * MATRIX_PAGE)
        nav = f"<p>task pages: {links}</p>" if links else ""
        title = f"<h2>Tasks × runs (regressions first){f', page {p + 1} of {pages}' if pages > 1 else ''}</h2>"
        body = (head if p == 0 else "") + title + nav + matrix
        out.append((_matrix_name(p), page("Runs report", body)))
    return out


def _matrix_name(p: int) -> str:
    return "index.html" if p == 0 else f"tasks-{p + 1}.html"


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


def sim_page(
    label: str,
    link: SimLink,
    run: RunFile,
    sim: SimulationRun,
    analysis: SimAnalysis | None,
    report: SimReport | None,
    notes: Sequence[Note],
) -> str:
    """One simulation: its header, links to its sections, the reward explained (first: why it scored what it
    did), the messages, the replay, the DB diff against gold, findings and notes."""
    from tau_tui.evaluate.render import simulation_block
    from tau_tui.replay.facts import plain_text
    from tau_tui.views.printout import entries

    head = [
        ("run", f"[{link.run + 1}] {label}"),
        ("file", run.path.name),
        ("simulation", sim.id),
        ("task", sim.task_id),
        ("trial", "" if sim.trial is None else str(sim.trial)),
        ("termination", sim.termination_reason or "?"),
        ("reward (ours)", formats.reward(link.reward, "not recomputed")),
        ("recorded reward", formats.reward(link.recorded_reward, "none")),
        ("agent cost", formats.money(sim.agent_cost, "unpriced")),
        ("duration", formats.seconds(sim.duration)),
    ]
    parts = [f"<h1>{text(sim.task_id)} · {text(sim.id)}</h1><table>"]
    parts += [f"<tr><th>{escape(k)}</th><td>{text(v)}</td></tr>" for k, v in head]
    parts.append("</table>")
    parts.append(f'<p><a href="../page-{link.number // SIM_LIST_PAGE + 1}.html">all simulations of this run</a></p>')
    items = entries(sim, analysis)
    sections = ("reward", "messages", "replay", "db", "findings", "notes")
    names = ("reward explained", "messages", "replay", "final DB", "findings", "notes")
    parts.append("<p>" + " · ".join(f'<a href="#{a}">{n}</a>' for a, n in zip(sections, names, strict=True)) + "</p>")
    parts.append('<h2 id="reward">Reward explained</h2>')
    if report is None:
        parts.append('<p class="muted">not recomputed</p>')
    else:
        parts.append(f"<pre>{text(simulation_block(report))}</pre>")
    parts.append(f'<h2 id="messages">Messages ({len(items)})</h2>')
    for entry in items:
        role = entry.role if entry.result_of is None else f"tool {entry.result_of}".rstrip()
        kind = "tool" if entry.result_of is not None else escape(entry.role)
        block = [f'<div class="msg {kind}"><span class="role">[{entry.index}] {text(role)}</span>']
        if entry.error:
            block.append(' <span class="muted">(error)</span>')
        if entry.text:
            block.append(f"<pre>{text(entry.text)}</pre>")
        for call in entry.calls:
            verdict = f' <span class="muted">[{text(call.verdict)}]</span>' if call.verdict else ""
            block.append(f"<div>→ <b>{text(call.name)}</b>{verdict}<pre>{text(_json(call.arguments))}</pre></div>")
        block += [f"<div>⚠ {text(f)}</div>" for f in entry.findings]
        parts.append("".join(block) + "</div>")
    parts.append('<h2 id="replay">Replay</h2>')
    if analysis is None:
        parts.append('<p class="muted">not replayed (recorded rewards only)</p>')
    else:
        parts.append(f"<pre>{text(plain_text([f for f in analysis.facts() if f.level > 0]))}</pre>")
    diff = report.explanation.db_diff if report is not None else None
    parts.append('<h2 id="db">Final DB against gold (replayed)</h2>')
    if diff is None:
        parts.append('<p class="muted">no DB comparison</p>')
    elif diff.empty:
        parts.append("<p>the replayed final DB equals the gold one</p>")
    else:
        rows = []
        for side, changes in diff.to_json().items():
            if isinstance(changes, list):
                rows += [
                    f"<tr><td>{side}</td><td>{text(c['path'])}</td><td>{text(c['kind'])}</td>"
                    f"<td><pre>{text(_json(c['predicted']))}</pre></td><td><pre>{text(_json(c['gold']))}</pre></td></tr>"
                    for c in changes
                ]
            else:
                rows.append(f'<tr><td colspan="5">{text(side)}: {changes} more paths</td></tr>')
        parts.append(
            "<table><tr><th>DB</th><th>path</th><th>change</th><th>replayed</th><th>gold</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    findings = analysis.findings if analysis is not None else []
    parts.append(f'<h2 id="findings">Findings ({len(findings)})</h2>')
    parts += [f"<p>{text(f.kind.value)}: {text(f.message)}</p>" for f in findings]
    parts.append(f'<h2 id="notes">Notes ({len(notes)})</h2>')
    for note in notes:
        where = "simulation" if note.step is None else f"step {note.step}"
        parts.append(
            f"<p><b>{text(note.error_type)}</b> ({text(note.source)}, {text(where)}"
            f"{', ' + text(note.author) if note.author else ''}): {text(note.text)}</p>"
        )
    return page(f"{sim.task_id} · {sim.id}", "".join(parts), "../../../")
