"""Rich content of the evaluation pane (trajectory screen) and of the metrics screen.

Pure functions from the evaluator's objects to rich renderables, testable as
text. The recorded reward and checks sit beside our recomputed ones, always
under their own labels; where the two disagree the line is highlighted. The
tool-call score and the process flags are shown apart from both: they never
feed into a reward.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tau_tui import formats
from tau_tui.evaluate import REWARD_COMPONENTS, RunMetrics, SimReport
from tau_tui.evaluate.render import GRADED_FROM_TICKS, breakdown_rows, diff_row_text
from tau_tui.evaluate.reward import NOT_GRADED_WORDS
from tau_tui.model.results import RewardInfo, SimulationRun
from tau_tui.model.submission import BestOfK, DomainClaim, Submission
from tau_tui.textsafe import shown
from tau_tui.views.panels import DERIVED_STYLE, RECORDED_STYLE
from tau_tui.views.render import one_line

DIFFERS_STYLE = "bold white on red3"
MAX_DIFF_ROWS = 8


fmt = formats.reward


def _mark(ok: bool | None, none: str = "—") -> Text:
    if ok is None:
        return Text(none, style="dim")
    return Text("✓", style="green") if ok else Text("✗", style="bold red")


def _key(name: Any, arguments: Any) -> str:
    return json.dumps([name, arguments], sort_keys=True, default=str)


def _call(name: str, arguments: Any, limit: int = 160) -> str:
    inner = (
        ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in arguments.items())
        if isinstance(arguments, dict)
        else one_line(arguments)
    )
    if len(inner) > limit:
        inner = inner[:limit] + "…"
    return f"{one_line(name)}({inner})"


def _heading(title: str, hint: str = "") -> Text:
    text = Text(title, style="bold underline")
    if hint:
        text.append(f"  {hint}", style="dim")
    return text


# --- the recorded verdicts, keyed like ours ---------------------------------------------------


class RecordedChecks:
    """The recorded reward_info's verdicts, looked up by the check they belong to (None: not recorded)."""

    def __init__(self, info: RewardInfo | None):
        self.info = info
        self.actions: dict[str, bool] = {}
        self.assertions: dict[str, bool] = {}
        self.communicate: dict[str, bool] = {}
        self.nl: dict[str, bool] = {}
        if info is None:
            return
        for check in info.action_checks or []:
            action = check.get("action") if isinstance(check, dict) else None
            if isinstance(action, dict) and isinstance(check.get("action_match"), bool):
                self.actions[_key(action.get("name"), action.get("arguments"))] = check["action_match"]
        for check in info.env_assertions or []:
            item = check.get("env_assertion") if isinstance(check, dict) else None
            if isinstance(item, dict) and isinstance(check.get("met"), bool):
                self.assertions[_key(item.get("func_name"), item.get("arguments"))] = check["met"]
        for check in info.communicate_checks or []:
            if isinstance(check, dict) and isinstance(check.get("info"), str) and isinstance(check.get("met"), bool):
                self.communicate[check["info"]] = check["met"]
        for check in info.nl_assertions or []:
            if (
                isinstance(check, dict)
                and isinstance(check.get("nl_assertion"), str)
                and isinstance(check.get("met"), bool)
            ):
                self.nl[check["nl_assertion"]] = check["met"]

    @property
    def reward(self) -> float | None:
        return self.info.reward if self.info is not None else None

    @property
    def db_match(self) -> bool | None:
        return self.info.db_check.db_match if self.info is not None and self.info.db_check is not None else None

    @property
    def breakdown(self) -> dict[str, float]:
        return dict(self.info.reward_breakdown or {}) if self.info is not None else {}


