"""Rules over replayed recordings: what the benchmark (its tools, its user simulator) did to a simulation.

Each rule is one ``SimRule(name, description, check)`` in ``SIM_RULES``; ``check(probe)`` returns
``(step, detail, evidence)`` triples for one replayed simulation. ``SimProbe`` holds the analysis and
computes the assessment (reward, flags) once, for the rules that need it. ``check_simulation`` runs every
rule and returns ``SimFinding`` records (``{"kind": "sim_finding", ...}`` lines of ``--json``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.domains import split_variant
from tau_tui.env.invariants import Invariant, Scope, Violation, invariants, violations
from tau_tui.env.upstream import UpstreamFix, upstream_fixes
from tau_tui.evaluate.report import SimReport
from tau_tui.replay import CallRecord, Change, Timeline


@dataclass(frozen=True)
class SimFinding:
    """One thing the benchmark did to one simulation, at a step (None: the simulation as a whole)."""

    file: str
    sim: str
    task: str
    step: int | None
    rule: str
    detail: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "sim_finding",
            "file": self.file,
            "sim": self.sim,
            "task": self.task,
            "step": self.step,
            "rule": self.rule,
            "detail": self.detail,
            "evidence": self.evidence,
        }


Hit = tuple[int | None, str, dict[str, Any]]


class SimProbe:
    """One replayed simulation, with its assessment computed once on demand."""

    def __init__(self, analyzer: Analyzer, analysis: SimAnalysis):
        self.analyzer = analyzer
        self.analysis = analysis

    @property
    def timeline(self) -> Timeline:
        return self.analysis.timeline

    @cached_property
    def domain(self) -> str:
        """The domain's base name (``telecom`` for ``telecom-workflow``)."""
        return split_variant(self.analysis.domain or "")[0]

    @cached_property
    def report(self) -> SimReport:
        return self.analyzer.assess(self.analysis)

    @cached_property
    def history_len(self) -> int:
        return len(self.analysis.task.history) if self.analysis.task is not None else 0


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
    checks = invariants(domain)
    if not checks:
        return []
    fixes = {fix.tool: fix for fix in upstream_fixes(domain)}
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


def _invariant_violated(probe: SimProbe) -> list[Hit]:
    return [(b.step, b.detail, b.to_json()) for b in invariant_breaks(probe.timeline, probe.domain)]


@dataclass(frozen=True)
class SimRule:
    """One rule over a replayed simulation: its name (the ``rule`` field), what it means, how it is found."""

    name: str
    description: str
    check: Callable[[SimProbe], list[Hit]]


# The registry, in report order: a new rule is one ``register_sim_rule`` call.
SIM_RULES: dict[str, SimRule] = {}


def register_sim_rule(rule: SimRule) -> SimRule:
    if rule.name in SIM_RULES:
        raise ValueError(f"simulation rule {rule.name!r} is already registered")
    SIM_RULES[rule.name] = rule
    return rule


register_sim_rule(
    SimRule(
        "invariant_violated",
        "a write left the DB breaking what the domain's data model promises (domain invariants)",
        _invariant_violated,
    )
)


def check_simulation(probe: SimProbe, rules: Iterable[SimRule] | None = None) -> Iterator[SimFinding]:
    """Every finding of the rules (all registered ones by default) on one replayed simulation."""
    analysis = probe.analysis
    for rule in rules if rules is not None else list(SIM_RULES.values()):
        for step, detail, evidence in rule.check(probe):
            yield SimFinding(
                str(analysis.run.path), analysis.sim.id, analysis.sim.task_id, step, rule.name, detail, evidence
            )
