"""Why a reward is what it is: DB diff, where the run left the gold path, missed actions, and
whether the recording agrees with its own task and messages.

Everything here is derived from the replay (``Timeline``, ``GoldResult``) and
the ``Evaluation``; nothing changes the reward.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tau_tui.env.environment import EnvState
from tau_tui.env.store import to_plain
from tau_tui.evaluate.checks import ActionCheck, action_matches
from tau_tui.evaluate.reward import (
    PREMATURE,
    REWARD_COMPONENTS,
    Evaluation,
    Replayed,
    agent_said,
    history_in_trajectory,
)
from tau_tui.model.provenance import judge_failures
from tau_tui.model.results import SCORED_TERMINATIONS, RewardInfo
from tau_tui.model.tasks import DB_COMPARED, Action, Task, db_check_rule
from tau_tui.replay import CallRecord, Change, Timeline, diff_states
from tau_tui.textsafe import clip_json

_MISSING = object()
DIFF_LIMIT = 50


def jsonable(value: Any) -> Any:
    """A state value as plain JSON (collections to dicts, dates and enums to text)."""
    if value is _MISSING:
        return None
    return json.loads(json.dumps(to_plain(value), default=str))


def value_at(tree: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` in a state tree, or a private sentinel when the path does not exist."""
    node = tree
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


# --- DB diff -------------------------------------------------------------------


@dataclass
class StateDiff:
    """Paths where the predicted final DB differs from the gold one (before = predicted, after = gold)."""

    agent: list[Change] = field(default_factory=list)
    user: list[Change] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.agent and not self.user

    def paths(self, side: str) -> list[tuple[Any, ...]]:
        return [c.path for c in (self.agent if side == "agent" else self.user)]

    def to_json(self, limit: int = DIFF_LIMIT) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for side, changes in (("agent", self.agent), ("user", self.user)):
            out[side] = [
                {"path": c.dotted, "kind": _diff_kind(c), "predicted": jsonable(c.before), "gold": jsonable(c.after)}
                for c in changes[:limit]
            ]
            if len(changes) > limit:
                out[f"{side}_truncated"] = len(changes) - limit
        return out


def _diff_kind(change: Change) -> str:
    """'only_gold' (the run never made it), 'only_predicted' (gold lacks it) or 'differs'."""
    return {"added": "only_gold", "removed": "only_predicted"}.get(change.kind, "differs")


def state_diff(timeline: Timeline, gold_state: EnvState) -> StateDiff:
    """Path-level diff of predicted vs gold, agent and user side (cheap: states share structure)."""
    final = timeline.final
    agent = (
        diff_states(final.agent, gold_state.agent) if final.agent is not None or gold_state.agent is not None else []
    )
    user = diff_states(final.user, gold_state.user) if final.user is not None or gold_state.user is not None else []
    return StateDiff(agent, user)


# --- leaving the gold path ---------------------------------------------------------


@dataclass
class GoldDivergence:
    """Where the trajectory left the gold path.

    ``wrong_write``: the first write whose effect the gold state lacks (``step``
    is the message making the call). ``missing_write``: every write agreed with
    gold, but after ``step`` (None: from the start) an expected write never
    came or never took effect.
    """

    kind: str
    step: int | None
    message: str
    tool: str | None = None
    path: str | None = None
    written: Any = None
    gold: Any = None
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "step": self.step, "message": self.message}
        if self.kind == "wrong_write":
            out.update(tool=self.tool, path=self.path, written=self.written, gold=self.gold)
        else:
            out["missing"] = self.missing
        return out


def _related(path: tuple[Any, ...], bad: list[tuple[Any, ...]]) -> bool:
    return any(path[: len(b)] == b or b[: len(path)] == path for b in bad)


def _successful_writes(timeline: Timeline, start: int) -> list[CallRecord]:
    return [
        c
        for c in timeline.calls
        if c.is_write and not c.replayed_error and c.result_step is not None and c.result_step >= start
    ]


def _call_text(name: object, arguments: Any, limit: int = 240) -> str:
    """``name(k=v, ...)``, clipped for one-line messages (the JSON keeps the full arguments)."""
    inner = ", ".join(f"{k}={v!r}" for k, v in arguments.items()) if isinstance(arguments, dict) else repr(arguments)
    if len(inner) > limit:
        inner = inner[:limit] + "…"
    return f"{name}({inner})"


