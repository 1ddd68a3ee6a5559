"""The replay timeline: one step per message, a verdict per tool call, state per step."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tau_tui.env.environment import Environment, EnvState
from tau_tui.env.jsonify import parse_content
from tau_tui.env.tools import ToolType
from tau_tui.env.upstream import UpstreamFix
from tau_tui.model.messages import Message, ToolCall
from tau_tui.replay.diff import Change, diff_states


class Verdict(str, Enum):
    """What the replay did with one recorded tool call."""

    REPLAYED = "replayed"  # mutating call re-executed, same output as recorded
    MISMATCH = "mismatch"  # re-executed, output differs from the recording
    SKIPPED_READ = "skipped_read"  # non-mutating tool: not re-executed
    SKIPPED_UNKNOWN = "skipped_unknown"  # not a tool of this domain (hallucinated)
    INJECTED_FAULT = "injected_fault"  # an injected fault kept the call from being carried out: reproduced, not re-run
    REFUSED = "refused"  # the episode's backend refused the call (no recorded result in a cassette): never run
    NO_RESULT = "no_result"  # the recording has no result for this call


class MismatchClass(str, Enum):
    """Why a re-executed call's output differs from the recording (the verdict stays ``mismatch``: strict, as tau2)."""

    DIVERGENCE = "divergence"  # the tool did something else than the recording says
    LIBRARY_TEXT = "library_text"  # only in text a library embeds (pydantic's docs-URL version): replay/library_text.py
    UPSTREAM_FIX = (
        "upstream_fix"  # the recording matches the tool as fixed (or not yet fixed) upstream: env/upstream.py
    )


MISMATCH_CLASS_KEYS = tuple(c.value for c in MismatchClass)

VERDICT_KEYS = ("replayed", "mismatch", "skipped_read", "skipped_unknown")
# Counted only when they occur (recordings made without fault plans or cassettes never have them).
EPISODE_VERDICT_KEYS = ("injected_fault", "refused")


class FindingKind(str, Enum):
    """The kinds of problem the replay finds in a recording."""

    RESULT_WITHOUT_CALL = "result_without_call"
    ID_MISMATCH = "id_mismatch"
    OUT_OF_ORDER = "out_of_order_result"
    CALL_WITHOUT_RESULT = "call_without_result"
    DUPLICATE_ID = "duplicate_id"
    BAD_ARGUMENTS = "bad_arguments"
    UNREADABLE_MESSAGE = "unreadable_message"
    USER_MESSAGE_IN_SOLO = "user_message_in_solo"
    UNSUPPORTED_RESULT = "unsupported_result"
    INIT_FAILED = "init_failed"
    TASK_NOT_FOUND = "task_not_found"
    GOLD_FAILED = "gold_failed"
    SYNC_FAILED = "sync_failed"
    FAULT_NOT_IN_PLAN = "fault_not_in_plan"  # a recorded injected fault the task's fault plan does not give
    FAULT_NOT_RECORDED = "fault_not_recorded"  # the task's fault plan faults a call the recording shows as normal
    BAD_FAULT_PLAN = "bad_fault_plan"  # the task's fault plan cannot be read
    NESTED_TOO_DEEP = "nested_too_deep"  # arguments nested past MAX_NESTING: cut, and a write is not re-executed


# Findings where tau2's own replay raises instead of going on.
FATAL_IN_TAU2 = {
    FindingKind.RESULT_WITHOUT_CALL,
    FindingKind.ID_MISMATCH,
    FindingKind.OUT_OF_ORDER,
    FindingKind.CALL_WITHOUT_RESULT,
    FindingKind.USER_MESSAGE_IN_SOLO,
    FindingKind.UNSUPPORTED_RESULT,
    FindingKind.INIT_FAILED,
    FindingKind.SYNC_FAILED,
}


@dataclass
class Finding:
    """A problem the replay found in the recording, at a step when it has one."""

    kind: FindingKind
    message: str
    step: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "step": self.step, "message": self.message}


