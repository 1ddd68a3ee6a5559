"""Re-grade audit: for every simulation whose recorded reward differs from ours, the rule responsible.

The rules, in the order they are tried (the first that applies is the one held responsible; all
that apply are listed):

- ``task_changed``: the task the run was graded against is not the one we grade against. Either
  the recording embeds its task and the domain's current definition differs (field-level diff of
  the two), or the recording embeds none and its recorded checks do not fit the current task
  (diff of the recorded expected actions against the current ones).
- ``recording_inconsistent``: the recorded reward disagrees with the recording's own task and
  messages (e.g. the checks of another task: a mislabelled task id).
- ``nl_judge_needed``: the reward needs NL assertions judged and no judge was given.
- ``strict_replay``: a strict replay (what a live tau2 run does) would raise at a re-executed write
  whose output differs from the recording; the recorded reward came from another path.
- ``solo_mode``: the run's declared mode (solo from ``llm_agent_solo`` + ``dummy_user``) does not
  fit its messages (user turns in a solo run, or none in a normal one).
- ``gold_path``: tau2 1.0.1's evaluator semantics: the gold state is built without a sync after
  the reference actions (and never in solo mode), so it differs from what the reference actions
  reach live; the run reached the live state and fails the DB check only for that reason.

Simulations whose rewards agree are still scanned for ``task_changed`` and ``gold_path`` and
counted as notes. Per file, the effect: avg reward and pass^1 over recorded vs our rewards, and
for each rule how many simulations it explains and how many points of avg reward they move.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterable

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.domains import DomainError
from tau_tui.evaluate import FileMetrics, Judge, MetricOutcome, compute_metrics
from tau_tui.evaluate.reward import scored_reward
from tau_tui.model.io import RecordedOnly, RunFile, RunFileError
from tau_tui.model.submission import BestOfK, SubmissionError, best_of_k
from tau_tui.model.submission import read_submission as read_submission_meta
from tau_tui.model.tally import counted, grouped
from tau_tui.model.tasks import Task

RULES = ("task_changed", "recording_inconsistent", "nl_judge_needed", "strict_replay", "solo_mode", "gold_path")
RULE_TEXT = {
    "task_changed": "task definition changed",
    "recording_inconsistent": "recording inconsistent with its own task",
    "nl_judge_needed": "NL judge needed",
    "strict_replay": "strict replay would raise",
    "solo_mode": "solo-mode detection",
    "gold_path": "tau2 evaluator's gold path (no sync after reference actions)",
    "unexplained": "no rule explains it",
}
MAX_DIFF_ITEMS = 20


@dataclass(frozen=True)
class RuleHit:
    """A rule that applies; ``explains``: it can account for a difference (a changed task we did not grade
    against is a note only)."""

    rule: str
    message: str
    detail: Any = None
    explains: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": RULE_TEXT[self.rule],
            "message": self.message,
            "detail": self.detail,
            "explains": self.explains,
        }


@dataclass
class SimAudit:
    file: Path
    sim_id: str
    task_id: str
    trial: int | None
    recorded: float | None
    ours: float | None
    hits: list[RuleHit]

    @property
    def differs(self) -> bool:
        if self.recorded is None:
            return False
        return self.ours is None or abs(self.ours - self.recorded) > 1e-6

    @property
    def responsible(self) -> str | None:
        if not self.differs:
            return None
        return next((hit.rule for hit in self.hits if hit.explains), "unexplained")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "simulation",
            "file": str(self.file),
            "sim": self.sim_id,
            "task": self.task_id,
            "trial": self.trial,
            "recorded_reward": self.recorded,
            "reward": self.ours,
            "differs": self.differs,
            "responsible": self.responsible,
            "rules": [h.to_json() for h in self.hits],
        }


@dataclass
class FileAudit:
    file: Path
    domain: str | None
    sims: list[SimAudit] = field(default_factory=list)
    recorded_metrics: Any = None
    our_metrics: Any = None

    def by_rule(self) -> dict[str, dict[str, Any]]:
        """Per responsible rule: simulations it explains and the points of avg reward they move (ours − recorded)."""
        n = len([s for s in self.sims if scored_reward(s.recorded) is not None]) or 1
        out: dict[str, dict[str, Any]] = {}
        for rule, sims in grouped(self.sims, attrgetter("responsible")).items():
            moves = [(scored_reward(sim.ours), scored_reward(sim.recorded)) for sim in sims]
            points = [100 * (ours - rec) / n for ours, rec in moves if ours is not None and rec is not None]
            # a simulation unscored on either side has nothing to move the score from or to
            out[rule] = {"simulations": len(sims), "points": sum(points, 0.0), "unscored": len(sims) - len(points)}
        return out

    def notes(self) -> dict[str, int]:
        """Rules that apply to simulations whose rewards agree (no effect on the reward)."""
        return counted(hit.rule for sim in self.sims if not sim.differs for hit in sim.hits)

    def to_json(self) -> dict[str, Any]:
        rec, ours = self.recorded_metrics, self.our_metrics
        return {
            "kind": "file",
            "file": str(self.file),
            "domain": self.domain,
            "simulations": len(self.sims),
            "differ": sum(s.differs for s in self.sims),
            "recorded": {"avg_reward": rec.avg_reward, "pass_hat_1": rec.pass_hat_k.get(1)} if rec else None,
            "ours": {"avg_reward": ours.avg_reward, "pass_hat_1": ours.pass_hat_k.get(1), "n_unscored": ours.n_unscored}
            if ours
            else None,
            "by_rule": self.by_rule(),
            "notes": self.notes(),
        }


def field_diff(old: Any, new: Any) -> list[dict[str, Any]]:
    """Field-level differences between two JSON values (deepdiff, imported here only)."""
    from deepdiff import DeepDiff

    diff = DeepDiff(old, new, verbose_level=2, view="tree")
    out = []
    for kind, items in diff.items():
        for item in items:
            out.append({"path": item.path(), "kind": kind, "old": _plain(item.t1), "new": _plain(item.t2)})
            if len(out) >= MAX_DIFF_ITEMS:
                return out
    return out


def _plain(value: Any) -> Any:
    from deepdiff.helper import NotPresent

    return None if isinstance(value, NotPresent) else value


def _task_json(task: Task) -> Any:
    from tau_tui.model.tasks import _without_nulls  # the digest's own view of a task: nulls ignored

    return _without_nulls(task.model_dump(mode="json"))


def _recorded_actions(analysis: SimAnalysis) -> list[dict[str, Any]] | None:
    info = analysis.sim.reward_info
    checks = getattr(info, "action_checks", None) if info is not None else None
    if not checks:
        return None
    out = []
    for check in checks:
        action = getattr(check, "action", None)
        if action is not None:
            out.append({"name": getattr(action, "name", None), "arguments": getattr(action, "arguments", None)})
    return out


def _task_changed(
    analyzer: Analyzer, run: RunFile, analysis: SimAnalysis, report: Any, current_tasks: bool
) -> RuleHit | None:
    """``run`` is the file as recorded (with its embedded tasks, even when graded against the current ones)."""
    task = analysis.task
    if task is None:
        return None
    embedded = run.tasks().get(analysis.sim.task_id)
    if embedded is not None:
        try:
            current = analyzer.domain_of(run)[0].tasks().get(analysis.sim.task_id)
        except DomainError:
            current = None
        if current is None or analyzer.fingerprint(current) == analyzer.fingerprint(embedded):
            return None
        diff = field_diff(_task_json(embedded), _task_json(current))
        graded = "the current one" if current_tasks else "the recording's (--current-tasks: the current one)"
        return RuleHit(
            "task_changed",
            f"the recording's task {analysis.sim.task_id} differs from the domain's "
            f"current definition at {len(diff)} field(s); graded against {graded}",
            {"against": "domain", "diff": diff},
            explains=current_tasks,
        )
    if any(issue.kind == "task_version" for issue in report.explanation.recording) and not run.tasks():
        recorded = _recorded_actions(analysis)
        expected = [{"name": a.name, "arguments": a.arguments} for a in task.expected_actions]
        diff = field_diff(recorded, expected) if recorded is not None else []
        return RuleHit(
            "task_changed",
            f"the recording embeds no tasks and its checks do not fit the current task "
            f"{analysis.sim.task_id}: graded against another version of the task set"
            + (f" ({len(diff)} differing field(s) in the expected actions)" if diff else ""),
            {"against": "recorded checks", "diff": diff},
        )
    return None


def _recording_inconsistent(report: Any) -> RuleHit | None:
    issues = [i for i in report.explanation.recording if i.inconsistent]
    if not issues:
        return None
    return RuleHit("recording_inconsistent", issues[0].message, [i.to_json() for i in issues])


def _nl_needed(report: Any) -> RuleHit | None:
    ev = report.evaluation
    if ev.reward is None and (any("NL" in item for item in ev.not_evaluated) or not ev.nl_evaluated):
        return RuleHit(
            "nl_judge_needed",
            "the reward basis has NL assertions and no judge was given (--judge MODEL): our reward is left unscored",
        )
    return None


def _strict(analysis: SimAnalysis) -> RuleHit | None:
    if analysis.timeline.strict_ok:
        return None
    first = analysis.first_mismatch()
    where = f" at step {first['step']} ({first['tool']})" if first else ""
    return RuleHit(
        "strict_replay",
        f"a strict replay would raise{where}: a re-executed write returned something other than the recording",
        first,
    )


def _solo(run: RunFile, analysis: SimAnalysis) -> RuleHit | None:
    user_turns = sum(1 for m in analysis.sim.trajectory if m.role == "user")
    history = len(analysis.task.history) if analysis.task is not None else 0
    if run.solo and user_turns:
        return RuleHit(
            "solo_mode",
            f"declared solo (llm_agent_solo + dummy_user) but it has {user_turns} user "
            "message(s): tau2 would refuse to replay it in solo mode",
        )
    if (
        not run.solo
        and user_turns == 0
        and history == 0
        and analysis.sim.termination_reason == "agent_stop"
        and analysis.timeline.calls
    ):
        return RuleHit(
            "solo_mode",
            "no user message and an agent stop, but not declared solo: it was graded as a "
            "normal run (agent and user tools apart)",
        )
    return None


class _LivePaths:
    """The live-path end state of each task's reference actions (memoised per domain and task digest)."""

    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer
        self._states: dict[tuple[str, str], Any] = {}

    def state(self, run: RunFile, task: Task) -> Any:
        from tau_tui.calibrate.gold import live_path

        domain, variant = self.analyzer.domain_of(run)
        key = (f"{domain.name}-{variant}", self.analyzer.fingerprint(task))
        if key not in self._states:
            self._states[key] = live_path(task, self.analyzer.env_factory(domain, variant)).env.freeze()
        return self._states[key]