def divergence(
    timeline: Timeline, gold_state: EnvState, diff: StateDiff, actions: list[ActionCheck] | None, history_len: int
) -> GoldDivergence | None:
    """The first write that took the DB off the gold path, or the point after which a write was missing."""
    if diff.empty:
        return None
    writes = _successful_writes(timeline, history_len)
    for record in writes:
        wrong = _wrong_changes(timeline, record, gold_state, diff)
        if not wrong:
            continue
        side, change, written, expected = wrong[0]
        more = f" (+{len(wrong) - 1} more path(s))" if len(wrong) > 1 else ""
        return GoldDivergence(
            "wrong_write",
            record.call_step,
            f"step {record.call_step}: {_call_text(record.name, record.call.arguments)} set {side} DB "
            f"{change.dotted} to {_describe(written)}; gold has {_describe(expected)}{more}",
            tool=record.name,
            path=f"{side}:{change.dotted}",
            written=jsonable(written),
            gold=jsonable(expected),
        )
    missing = _missing_writes(actions or [], timeline)
    last = writes[-1].result_step if writes else None
    where = f"after step {last}" if last is not None else "from the start"
    what = "; ".join(missing) if missing else f"gold differs at {_first_paths(diff)}"
    return GoldDivergence("missing_write", last, f"{where} no write brought the DB to gold: {what}", missing=missing)


def _wrong_changes(
    timeline: Timeline, record: CallRecord, gold_state: EnvState, diff: StateDiff
) -> list[tuple[str, Change, Any, Any]]:
    """(side, change, written, gold value) for each change of this write that gold lacks, edits first."""
    if record.result_step is None:  # a call without a result changed nothing
        return []
    agent_changes, user_changes = timeline.changes_at(record.result_step)
    out: list[tuple[str, Change, Any, Any]] = []
    for side, changes, gold_tree in (
        ("agent", agent_changes, gold_state.agent),
        ("user", user_changes, gold_state.user),
    ):
        bad = diff.paths(side)
        for change in changes:
            if not _related(change.path, bad):
                continue
            written = _MISSING if change.kind == "removed" else change.after
            expected = value_at(gold_tree, change.path)
            if written is _MISSING or expected is _MISSING:
                out.append((side, change, written, expected))
                continue
            for sub in diff_states(written, expected):  # down to the leaves that differ
                leaf = Change(change.path + sub.path, sub.kind, sub.before, sub.after)
                out.append(
                    (
                        side,
                        leaf,
                        _MISSING if sub.kind == "added" else sub.before,
                        _MISSING if sub.kind == "removed" else sub.after,
                    )
                )
    return sorted(out, key=lambda item: item[1].kind != "changed")


def _describe(value: Any) -> str:
    return "nothing (no such path)" if value is _MISSING else _short(jsonable(value))


def _missing_writes(actions: list[ActionCheck], timeline: Timeline) -> list[str]:
    """Expected write actions that were never called, or whose matching calls all failed."""
    out = []
    for check in actions:
        if check.tool_type != "write":
            continue
        text = _call_text(check.action.name, check.action.arguments)
        if not check.matched:
            out.append(f"{text} never done")
            continue
        hits = [c for c in timeline.calls if action_matches(check.action, c.name, c.call.arguments)]
        if hits and all(c.recorded_error or c.replayed_error for c in hits):
            out.append(f"{text} failed at step {hits[-1].result_step}")
    return out


def _first_paths(diff: StateDiff, n: int = 3) -> str:
    paths = [f"agent:{c.dotted}" for c in diff.agent] + [f"user:{c.dotted}" for c in diff.user]
    return ", ".join(paths[:n]) + (f" (+{len(paths) - n} more)" if len(paths) > n else "")


def _short(value: Any, limit: int = 80) -> str:
    return clip_json(value, limit)


# --- missed actions ------------------------------------------------------------


@dataclass
class ArgDiff:
    name: str
    expected: Any
    actual: Any
    expected_present: bool
    actual_present: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "argument": self.name,
            "expected": self.expected if self.expected_present else "(absent)",
            "actual": self.actual if self.actual_present else "(absent)",
        }


