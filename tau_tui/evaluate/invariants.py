"""Domain invariants on a replayed trajectory: which write broke what the data model promises.

``invariant_breaks(timeline, domain)`` runs the domain's invariants (``tau_tui.env.invariants``) on the
replayed state after every successful write, on the entities that write touched, and names the upstream
fix registered for the tool when there is one (tau2 1.0.1's ``modify_pending_order_items``: tau2-bench#317).
It is also a process detector (``invariant_violated``), so the break is marked on the trajectory and counted
in the runs table like every other flag; the doctor's ``invariant_violated`` rule reports the same breaks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tau_tui.domains import split_variant
from tau_tui.env.invariants import Invariant, Scope, Violation, invariants, violations
from tau_tui.env.upstream import UpstreamFix, upstream_fixes
from tau_tui.evaluate.diagnostics import Detector, Flag, register_detector
from tau_tui.replay import CallRecord, Change, Timeline


def scope_of(changes: Iterable[Change]) -> Scope:
    """The entities a write touched, by top-level collection (None: a change above entity level)."""
    out: dict[str, set[Any]] = {}
    for change in changes:
        if len(change.path) < 2:
            return None
        out.setdefault(str(change.path[0]), set()).add(change.path[1])
    return out


@dataclass(frozen=True)
class InvariantBreak:
    """An invariant a write broke: the call, where, and the upstream fix of the tool when one is registered."""

    call: CallRecord
    invariant: Invariant
    violation: Violation
    fix: UpstreamFix | None

    @property
    def step(self) -> int:
        return self.call.result_step if self.call.result_step is not None else self.call.call_step

    @property
    def detail(self) -> str:
        text = f"{self.invariant.name}: {self.violation.where}: {self.violation.message} (after {self.call.name})"
        if self.fix is not None:
            text += f"; a known tau2 1.0.1 bug of {self.fix.tool} ({self.fix.reference}): {self.fix.summary}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant.name,
            "where": self.violation.where,
            "message": self.violation.message,
            "tool": self.call.name,
            "call_step": self.call.call_step,
            "upstream_issue": self.fix.issue if self.fix is not None else None,
        }


def invariant_breaks(timeline: Timeline, domain: str) -> list[InvariantBreak]:
    """Every invariant of ``domain`` a successful write of the timeline breaks, at that write's result step.

    Each violation (invariant, place, message) is reported once, at the first write that makes it.
    """
    checks = invariants(split_variant(domain)[0])
    if not checks:
        return []
    fixes = {fix.tool: fix for fix in upstream_fixes(split_variant(domain)[0])}
    seen: set[tuple[str, str, str]] = set()
    out: list[InvariantBreak] = []
    for call in timeline.calls:
        if not call.is_write or call.replayed_error or call.result_step is None:
            continue
        agent_changes, user_changes = timeline.changes_at(call.result_step)
        state = timeline.state_at(call.result_step)
        for invariant in checks:
            changes = agent_changes if invariant.side == "agent" else user_changes
            if not changes:
                continue
            db = state.agent if invariant.side == "agent" else state.user
            for violation in violations(invariant, db, scope_of(changes)):
                key = (invariant.name, violation.where, violation.message)
                if key not in seen:
                    seen.add(key)
                    out.append(InvariantBreak(call, invariant, violation, fixes.get(call.name)))
    return out


def invariant_flags(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    env = timeline.env
    if env is None:
        return []
    return [
        Flag("invariant_violated", b.step, b.detail)
        for b in invariant_breaks(timeline, env.domain_name)
        if b.step >= start
    ]


register_detector(
    Detector(
        "invariant_violated",
        "I",
        "a write broke a domain invariant (what the data model promises), naming the upstream bug if known",
        invariant_flags,
    )
)