def _gold_path(run: RunFile, analysis: SimAnalysis, live: _LivePaths) -> RuleHit | None:
    if analysis.db_match is not False or analysis.task is None or analysis.gold is None or run.solo:
        return None
    try:
        state = live.state(run, analysis.task)
    except Exception:  # noqa: BLE001 - a task whose live path cannot run has no verdict here
        return None
    if (state.agent_hash(), state.user_hash()) != (analysis.pred_db, analysis.pred_user_db):
        return None
    from tau_tui.calibrate.gold import compare_gold

    paths = [d.path for d in compare_gold(analysis.gold, state)][:MAX_DIFF_ITEMS]
    return RuleHit(
        "gold_path",
        "the run ends where the reference actions end when run live, but the evaluator's "
        f"gold state differs there ({', '.join(paths) or 'hash only'}): a DB mismatch by tau2's "
        "semantics, not the agent's",
        {"paths": paths},
    )


def without_tasks(run: RunFile) -> RunFile:
    """A copy of ``run`` that embeds no tasks: graded against the domain's current definitions (tau2's
    ``evaluate-trajs --fresh-tasks``)."""
    return replace(run, raw_tasks=[], _sims={}, _tasks=None)


def audit_file(
    path: Path,
    run: RunFile,
    analyzer: Analyzer,
    *,
    judge: Judge | None = None,
    cancelled: Callable[[], bool] | None = None,
    live: _LivePaths | None = None,
    current_tasks: bool = False,
    via: Any = None,
) -> tuple[FileAudit, list[str]]:
    """Audit one file; ``current_tasks``: grade against the domain's current task definitions; ``via``: what
    replays and assesses (``analyze``, ``assess(analysis, judge=)``; the TUI's thread-safe replay service)."""
    source = via if via is not None else analyzer
    live = live or _LivePaths(analyzer)
    recorded_run, run = run, (without_tasks(run) if current_tasks else run)
    result = FileAudit(path, run.domain)
    errors: list[str] = []
    ours, recorded = [], []
    for index, entry in enumerate(run.entries):
        if cancelled is not None and cancelled():
            break
        try:
            analysis = source.analyze(run, index)
            report = source.assess(analysis, judge=judge)
        except (DomainError, RecordedOnly) as exc:  # the whole file: one line
            errors.append(str(exc))
            return result, errors
        except RunFileError as exc:
            errors.append(str(exc))
            continue
        hits = [
            hit
            for hit in (
                _task_changed(analyzer, recorded_run, analysis, report, current_tasks),
                _recording_inconsistent(report),
                _nl_needed(report),
                _strict(analysis),
                _solo(run, analysis),
                _gold_path(run, analysis, live),
            )
            if hit is not None
        ]
        result.sims.append(
            SimAudit(path, entry.id, entry.task_id, entry.trial, report.recorded_reward, report.evaluation.reward, hits)
        )
        ours.append(MetricOutcome(entry.task_id, report.evaluation.reward, report.evaluation.termination))
        recorded.append(MetricOutcome(entry.task_id, report.recorded_reward, report.evaluation.termination))
    both = FileMetrics.of(ours, recorded, run.raw_info, confidence=False)
    result.our_metrics, result.recorded_metrics = both.ours, both.recorded
    return result, errors