@dataclass
class CallRecord:
    """One tool call of the trajectory and what replay made of it."""

    index: int
    call: ToolCall
    call_step: int
    verdict: Verdict
    result_step: int | None = None
    recorded: str | None = None
    recorded_error: bool = False
    replayed: str | None = None
    replayed_error: bool | None = None
    tool_type: ToolType | None = None
    side: str | None = None  # which toolkit declares the tool
    attempt: int | None = None  # n-th call of this tool with these arguments in the episode (counted at its result)
    fault: dict[str, Any] | None = None  # the recorded ``injected_fault`` mark (kind, attempt, rule, seconds)
    refusal: dict[str, Any] | None = None  # the recorded ``refused`` mark (reason, tool, ...)
    revealed: list[str] = field(default_factory=list)  # discoverable tools this call's result made known
    discoverable: bool = False  # the tool is a discoverable one (or a wrapper call of one: ``via``)
    via: str | None = None  # the discoverable tool a wrapper call runs (banking's call_discoverable_*_tool)
    mismatch_class: MismatchClass | None = None  # a mismatch's class (None: not a mismatch)
    mismatch_note: str | None = None  # what the difference is, for a library_text or upstream_fix class
    upstream: UpstreamFix | None = None  # the upstream fix an upstream_fix mismatch is about

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def requestor(self) -> str:
        return self.call.requestor

    @property
    def is_write(self) -> bool:
        return self.verdict in (Verdict.REPLAYED, Verdict.MISMATCH)

    def mismatch_json(self) -> dict[str, Any]:
        """A mismatch's class for its JSON record: ``mismatch_class``, its note, and the upstream fix it is about."""
        out: dict[str, Any] = {
            "mismatch_class": (self.mismatch_class or MismatchClass.DIVERGENCE).value,
            "mismatch_note": self.mismatch_note,
        }
        if self.upstream is not None:
            out["upstream_issue"] = self.upstream.issue
            out["upstream_fix"] = self.upstream.name
        return out

    def recorded_value(self) -> Any:
        return parse_content(self.recorded)

    def replayed_value(self) -> Any:
        return parse_content(self.replayed)


@dataclass(frozen=True)
class Discovery:
    """A discoverable tool became known: at the result message ``step`` of call ``call``."""

    tool: str
    step: int
    call: int
    side: str = "assistant"
    how: str = "read"  # read: a READ result named it; unlock: the agent unlocked it; give: given to the user


@dataclass
class Step:
    """One message of the trajectory, with the state after it."""

    index: int
    message: Message
    state: EnvState
    calls: list[int] = field(default_factory=list)  # calls this message makes
    executed: int | None = None  # the call whose result this message carries
    findings: list[int] = field(default_factory=list)

    @property
    def role(self) -> str:
        return self.message.role


@dataclass
class Timeline:
    """Replay of one simulation: steps, calls, findings, and state at any step."""

    steps: list[Step]
    calls: list[CallRecord]
    findings: list[Finding]
    initial: EnvState
    final: EnvState
    solo: bool = False
    env: Environment | None = field(default=None, repr=False)
    discoveries: list[Discovery] = field(default_factory=list)
    _diffs: dict[int, tuple[list[Change], list[Change]]] = field(default_factory=dict, repr=False)

    def state_at(self, step: int) -> EnvState:
        """State after message ``step`` (``-1``: after initialisation, before any message)."""
        if step < 0:
            return self.initial
        return self.steps[step].state

    def changes_at(self, step: int) -> tuple[list[Change], list[Change]]:
        """(agent DB changes, user DB changes) made by message ``step``."""
        if step not in self._diffs:
            before, after = self.state_at(step - 1), self.state_at(step)
            self._diffs[step] = (diff_states(before.agent, after.agent), diff_states(before.user, after.user))
        return self._diffs[step]

    def verdict_counts(self) -> dict[str, int]:
        """Calls per verdict (``injected_fault`` and ``refused`` only when some call has them), recorded errors."""
        counts = {key: 0 for key in VERDICT_KEYS}
        counts["recorded_error"] = 0
        for record in self.calls:
            verdict = record.verdict.value
            if verdict in counts:
                counts[verdict] += 1
            elif verdict in EPISODE_VERDICT_KEYS:
                counts[verdict] = 1
            if record.recorded_error:
                counts["recorded_error"] += 1
        return counts

    @property
    def mismatches(self) -> list[CallRecord]:
        return [c for c in self.calls if c.verdict is Verdict.MISMATCH]

    def mismatch_classes(self) -> dict[str, int]:
        """Mismatching calls per class (every class, zeros included)."""
        counts = dict.fromkeys(MISMATCH_CLASS_KEYS, 0)
        for record in self.mismatches:
            counts[(record.mismatch_class or MismatchClass.DIVERGENCE).value] += 1
        return counts

    @property
    def injected_faults(self) -> list[CallRecord]:
        """Calls whose recorded result is an injected fault (withheld or slow)."""
        return [c for c in self.calls if c.fault is not None]

    @property
    def refusals(self) -> list[CallRecord]:
        """Calls the episode's backend refused (a cassette with no recorded result, and the calls after it)."""
        return [c for c in self.calls if c.verdict is Verdict.REFUSED]

    def discovered_at(self, tool: str) -> int | None:
        """The step at which a discoverable tool became known (None: never in this trajectory)."""
        return next((d.step for d in self.discoveries if d.tool == tool), None)

    @property
    def strict_ok(self) -> bool:
        """Whether tau2's strict replay would go through without raising.

        Calls kept from running by an injected fault, and calls a cassette refused, count as reproduced:
        tau2 knows neither and would re-run such a call if its tool mutates state.
        """
        return not self.mismatches and not any(f.kind in FATAL_IN_TAU2 for f in self.findings)
