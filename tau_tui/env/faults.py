"""Fault plans: faults injected into an episode's tool calls, decided per operation and attempt.

A fault plan is part of a task instance (the task's ``fault_plan`` key) and is
never shown to the agent::

    "fault_plan": {
      "seed": 41,
      "faults": [
        {"tool": "lookup_stock", "where": {"warehouse": "south"}, "attempt": 1, "fault": "timeout", "seconds": 30},
        {"tool": "allocate_line", "arguments": {"order_id": "SO-5002", "line_no": 1, "warehouse": "south",
                                                "quantity": 12}, "fault": "transient_error"},
        {"tool": "lookup_stock", "attempt": null, "fault": "slow_response", "seconds": 9, "rate": 0.2}
      ]
    }

A rule names a tool and which calls of it it applies to: ``arguments`` (exactly
these arguments), ``where`` (these arguments with these values, others free)
or neither (any arguments); ``attempt`` is the n-th call of that tool with the
same arguments in the episode (1-based, default 1; ``null``: every attempt).
With a ``rate`` below 1 the rule fires only when a hash of the plan's seed,
the rule's position, the tool, the arguments and the attempt falls under the
rate. The first rule that fires decides. So the fault on an operation depends
on the operation and its attempt number alone — never on which other calls
came first — and the fault seed is separate from the model's sampling seed.

Faults:

- ``timeout``: no answer within ``seconds`` (default 30); the call is not carried out.
- ``transient_error``: the service turns the call away for now (503); not carried out.
- ``slow_response``: the call is carried out and answers after ``seconds`` (default 8);
  the delay is recorded, nothing waits for it.

The tool message of a faulted call carries an ``injected_fault`` mark (kind,
tool, attempt, rule, seconds); replay reads it and reproduces the fault
instead of re-executing the call.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tau_tui.model.messages import Message, ToolMessage
from tau_tui.model.tasks import Task

FAULT_PLAN_KEY = "fault_plan"  # on a task
FAULT_KEY = "injected_fault"  # on a tool message
INSTANCE_SEED_KEY = "instance_seed"  # on a task generated from a seed


class FaultKind(str, Enum):
    """The faults a fault plan injects into tool calls."""

    TIMEOUT = "timeout"
    TRANSIENT_ERROR = "transient_error"
    SLOW_RESPONSE = "slow_response"


WITHHELD = frozenset({FaultKind.TIMEOUT, FaultKind.TRANSIENT_ERROR})  # faults where the call is not carried out
DEFAULT_SECONDS = {FaultKind.TIMEOUT: 30.0, FaultKind.SLOW_RESPONSE: 8.0}


class FaultPlanError(ValueError):
    """A fault plan that cannot be read; ``str()`` is one line."""


def canonical_arguments(arguments: Any) -> str:
    """The arguments of a call as one comparable text (key order never matters)."""
    return json.dumps(arguments, sort_keys=True, default=str)


@dataclass(frozen=True)
class InjectedFault:
    """One fault injected into one call."""

    kind: FaultKind
    tool: str
    attempt: int
    rule: int | None = None
    seconds: float | None = None
    message: str | None = None

    @property
    def withheld(self) -> bool:
        """Whether the call was not carried out (the caller got an error instead)."""
        return self.kind in WITHHELD

    def text(self) -> str:
        """What the caller receives for a withheld call (tau2's error shape: ``Error: ...``)."""
        if self.message:
            return f"Error: {self.message}"
        if self.kind is FaultKind.TIMEOUT:
            return f"Error: timeout: {self.tool} did not respond within {self.seconds or 0:g} seconds"
        return f"Error: service unavailable: {self.tool} failed with a temporary error (503); the request was not processed"

    def mark(self) -> dict[str, Any]:
        """The ``injected_fault`` mark stored on the tool message."""
        out: dict[str, Any] = {"kind": self.kind.value, "tool": self.tool, "attempt": self.attempt, "rule": self.rule}
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.message:
            out["message"] = self.message
        return out

    @classmethod
    def from_mark(cls, mark: Any, tool: str) -> InjectedFault | None:
        """The fault a recorded mark describes (None when the mark is unreadable)."""
        if not isinstance(mark, dict):
            return None
        try:
            kind = FaultKind(mark.get("kind"))
        except ValueError:
            return None
        attempt = mark.get("attempt")
        seconds = mark.get("seconds")
        return cls(
            kind,
            str(mark.get("tool") or tool),
            attempt if isinstance(attempt, int) else 0,
            mark.get("rule") if isinstance(mark.get("rule"), int) else None,
            float(seconds) if isinstance(seconds, (int, float)) else None,
            mark.get("message") if isinstance(mark.get("message"), str) else None,
        )


def fault_mark(message: Message) -> dict[str, Any] | None:
    """The ``injected_fault`` mark of a tool message, if it has one."""
    if not isinstance(message, ToolMessage):
        return None
    mark = (message.model_extra or {}).get(FAULT_KEY)
    return mark if isinstance(mark, dict) else None


def is_withheld_fault(message: Message) -> bool:
    """A tool message standing for a call that an injected fault kept from being carried out."""
    mark = fault_mark(message)
    fault = InjectedFault.from_mark(mark, "") if mark is not None else None
    return fault is not None and fault.withheld


@dataclass(frozen=True)
class FaultRule:
    """One rule of a fault plan: which calls of a tool get which fault, on which attempt, how often."""

    tool: str
    fault: FaultKind
    arguments: str | None = None  # canonical text of the exact arguments
    where: tuple[tuple[str, str], ...] | None = None  # (name, canonical value) pairs
    attempt: int | None = 1
    rate: float = 1.0
    seconds: float | None = None
    message: str | None = None

    def matches(self, tool: str, arguments: Any, attempt: int) -> bool:
        if tool != self.tool or (self.attempt is not None and attempt != self.attempt):
            return False
        if self.arguments is not None:
            return canonical_arguments(arguments) == self.arguments
        if self.where is not None:
            if not isinstance(arguments, dict):
                return False
            return all(
                name in arguments and canonical_arguments(arguments[name]) == value for name, value in self.where
            )
        return True


def _draw(seed: int, rule: int, tool: str, arguments: Any, attempt: int) -> float:
    """A number in [0, 1) fixed by the seed and the operation alone (not by call order)."""
    text = f"{seed}\x1f{rule}\x1f{tool}\x1f{canonical_arguments(arguments)}\x1f{attempt}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _rule(index: int, raw: Any) -> FaultRule:
    where = f"fault_plan.faults[{index}]"
    if not isinstance(raw, dict):
        raise FaultPlanError(f"{where}: expected an object")
    known = {"tool", "fault", "arguments", "where", "attempt", "rate", "seconds", "message"}
    extra = sorted(set(raw) - known)
    if extra:
        raise FaultPlanError(f"{where}: unknown key {extra[0]!r}")
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        raise FaultPlanError(f"{where}: 'tool' must name a tool")
    try:
        kind = FaultKind(raw.get("fault"))
    except ValueError:
        raise FaultPlanError(f"{where}: 'fault' must be one of {', '.join(k.value for k in FaultKind)}") from None
    if "arguments" in raw and "where" in raw:
        raise FaultPlanError(f"{where}: give 'arguments' or 'where', not both")
    arguments = raw.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise FaultPlanError(f"{where}: 'arguments' must be an object")
    subset = raw.get("where")
    if subset is not None and not isinstance(subset, dict):
        raise FaultPlanError(f"{where}: 'where' must be an object")
    attempt = raw.get("attempt", 1)
    if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1):
        raise FaultPlanError(f"{where}: 'attempt' must be a whole number from 1, or null for every attempt")
    rate = raw.get("rate", 1.0)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate <= 1.0:
        raise FaultPlanError(f"{where}: 'rate' must be a number from 0 to 1")
    seconds = raw.get("seconds", DEFAULT_SECONDS.get(kind))
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0):
        raise FaultPlanError(f"{where}: 'seconds' must be a non-negative number")
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        raise FaultPlanError(f"{where}: 'message' must be text")
    return FaultRule(
        tool=tool,
        fault=kind,
        arguments=canonical_arguments(arguments) if arguments is not None else None,
        where=tuple(sorted((k, canonical_arguments(v)) for k, v in subset.items())) if subset is not None else None,
        attempt=attempt,
        rate=float(rate),
        seconds=float(seconds) if seconds is not None else None,
        message=message,
    )