def audit_runs(
    runs: Iterable[tuple[Path, RunFile]], analyzer: Analyzer, *, judge: Judge | None = None, current_tasks: bool = False
) -> tuple[list[FileAudit], list[str]]:
    live = _LivePaths(analyzer)
    audits, errors = [], []
    for path, run in runs:
        audit, problems = audit_file(path, run, analyzer, judge=judge, live=live, current_tasks=current_tasks)
        errors += problems
        if audit.sims:
            audits.append(audit)
    return audits, errors


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}"


def audit_lines(audit: FileAudit, every: bool = False) -> list[str]:
    """The plain-text block of one file: each differing simulation with its rules, then the effect."""
    lines = [
        f"{audit.file} ({audit.domain or '?'}): {sum(s.differs for s in audit.sims)} of {len(audit.sims)} "
        "simulations differ from the recorded reward"
    ]
    for sim in audit.sims:
        if not sim.differs and not (every and sim.hits):
            continue
        ours = "unscored" if sim.ours is None else f"{sim.ours:g}"
        rec = "—" if sim.recorded is None else f"{sim.recorded:g}"
        head = f"  task {sim.task_id}" + (f" trial {sim.trial}" if sim.trial is not None else "")
        lines.append(
            f"{head}  {sim.sim_id[:12]}: recorded {rec} → ours {ours}"
            + (f"  [{RULE_TEXT[sim.responsible]}]" if sim.responsible else "  [note]")
        )
        for hit in sim.hits:
            lines.append(f"      {hit.rule}: {hit.message}")
            detail = hit.detail if isinstance(hit.detail, dict) else {}
            for item in (detail.get("diff") or [])[:5]:
                lines.append(f"        {item['kind']} {item['path']}: {item['old']!r} → {item['new']!r}")
    lines.extend("  " + line for line in effect_lines(audit))
    return lines


