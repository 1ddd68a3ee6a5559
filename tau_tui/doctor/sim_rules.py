"""Rules over replayed recordings: what the benchmark (its tools, its user simulator) did to a simulation.

Each rule is one ``SIM_RULES.add(name, None, description, check, advice)`` call: ``SIM_RULES`` is the doctor's one
registry's (``rules.RULES``) view of the simulation rules; ``check(probe)`` returns
``(step, detail, evidence)`` triples for one replayed simulation. ``SimProbe`` holds the analysis and
computes the assessment (reward, flags) once, for the rules that need it. ``check_simulation`` runs every
rule and returns ``SimFinding`` records (``{"kind": "sim_finding", ...}`` lines of ``--json``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.calibrate.gold import GoldChecker
from tau_tui.doctor.rules import SIMULATION, Advice, Reach, Remedy, Rule, RuleView, advice_json
from tau_tui.domains import DomainError, split_variant
from tau_tui.evaluate.compliance import SUGGESTED_SOURCE
from tau_tui.evaluate.diagnostics import Flag
from tau_tui.evaluate.invariants import invariant_breaks
from tau_tui.evaluate.report import SimReport
from tau_tui.evaluate.reward import Evaluation, evaluate, is_success
from tau_tui.evaluate.scoring import ScoredSimulation
from tau_tui.model.results import SCORED_TERMINATIONS
from tau_tui.replay import Timeline


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
            **advice_json(self.rule),
            "evidence": self.evidence,
        }


Hit = tuple[int | None, str, dict[str, Any]]


class GoldVerdicts:
    """The gold check's reasons per task (memoised over a whole examination): is the task itself reachable?"""

    def __init__(self) -> None:
        self._reasons: dict[tuple[str, str], list[str]] = {}

    def reasons(self, analyzer: Analyzer, analysis: SimAnalysis) -> list[str]:
        """Why the reference solution of the simulation's task scores < 1 ([] when it reaches 1)."""
        task = analysis.task
        if task is None or analysis.domain is None:
            return []
        key = (analysis.domain, analyzer.golds.exact_key(task))
        if key not in self._reasons:
            try:
                check = GoldChecker.for_name(analyzer.registry, analysis.domain).run([task])[0]
                self._reasons[key] = [*check.setup_problems, *check.agent_reasons, *check.gold_state_reasons]
            except DomainError:
                self._reasons[key] = []
        return self._reasons[key]


class SimProbe:
    """One replayed simulation, with its assessment computed once on demand."""

    def __init__(self, analyzer: Analyzer, analysis: SimAnalysis, golds: GoldVerdicts | None = None):
        self.analyzer = analyzer
        self.analysis = analysis
        self.golds = golds if golds is not None else GoldVerdicts()

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

    @property
    def termination(self) -> str | None:
        return self.analysis.sim.termination_reason

    @cached_property
    def premature(self) -> bool:
        return self.termination is not None and self.termination not in SCORED_TERMINATIONS

    @cached_property
    def as_it_stood(self) -> Evaluation | None:
        """An early end scored as though it had ended normally there (None: no early end, or no task)."""
        analysis = self.analysis
        if not self.premature or analysis.task is None:
            return None
        stopped = analysis.sim.model_copy(update={"termination_reason": "user_stop"})
        return evaluate(ScoredSimulation(stopped, analysis.task, analysis.timeline, analysis.gold, analysis.assertions))

    @cached_property
    def reward(self) -> float | None:
        """Our recomputed reward, else the recorded one (None: neither)."""
        ours = self.report.evaluation.reward
        return ours if ours is not None else self.report.recorded_reward

    @property
    def failed(self) -> bool:
        return self.reward is not None and not is_success(self.reward)

    @cached_property
    def flags(self) -> list[Flag]:
        return [f for f in self.report.flags if f.step >= self.history_len]

    @cached_property
    def first_missed_action(self) -> str | None:
        """The first reference action no call of the trajectory matched (its id, else its tool)."""
        for check in self.report.evaluation.actions or []:
            if not check.matched:
                return check.action.action_id or check.action.name
        return None