def _verdict_line(ours: bool | None, recorded: bool | None, what: Text, none: str = "—") -> Text:
    """``✓ recorded ✓ ours  what``; highlighted when both exist and disagree."""
    line = Text()
    line.append_text(_mark(recorded, " "))
    line.append(" ")
    line.append_text(_mark(ours, none))
    line.append("  ")
    line.append_text(what)
    if ours is not None and recorded is not None and ours != recorded:
        line.stylize(DIFFERS_STYLE)
        line.append("  ≠ recorded", style="bold red")
    return line


# --- the evaluation pane ----------------------------------------------------------------------------


def render_reward_header(report: SimReport, sim: SimulationRun) -> Text:
    """Both rewards on one line, apart, and whether they agree."""
    ev = report.evaluation
    recorded = sim.reward_info.reward if sim.reward_info is not None else None
    out = Text()
    out.append(" RECORDED ", style=RECORDED_STYLE + " reverse")
    out.append(f" reward {fmt(recorded)}   ", style="bold")
    out.append(" RECOMPUTED* ", style=DERIVED_STYLE + " reverse")
    if ev.reward is None and ev.status in NOT_GRADED_WORDS:
        out.append(f" not re-graded ({NOT_GRADED_WORDS[ev.status]})", style="bold yellow")
    elif ev.reward is None:
        out.append(f" not computable ({', '.join(ev.not_evaluated) or ev.status})", style="bold yellow")
    else:
        out.append(f" reward {fmt(ev.reward)}", style="bold green" if ev.success else "bold red")
    out.append("   ")
    if report.agrees is True:
        out.append(" agree ", style="bold black on green")
    elif report.agrees is False:
        out.append(" DIFFER ", style=DIFFERS_STYLE)
    else:
        out.append(" cannot compare ", style="black on grey62")
    out.append(f"\nstatus {ev.status} · termination {shown(ev.termination or '?')}", style="dim")
    if ev.reward_basis:
        out.append(f" · basis {', '.join(ev.reward_basis)}", style="dim")
    if ev.graded_from == "ticks":
        out.append(f"\n{GRADED_FROM_TICKS}", style="bold cyan")
        if sim.consolidated is not None:
            out.append(" · c: the consolidated messages list", style="dim")
    return out


METER_WORDS = {
    "input_tokens": "in",
    "output_tokens": "out",
    "input_audio_tokens": "audio in",
    "output_audio_tokens": "audio out",
    "input_cached_tokens": "cached",
    "audio_input_seconds": "audio s",
    "characters": "chars",
}


def render_usage(sim: SimulationRun) -> Text | None:
    """A voice agent's recorded usage (``agent_usage``) and whether the run was priced; None when the recording
    says nothing about either."""
    usage = sim.usage
    if usage is None and not sim.unpriced:
        return None
    out = Text()
    if usage is not None:
        out.append(f"agent usage: {shown(usage.summary())}\n")
        for line in usage.lines:
            meters = " · ".join(f"{word} {line.meters[m]:,g}" for m, word in METER_WORDS.items() if m in line.meters)
            tail = "" if line.billable else " (not billed)"
            out.append(f"  {one_line(line.label)}  {meters or 'no meters'}{tail}\n", style="dim")
        if usage.cost_breakdown:
            parts = ", ".join(f"{one_line(k)} {formats.money(v)}" for k, v in usage.cost_breakdown.items())
            out.append(f"  cost breakdown: {parts}\n", style="dim")
        facts = [f"pricing {one_line(usage.pricing_version)}" if usage.pricing_version else None]
        facts.append(f"{usage.raw_records} raw records" if usage.raw_records is not None else None)
        if any(facts):
            out.append("  " + " · ".join(f for f in facts if f) + "\n", style="dim")
        for problem in usage.problems:
            out.append(f"  ⚠ {shown(problem)}\n", style="yellow")
    for side in sim.unpriced:
        out.append(f"{side} cost: unpriced (recorded null, not 0)\n", style="yellow")
    out.rstrip()
    return out