@dataclass(frozen=True)
class FaultPlan:
    """The faults of one task instance, and the seed of its rate-based rules."""

    rules: tuple[FaultRule, ...]
    seed: int = 0
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def parse(cls, raw: Any) -> FaultPlan:
        if not isinstance(raw, dict):
            raise FaultPlanError("fault_plan: expected an object with 'faults' (and optionally 'seed')")
        extra = sorted(set(raw) - {"seed", "faults", "note"})
        if extra:
            raise FaultPlanError(f"fault_plan: unknown key {extra[0]!r}")
        seed = raw.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise FaultPlanError("fault_plan.seed: expected a whole number")
        faults = raw.get("faults", [])
        if not isinstance(faults, list):
            raise FaultPlanError("fault_plan.faults: expected a list")
        return cls(tuple(_rule(i, r) for i, r in enumerate(faults)), seed, dict(raw))

    @classmethod
    def of_task(cls, task: Task | None) -> FaultPlan | None:
        """The task's fault plan (None when it has none); ``FaultPlanError`` when it is malformed."""
        raw = (getattr(task, "model_extra", None) or {}).get(FAULT_PLAN_KEY) if task is not None else None
        return None if raw is None else cls.parse(raw)

    def fault_for(self, tool: str, arguments: Any, attempt: int) -> InjectedFault | None:
        """The fault of the ``attempt``-th call of ``tool`` with ``arguments`` (None: it goes through)."""
        for index, rule in enumerate(self.rules):
            if not rule.matches(tool, arguments, attempt):
                continue
            if rule.rate < 1.0 and _draw(self.seed, index, tool, arguments, attempt) >= rule.rate:
                continue
            return InjectedFault(rule.fault, tool, attempt, index, rule.seconds, rule.message)
        return None