def _invariant_violated(probe: SimProbe) -> list[Hit]:
    return [(b.step, b.detail, b.to_json()) for b in invariant_breaks(probe.timeline, probe.domain)]


def _score_text(value: float | None) -> str:
    return "not scored" if value is None else f"{value:g}"


def _premature_end(probe: SimProbe) -> list[Hit]:
    stood = probe.as_it_stood
    if stood is None:
        return []
    parts = [f"{name} {_score_text(stood.breakdown.get(name))}" for name in stood.reward_basis or []]
    missing = f" ({', '.join(stood.not_evaluated)} not evaluated)" if stood.not_evaluated else ""
    last = len(probe.timeline.steps) - 1
    return [
        (
            last if last >= 0 else None,
            f"ended early ({probe.termination}): as the state stood it would have scored "
            f"{_score_text(stood.reward)}{missing}" + (f" — {', '.join(parts)}" if parts else ""),
            {
                "termination": probe.termination,
                "would_reward": stood.reward,
                "would_breakdown": dict(stood.breakdown),
                "not_evaluated": list(stood.not_evaluated),
            },
        )
    ]


def _user_simulator(probe: SimProbe) -> list[Hit]:
    return [
        (flag.step, f"{flag.kind}: {flag.message}", {"flag": flag.kind})
        for flag in probe.flags
        if SUGGESTED_SOURCE.get(flag.kind) in ("user", "task")
    ]


AGENT, USER, TASK, UNKNOWN = "agent", "user simulator", "task", "unknown"
# the process flags that point at the agent (beside compliance's SUGGESTED_SOURCE "agent")
AGENT_FLAGS = frozenset({"error_ignored", "unbacked_claim", "write_before_read", "repeated_call"})


@dataclass(frozen=True)
class Fault:
    """Whose fault a failed simulation is, how sure, and why."""

    party: str
    confidence: str  # high, medium, low
    evidence: list[str]

    @property
    def line(self) -> str:
        return f"whose fault: {self.party} ({self.confidence}): " + "; ".join(self.evidence)


def whose_fault(probe: SimProbe) -> Fault | None:
    """The party a failure points at (None: the simulation did not fail)."""
    if not probe.failed:
        return None
    termination = probe.termination
    if termination == "user_error":
        return Fault(USER, "high", ["the user simulator raised an error (termination user_error)"])
    if termination == "agent_error":
        return Fault(AGENT, "high", ["the agent raised an error (termination agent_error)"])
    unreachable = probe.golds.reasons(probe.analyzer, probe.analysis)
    if unreachable:
        return Fault(TASK, "high", ["the task's own reference solution scores < 1: " + "; ".join(unreachable)])
    by_source: dict[str, list[Flag]] = {}
    for flag in probe.flags:
        source = SUGGESTED_SOURCE.get(flag.kind) or ("agent" if flag.kind in AGENT_FLAGS else None)
        if source is not None:
            by_source.setdefault(source, []).append(flag)
    shown = {k: [f"{f.kind} at step {f.step}" for f in v] for k, v in by_source.items()}
    if "task" in by_source:
        return Fault(TASK, "medium", shown["task"])
    outcome = [f"{name} {value:g}" for name, value in probe.report.evaluation.breakdown.items() if value < 1.0]
    if probe.first_missed_action:
        outcome.append(f"reference action {probe.first_missed_action} never matched")
    if probe.premature:
        outcome.append(f"ended early ({termination})")
    user, agent = by_source.get("user", []), by_source.get("agent", [])
    if user and not agent:
        return Fault(USER, "medium", shown["user"] + outcome)
    if agent and not user:
        return Fault(AGENT, "medium", shown["agent"] + outcome)
    if agent and user:
        first = USER if user[0].step <= agent[0].step else AGENT
        return Fault(
            first, "low", ["both sides flagged, the first flag counts"] + shown["user"] + shown["agent"] + outcome
        )
    if termination in ("max_steps", "too_many_errors"):
        return Fault(AGENT, "low", outcome)
    if outcome:
        return Fault(AGENT, "low", ["nothing points at the user or the task"] + outcome)
    return Fault(UNKNOWN, "low", [f"reward {_score_text(probe.reward)} with no failing check named"])