def render_breakdown(report: SimReport, recorded: RecordedChecks) -> Table | Text:
    """Reward components: recorded and recomputed in two columns, disagreeing rows highlighted."""
    rows = breakdown_rows(report, recorded.breakdown)
    if not rows:
        return Text("no reward breakdown on either side", style="dim italic")
    table = Table(box=None, padding=(0, 2), show_edge=False, header_style="bold")
    table.add_column("component")
    table.add_column("recorded", style="blue", justify="right")
    table.add_column("recomputed*", style="magenta", justify="right")
    for name, a, b in rows:
        differs = a is not None and b is not None and abs(a - b) > 1e-6
        table.add_row(Text(one_line(name)), fmt(a), fmt(b), style=DIFFERS_STYLE if differs else None)
    return table


def render_why(report: SimReport) -> Text:
    failed = report.explanation.failed
    out = Text()
    if not failed:
        out.append(
            "nothing keeps the recomputed reward below 1" if report.evaluation.success else "no reason recorded",
            style="dim italic",
        )
        return out
    for reason in failed:
        out.append("• ", style="bold red")
        out.append(f"{shown(reason)}\n")
    div = report.explanation.divergence
    if div is not None and div.step is not None:
        out.append(f"D jumps to where the run left the gold path (step {div.step})", style="italic magenta")
    out.rstrip()
    return out


def render_checks(report: SimReport, recorded: RecordedChecks) -> Text:
    """Each recomputed check beside its recorded verdict (columns: recorded, ours), component by component."""
    ev = report.evaluation
    out = Text("rec ours\n", style="dim")
    for component in list(REWARD_COMPONENTS.values()):
        draw = CHECK_RENDERERS.get(component.name)
        if draw is not None:
            draw(report, recorded, out)
        elif component.check_lines is not None:
            for line in component.check_lines(ev, recorded.info):
                out.append_text(_verdict_line(line.ours, line.recorded, Text(shown(line.text))))
                out.append("\n")
    if len(out.plain.splitlines()) == 1:
        out = Text("no checks: " + ("; ".join(ev.notes) or ev.status), style="dim italic")
    out.rstrip()
    return out


def _env_lines(report: SimReport, recorded: RecordedChecks, out: Text) -> None:
    ev = report.evaluation
    if ev.db_match is not None or recorded.db_match is not None:
        what = Text("DB matches gold")
        if ev.db is not None:
            what.append(f"  agent {str(ev.db.pred_agent)[:8]} vs gold {str(ev.db.gold_agent)[:8]}", style="dim")
            if ev.db.pred_user is not None or ev.db.gold_user is not None:
                what.append(f" · user {str(ev.db.pred_user)[:8]} vs {str(ev.db.gold_user)[:8]}", style="dim")
        out.append_text(_verdict_line(ev.db_match, recorded.db_match, what))
        out.append("\n")
        diff = report.explanation.db_diff
        if diff is not None and not diff.empty and ev.db_match is False:
            data = diff.to_json(limit=MAX_DIFF_ROWS)
            rows = [("agent", r) for r in data["agent"]] + [("user", r) for r in data["user"]]
            for side, row in rows[:MAX_DIFF_ROWS]:
                out.append(f"        {diff_row_text(side, row)}\n", style="yellow")
            total = len(diff.agent) + len(diff.user)
            if total > MAX_DIFF_ROWS:
                out.append(
                    f"        … {total - MAX_DIFF_ROWS} more path(s) · d on the State tab shows them all\n", style="dim"
                )
    for check in ev.env_assertions or []:
        a = check.assertion
        what = Text(f"assert {a.env_type}: {_call(a.func_name, a.arguments)} is {a.assert_value}")
        if check.error:
            what.append(f"  could not run: {shown(check.error)}", style="red")
        out.append_text(_verdict_line(check.met, recorded.assertions.get(_key(a.func_name, a.arguments)), what))
        out.append("\n")


