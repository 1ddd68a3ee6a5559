"""The metrics of one run file: average reward, pass^k for every k, pass@k, terminations, per task.

Recorded rewards and our recomputed ones side by side (``evaluate.metrics``
rules: infrastructure errors and unscored simulations are left out and
counted apart, never as failures). Evaluations the background worker already
made are reused; the rest are computed here in a thread worker.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import get_current_worker

from tau_tui import formats
from tau_tui.catalog import EvalSummary, file_label
from tau_tui.evaluate import FileMetrics, MetricOutcome, RunMetrics
from tau_tui.evaluate.cost_time import CostTime, SimCostTime
from tau_tui.evaluate.reward import is_success
from tau_tui.evaluate.validity import Validity
from tau_tui.model.io import RunFile, RunFileError
from tau_tui.model.provenance import CostSummary, raw_agent_cost, recorded_judge
from tau_tui.model.submission import Submission, best_of_k, find_submission_folder, submission_for
from tau_tui.textsafe import visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.messages import MetricsReady
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.eval_panels import (
    DIFFERS_STYLE,
    BestOfKScores,
    render_claims,
    render_metrics_summary,
    render_terminations,
    task_rows,
)
from tau_tui.views.panels import DERIVED_STYLE, RECORDED_STYLE

PROGRESS_SECONDS = 0.25
TASK_WIDTH = 80  # telecom's task ids run to ~100 characters; the rest is clipped


def judge_line(run: RunFile) -> str | None:
    judge = recorded_judge(run.raw_info)
    return f"judge: {judge}" if judge else None


class MetricsScreen(Screen[None]):
    """Per-file metrics; Esc goes back to the runs."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="metrics.back"),
        Binding("e", "open_json", "Metrics JSON in $EDITOR", id="metrics.editor"),
    ]

    def __init__(self, run: RunFile) -> None:
        super().__init__()
        self.run = run
        self.summaries: dict[int, EvalSummary | None] = {}
        self.recomputed: RunMetrics | None = None
        self.recorded: RunMetrics | None = None
        self.confidence: Any = None  # evaluate.stats.Confidence of the recomputed rewards
        self.costs: CostSummary | None = None  # the recorded agent costs, unpriced ones apart
        self.spends: list[SimCostTime] = []  # each simulation's recorded cost, duration and tokens
        self.cost_time: CostTime | None = None
        self.complete = False

    def compose(self) -> ComposeResult:
        yield InfoLine(id="metrics-title")
        with Horizontal(id="metrics-top"):
            with VerticalScroll(id="metrics-summary-box"):
                yield Static(id="metrics-summary")
            with VerticalScroll(id="metrics-side"):
                yield Static(id="metrics-terminations")
        yield DataTable(id="metrics-tasks", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#metrics-summary-box").border_title = "file metrics"
        self.query_one("#metrics-side").border_title = "terminations (as recorded)"
        self.query_one("#metrics-tasks").border_title = "per task (recomputed*)"
        self._title(0, len(self.run.entries))
        self.query_one("#metrics-summary", Static).update(Text("evaluating…", style="dim"))
        self.query_one(DataTable).focus()
        rows = context(self).session.catalog.rows_of(self.run.path)
        known = {row.index: row.evaluation for row in rows if row.run is self.run and row.evaluation is not None}
        self.evaluate_worker(known)

    def _title(self, done: int, total: int) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" metrics ", style="bold reverse")
        text.append(f"  {file_label(self.run)} · {self.run.domain or '?'} · agent {self.run.agent_model or '?'}")
        num_trials = self.run.raw_info.get("num_trials")
        if num_trials:
            text.append(f" · {formats.count(num_trials, 'trial')}")
        text.append("   ")
        text.append("recorded", style=RECORDED_STYLE)
        text.append(" │ ")
        text.append("* recomputed by our evaluator", style=DERIVED_STYLE)
        if done < total:
            text.append(f"   evaluating {done}/{total}…", style="dim")
        self.query_one("#metrics-title", InfoLine).set(text)

    @work(thread=True, exclusive=True, group="metrics", name="evaluate file")
    def evaluate_worker(self, known: dict[int, EvalSummary]) -> None:
        worker = get_current_worker()
        service = context(self).session.service
        total = len(self.run.entries)
        out: dict[int, EvalSummary | None] = dict(known)
        last = time.monotonic()
        for entry in self.run.entries:
            if worker.is_cancelled:
                return
            if entry.index not in out:
                out[entry.index] = service.summarize(self.run, entry.index).evaluation
            if time.monotonic() - last > PROGRESS_SECONDS:
                self.post_message(MetricsReady({}, len(out), total, final=False))
                last = time.monotonic()
        self.costs = CostSummary.of([raw_agent_cost(self._raw(e.index)) for e in self.run.entries])
        self.spends = [SimCostTime.of_raw(self._raw(e.index)) for e in self.run.entries]
        self.post_message(MetricsReady(out, total, total, final=True))

    def _raw(self, index: int) -> Any:
        """Simulation ``index`` as recorded, or None once its file changed on disk (its cost then unknown)."""
        try:
            return self.run.raw_simulation(index)
        except RunFileError:
            return None

    @on(MetricsReady)
    def _ready(self, message: MetricsReady) -> None:
        self._title(message.done, message.total)
        if not message.final:
            return
        self.summaries = message.summaries
        self.complete = True
        both = FileMetrics.of(*self._outcomes(), self.run.raw_info)
        self.recomputed, self.recorded, self.confidence = both.ours, both.recorded, both.confidence
        scored = [o.reward for o in self._outcomes()[0] if o.reward is not None]
        self.cost_time = CostTime.of(self.spends, sum(map(is_success, scored)) if scored else None)
        self._show()

    def validity(self) -> Validity:
        """The validity of the recomputed score (``evaluate.validity``) over the simulations evaluated."""
        return Validity.of(summary.validity for summary in self.summaries.values() if summary is not None)

    def _outcomes(self) -> tuple[list[MetricOutcome], list[MetricOutcome]]:
        ours, theirs = [], []
        for entry in self.run.entries:
            summary = self.summaries.get(entry.index)
            ours.append(
                MetricOutcome(entry.task_id, summary.reward if summary is not None else None, entry.termination)
            )
            theirs.append(MetricOutcome(entry.task_id, entry.reward, entry.termination))
        return ours, theirs

    def _show(self) -> None:
        assert self.recomputed is not None and self.recorded is not None
        parts: list[Any] = [render_metrics_summary(self.recomputed, self.recorded)]
        warnings = self.validity().warnings() if not self.run.recorded_only else []
        if warnings:  # what changes what the score above means, beside it
            parts.append(Text("\n".join(f"⚠ {line}" for line in warnings), style="bold yellow"))
        if self.confidence is not None:
            parts.append(Text("\nconfidence (recomputed*)\n" + "\n".join(self.confidence.lines()), style=DERIVED_STYLE))
        sub = submission_for(self.run.path)
        if isinstance(sub, Submission):
            domain = sub.run_domain(self.run)
            best = self._best_of_k(sub, domain) if sub.best_of_k and domain else None
            parts.append(render_claims(sub.label, domain, sub.claim_for(self.run), self.recomputed, sub, best))
        self.query_one("#metrics-summary", Static).update(visible_renderable(Group(*parts)))
        side = render_terminations(self.recorded)
        spend = self.cost_time.text() if self.cost_time is not None else None
        recorded = [line for line in (self.costs.text() if self.costs else None, spend, judge_line(self.run)) if line]
        if recorded:
            side.append("\n\n" + "\n".join(recorded), style=RECORDED_STYLE)
        if self.recorded.infrastructure_errors:
            side.append("\n\ninfrastructure errors are left out of every metric", style="yellow")
        unscored = self.recomputed.n_unscored
        if self.run.recorded_only:
            side.append(f"\n\nnot recomputed: {self.run.recorded_only}", style="yellow")
        elif unscored:
            side.append(
                f"\n\n{unscored} simulation(s) could not be scored by us (NL assertions without a "
                "judge, unknown task…): left out, never counted as failures",
                style="yellow",
            )
        self.query_one("#metrics-terminations", Static).update(visible_renderable(side))
        table = self.query_one(DataTable)
        table.clear(columns=True)
        longest = max((len(t.task_id) for t in self.recomputed.tasks + self.recorded.tasks), default=4)
        table.add_column("task", width=min(max(longest, 12), TASK_WIDTH))
        table.add_column("trials", width=6)
        table.add_column("✓ rec", width=6)
        table.add_column("✓ ours*", width=7)
        table.add_column("avg*", width=5)
        for k in range(1, self.recomputed.max_k + 1):
            table.add_column(f"pass^{k}*", width=8)
        for task_id, cells, differs in task_rows(self.recomputed, self.recorded):
            style = DIFFERS_STYLE if differs else ""
            table.add_row(
                visible_renderable(Text(task_id, style=style), single_line=True),
                *(Text(c, style=style, justify="right") for c in cells),
                key=task_id,
            )

    def _best_of_k(self, sub: Submission, domain: str) -> BestOfKScores:
        """The best-of-K scores of every loaded file of ``sub`` filed under ``domain``: this file's simulations
        as evaluated here, the others' as the background replay has evaluated them so far."""
        ours, recorded, pending = [], [], 0
        for row in context(self).session.catalog.rows:
            if find_submission_folder(row.run.path) != sub.folder or sub.run_domain(row.run) != domain:
                continue
            if row.run is self.run:
                summary = self.summaries.get(row.index)
            else:
                summary = row.evaluation
                pending += summary is None and row.replay_error is None and row.eval_error is None
            ours.append((str(row.run.path), row.task, summary.reward if summary is not None else None))
            recorded.append((str(row.run.path), row.task, row.entry.reward))
        return BestOfKScores(best_of_k(domain, ours), best_of_k(domain, recorded), pending)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_open_json(self) -> None:
        if self.recomputed is None or self.recorded is None:
            self.notify("still evaluating", timeout=2)
            return
        data: dict[str, Any] = {
            "file": str(self.run.path),
            "recomputed": self.recomputed.to_json(),
            "recorded": self.recorded.to_json(),
            "confidence": self.confidence.to_json() if self.confidence is not None else None,
            "recorded_costs": self.costs.to_json() if self.costs is not None else None,
            "cost": self.cost_time.cost_json() if self.cost_time is not None else None,
            "duration": self.cost_time.duration_json() if self.cost_time is not None else None,
            "tokens": self.cost_time.tokens_json() if self.cost_time is not None else None,
            "judge_llm": recorded_judge(self.run.raw_info),
            "validity": self.validity().to_json(),
        }
        context(self).open_json(data, f"metrics-{file_label(self.run)}")