def _whose_fault(probe: SimProbe) -> list[Hit]:
    fault = whose_fault(probe)
    if fault is None:
        return []
    return [(None, fault.line, {"fault": fault.party, "confidence": fault.confidence, "evidence": fault.evidence})]


SimRule = Rule[SimProbe, Hit]
SIM_RULES: RuleView[SimProbe, Hit] = RuleView(SIMULATION)  # the simulation rules of the one registry, in report order


SIM_RULES.add(
    "invariant_violated",
    None,
    "a write left the DB breaking what the domain's data model promises (domain invariants)",
    _invariant_violated,
    Advice(
        Reach.THIS_RUN,
        "can change the reward of this run: a tool accepted a write the domain's data model forbids, so the DB "
        "check compares a state that should not exist",
        Remedy.FILE_UPSTREAM,
        "the tool should refuse the write: report the tool, the step and the broken invariant, and do not count "
        "the run against the agent until the tool is fixed.",
        "A tool of this domain accepted a write that leaves the database in a state its data model forbids "
        "(the invariant, the simulation and the step are listed below). The DB comparison then judges a state "
        "that should not be reachable, and agents are rewarded or failed for what the tool let through. Could "
        "the tool validate this write and return an error instead?",
    ),
)
SIM_RULES.add(
    "premature_end",
    None,
    "an early end (max_steps, too_many_errors, ...) and what each component would have scored there",
    _premature_end,
    Advice(
        Reach.THIS_RUN,
        "changes the reward of this run: an early end scores 0 whatever was done (the finding says what it "
        "would have scored)",
        Remedy.IGNORE,
        "an early end is the run's limits or an error at work, not a defect of the benchmark: count it apart "
        "from real failures, and re-run with higher limits where it would have scored 1.",
        "These simulations ended early (max_steps, too_many_errors, an error) and scored 0. Scored as the state "
        "stood when they ended, they would have got the rewards listed below; where that is 1, the limit, not "
        "the task, decided the score. Are the limits meant to be this tight for these tasks?",
    ),
)
SIM_RULES.add(
    "user_simulator",
    None,
    "the user simulator's (or the scenario's) part: its process hints",
    _user_simulator,
    Advice(
        Reach.THIS_RUN,
        "can change the reward of this run: the user simulator (or the scenario) steered the conversation, so a "
        "failure may not be the agent's",
        Remedy.FILE_UPSTREAM,
        "the simulator's behaviour and the scenario text belong to the benchmark: report the step and the hint, "
        "and discount the run when ranking agents.",
        "In these simulations the user simulator (or the task's scenario) did what a user of the scenario "
        "should not: wrote tool calls as text, asked for more than the task, stopped for a reason outside the "
        "scenario (the hints and their steps are below). The agent is then scored on a conversation the "
        "scenario did not describe. Could the user simulator's prompt or the scenario's instructions be "
        "tightened?",
    ),
)
SIM_RULES.add(
    "whose_fault",
    None,
    "whose fault a failed simulation is: agent, user simulator, task or unknown",
    _whose_fault,
    Advice(
        Reach.NONE,
        "no reward changes: a note on which party a failure points at",
        Remedy.IGNORE,
        "read it to triage failures; where it names the task or the user simulator, that rule's findings say "
        "what to do.",
        "Whose fault each failure points at (agent, user simulator or task), with the evidence, as tau-tui's "
        "doctor attributes it. It is context for the findings above, not a defect by itself.",
    ),
)


def check_simulation(probe: SimProbe, rules: Iterable[SimRule] | None = None) -> Iterator[SimFinding]:
    """Every finding of the rules (all registered ones by default) on one replayed simulation."""
    analysis = probe.analysis
    for rule, (step, detail, evidence) in SIM_RULES.hits(probe, lambda crash: (None, crash, {"crash": True}), rules):
        yield SimFinding(
            str(analysis.run.path), analysis.sim.id, analysis.sim.task_id, step, rule.name, detail, evidence
        )