def _action_lines(report: SimReport, recorded: RecordedChecks, out: Text) -> None:
    ev = report.evaluation
    missed = {_key(m.action.name, m.action.arguments): m for m in report.explanation.missed}
    for check in ev.actions or []:
        a = check.action
        key = _key(a.name, a.arguments)
        what = Text(f"{'user' if a.requestor == 'user' else 'agent'} action {_call(a.name, a.arguments)}")
        if check.matched:
            what.append(f"  at step {check.step}", style="dim")
        elif key in missed:
            miss = missed[key]
            if miss.closest_step is None:
                what.append("  never called", style="red")
            else:
                diffs = ", ".join(
                    f"{d.name}: expected {one_line(d.to_json()['expected'])}, got {one_line(d.to_json()['actual'])}"
                    for d in miss.differing
                )
                what.append(f"\n        closest call at step {miss.closest_step}: {diffs}", style="red")
        out.append_text(_verdict_line(check.matched, recorded.actions.get(key), what))
        out.append("\n")


def _communicate_lines(report: SimReport, recorded: RecordedChecks, out: Text) -> None:
    for check in report.evaluation.communicate or []:
        what = Text(f"communicate {shown(repr(check.info))}")
        what.append(
            f"  said at step {check.step}" if check.met else "  never said", style="dim" if check.met else "red"
        )
        out.append_text(_verdict_line(check.met, recorded.communicate.get(check.info), what))
        out.append("\n")


def _nl_lines(report: SimReport, recorded: RecordedChecks, out: Text) -> None:
    for assertion, verdict in _nl_assertions(report, recorded):
        what = Text(f"NL {shown(assertion)}")
        if verdict is None:
            what.append("  not evaluated (no judge; J asks one)", style="yellow")
        out.append_text(_verdict_line(verdict, recorded.nl.get(assertion), what, none="?"))
        out.append("\n")


# The built-in components' own renderers (hashes, DB diff rows, closest calls); a registered
# component without one is drawn from its ``check_lines``.
CHECK_RENDERERS = {"env": _env_lines, "action": _action_lines, "communicate": _communicate_lines, "nl": _nl_lines}


def _nl_assertions(report: SimReport, recorded: RecordedChecks) -> list[tuple[str, bool | None]]:
    """(assertion, our verdict or None when not judged) for every NL assertion we know of."""
    ev = report.evaluation
    if ev.nl:
        return [(c.assertion, c.met) for c in ev.nl]
    if not ev.nl_evaluated:
        return [(text, None) for text in recorded.nl] or [("(the task's NL assertions)", None)]
    return []


def render_recording(report: SimReport) -> Text:
    issues = report.explanation.recording
    out = Text()
    if not issues:
        out.append("the recorded reward is consistent with its task and messages", style="dim italic")
        return out
    for issue in issues:
        if issue.inconsistent:
            out.append(" INCONSISTENT ", style=DIFFERS_STYLE)
        else:
            out.append(" note ", style="black on grey62")
        out.append(f" {shown(issue.message)}\n", style="" if issue.inconsistent else "dim")
    out.rstrip()
    return out


def render_scorer(report: SimReport) -> Text:
    result = report.scorer
    if result is None:
        return Text("no scorer spec for this task (put one in <recording>.scorer.json)", style="dim italic")
    out = Text()
    out.append(f"value {result.value:.2f} ", style="bold")
    out.append(
        " passed " if result.passed else " failed ",
        style="bold black on green" if result.passed else "bold white on dark_orange3",
    )
    out.append("\n")
    for check in result.checks:
        out.append_text(_mark(check.satisfied))
        out.append(f" {check.label}\n")
    if result.additional:
        out.append(f"other tools called: {', '.join(result.additional)}\n", style="dim")
    for note in result.notes:
        out.append(f"{shown(note)}\n", style="dim")
    out.rstrip()
    return out