@dataclass
class MissedAction:
    """An expected action no call satisfied, with the closest call of that name and what differed."""

    action: Action
    tool_type: str | None
    closest_step: int | None
    differing: list[ArgDiff]

    @property
    def message(self) -> str:
        head = _call_text(self.action.name, self.action.arguments)
        if self.closest_step is None:
            return f"expected {head}: never called"
        diffs = ", ".join(
            f"{d.name}: expected {d.to_json()['expected']!r}, got {d.to_json()['actual']!r}" for d in self.differing
        )
        return f"expected {head}: closest call at step {self.closest_step} differs in {diffs}"

    def to_json(self) -> dict[str, Any]:
        return {
            "action_id": self.action.action_id,
            "name": self.action.name,
            "arguments": self.action.arguments,
            "tool_type": self.tool_type,
            "closest_step": self.closest_step,
            "differing": [d.to_json() for d in self.differing],
            "message": self.message,
        }


def argument_diffs(action: Action, arguments: dict[str, Any]) -> list[ArgDiff]:
    """Arguments on which a call differs from an expected action (compare_args, else every key of either)."""
    keys = (
        action.compare_args if action.compare_args is not None else list(dict.fromkeys([*action.arguments, *arguments]))
    )
    out = []
    for key in keys:
        has_exp, has_act = key in action.arguments, key in arguments
        exp, act = action.arguments.get(key), arguments.get(key)
        if has_exp != has_act or exp != act:
            out.append(ArgDiff(key, exp, act, has_exp, has_act))
    return out


def missed_actions(actions: list[ActionCheck] | None, calls: list[CallRecord]) -> list[MissedAction]:
    out = []
    for check in actions or []:
        if check.matched:
            continue
        candidates = [c for c in calls if c.name == check.action.name and isinstance(c.call.arguments, dict)]
        if not candidates:
            out.append(MissedAction(check.action, check.tool_type, None, []))
            continue
        scored = [(len(argument_diffs(check.action, c.call.arguments)), -c.index, c) for c in candidates]
        _, _, best = min(scored, key=lambda t: (t[0], t[1]))
        out.append(
            MissedAction(
                check.action, check.tool_type, best.call_step, argument_diffs(check.action, best.call.arguments)
            )
        )
    return out


# --- the recording against its own task ----------------------------------------------


@dataclass
class RecordingIssue:
    """Something in the recorded reward that its task or its messages do not support.

    ``inconsistent`` issues contradict the task or the messages; the others are
    notes (e.g. tool outputs of another tau2 version).
    """

    kind: str
    message: str
    inconsistent: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "inconsistent": self.inconsistent}


def _action_key(name: Any, arguments: Any) -> str:
    return json.dumps([name, arguments], sort_keys=True, default=str)


def _recorded_product(breakdown: dict[str, Any]) -> float | None:
    values = list(breakdown.values())
    if not all(isinstance(v, (int, float)) for v in values):
        return None
    out = 1.0
    for v in values:
        out *= v
    return out


def check_recording(
    replayed: Replayed,
    evaluation: Evaluation,
    task_in_recording: bool = True,
    known_tasks: dict[str, Task] | None = None,
) -> list[RecordingIssue]:
    """The recorded reward checked against the run's own task and messages.

    ``task_in_recording`` says whether the task came from the recording itself;
    when it came from a data folder instead, disagreements with the task may
    just mean another version of the task set and are notes, not
    inconsistencies. ``known_tasks`` (the recording's or the data folder's
    tasks) lets a recorded check that fits another task name that task.
    """
    recorded = replayed.sim.reward_info
    if recorded is None:
        return []
    sim, task, timeline = replayed.sim, replayed.task, replayed.timeline
    issues: list[RecordingIssue] = []
    termination = sim.termination_reason
    if termination is not None and termination not in SCORED_TERMINATIONS:
        if recorded.reward not in (None, 0, 0.0):
            issues.append(
                RecordingIssue(
                    "reward_despite_termination",
                    f"recorded reward {recorded.reward} although termination '{termination}' forces 0",
                )
            )
        return issues
    task_issues = _mislabelled(recorded, task, known_tasks or {}) + _against_task(recorded, task)
    task_issues += _db_verdict(recorded, evaluation, timeline)
    if not task_in_recording and task_issues:
        for issue in task_issues:
            issue.inconsistent = False
        task_issues.insert(
            0,
            RecordingIssue(
                "task_version",
                f"the recording embeds no tasks and its checks do not fit task {sim.task_id} of the "
                "data folder: it was probably evaluated against another version of the task set",
                inconsistent=False,
            ),
        )
    issues += task_issues + _against_itself(recorded) + _against_messages(recorded, timeline, agent_said(replayed))
    failed_judge = judge_failures(recorded)
    if failed_judge:
        issues.append(
            RecordingIssue(
                "judge_failure",
                f"the recorded NL verdicts are a judge failure, not the agent's (tau2-bench#469): "
                f"{len(failed_judge)} assertion(s) recorded as not met because the judge's reply could not be parsed",
                inconsistent=False,
            )
        )
    if not timeline.strict_ok and timeline.mismatches:
        first = timeline.mismatches[0]
        issues.append(
            RecordingIssue(
                "replay_differs",
                f"recorded output of {first.name} at step {first.result_step} differs from "
                f"the replay ({len(timeline.mismatches)} write(s) differ)",
                inconsistent=False,
            )
        )
    return issues


