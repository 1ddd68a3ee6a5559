"""Replaying a trajectory against a fresh environment, with tau2's ``set_state`` semantics.

For each tool call (paired with its result by id): an unknown name is
skipped, a non-mutating tool is skipped, a mutating one is re-executed and its
output compared with the recording (parsed JSON). Where tau2 would raise
(results that do not pair, failing initialisation) we record a finding and
carry on, so a broken recording still shows everything it can.

Two kinds of recorded result are never re-executed, whatever the tool: a
result marked as an injected fault that kept the call from being carried out
(timeout, transient error) is reproduced as that fault (``injected_fault``),
and a call the episode's backend refused (a cassette without a recorded
result) stays refused (``refused``). Every other call counts as an attempt of
its operation; when the task has a fault plan, each attempt is checked against
it (a fault the plan does not give, or a planned fault the recording lacks,
is a finding). A successful READ result naming a discoverable tool makes it
known (``Timeline.discoveries``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from tau_tui.env.discovery import discoverable_tools, kit_of, revealed_tools
from tau_tui.env.environment import Environment, EnvState
from tau_tui.env.episode import refusal_mark
from tau_tui.env.faults import AttemptCounter, FaultPlan, FaultPlanError, InjectedFault, fault_mark
from tau_tui.env.jsonify import UnsupportedResult, parse_content
from tau_tui.env.upstream import UpstreamFix, set_fix
from tau_tui.model.messages import Message, OtherMessage, ParticipantMessage, ToolCall, ToolMessage, UserMessage
from tau_tui.model.nesting import MAX_NESTING
from tau_tui.model.tasks import EnvAssertion, Task
from tau_tui.replay.library_text import library_text_only
from tau_tui.replay.timeline import (
    CallRecord,
    Discovery,
    Finding,
    FindingKind,
    MismatchClass,
    Step,
    Timeline,
    Verdict,
)

EnvFactory = Callable[[bool], Environment]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def initialize(env: Environment, task: Task | None, findings: list[Finding]) -> None:
    """Apply the task's initialisation data and actions (tau2 order), noting failures."""
    state = task.initial_state if task is not None else None
    if state is None:
        return
    if state.initialization_data is not None:
        try:
            env.apply_initialization_data(state.initialization_data)
        except Exception as exc:  # noqa: BLE001
            findings.append(Finding(FindingKind.INIT_FAILED, f"initialization data: {_one_line(exc)}"))
    for action in state.initialization_actions or []:
        try:
            env.run_env_function(action)
        except Exception as exc:  # noqa: BLE001
            findings.append(
                Finding(FindingKind.INIT_FAILED, f"initialization action {action.func_name}: {_one_line(exc)}")
            )


def _describe(name: str, arguments: object, attempt: int | None) -> str:
    return f"{name}({_args_text(arguments)}) attempt {attempt}"


def _args_text(arguments: object) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return repr(arguments)


def same_output(replayed: str | None, recorded: str | None) -> bool:
    """tau2's comparison of a replayed output with the recorded one: equal once parsed."""
    # The same text parses to the same value, unless a NaN in it makes the parsed values differ.
    return (replayed == recorded and isinstance(replayed, str) and "NaN" not in replayed) or parse_content(
        replayed
    ) == parse_content(recorded)


@dataclass(frozen=True)
class OtherSemantics:
    """What classing a mismatch as ``upstream_fix`` needs: fresh environments and the domain's upstream fixes."""

    new_env: EnvFactory
    task: Task | None
    fixes: tuple[UpstreamFix, ...]