def render_flags(report: SimReport) -> Text:
    if not report.flags:
        return Text("no process flags", style="dim italic")
    out = Text()
    for flag in report.flags:
        out.append(f"step {flag.step:>3} ", style="bold")
        out.append(f"{flag.kind} ", style="cyan")
        out.append(f"{shown(flag.message)}\n")
    out.rstrip()
    return out


def render_evaluation(report: SimReport, sim: SimulationRun) -> RenderableType:
    """The whole evaluation pane for one simulation."""
    recorded = RecordedChecks(sim.reward_info)
    ev = report.evaluation
    parts: list[RenderableType] = [
        render_reward_header(report, sim),
        Text(""),
        render_breakdown(report, recorded),
        Text(""),
        _heading("Why (recomputed)"),
        render_why(report),
        Text(""),
        _heading("Checks", "recorded | ours*, highlighted where they differ"),
        render_checks(report, recorded),
    ]
    usage = render_usage(sim)
    if usage is not None:
        parts += [Text(""), _heading("Cost and usage", "as recorded")]
        parts.append(usage)
    notes = [n for n in ev.notes if n not in report.explanation.failed]
    if notes:
        parts += [Text(""), _heading("Evaluator notes")]
        parts += [Text(f"• {shown(note)}", style="yellow") for note in notes]
    parts += [
        Text(""),
        _heading("Recording vs its own task and messages"),
        render_recording(report),
        Text(""),
        _heading("Tool-call score", "beside the reward, never part of it"),
        render_scorer(report),
        Text(""),
        _heading(f"Process flags ({len(report.flags)})", "p / P: next / previous flag"),
        render_flags(report),
    ]
    return Group(*parts)


def render_no_evaluation(reason: str) -> Text:
    return Text(f"No evaluation: {shown(reason)}", style="italic yellow")


# --- metrics ----------------------------------------------------------------------------------------


