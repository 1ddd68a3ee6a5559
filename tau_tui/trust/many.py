"""Many runs against one baseline: every run paired with the baseline as the two-way comparison pairs them.

Each run other than the baseline gets the two-way ``compare_runs(baseline, run)`` (its pairs, matrix, McNemar
test and paired bootstrap interval of mean(run − baseline)); their McNemar p-values are adjusted for the number
of comparisons (Holm). The task × runs matrix orders tasks regressions first (an attempt that passed in the
baseline and failed in a run), then improvements (failed in the baseline, passed in a run), then the rest in
task order. Runs whose protocols differ from the baseline's are named in ``warnings``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from tau_tui.evaluate.cost_time import CostTime
from tau_tui.evaluate.reward import is_success
from tau_tui.evaluate.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Confidence, holm
from tau_tui.evaluate.validity import Validity
from tau_tui.model.protocol_info import RecordedProtocol
from tau_tui.trust.compare import (
    RunComparison,
    SideOutcome,
    compare_runs,
    cost_time_json,
    protocols_of,
    side_confidence,
    side_cost_time,
    task_order,
)


def run_label(runs: Sequence[tuple[Any, Any]]) -> str:
    """``model (file name)`` of one run given as (path, ``RunFile``) pairs (``N files`` for several)."""
    models = sorted({run.agent_model or run.agent_implementation or "?" for _, run in runs})
    names = [path.name for path, _ in runs]
    head = names[0] if len(names) == 1 else f"{len(names)} files"
    return f"{', '.join(models)} ({head})"


def distinct_labels(labels: Sequence[str]) -> list[str]:
    """The labels, a repeated one numbered (``#2``) so that every run reads apart."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if labels.count(label) == 1 else f"{label} #{seen[label]}")
    return out


@dataclass(frozen=True)
class RunSide:
    """One run as given: its label, the path named for it, and its outcomes."""

    label: str
    source: str
    outcomes: Sequence[SideOutcome]


@dataclass(frozen=True)
class RunSummary:
    """One run's own statistics and, unless it is the baseline, its comparison with the baseline."""

    label: str
    source: str
    baseline: bool
    confidence: Confidence
    cost: CostTime
    comparison: RunComparison | None
    holm_p: float | None
    terminations: dict[str, int]  # simulations per recorded termination reason ("?" when none)
    protocols: list[RecordedProtocol] = field(default_factory=list)  # the distinct protocols of its files
    validity: Validity = field(default_factory=lambda: Validity(0))  # what changes what its score means

    @property
    def regressions(self) -> int:
        return self.comparison.matrix["a_only"] if self.comparison is not None else 0

    @property
    def improvements(self) -> int:
        return self.comparison.matrix["b_only"] if self.comparison is not None else 0

    def to_json(self) -> dict[str, Any]:
        cmp = self.comparison
        return {
            "kind": "run",
            "label": self.label,
            "source": self.source,
            "baseline": self.baseline,
            "confidence": self.confidence.to_json(),
            "matrix": cmp.matrix if cmp is not None else None,
            "not_comparable": cmp.not_comparable if cmp is not None else None,
            "difference_vs_baseline": cmp.difference.to_json() if cmp is not None and cmp.difference else None,
            "mcnemar_p": cmp.mcnemar_p if cmp is not None else None,
            "holm_p": self.holm_p,
            "terminations": self.terminations,
            "protocols": [p.to_json() for p in self.protocols],
            "validity": self.validity.to_json(),
            **(cost_time_json(self.cost) or {}),
        }


@dataclass(frozen=True)
class TaskCell:
    """One task in one run: its attempts, how many were scored and passed, their mean reward."""

    attempts: int
    scored: int
    passed: int
    mean_reward: float | None
    regressions: int = 0  # attempts that passed in the baseline and failed here
    improvements: int = 0

    def text(self) -> str:
        """``2/2``, ``0/1``; ``—`` when the run has no attempt, ``?`` when none was scored."""
        if not self.attempts:
            return "—"
        return f"{self.passed}/{self.scored}" if self.scored else "?"

    def to_json(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "scored": self.scored,
            "passed": self.passed,
            "mean_reward": self.mean_reward,
            "regressions": self.regressions,
            "improvements": self.improvements,
        }


@dataclass(frozen=True)
class TaskRow:
    task: str
    cells: tuple[TaskCell, ...]  # one per run, in the runs' order

    @property
    def regressions(self) -> int:
        return sum(c.regressions for c in self.cells)

    @property
    def improvements(self) -> int:
        return sum(c.improvements for c in self.cells)

    def to_json(self, labels: Sequence[str]) -> dict[str, Any]:
        return {
            "kind": "task",
            "task": self.task,
            "regressions": self.regressions,
            "improvements": self.improvements,
            "runs": [{"label": label, **cell.to_json()} for label, cell in zip(labels, self.cells, strict=True)],
        }


@dataclass(frozen=True)
class ManyComparison:
    """Every run against the baseline, the per-run summaries and the task matrix."""

    baseline: int
    runs: list[RunSummary]
    tasks: list[TaskRow]
    rewards: str
    seed: int

    @property
    def comparisons(self) -> list[RunComparison]:
        """The two-way comparisons, baseline against each other run, in the runs' order."""
        return [run.comparison for run in self.runs if run.comparison is not None]

    @property
    def labels(self) -> list[str]:
        return [run.label for run in self.runs]

    @property
    def warnings(self) -> list[str]:
        """One line per run whose protocol differs from the baseline's, then each run's validity lines (runs
        named ``[n]`` as in the tables): what changes what its score, and every Δ against it, means."""
        base = f"[{self.baseline + 1}]"
        out: list[str] = []
        for i, run in enumerate(self.runs, 1):
            line = run.comparison.protocol_warning(base, f"[{i}]") if run.comparison is not None else None
            if line and line not in out:
                out.append(line)
        recorded = self.rewards == "recorded"
        for i, run in enumerate(self.runs, 1):
            out += run.validity.warnings(recorded, f"[{i}]: ")
        return out

    def affected(self, index: int) -> bool:
        """Whether run ``index``'s score (and so its Δ) rests on simulations a validity line names."""
        return not self.runs[index].validity.clean

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "comparisons",
            "baseline": self.runs[self.baseline].label,
            "rewards": self.rewards,
            "seed": self.seed,
            "adjustment": "holm",
            "runs": [run.to_json() for run in self.runs],
            "warnings": self.warnings,
        }