class _Replay:
    def __init__(
        self,
        env: Environment,
        messages: list[Message],
        solo: bool,
        plan: FaultPlan | None = None,
        other: OtherSemantics | None = None,
    ):
        self.env = env
        self.messages = messages
        self.solo = solo
        self.plan = plan
        self.other = other
        self.calls: list[CallRecord] = []
        self.findings: list[Finding] = []
        self.steps: list[Step] = []
        self.pending: list[int] = []
        self.attempts = AttemptCounter()
        self.hidden = {side: discoverable_tools(kit) for side, kit in (("assistant", env.agent), ("user", env.user))}
        self.discoveries: list[Discovery] = []
        self._tools: dict[str, tuple[bool, str | None, Any, bool]] = {}

    def tool(self, name: Any) -> tuple[bool, str | None, Any, bool]:
        """(known, side, tool type, mutates) of a tool name: what the environment says, asked once per name."""
        info = self._tools.get(name) if isinstance(name, str) else None
        if info is None:
            env = self.env
            known = env.has_tool(name)
            info = (
                (known, env.side_of(name), env.tool_type(name), env.mutates(name))
                if known
                else (False, None, None, True)
            )
            if isinstance(name, str):
                self._tools[name] = info
        return info

    def find(self, kind: FindingKind, message: str, step: int | None) -> None:
        self.findings.append(Finding(kind, message, step))
        if step is not None and step < len(self.steps):
            self.steps[step].findings.append(len(self.findings) - 1)

    def close_pending(self) -> None:
        for idx in self.pending:
            record = self.calls[idx]
            self.find(
                FindingKind.CALL_WITHOUT_RESULT,
                f"call {record.name!r} (id {record.call.id!r}) has no result",
                record.call_step,
            )
        self.pending = []

    def run(self, initial: EnvState) -> Timeline:
        state = initial
        for index, message in enumerate(self.messages):
            step = Step(index, message, state)
            self.steps.append(step)
            if isinstance(message, ToolMessage):
                state = self.on_result(step, message) or state
                step.state = state
                continue
            self.close_pending()
            if isinstance(message, OtherMessage):
                self.find(FindingKind.UNREADABLE_MESSAGE, message.problem or "unreadable message", index)
            if self.solo and isinstance(message, UserMessage):
                self.find(FindingKind.USER_MESSAGE_IN_SOLO, "user message in a solo-mode run", index)
            if isinstance(message, ParticipantMessage) and message.tool_calls is not None:
                self.on_calls(step, message.tool_calls)
        self.close_pending()
        try:
            self.env.sync()
        except Exception as exc:  # noqa: BLE001
            self.find(FindingKind.SYNC_FAILED, f"final sync: {_one_line(exc)}", None)
        final = self.env.freeze()
        return Timeline(
            self.steps, self.calls, self.findings, initial, final, solo=self.solo, discoveries=self.discoveries
        )

    def on_calls(self, step: Step, tool_calls: list[ToolCall]) -> None:
        seen: set[str] = set()
        for call in tool_calls:
            if call.id in seen:
                self.find(FindingKind.DUPLICATE_ID, f"two calls share the id {call.id!r}", step.index)
            seen.add(call.id)
            known, side, tool_type, _ = self.tool(call.name)
            owner = kit_of(self.env, side) if side is not None else None
            via = owner.wrapped_tool(call.name, call.arguments) if owner is not None else None
            record = CallRecord(
                index=len(self.calls),
                call=call,
                call_step=step.index,
                verdict=Verdict.NO_RESULT,
                tool_type=tool_type,
                side=side,
                discoverable=known and (via is not None or call.name in self.hidden.get(side or "", ())),
                via=via,
            )
            self.calls.append(record)
            step.calls.append(record.index)
            self.pending.append(record.index)
            if call.arguments_cut:
                self.find(
                    FindingKind.NESTED_TOO_DEEP,
                    f"call {call.name!r}: arguments nested deeper than {MAX_NESTING} levels, cut there; "
                    "not re-executed",
                    step.index,
                )
            if not isinstance(call.arguments, dict):
                self.find(
                    FindingKind.BAD_ARGUMENTS,
                    f"call {call.name!r}: arguments are {type(call.arguments).__name__}, not an object",
                    step.index,
                )

    def pair(self, step: Step, message: ToolMessage) -> int | None:
        if not self.pending:
            self.find(FindingKind.RESULT_WITHOUT_CALL, f"tool result {message.id!r} follows no call", step.index)
            return None
        first = self.pending[0]
        if self.calls[first].call.id == message.id:
            return self.pending.pop(0)
        for pos, idx in enumerate(self.pending):
            if self.calls[idx].call.id == message.id:
                self.find(
                    FindingKind.OUT_OF_ORDER,
                    f"result {message.id!r} comes before the result of an earlier call",
                    step.index,
                )
                return self.pending.pop(pos)
        self.find(
            FindingKind.ID_MISMATCH,
            f"result id {message.id!r} does not match call id {self.calls[first].call.id!r}",
            step.index,
        )
        return self.pending.pop(0)

    def on_result(self, step: Step, message: ToolMessage) -> EnvState | None:
        idx = self.pair(step, message)
        if idx is None:
            return None
        record = self.calls[idx]
        record.result_step = step.index
        record.recorded = message.text
        record.recorded_error = bool(message.error)
        step.executed = idx
        call = record.call
        refusal = refusal_mark(message)
        if refusal is not None:
            record.refusal = refusal
            record.verdict = Verdict.REFUSED
            return None
        attempt = record.attempt = self.attempts.next(call.name, call.arguments)
        fault = self.check_fault(step, record, message, attempt)
        self.discover(step, record, message)
        if fault is not None and fault.withheld:
            record.replayed, record.replayed_error = fault.text(), True
            record.verdict = Verdict.INJECTED_FAULT
            return None
        known, _, _, mutates = self.tool(call.name)
        if not known:
            record.verdict = Verdict.SKIPPED_UNKNOWN
            return None
        if not mutates:
            record.verdict = Verdict.SKIPPED_READ
            return None
        if call.arguments_cut:  # the write cannot be replayed as recorded: a disagreement, never a guess
            record.replayed = f"Error: arguments nested deeper than {MAX_NESTING} levels: not re-executed"
            record.replayed_error = True
            record.verdict = Verdict.MISMATCH
            record.mismatch_class = MismatchClass.DIVERGENCE
            return None
        before = step.state
        try:
            result = self.env.call(call)
            record.replayed, record.replayed_error = result.text, result.error
        except UnsupportedResult as exc:
            record.replayed, record.replayed_error = f"Error: {exc}", True
            self.find(FindingKind.UNSUPPORTED_RESULT, f"call {call.name!r}: {exc}", step.index)
        if same_output(record.replayed, record.recorded):
            record.verdict = Verdict.REPLAYED
        else:
            record.verdict = Verdict.MISMATCH
            self.classify(record, before)
        return self.env.freeze()

    def classify(self, record: CallRecord, before: EnvState) -> None:
        """Why a mismatch differs: only in library text, as the tool's other upstream semantics, or not."""
        library = library_text_only(record.recorded, record.replayed)
        if library is not None:
            record.mismatch_class = MismatchClass.LIBRARY_TEXT
            record.mismatch_note = "differs only in " + "; ".join(library)
            return
        for fix in self.other.fixes if self.other is not None else ():
            if fix.tool == record.name and self.matches_other_semantics(record, fix, before):
                record.mismatch_class = MismatchClass.UPSTREAM_FIX
                record.upstream = fix
                record.mismatch_note = (
                    f"the recording matches {fix.tool} before the upstream fix (tau2 1.0.1; {fix.reference})"
                    if fix.name in self.env.upstream_fixes
                    else f"the recording matches {fix.tool} as fixed upstream ({fix.reference}): {fix.summary}"
                )
                return
        record.mismatch_class = MismatchClass.DIVERGENCE

    def matches_other_semantics(self, record: CallRecord, fix: UpstreamFix, before: EnvState) -> bool:
        """Whether the call, re-run from the state ``before`` it with ``fix`` toggled, gives the recorded output.

        It runs on a fresh environment, so the replay's own state never sees it.
        """
        assert self.other is not None
        env = self.other.new_env(self.solo)
        env.bind_task(self.other.task)
        if not env.restore(before) or not set_fix(env, fix, fix.name not in self.env.upstream_fixes):
            return False
        try:
            output = env.call(record.call).text
        except UnsupportedResult:
            return False
        return same_output(output, record.recorded) or library_text_only(record.recorded, output) is not None

    def check_fault(self, step: Step, record: CallRecord, message: ToolMessage, attempt: int) -> InjectedFault | None:
        """The recorded injected fault of this result (the ``attempt``-th such call), checked against the task's
        fault plan."""
        call = record.call
        mark = fault_mark(message)
        recorded = InjectedFault.from_mark(mark, call.name) if mark is not None else None
        if mark is not None:
            record.fault = mark
        if self.plan is None:
            return recorded
        planned = self.plan.fault_for(call.name, call.arguments, attempt)
        if recorded is not None and (planned is None or planned.kind != recorded.kind):
            self.find(
                FindingKind.FAULT_NOT_IN_PLAN,
                f"{_describe(call.name, call.arguments, attempt)}: the recording has an injected "
                f"{recorded.kind.value}, the task's fault plan gives {planned.kind.value if planned else 'none'}",
                step.index,
            )
        elif recorded is None and planned is not None:
            self.find(
                FindingKind.FAULT_NOT_RECORDED,
                f"{_describe(call.name, call.arguments, attempt)}: the task's fault plan injects a "
                f"{planned.kind.value}, the recording has a normal result",
                step.index,
            )
        return recorded

    def discover(self, step: Step, record: CallRecord, message: ToolMessage) -> None:
        """Discoverable tools this result makes known (first time only): read about, unlocked or given."""
        side = "user" if record.call.requestor == "user" else "assistant"
        owner = kit_of(self.env, record.side) if record.side is not None else None
        if owner is not None:
            for target_side, name, how in owner.unlocks(
                record.name, record.call.arguments, message.text, bool(message.error)
            ):
                if not any(d.tool == name and d.side == target_side for d in self.discoveries):
                    record.revealed.append(name)
                    self.discoveries.append(Discovery(name, step.index, record.index, target_side, how))
        if not self.hidden.get(side):
            return
        known = {d.tool for d in self.discoveries if d.side == side}
        found = [
            name
            for name in revealed_tools(self.env, record.name, side, message.text, bool(message.error))
            if name not in known
        ]
        record.revealed += found
        self.discoveries.extend(Discovery(name, step.index, record.index, side) for name in found)