def _cell(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def render_metrics_summary(recomputed: RunMetrics, recorded: RunMetrics) -> Table:
    """One row per metric: as recorded | recomputed*; rows where the two differ are highlighted."""
    table = Table(box=None, padding=(0, 2), show_edge=False, header_style="bold")
    table.add_column("metric")
    table.add_column("as recorded", style="blue", justify="right")
    table.add_column("recomputed*", style="magenta", justify="right")
    rows: list[tuple[str, Any, Any]] = [
        ("simulations", recorded.n_simulations, recomputed.n_simulations),
        ("scored", recorded.n_scored, recomputed.n_scored),
        ("unscored (left out)", recorded.n_unscored, recomputed.n_unscored),
        ("infrastructure errors (left out)", recorded.infrastructure_errors, recomputed.infrastructure_errors),
        ("average reward", recorded.avg_reward, recomputed.avg_reward),
    ]
    for k in sorted(set(recorded.pass_hat_k) | set(recomputed.pass_hat_k)):
        rows.append((f"pass^{k}", recorded.pass_hat_k.get(k), recomputed.pass_hat_k.get(k)))
    for k in sorted(set(recorded.pass_at_k) | set(recomputed.pass_at_k)):
        rows.append((f"pass@{k}", recorded.pass_at_k.get(k), recomputed.pass_at_k.get(k)))
    for label, a, b in rows:
        differs = a is not None and b is not None and abs(a - b) > 1e-9
        style = DIFFERS_STYLE if differs else ("yellow" if "left out" in label and (a or b) else None)
        table.add_row(label, _cell(a), _cell(b), style=style)
    return table


def render_claims(
    label: str,
    domain: str | None,
    claim: DomainClaim | None,
    recomputed: RunMetrics,
    sub: Submission | None = None,
    best: BestOfKScores | None = None,
) -> Text:
    """What a leaderboard submission claims for this file's domain, pass^k beside our recomputed one; with
    ``best``, a best-of-K claim beside the best-of-K score of the submission's loaded files instead."""
    out = Text()
    out.append(f"\nsubmission {label}", style="bold")
    out.append(f" claims for {domain or '?'}: ", style="dim")
    if claim is None or not claim.pass_hat_k:
        out.append("no pass^k", style="dim")
        out.append_text(_claim_details(claim, sub))
        return out
    if best is not None and sub is not None and sub.best_of_k:
        theirs = claim.pass_hat_k.get(1)
        ours_score = best.ours.score
        differs = theirs is not None and ours_score is not None and abs(ours_score - theirs) > 0.005
        out.append(
            f"pass^1 {'n/a' if theirs is None else f'{theirs:.3f}'} best-of-K over "
            f"{formats.count(best.recorded.files, 'loaded file')}: ours {best.ours.text()}"
            + (f", {best.pending} simulation(s) not evaluated yet" if best.pending else "")
            + f" · recorded {best.recorded.text()}",
            style=DIFFERS_STYLE if differs else "",
        )
        out.append(f'\n  methodology: "{shown(sub.best_of_k)}"', style="dim")
        out.append_text(_claim_details(claim, sub))
        return out
    for n, k in enumerate(sorted(claim.pass_hat_k)):
        ours = recomputed.pass_hat_k.get(k)
        theirs = claim.pass_hat_k[k]
        differs = ours is not None and abs(ours - theirs) > 0.005
        out.append(
            ("  " if n else "") + f"pass^{k} {theirs:.3f} (ours {'n/a' if ours is None else f'{ours:.3f}'})",
            style=DIFFERS_STYLE if differs else "",
        )
    if claim.retrieval_config:
        out.append(f"  · retrieval {claim.retrieval_config}", style="dim")
    out.append_text(_claim_details(claim, sub))
    return out


@dataclass(frozen=True)
class BestOfKScores:
    """The best-of-K scores of a submission's loaded files of one domain: ours, recorded, and how many of its
    simulations we have not evaluated yet (counted unscored meanwhile)."""

    ours: BestOfK
    recorded: BestOfK
    pending: int = 0


def _claim_details(claim: DomainClaim | None, sub: Submission | None) -> Text:
    """The claimed cost and time (PR 443) and the user simulator (PR 444), one dim line when there are any."""
    parts = []
    costs = claim.cost_time_text() if claim is not None else None
    if costs:
        parts.append(
            f"claimed {costs}" + (" (estimated from token usage)" if sub is not None and sub.cost_estimated else "")
        )
    if sub is not None and sub.user_simulator:
        parts.append(f"user simulator {sub.user_simulator}")
    return Text("\n  " + " · ".join(shown(p) for p in parts), style="dim") if parts else Text()


def render_terminations(metrics: RunMetrics) -> Text:
    out = Text()
    for reason, count in metrics.terminations.items():
        style = (
            "yellow" if reason == "infrastructure_error" else ("" if reason in ("user_stop", "agent_stop") else "red")
        )
        out.append(f"{reason} ", style=style)
        out.append(f"{count}   ", style="bold")
    return out


def task_rows(recomputed: RunMetrics, recorded: RunMetrics) -> Iterable[tuple[str, list[str], bool]]:
    """(task, cells, differs) per task: trials, passed (recorded / recomputed), avg, pass^k for each k."""
    theirs = {t.task_id: t for t in recorded.tasks}
    ours = {t.task_id: t for t in recomputed.tasks}
    order = [t.task_id for t in recomputed.tasks] + [t for t in theirs if t not in ours]
    for task_id in order:
        a, b = theirs.get(task_id), ours.get(task_id)
        main = b or a
        assert main is not None
        cells = [
            str(main.trials),
            "—" if a is None else str(a.successes),
            "—" if b is None else str(b.successes),
            formats.rate(b.avg_reward if b is not None else None),
        ]
        cells += [
            "—" if b is None or k not in b.pass_hat_k else f"{b.pass_hat_k[k]:.2f}"
            for k in range(1, recomputed.max_k + 1)
        ]
        differs = a is not None and b is not None and a.successes != b.successes
        yield task_id, cells, differs