def effect_lines(audit: FileAudit) -> list[str]:
    """The effect on the file's metrics: the totals first, then each rule's share (indented), then the notes."""
    rec, ours = audit.recorded_metrics, audit.our_metrics
    lines = [
        f"effect: avg reward {_pct(rec.avg_reward)} recorded → {_pct(ours.avg_reward)} ours; "
        f"pass^1 {_pct(rec.pass_hat_k.get(1))} → {_pct(ours.pass_hat_k.get(1))}"
        + (f" ({ours.n_unscored} unscored by us, left out)" if ours.n_unscored else "")
    ]
    for rule, entry in sorted(audit.by_rule().items(), key=lambda item: -item[1]["simulations"]):
        lines.append(
            f"  {RULE_TEXT[rule]}: {entry['simulations']} simulation(s), {entry['points']:+.1f} points of "
            "avg reward" + (f", {entry['unscored']} unscored" if entry["unscored"] else "")
        )
    notes = audit.notes()
    if notes:
        lines.append("notes (rewards agree): " + ", ".join(f"{RULE_TEXT[r]} {n}" for r, n in notes.items()))
    return lines


SUBMISSION_FILE = "submission.json"


@dataclass
class SubmissionClaims:
    """A leaderboard submission folder's claimed pass^k per domain (percent), beside ours and the recorded one."""

    folder: Path
    model_name: str | None
    claimed: dict[str, dict[int, float]]
    ours: dict[str, dict[int, float]] = field(default_factory=dict)
    recorded: dict[str, dict[int, float]] = field(default_factory=dict)
    best_of_k_words: str | None = None  # the methodology's words that make its claims best-of-K over files
    best_of_k: dict[str, tuple[BestOfK, BestOfK]] = field(default_factory=dict)  # domain → (ours, recorded)
    warnings: list[str] = field(default_factory=list)  # what submission.json gets wrong, one line each

    def to_json(self) -> dict[str, Any]:
        domains = sorted(set(self.claimed) | set(self.ours))
        return {
            "kind": "submission",
            "folder": str(self.folder),
            "model_name": self.model_name,
            "claim_basis": "best_of_k" if self.best_of_k_words else "pooled",
            "methodology": self.best_of_k_words,
            "warnings": self.warnings,
            "domains": {
                d: {
                    "claimed": {str(k): v for k, v in self.claimed.get(d, {}).items()},
                    "recorded": {str(k): v for k, v in self.recorded.get(d, {}).items()},
                    "ours": {str(k): v for k, v in self.ours.get(d, {}).items()},
                    **(
                        {
                            "best_of_k": {
                                "ours": self.best_of_k[d][0].to_json(),
                                "recorded": self.best_of_k[d][1].to_json(),
                            }
                        }
                        if d in self.best_of_k
                        else {}
                    ),
                }
                for d in domains
            },
        }

    def lines(self) -> list[str]:
        out = [f"submission {self.folder} ({self.model_name or '?'}): claimed pass^k vs ours (points)"]
        if self.best_of_k_words:
            out.append(f'  its claims are best-of-K over its trajectory files (methodology: "{self.best_of_k_words}")')
        for domain in sorted(set(self.claimed) | set(self.ours)):
            claimed, ours, recorded = (
                self.claimed.get(domain, {}),
                self.ours.get(domain, {}),
                self.recorded.get(domain, {}),
            )
            if domain in self.best_of_k:
                said, (mine, theirs) = claimed.get(1), self.best_of_k[domain]
                delta = f"{100 * mine.score - said:+.1f}" if said is not None and mine.score is not None else "n/a"
                out.append(
                    f"  {domain} best-of-K over {mine.files} file(s): claimed pass^1 {_num(said)}, "
                    f"recorded {_pct_of(theirs)}, ours {_pct_of(mine)} ({delta})"
                )
                continue
            for k in sorted(set(claimed) | set(ours)):
                c, o, r = claimed.get(k), ours.get(k), recorded.get(k)
                delta = f"{o - c:+.1f}" if c is not None and o is not None else "n/a"
                out.append(f"  {domain} pass^{k}: claimed {_num(c)}, recorded {_num(r)}, ours {_num(o)} ({delta})")
        return out


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _pct_of(best: BestOfK) -> str:
    """``78.0 (39/50 tasks)``: a best-of-K score in points."""
    return (
        f"{_num(None if best.score is None else 100 * best.score)} ({best.passed}/{best.tasks - best.unscored} tasks)"
    )