@dataclass
class InitCache:
    """Initialised states per task, so simulations of one task skip re-running its setup.

    Setup (initialisation data and actions) is deterministic for a task and a
    domain, so its resulting snapshot can be shared; environments that cannot
    restore a snapshot (the tau2 adapter) always run it.
    """

    states: dict[Any, tuple[EnvState, list[Finding]]] = field(default_factory=dict)


def _initialized(
    env: Environment, task: Task | None, cache: InitCache | None, key: Any
) -> tuple[EnvState, list[Finding]]:
    if cache is not None and key is not None and key in cache.states:
        cached, cached_findings = cache.states[key]
        if env.restore(cached):
            return cached, list(cached_findings)
    findings: list[Finding] = []
    if task is None:
        findings.append(Finding(FindingKind.TASK_NOT_FOUND, "task not found: replaying from the pristine DB"))
    initialize(env, task, findings)
    state = env.freeze()
    if cache is not None and key is not None:
        cache.states[key] = (state, list(findings))
    return state, findings


def replay(
    messages: list[Message],
    task: Task | None,
    new_env: EnvFactory,
    solo: bool = False,
    cache: InitCache | None = None,
    cache_key: Any = None,
    fixes: tuple[UpstreamFix, ...] = (),
) -> Timeline:
    """Build the timeline of ``messages`` (which include the task's history, as tau2 stores them).

    ``cache``/``cache_key`` (e.g. the task's fingerprint and the solo flag) let
    simulations of the same task share the initialised state. ``fixes``: the
    domain's upstream fixes, so that a mismatch of one of their tools whose
    recording matches the tool's other semantics is classed ``upstream_fix``
    (whether ``new_env`` applies them is its own business: ``Environment.upstream_fixes``).
    """
    env = new_env(solo)
    env.bind_task(task)
    initial, findings = _initialized(env, task, cache, cache_key)
    try:
        plan = FaultPlan.of_task(task)
    except FaultPlanError as exc:
        plan = None
        findings.append(Finding(FindingKind.BAD_FAULT_PLAN, str(exc)))
    run = _Replay(env, messages, solo, plan, OtherSemantics(new_env, task, fixes) if fixes else None)
    run.findings.extend(findings)
    timeline = run.run(initial)
    timeline.env = env
    return timeline