def _cell(outcomes: Sequence[SideOutcome], regressions: int, improvements: int) -> TaskCell:
    rewards = [o.reward for o in outcomes if not o.unscored and o.reward is not None]
    return TaskCell(
        len(outcomes),
        len(rewards),
        sum(map(is_success, rewards)),
        sum(rewards) / len(rewards) if rewards else None,
        regressions,
        improvements,
    )


def _terminations(outcomes: Sequence[SideOutcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.termination or "?"] = counts.get(o.termination or "?", 0) + 1
    return dict(sorted(counts.items()))


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both (lower x = cost, higher y = score), by cost."""
    front = []
    for i, (x, y) in enumerate(points):
        beaten = any((ox <= x and oy >= y) and (ox < x or oy > y) for ox, oy in points)
        if not beaten:
            front.append(i)
    return sorted(front, key=lambda i: points[i])


def task_rows(runs: Sequence[RunSide], comparisons: Sequence[RunComparison | None]) -> list[TaskRow]:
    """The task × runs matrix, regressions first, then improvements, then the rest in task order."""
    tasks = {o.task_id for run in runs for o in run.outcomes}
    moves: list[dict[str, tuple[int, int]]] = []
    for cmp in comparisons:
        counts: dict[str, tuple[int, int]] = {}
        for row in cmp.rows if cmp is not None else []:
            down, up = counts.get(row.task, (0, 0))
            counts[row.task] = (down + (row.category == "a_only"), up + (row.category == "b_only"))
        moves.append(counts)
    by_run = []
    for run in runs:
        grouped: dict[str, list[SideOutcome]] = {}
        for o in run.outcomes:
            grouped.setdefault(o.task_id, []).append(o)
        by_run.append(grouped)
    rows = [
        TaskRow(task, tuple(_cell(by_run[i].get(task, []), *moves[i].get(task, (0, 0))) for i in range(len(runs))))
        for task in tasks
    ]
    return sorted(rows, key=lambda r: (-r.regressions, -r.improvements, task_order(r.task)))


def compare_many(
    runs: Sequence[RunSide],
    baseline: int = 0,
    *,
    rewards: str = "ours",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> ManyComparison:
    """Each run of ``runs`` against ``runs[baseline]``; the baseline's own summary has no comparison."""
    base = runs[baseline]
    comparisons: list[RunComparison | None] = [
        None
        if i == baseline
        else compare_runs(
            base.outcomes,
            run.outcomes,
            a_label=base.label,
            b_label=run.label,
            rewards=rewards,
            seed=seed,
            resamples=resamples,
        )
        for i, run in enumerate(runs)
    ]
    adjusted = holm([cmp.mcnemar_p if cmp is not None else None for cmp in comparisons])
    summaries = [
        RunSummary(
            run.label,
            run.source,
            i == baseline,
            cmp.b_confidence if cmp is not None else side_confidence(run.outcomes, seed, resamples),
            cmp.b_cost if cmp is not None and cmp.b_cost is not None else side_cost_time(run.outcomes),
            cmp,
            adjusted[i],
            _terminations(run.outcomes),
            protocols_of(run.outcomes),
            Validity.of(o.validity for o in run.outcomes),
        )
        for i, (run, cmp) in enumerate(zip(runs, comparisons, strict=True))
    ]
    return ManyComparison(baseline, summaries, task_rows(runs, comparisons), rewards, seed)


def _interval(cmp: RunComparison | None) -> str:
    if cmp is None or cmp.difference is None:
        return "—"
    d = cmp.difference
    return f"{d.estimate * 100:+.1f} [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def summary_table(many: ManyComparison) -> list[list[str]]:
    """One row per run: #, label, pass^1 with its interval, Δ vs baseline (points), McNemar p, Holm p, −/+, flips,
    cost per solved task. The first row holds the headers."""
    rows = [["#", "run", "pass^1", "Δ vs base", "p", "Holm p", "−/+", "flip rate", "$/solved"]]
    base_warned = many.affected(many.baseline)
    for i, run in enumerate(many.runs, 1):
        warned = many.affected(i - 1)
        delta = "baseline" if run.baseline else _interval(run.comparison)
        if not run.baseline and (warned or base_warned) and delta != "—":
            delta += " ⚠"
        pass1 = run.confidence.intervals.pass_hat_k.get(1)
        flips = run.confidence.flips.mean_pairwise
        solved = run.cost.per_solved_usd
        rows.append(
            [
                f"{i}{'*' if run.baseline else ''}",
                run.label,
                (pass1.text() if pass1 is not None else "—") + (" ⚠" if warned else ""),
                delta,
                _p(run.comparison.mcnemar_p if run.comparison is not None else None),
                _p(run.holm_p),
                "" if run.baseline else f"{run.regressions}/{run.improvements}",
                "—" if flips is None else f"{flips * 100:.1f}%",
                "—" if solved is None else f"${solved:.4f}",
            ]
        )
    return rows


def many_lines(many: ManyComparison, rows: bool = True, tasks: dict[str, str] | None = None) -> list[str]:
    """The plain-text report of ``tau-tui compare A B C …``: the runs, the summary table, then the task matrix.

    ``tasks``: each task id as the rows show it (shortened by the front end); whole ids without it.
    """
    base = many.runs[many.baseline]
    out = [f"baseline: [{many.baseline + 1}] {base.label}", f"rewards: {many.rewards}", ""]
    table = summary_table(many)
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    for row in table:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    out += [f"warning: {line}" for line in many.warnings]
    if any(many.affected(i) for i in range(len(many.runs))):
        out.append("⚠: a score (or a Δ against it) resting on simulations a warning names")
    out.append("")
    out.append("Δ: mean reward minus the baseline's, points, 95% paired bootstrap; p: McNemar exact; Holm p: adjusted")
    out.append("for the comparisons; −/+: regressions (passed in the baseline, failed here) / improvements")
    for i, run in enumerate(many.runs, 1):
        out.append(f"[{i}] recorded {run.cost.text()}")
    if rows:
        out.append("")
        shown = {row.task: (tasks or {}).get(row.task, row.task) for row in many.tasks}
        width = max([4, *(len(task) for task in shown.values())])
        out.append(f"{'task':<{width}} " + " ".join(f"{f'[{i}]':>6}" for i in range(1, len(many.runs) + 1)) + "  −/+")
        for task in many.tasks:
            cells = " ".join(f"{cell.text():>6}" for cell in task.cells)
            out.append(f"{shown[task.task]:<{width}} {cells}  {task.regressions}/{task.improvements}")
    return out
