"""The doctor's one rule registry: every rule, over task definitions or over replayed recordings, with its advice.

A rule is one ``Rule(name, target, severity, description, advice, check)``, added where its check is written
(``task_rules``, ``sim_rules``) through ``TASK_RULES`` or ``SIM_RULES``: the ``RuleView`` of ``RULES`` for one
target, in registration order (the report order), which adds that target's rules and runs them. ``Advice`` says
what a finding of the rule does to scores, what to do about it, and the text to paste into an upstream issue:
every output (text, ``--json``, ``--markdown``, the TUI's detail pane) reads it from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar, cast

Probe = TypeVar("Probe")
Hit = TypeVar("Hit")

TASK, SIMULATION = "task", "simulation"  # what a rule's check reads: a task definition, a replayed simulation


class Reach(StrEnum):
    """Whose reward a finding changes."""

    EVERY_RUN = "every_run"  # every run of the task, whatever the agent does
    THIS_RUN = "this_run"  # the simulation the finding is about
    AGGREGATE = "aggregate"  # no single run's reward, the averages over a task set
    NONE = "none"  # no reward: a note


class Remedy(StrEnum):
    """What to do about a finding."""

    FIX_TASK = "fix_task"  # the task definition is wrong: correct it in the task data
    FILE_UPSTREAM = "file_upstream"  # the benchmark's code (tools, user simulator) is wrong: nothing to edit here
    IGNORE = "ignore"  # it explains a score, it is no defect

    @property
    def label(self) -> str:
        return {"fix_task": "fix the task", "file_upstream": "file it upstream", "ignore": "ignore"}[self.value]


@dataclass(frozen=True)
class Advice:
    """What a finding of a rule means for scores and what to do about it."""

    reach: Reach
    effect: str  # whose reward changes and how, in one line ("no reward changes: ..." for Reach.NONE)
    remedy: Remedy
    todo: str  # one sentence: what exactly to do
    upstream: str  # a paragraph to paste into an upstream issue, above the findings

    @property
    def todo_line(self) -> str:
        return f"{self.remedy.label}: {self.todo}"

    def to_json(self) -> dict[str, Any]:
        """The fields every finding's ``--json`` line carries."""
        return {
            "reward_changes": self.reach.value,
            "effect": self.effect,
            "action": self.remedy.value,
            "advice": self.todo,
        }


@dataclass(frozen=True)
class Rule(Generic[Probe, Hit]):
    """One doctor rule: its name (the ``rule`` field of a finding), what it reads, what it means, its advice,
    and ``check(probe)``, the hits it finds on one task or simulation."""

    name: str
    target: str  # TASK or SIMULATION
    severity: str | None  # task rules: error, warning, heuristic; simulation rules have none
    description: str
    advice: Advice
    check: Callable[[Probe], list[Hit]]


RULES: dict[str, Rule[Any, Any]] = {}


def register(rule: Rule[Probe, Hit]) -> Rule[Probe, Hit]:
    """Add a rule to the registry (a new rule is one call); names are unique across targets."""
    if rule.target not in (TASK, SIMULATION):
        raise ValueError(f"rule {rule.name!r}: target is {TASK!r} or {SIMULATION!r}, not {rule.target!r}")
    if rule.name in RULES:
        raise ValueError(f"doctor rule {rule.name!r} is already registered")
    RULES[rule.name] = rule
    return rule


class RuleView(Mapping[str, Rule[Probe, Hit]]):
    """The registered rules of one target, in registration order (a live view of ``RULES``): where the rules of
    that target are added (``add``) and run (``hits``)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def add(
        self, name: str, severity: str | None, description: str, check: Callable[[Probe], list[Hit]], advice: Advice
    ) -> Rule[Probe, Hit]:
        """Register a rule of this target (a new rule is one call)."""
        return register(Rule(name, self.target, severity, description, advice, check))

    def hits(
        self, probe: Probe, crashed: Callable[[str], Hit], rules: Iterable[Rule[Probe, Hit]] | None = None
    ) -> Iterator[tuple[Rule[Probe, Hit], Hit]]:
        """Every hit of ``rules`` (all of this target's by default) on one probe, with its rule. A rule that raises
        is a hit too, ``crashed(detail)`` (the detail says which error): what it cannot read is reported, not raised."""
        for rule in rules if rules is not None else list(self.values()):
            try:
                found = rule.check(probe)
            except Exception as exc:  # noqa: BLE001 - a task or simulation the rule cannot read is a finding
                found = [crashed(f"the rule could not check the {self.target}: {type(exc).__name__}: {exc}")]
            for hit in found:
                yield rule, hit

    def __getitem__(self, name: str) -> Rule[Probe, Hit]:
        rule = RULES[name]
        if rule.target != self.target:
            raise KeyError(name)
        return cast("Rule[Probe, Hit]", rule)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, rule in RULES.items() if rule.target == self.target])

    def __len__(self) -> int:
        return sum(1 for rule in RULES.values() if rule.target == self.target)


def report_order() -> list[str]:
    """The registered rules' names as reports list them: task rules, then simulation rules, each in
    registration order (whichever module was imported first)."""
    return [*RuleView[Any, Any](TASK), *RuleView[Any, Any](SIMULATION)]


def advice_of(name: str) -> Advice | None:
    rule = RULES.get(name)
    return rule.advice if rule is not None else None


def advice_json(name: str) -> dict[str, Any]:
    """A finding's advice fields (nulls for a rule no longer registered)."""
    advice = advice_of(name)
    if advice is None:
        return {"reward_changes": None, "effect": None, "action": None, "advice": None}
    return advice.to_json()