def _db_verdict(recorded: RewardInfo, evaluation: Evaluation, timeline: Timeline) -> list[RecordingIssue]:
    if evaluation.db is None or recorded.db_check is None or recorded.db_check.db_match is None:
        return []
    ours = evaluation.db.match
    if recorded.db_check.db_match == ours:
        return []
    if timeline.strict_ok:
        return [
            RecordingIssue(
                "db_match_contradicts_replay",
                f"recorded db_match={recorded.db_check.db_match}, but the replayed DB "
                f"{'matches' if ours else 'differs from'} gold and every recorded tool output "
                "replays exactly",
            )
        ]
    return [
        RecordingIssue(
            "db_match_differs",
            f"recorded db_match={recorded.db_check.db_match}, replay says {ours}; "
            "the recorded tool outputs differ from the replay (another tool version?)",
            inconsistent=False,
        )
    ]


def _recorded_actions(recorded: RewardInfo) -> list[dict[str, Any]]:
    return [
        c["action"] for c in recorded.action_checks or [] if isinstance(c, dict) and isinstance(c.get("action"), dict)
    ]


def _task_action_keys(task: Task) -> set[str]:
    return {_action_key(a.name, a.arguments) for a in task.expected_actions}


def _check_signature(recorded: RewardInfo) -> set[str]:
    """What the recorded checks name: its actions and its communicate infos."""
    keys = {_action_key(a.get("name"), a.get("arguments")) for a in _recorded_actions(recorded)}
    keys |= {
        f"info:{c['info']}"
        for c in recorded.communicate_checks or []
        if isinstance(c, dict) and isinstance(c.get("info"), str)
    }
    return keys


def _task_signature(task: Task) -> set[str]:
    criteria = task.evaluation_criteria
    return _task_action_keys(task) | {f"info:{i}" for i in (criteria.communicate_info or [] if criteria else [])}


def _mislabelled(recorded: RewardInfo, task: Task | None, known_tasks: dict[str, Task]) -> list[RecordingIssue]:
    """Recorded checks that belong to another task: the simulation carries the wrong task id."""
    keys = _check_signature(recorded)
    if not keys or (task is not None and keys <= _task_signature(task)):
        return []
    owners = [t.id for t in known_tasks.values() if (task is None or t.id != task.id) and keys <= _task_signature(t)]
    if not owners:
        return []
    named = ", ".join(owners[:3]) + (" …" if len(owners) > 3 else "")
    return [
        RecordingIssue(
            "mislabelled_task",
            f"the recorded checks are those of task {named}, not of task "
            f"{task.id if task else '?'}: the simulation seems to carry the wrong task id",
        )
    ]