_PLAIN = frozenset({str, int, bool, type(None)})


def _plain_key(arguments: Any) -> tuple[Any, ...] | None:
    """A cheaper stand-in for ``canonical_arguments`` of an object of strings, integers, booleans and nulls:
    two such objects have the same canonical JSON exactly when they have the same keys, value types and
    values. None for any other arguments (a tuple never equals a canonical text, so the two never mix up)."""
    if type(arguments) is not dict:
        return None
    if not _PLAIN.issuperset(map(type, arguments.values())) or not all(type(key) is str for key in arguments):
        return None
    items = sorted(arguments.items())  # the keys are unique strings, so no two values are ever compared
    return tuple(items), tuple(type(value) for _, value in items)


class AttemptCounter:
    """How many times each operation (tool + arguments) was called in this episode."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, tuple[Any, ...] | str]] = Counter()

    def next(self, tool: str, arguments: Any) -> int:
        """Count one more call of this operation and return its attempt number (1 for the first)."""
        key = (tool, _plain_key(arguments) or canonical_arguments(arguments))
        self.counts[key] += 1
        return self.counts[key]

    def reset(self) -> None:
        self.counts.clear()


def task_seeds(task: Task | None, sampling: int | None) -> dict[str, int | None]:
    """The three seeds of an episode, kept apart: instance generation, faults, model sampling."""
    extra = (getattr(task, "model_extra", None) or {}) if task is not None else {}
    plan = extra.get(FAULT_PLAN_KEY)
    fault_seed = plan.get("seed", 0) if isinstance(plan, dict) else None
    instance = extra.get(INSTANCE_SEED_KEY)
    return {
        "instance": instance if isinstance(instance, int) else None,
        "faults": fault_seed if isinstance(fault_seed, int) else None,
        "sampling": sampling,
    }