@dataclass
class GoldResult:
    """The evaluator's target state: init + task history + expected actions (no sync, errors ignored)."""

    state: EnvState
    agent_hash: str | None
    user_hash: str | None
    action_errors: list[tuple[int, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def gold_state(task: Task, new_env: EnvFactory, cache: InitCache | None = None, cache_key: Any = None) -> GoldResult:
    """The gold state of ``task``; ``cache``/``cache_key`` (a non-solo key) share the initialised state with
    replays of the task, as ``replay`` does."""
    env = new_env(False)
    env.bind_task(task)
    initial, findings = _initialized(env, task, cache, cache_key)
    sub = _Replay(env, task.history, False)
    sub.run(initial)
    findings.extend(sub.findings)
    for record in sub.calls:
        if record.verdict is Verdict.MISMATCH:
            findings.append(Finding(FindingKind.GOLD_FAILED, f"task history call {record.name!r} replays differently"))
    errors: list[tuple[int, str]] = []
    for i, action in enumerate(task.expected_actions):
        try:
            env.make_tool_call(action.name, action.requestor, action.arguments)
        except Exception as exc:  # noqa: BLE001 - tau2 logs and ignores failing gold actions
            errors.append((i, _one_line(exc)))
    state = env.freeze()
    return GoldResult(state, state.agent_hash(), state.user_hash(), errors, findings)


def run_assertions(timeline: Timeline, task: Task | None) -> list[tuple[EnvAssertion, bool | None, str | None]]:
    """Env assertions of the task on the replayed environment: (assertion, met, error)."""
    env = timeline.env
    criteria = task.evaluation_criteria if task is not None else None
    if env is None or criteria is None or not criteria.env_assertions:
        return []
    out: list[tuple[EnvAssertion, bool | None, str | None]] = []
    for assertion in criteria.env_assertions:
        try:
            out.append((assertion, env.run_assertion(assertion), None))
        except Exception as exc:  # noqa: BLE001 - reported per assertion
            out.append((assertion, None, _one_line(exc)))
    return out