def _against_task(recorded: RewardInfo, task: Task | None) -> list[RecordingIssue]:
    """Recorded checks naming actions, assertions, infos or a basis the task does not have."""
    if task is None:
        return []
    criteria = task.evaluation_criteria
    issues: list[RecordingIssue] = []
    expected = _task_action_keys(task)
    recorded_keys = {_action_key(a.get("name"), a.get("arguments")) for a in _recorded_actions(recorded)}
    foreign = [a for a in _recorded_actions(recorded) if _action_key(a.get("name"), a.get("arguments")) not in expected]
    if foreign:
        named = "; ".join(_call_text(a.get("name"), a.get("arguments"), limit=80) for a in foreign[:3])
        issues.append(
            RecordingIssue(
                "unknown_action",
                f"{len(foreign)} recorded action check(s) name actions task "
                f"{task.id} does not have: {named}" + (" …" if len(foreign) > 3 else ""),
            )
        )
    unchecked = [a for a in task.expected_actions if _action_key(a.name, a.arguments) not in recorded_keys]
    if recorded.action_checks is not None and unchecked:
        issues.append(
            RecordingIssue(
                "unchecked_actions",
                f"the recording checked {len(recorded_keys)} action(s); "
                f"task {task.id} also expects "
                + ", ".join(_call_text(a.name, a.arguments) for a in unchecked[:3])
                + (" …" if len(unchecked) > 3 else ""),
            )
        )
    assertions = {_action_key(a.func_name, a.arguments) for a in (criteria.env_assertions or [])} if criteria else set()
    for check in recorded.env_assertions or []:
        item = check.get("env_assertion") if isinstance(check, dict) else None
        if isinstance(item, dict) and _action_key(item.get("func_name"), item.get("arguments")) not in assertions:
            issues.append(
                RecordingIssue(
                    "unknown_assertion",
                    f"recorded env assertion "
                    f"{_call_text(item.get('func_name'), item.get('arguments'))} is not "
                    f"in task {task.id}",
                )
            )
    infos = set(criteria.communicate_info or []) if criteria else set()
    for check in recorded.communicate_checks or []:
        info = check.get("info") if isinstance(check, dict) else None
        if info is not None and info not in infos:
            issues.append(
                RecordingIssue("unknown_communicate", f"recorded communicate check {info!r} is not in task {task.id}")
            )
    n_nl = len(criteria.nl_assertions or []) if criteria else 0
    recorded_nl = recorded.nl_assertions or []
    if len(recorded_nl) > n_nl:
        issues.append(
            RecordingIssue(
                "unknown_nl_assertion",
                f"{len(recorded_nl)} recorded NL verdicts for {n_nl} NL assertion(s) in task {task.id}",
            )
        )
    basis = list(criteria.reward_basis) if criteria else None
    if recorded.reward_basis is not None and basis is not None and set(recorded.reward_basis) != set(basis):
        issues.append(
            RecordingIssue(
                "basis_differs", f"recorded reward_basis {recorded.reward_basis}, task {task.id} has {basis}"
            )
        )
    return issues


def _against_itself(recorded: RewardInfo) -> list[RecordingIssue]:
    issues: list[RecordingIssue] = []
    reward = recorded.reward
    if reward is None:
        return issues
    if recorded.reward_breakdown:
        product = _recorded_product(recorded.reward_breakdown)
        if product is not None and abs(product - reward) > 1e-6:
            issues.append(
                RecordingIssue(
                    "reward_vs_breakdown",
                    f"recorded reward {reward} but its breakdown {recorded.reward_breakdown} multiplies to {product}",
                )
            )
    basis = set(recorded.reward_basis or [])
    if abs(reward - 1.0) <= 1e-6:
        failed = []
        if "DB" in basis and recorded.db_check is not None and recorded.db_check.db_match is False:
            failed.append("db_match false")
        for name, checks, key in (
            ("ACTION", recorded.action_checks, "action_match"),
            ("COMMUNICATE", recorded.communicate_checks, "met"),
            ("ENV_ASSERTION", recorded.env_assertions, "met"),
            ("NL_ASSERTION", recorded.nl_assertions, "met"),
        ):
            if name in basis and any(isinstance(c, dict) and c.get(key) is False for c in checks or []):
                failed.append(f"an unmet {name} check")
        if failed:
            issues.append(RecordingIssue("reward_vs_checks", f"recorded reward 1 with {', '.join(failed)}"))
    return issues


def _against_messages(recorded: RewardInfo, timeline: Timeline, said: list[tuple[int, str]]) -> list[RecordingIssue]:
    issues: list[RecordingIssue] = []
    names = {c.name for c in timeline.calls}
    for check in recorded.action_checks or []:
        action = check.get("action") if isinstance(check, dict) else None
        if isinstance(action, dict) and check.get("action_match") is True and action.get("name") not in names:
            issues.append(
                RecordingIssue(
                    "match_without_call",
                    f"recorded action {action.get('name')} as matched, but no message calls that tool",
                )
            )
    texts = [t.lower().replace(",", "") for _, t in said]
    for check in recorded.communicate_checks or []:
        info = check.get("info") if isinstance(check, dict) else None
        if isinstance(info, str) and check.get("met") is True and not any(info.lower() in t for t in texts):
            issues.append(
                RecordingIssue(
                    "communicated_without_text", f"recorded {info!r} as communicated, but no agent message says it"
                )
            )
    return issues


# --- the whole explanation -------------------------------------------------------------