def read_submission(folder: Path) -> SubmissionClaims:
    """The claims of ``folder/submission.json`` in percent, read by the one submission reader (its warnings kept:
    a claim outside 0-100 is one and is left out)."""
    try:
        meta = read_submission_meta(folder)
    except SubmissionError as exc:
        raise RunFileError(exc.path, exc.problem) from None
    claimed = {
        domain: {k: round(100 * v, 9) for k, v in claim.pass_hat_k.items()}
        for domain, claim in meta.claims.items()
        if claim.pass_hat_k
    }
    return SubmissionClaims(
        folder,
        meta.model_name,
        claimed,
        best_of_k_words=meta.best_of_k,
        warnings=[f"{meta.path}: {w}" for w in meta.warnings],
    )


def submission_claims(folder: Path, audits: Iterable[FileAudit]) -> SubmissionClaims:
    """The submission's claims beside our pass^k and the recorded pass^k of its files, per domain: pooled, or
    the best-of-K (union) score of the files when the methodology says its claims are best-of-K."""
    claims = read_submission(folder)
    pooled: dict[str, tuple[list[MetricOutcome], list[MetricOutcome]]] = {}
    attempts: dict[str, list[tuple[str, str, float | None, float | None]]] = {}
    for audit in audits:
        if not audit.file.is_relative_to(folder) or audit.domain is None:
            continue
        domain = audit.domain.split("-")[0]
        ours, recorded = pooled.setdefault(domain, ([], []))
        for sim in audit.sims:
            ours.append(MetricOutcome(sim.task_id, sim.ours, None))
            recorded.append(MetricOutcome(sim.task_id, sim.recorded, None))
            attempts.setdefault(domain, []).append((str(audit.file), sim.task_id, sim.ours, sim.recorded))
    for domain, (ours, recorded) in pooled.items():
        if claims.best_of_k_words:
            both = attempts[domain]
            union = (
                best_of_k(domain, [(f, t, o) for f, t, o, _ in both]),
                best_of_k(domain, [(f, t, r) for f, t, _, r in both]),
            )
            claims.best_of_k[domain] = union
            claims.ours[domain] = {} if union[0].score is None else {1: 100 * union[0].score}
            claims.recorded[domain] = {} if union[1].score is None else {1: 100 * union[1].score}
            continue
        claims.ours[domain] = {k: 100 * v for k, v in compute_metrics(ours).pass_hat_k.items()}
        claims.recorded[domain] = {k: 100 * v for k, v in compute_metrics(recorded).pass_hat_k.items()}
    return claims
