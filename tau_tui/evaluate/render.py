"""Plain-text renderings of assessments and metrics (for ``tau-tui eval`` and as TUI fallbacks).

Small pure functions from data to lines; no terminal styling here.
"""

from __future__ import annotations

from typing import Any

from tau_tui import formats
from tau_tui.evaluate.metrics import RunMetrics
from tau_tui.evaluate.report import SimReport
from tau_tui.evaluate.reward import REWARD_COMPONENTS
from tau_tui.textsafe import clip_json

DIFF_LINES = 6


def fmt_reward(value: float | None) -> str:
    return formats.reward(value, "n/a")


def _value(value: Any, limit: int = 60) -> str:
    return clip_json(value, limit)


def reward_line(report: SimReport) -> str:
    """Recomputed vs recorded reward, with the verdict and the basis."""
    ev = report.evaluation
    head = f"reward {fmt_reward(ev.reward)} recomputed"
    if report.recorded_reward is not None:
        verdict = {True: "agrees", False: "DIFFERS", None: "cannot compare"}[report.agrees]
        head += f", {fmt_reward(report.recorded_reward)} recorded: {verdict}"
    else:
        head += " (no recorded reward)"
    if ev.reward_basis:
        head += f"  [basis {', '.join(ev.reward_basis)}]"
    return head


def breakdown_rows(report: SimReport, recorded: dict[str, float]) -> list[tuple[str, float | None, float | None]]:
    """(component, recorded, recomputed) for every reward component either side has, registry order first."""
    ours = report.evaluation.breakdown
    known = [b for c in REWARD_COMPONENTS.values() for b in c.bases]
    names = [c for c in known if c in ours or c in recorded] + [c for c in [*ours, *recorded] if c not in known]
    return [(name, recorded.get(name), ours.get(name)) for name in dict.fromkeys(names)]


def breakdown_line(report: SimReport) -> str | None:
    breakdown = report.evaluation.breakdown
    if not breakdown:
        return None
    return "breakdown: " + ", ".join(f"{k} {fmt_reward(v)}" for k, v in breakdown.items())


GRADED_FROM_TICKS = "graded from ticks (full-duplex, as tau2 grades it)"


def graded_from_line(report: SimReport) -> str | None:
    """Which recorded view was graded, said only for a full-duplex run graded from its ticks."""
    return GRADED_FROM_TICKS if report.evaluation.graded_from == "ticks" else None


def diff_row_text(side: str, row: dict[str, Any]) -> str:
    """One path of the DB diff: what the run left there against what gold has."""
    if row["kind"] == "only_gold":
        return f"{side} {row['path']}: missing (gold {_value(row['gold'])})"
    if row["kind"] == "only_predicted":
        return f"{side} {row['path']}: {_value(row['predicted'])} (gold has none)"
    return f"{side} {row['path']}: {_value(row['predicted'])} vs gold {_value(row['gold'])}"


def diff_lines(report: SimReport) -> list[str]:
    diff = report.explanation.db_diff
    if diff is None or diff.empty or report.evaluation.db_match is not False:
        return []
    data = diff.to_json(limit=DIFF_LINES)
    rows = [("agent", r) for r in data["agent"]] + [("user", r) for r in data["user"]]
    total = len(diff.agent) + len(diff.user)
    lines = ["DB diff (predicted vs gold):"] + [f"  {diff_row_text(side, row)}" for side, row in rows[:DIFF_LINES]]
    if total > DIFF_LINES:
        lines.append(f"  … {total - DIFF_LINES} more path(s)")
    return lines


def recording_lines(report: SimReport) -> list[str]:
    return [
        f"recording {'INCONSISTENT' if i.inconsistent else 'note'}: {i.message}" for i in report.explanation.recording
    ]


def scorer_line(report: SimReport) -> str | None:
    result = report.scorer
    if result is None:
        return None
    verdict = "passed" if result.passed else "failed"
    tail = f" ({'; '.join(result.notes)})" if result.notes else ""
    return f"tool-call score {result.value:.2f} {verdict}{tail}"


def flags_line(report: SimReport) -> str | None:
    if not report.flags:
        return None
    steps: dict[str, list[int]] = {}
    for flag in report.flags:
        steps.setdefault(flag.kind, []).append(flag.step)
    parts = [
        f"{kind} ×{len(s)} (step {', '.join(map(str, s[:5]))}{'…' if len(s) > 5 else ''})" for kind, s in steps.items()
    ]
    return "flags: " + "; ".join(parts)


def simulation_block(report: SimReport) -> str:
    """One readable block per simulation: rewards, what failed and why, recording, score, flags."""
    ev = report.evaluation
    title = f"{report.sim_id}  task {report.task_id}"
    if report.trial is not None:
        title += f" trial {report.trial}"
    title += f"  [{report.domain}, {ev.termination}]"
    body = [line for line in (reward_line(report), breakdown_line(report), graded_from_line(report)) if line]
    failed = report.explanation.failed
    if failed:
        body.append("why:")
        body += [f"  - {reason}" for reason in failed]
    body += diff_lines(report)
    body += recording_lines(report)
    body += [f"note: {note}" for note in ev.notes if note not in failed]
    body += report.recorded.lines() if report.recorded is not None else []
    body += [line for line in (scorer_line(report), flags_line(report)) if line]
    return "\n".join([title] + [f"  {line}" for line in body])


def _ks(values: dict[int, float]) -> str:
    return "  ".join(f"{k}: {v:.3f}" for k, v in values.items()) or "n/a"


def metrics_block(
    name: str,
    metrics: RunMetrics,
    recorded: RunMetrics | None = None,
    confidence: Any = None,
    title: str | None = None,
) -> str:
    """Per-file metrics: counts, average reward, pass^k and pass@k, terminations; ``confidence``
    (an ``evaluate.stats.Confidence``): its intervals, flip rate and noise floor under them; ``title``: the
    first line, when the metrics are not over recomputed rewards."""
    avg = formats.average(metrics.avg_reward, "n/a")
    lines = [
        title or f"{name}: metrics over recomputed rewards",
        f"  simulations {metrics.n_simulations}: {metrics.n_scored} scored, {metrics.n_unscored} unscored, "
        f"{metrics.infrastructure_errors} infrastructure error(s) (left out)",
        f"  avg reward {avg}",
        f"  pass^k  {_ks(metrics.pass_hat_k)}",
        f"  pass@k  {_ks(metrics.pass_at_k)}",
        "  terminations: " + ", ".join(f"{k} {v}" for k, v in metrics.terminations.items()),
    ]
    if recorded is not None and recorded.n_scored:
        rec_avg = formats.average(recorded.avg_reward, "n/a")
        lines.append(f"  recorded rewards: avg {rec_avg}, pass^k {_ks(recorded.pass_hat_k)}")
    if confidence is not None:
        lines.append(f"  confidence ({'recorded' if title else 'recomputed'} rewards):")
        lines += [f"    {line}" for line in confidence.lines()]
    return "\n".join(lines)