@dataclass
class Explanation:
    db_diff: StateDiff | None
    divergence: GoldDivergence | None
    missed: list[MissedAction]
    recording: list[RecordingIssue]
    failed: list[str]

    @property
    def inconsistent_recording(self) -> bool:
        return any(i.inconsistent for i in self.recording)

    def to_json(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "db_diff": self.db_diff.to_json() if self.db_diff is not None else None,
            "divergence": self.divergence.to_json() if self.divergence else None,
            "missed_actions": [m.to_json() for m in self.missed],
            "recording": {"inconsistent": self.inconsistent_recording, "issues": [i.to_json() for i in self.recording]},
        }


def _db_reasons(
    diff: StateDiff | None, div: GoldDivergence | None, missed: list[MissedAction], with_missed: bool, prefix: str = ""
) -> list[str]:
    """What the DB diff says: how much differs, where the run left the gold path, which writes were missed."""
    n_agent, n_user = (len(diff.agent), len(diff.user)) if diff else (0, 0)
    out = [f"{prefix}DB differs from gold at {n_agent} agent path(s) and {n_user} user path(s)"]
    if div is not None:
        out.append(f"left the gold path: {div.message}")
    if with_missed:
        out += [m.message for m in missed if m.tool_type == "write"]
    return out


@dataclass
class Reasons:
    """What a reward component's ``why`` may draw on besides the evaluation."""

    basis: set[str]
    diff: StateDiff | None
    divergence: GoldDivergence | None
    missed: list[MissedAction]


def env_reasons(evaluation: Evaluation, r: Reasons) -> list[str]:
    out = []
    if "DB" in r.basis and evaluation.db_match is False:
        out += _db_reasons(r.diff, r.divergence, r.missed, "ACTION" not in r.basis)
    if "ENV_ASSERTION" in r.basis:
        failed = [c for c in evaluation.env_assertions or [] if c.met is False]
        for check in failed:
            out.append(
                f"env assertion {_call_text(check.assertion.func_name, check.assertion.arguments)} "
                f"not met" + (f" ({check.assertion.message})" if check.assertion.message else "")
            )
        if failed and "DB" not in r.basis and evaluation.db_match is False:
            out += _db_reasons(
                r.diff, r.divergence, r.missed, "ACTION" not in r.basis, prefix="the DB also differs from gold: "
            )
    return out


def action_reasons(evaluation: Evaluation, r: Reasons) -> list[str]:
    return [m.message for m in r.missed] if "ACTION" in r.basis else []


def communicate_reasons(evaluation: Evaluation, r: Reasons) -> list[str]:
    if "COMMUNICATE" not in r.basis:
        return []
    return [f"agent never said {c.info!r}" for c in evaluation.communicate or [] if not c.met]


def nl_reasons(evaluation: Evaluation, r: Reasons) -> list[str]:
    if "NL_ASSERTION" not in r.basis:
        return []
    return [f"NL assertion not met: {c.assertion}" for c in evaluation.nl or [] if not c.met]


def failure_reasons(
    evaluation: Evaluation, diff: StateDiff | None, div: GoldDivergence | None, missed: list[MissedAction]
) -> list[str]:
    """One line per thing that keeps the recomputed reward below 1 (or from being computed): each component's."""
    if evaluation.status == PREMATURE:
        return [f"terminated by '{evaluation.termination}': tau2 gives 0"]
    reasons = Reasons(set(evaluation.reward_basis or []), diff, div, missed)
    out = []
    for component in list(REWARD_COMPONENTS.values()):
        out += component.why(evaluation, reasons)
    aside = f" (not needed: {', '.join(evaluation.decided_by)} at 0 decides)" if evaluation.decided_by else ""
    out += [f"{name} not evaluated{aside}" for name in evaluation.not_evaluated]
    return out


def explain(
    replayed: Replayed,
    evaluation: Evaluation,
    task_in_recording: bool = True,
    known_tasks: dict[str, Task] | None = None,
) -> Explanation:
    """Explain one evaluated simulation (see ``check_recording`` for the two optional arguments)."""
    diff = div = None
    if replayed.gold is not None and db_check_rule(replayed.task) == DB_COMPARED:
        diff = state_diff(replayed.timeline, replayed.gold.state)
        history_len = history_in_trajectory(replayed)
        div = divergence(replayed.timeline, replayed.gold.state, diff, evaluation.actions, history_len)
    missed = missed_actions(evaluation.actions, replayed.timeline.calls)
    recording = check_recording(replayed, evaluation, task_in_recording, known_tasks)
    return Explanation(diff, div, missed, recording, failure_reasons(evaluation, diff, div, missed))
