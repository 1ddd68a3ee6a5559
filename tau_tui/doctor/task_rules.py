"""Rules over a domain's task definitions: is the task itself right?

Each rule is one ``TASK_RULES.add(name, severity, description, check, advice)`` call: ``TASK_RULES`` is the doctor's
one registry's (``rules.RULES``) view of the task rules; ``check(probe)`` returns
``(detail, evidence)`` pairs for one task. ``TaskProbe`` computes what several rules share once
(the gold check, the gold state, the domain's tool schemas). ``check_tasks`` runs every rule over
tasks and returns ``TaskFinding`` records (``{"kind": "task_finding", ...}`` lines of ``--json``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from tau_tui.calibrate.gold import GoldCheck, GoldChecker
from tau_tui.doctor.rules import TASK, Advice, Reach, Remedy, Rule, RuleView, advice_json
from tau_tui.env.environment import Environment
from tau_tui.env.tool_schema import tool_schema
from tau_tui.evaluate import score
from tau_tui.model.messages import AssistantMessage, Message, UserMessage
from tau_tui.model.results import SimulationRun
from tau_tui.model.tally import counted
from tau_tui.model.tasks import DB_PASSES_UNCHECKED, Action, Task, db_check_rule
from tau_tui.replay import GoldResult, gold_state

ERROR, WARNING, HEURISTIC = "error", "warning", "heuristic"


@dataclass(frozen=True)
class TaskFinding:
    """One thing wrong with one task, with its evidence (the component, the action and its error, the other task)."""

    domain: str
    task: str
    rule: str
    severity: str
    detail: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "task_finding",
            "domain": self.domain,
            "task": self.task,
            "rule": self.rule,
            "severity": self.severity,
            "detail": self.detail,
            **advice_json(self.rule),
            "evidence": self.evidence,
        }


Hit = tuple[str, dict[str, Any]]


class TaskProbe:
    """One task of a domain, with what the rules ask of it computed once, on demand."""

    def __init__(self, checker: GoldChecker, task: Task, duplicates: DuplicateIndex):
        self.checker = checker
        self.task = task
        self.duplicates = duplicates

    def new_env(self, solo: bool = False) -> Environment:
        return self.checker.new_env(solo)

    @cached_property
    def env(self) -> Environment:
        """A fresh environment, for the tool declarations (never run)."""
        return self.new_env(False)

    @cached_property
    def gold(self) -> GoldResult:
        return gold_state(self.task, self.new_env)

    @cached_property
    def gold_check(self) -> GoldCheck:
        return self.checker.run([self.task])[0]

    def inaction(self) -> SimulationRun:
        """An episode where the agent only greets and the user leaves at once."""
        messages: list[Message] = [
            *self.task.history,
            AssistantMessage(content="Hi! How can I help you today?"),
            UserMessage(content="###STOP###"),
        ]
        return SimulationRun(
            id="doctor-inaction", task_id=self.task.id, messages=messages, termination_reason="user_stop"
        )

    def schema_of(self, action: Action) -> dict[str, Any] | None:
        """The parameters schema of the tool an action names on its requestor's side (None: no such tool)."""
        kit = self.env.user if action.requestor == "user" else self.env.agent
        if kit is None or not kit.has_tool(action.name):
            return None
        parameters: dict[str, Any] = tool_schema(kit, action.name)["function"]["parameters"]
        return parameters


def _unreachable(probe: TaskProbe) -> list[Hit]:
    check = probe.gold_check
    reasons = [*check.setup_problems, *check.agent_reasons, *check.gold_state_reasons]
    if not reasons:
        return []
    score_text = "no score" if check.gold_reward is None else f"{check.gold_reward:g}"
    return [
        (
            f"the reference solution scores {score_text}: " + "; ".join(reasons),
            {"gold_reward": check.gold_reward, "breakdown": check.breakdown, "reasons": reasons},
        )
    ]


def _passes_on_inaction(probe: TaskProbe) -> list[Hit]:
    evaluation = score(probe.inaction(), probe.task, probe.new_env, gold=probe.gold)
    if evaluation.reward is None or evaluation.reward < 1.0 - 1e-6:
        return []
    basis = evaluation.reward_basis or []
    return [
        (
            f"an agent that does nothing scores {evaluation.reward:g} (basis {', '.join(basis) or 'none'})",
            {"reward": evaluation.reward, "breakdown": dict(evaluation.breakdown), "reward_basis": basis},
        )
    ]


# reward-basis component → what it has to check in a task (None: nothing, it passes by itself)
EMPTY_WHEN: dict[str, Callable[[Task], str | None]] = {
    "NL_ASSERTION": lambda t: (
        None if (t.evaluation_criteria and t.evaluation_criteria.nl_assertions) else "no NL assertions"
    ),
    "COMMUNICATE": lambda t: (
        None if (t.evaluation_criteria and t.evaluation_criteria.communicate_info) else "no communicate_info"
    ),
    "ACTION": lambda t: None if t.expected_actions else "no reference actions",
    "ENV_ASSERTION": lambda t: (
        None if (t.evaluation_criteria and t.evaluation_criteria.env_assertions) else "no env assertions"
    ),
    "DB": lambda t: (
        "no reference actions nor env assertions (tau2 does not compare the DB then)"
        if db_check_rule(t) == DB_PASSES_UNCHECKED
        else None
    ),
}


def _empty_component(probe: TaskProbe) -> list[Hit]:
    criteria = probe.task.evaluation_criteria
    if criteria is None:
        return []
    out: list[Hit] = []
    for component in criteria.reward_basis:
        empty = EMPTY_WHEN.get(component)
        why = empty(probe.task) if empty is not None else None
        if why is not None:
            out.append(
                (f"{component} is in the reward basis with {why}: it passes by itself", {"component": component})
            )
    return out


def _action_text(index: int, action: Action) -> str:
    return f"reference action {index} {action.name}" + (f" ({action.action_id})" if action.action_id else "")


def _gold_action_error(probe: TaskProbe) -> list[Hit]:
    actions = probe.task.expected_actions
    return [
        (
            f"{_action_text(index, actions[index])} raises when replayed in order: {error}",
            {"action": index, "tool": actions[index].name, "arguments": actions[index].arguments, "error": error},
        )
        for index, error in probe.gold.action_errors
    ]


def _unknown_tool(probe: TaskProbe) -> list[Hit]:
    out: list[Hit] = []
    for index, action in enumerate(probe.task.expected_actions):
        if probe.schema_of(action) is None:
            other = probe.env.side_of(action.name)
            where = f" (it is a {other} tool)" if other else ""
            out.append(
                (
                    f"{_action_text(index, action)} names no {action.requestor} tool of the domain{where}",
                    {"action": index, "tool": action.name, "requestor": action.requestor},
                )
            )
    return out


JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _fits(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether ``value`` has a type ``schema`` allows (types, unions, arrays' items, references; not formats)."""
    if "$ref" in schema:
        schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return any(_fits(value, option, defs) for option in schema[key])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind is None:
        return True
    kinds = kind if isinstance(kind, list) else [kind]
    if not any(JSON_TYPES.get(k, lambda v: True)(value) for k in kinds):
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(_fits(item, schema["items"], defs) for item in value)
    return True


def argument_problems(arguments: dict[str, Any], parameters: dict[str, Any]) -> list[str]:
    """What in ``arguments`` does not fit a tool's parameters schema: unknown and missing names, wrong types."""
    properties: dict[str, Any] = parameters.get("properties") or {}
    defs: dict[str, Any] = parameters.get("$defs") or {}
    problems = [f"unknown argument {name!r}" for name in arguments if name not in properties]
    problems += [
        f"missing required argument {name!r}" for name in parameters.get("required") or [] if name not in arguments
    ]
    for name, value in arguments.items():
        if name in properties and not _fits(value, properties[name], defs):
            wanted = properties[name].get("type") or "the declared type"
            problems.append(f"argument {name!r} is {type(value).__name__}, the tool takes {wanted}")
    return problems


def _invalid_arguments(probe: TaskProbe) -> list[Hit]:
    out: list[Hit] = []
    for index, action in enumerate(probe.task.expected_actions):
        parameters = probe.schema_of(action)
        if parameters is None:
            continue
        problems = argument_problems(action.arguments, parameters)
        if problems:
            out.append(
                (
                    f"{_action_text(index, action)}: " + "; ".join(problems),
                    {"action": index, "tool": action.name, "problems": problems},
                )
            )
    return out


def scenario_key(task: Task) -> bytes:
    """What makes two tasks the same task: the user scenario, the criteria and the initial state."""
    dump = task.model_dump(mode="json", include={"user_scenario", "evaluation_criteria", "initial_state"})
    return orjson.dumps(dump, option=orjson.OPT_SORT_KEYS)


class DuplicateIndex:
    """Tasks grouped by ``scenario_key`` (built once per task set)."""

    def __init__(self, tasks: Iterable[Task]):
        self.groups: dict[bytes, list[str]] = {}
        self.key_of: dict[str, bytes] = {}
        for task in tasks:
            key = scenario_key(task)
            self.key_of[task.id] = key
            self.groups.setdefault(key, []).append(task.id)

    def others(self, task_id: str) -> list[str]:
        key = self.key_of.get(task_id)
        return [t for t in self.groups.get(key, []) if t != task_id] if key is not None else []


def _duplicate_task(probe: TaskProbe) -> list[Hit]:
    others = probe.duplicates.others(probe.task.id)
    if not others:
        return []
    return [
        (
            f"same user scenario, criteria and initial state as task {', '.join(others)}",
            {"other_tasks": others},
        )
    ]


NEGATED = re.compile(r"\b(?:not|never|no|refuses?|declines?|without)\b\W+(?:\w+\W+){0,3}?(\w+)", re.IGNORECASE)
# a verb an NL assertion may deny → tool-name fragments of a reference action that would do it
DENIED_VERBS: dict[str, str] = {
    "cancel": "cancel",
    "book": "book",
    "exchange": "exchange",
    "return": "return",
    "modify": "modify",
    "change": "modify",
    "update": "update",
    "refund": "refund",
    "transfer": "transfer",
}


def _nl_contradicts_actions(probe: TaskProbe) -> list[Hit]:
    criteria = probe.task.evaluation_criteria
    if criteria is None or not criteria.nl_assertions:
        return []
    tools = [a.name for a in probe.task.expected_actions if a.requestor == "assistant"]
    out: list[Hit] = []
    for assertion in criteria.nl_assertions:
        for match in NEGATED.finditer(assertion):
            word = match.group(1).lower()
            stem = next((v for v in DENIED_VERBS if word.startswith(v)), None)
            rest = assertion[match.end() : match.end() + 30].lower()
            if stem is None or re.match(r"\W+(?:\w+\W+)?(?:other|more|additional|further)\b", rest):
                continue  # "does not cancel any other reservation" denies more of it, not the reference action
            done = [t for t in tools if DENIED_VERBS[stem] in t]
            if done:
                out.append(
                    (
                        f"NL assertion {assertion!r} denies '{word}' while the reference actions call {', '.join(done)}",
                        {"assertion": assertion, "tools": done},
                    )
                )
                break
    return out


TaskRule = Rule[TaskProbe, Hit]
TASK_RULES: RuleView[TaskProbe, Hit] = RuleView(TASK)  # the task rules of the one registry, in report order


TASK_RULES.add(
    "unreachable",
    ERROR,
    "the reference solution scores < 1 (the gold check's reason)",
    _unreachable,
    Advice(
        Reach.EVERY_RUN,
        "changes the reward of every run of this task: the reference solution itself fails, so a correct agent "
        "can fail",
        Remedy.FIX_TASK,
        "correct the reference actions or the criterion the reason names, or leave the task out of scores until "
        "it is fixed; report it upstream so the published task is fixed too.",
        "The reference solution of these tasks does not reach reward 1: replaying the task's `expected_actions` "
        "from its initial state (and the gold agent's rollout) and scoring it with the task's own evaluation "
        "criteria gives less than 1, for the reasons listed below. Every agent is scored against a target the "
        "reference itself misses, so a correct agent fails these tasks and pass rates on them measure the task, "
        "not the agent. Could the reference actions or the criteria be corrected?",
    ),
)
TASK_RULES.add(
    "passes_on_inaction",
    WARNING,
    "an agent that does nothing while the user leaves scores 1",
    _passes_on_inaction,
    Advice(
        Reach.EVERY_RUN,
        "changes the reward of every run of this task: an agent that does nothing scores 1, so a wrong agent can pass",
        Remedy.FIX_TASK,
        "add a check only the intended behaviour passes (a reference action, an env assertion, a "
        "communicate_info item or an NL assertion); where refusing is the intended answer, check that the "
        "refusal was said.",
        "An agent that only greets the user, while the user simulator leaves at once, scores 1 on these tasks: "
        "nothing in the reward basis tells that agent apart from one that handled the request (the do-nothing "
        "episode's reward breakdown is below). Passes on these tasks inflate every agent's score. Could the "
        "criteria check the intended outcome: a reference action, an env assertion, a `communicate_info` item, "
        "or an NL assertion about what the agent must say?",
    ),
)
TASK_RULES.add(
    "empty_component",
    WARNING,
    "a reward-basis component with nothing to check passes by itself",
    _empty_component,
    Advice(
        Reach.EVERY_RUN,
        "can change the reward of every run of this task: the component scores 1 whatever the agent does, so a "
        "wrong agent passes what it was meant to catch (a DB left unchecked)",
        Remedy.FIX_TASK,
        "give the component something to check (communicate_info, reference actions, env assertions) or take it "
        "out of the reward basis, so the basis says what is really scored.",
        "These tasks put a component in the `reward_basis` that has nothing to check (COMMUNICATE without "
        "`communicate_info`, DB without reference actions or env assertions, in which case tau2 does not "
        "compare the DB at all, and so on): the component scores 1 whatever the agent does. The reward rests on "
        "the other components only, and where the component was meant to catch a mistake (a write the task "
        "forbids) a wrong agent passes. Could each such component either get its check or leave the basis?",
    ),
)
TASK_RULES.add(
    "gold_action_error",
    ERROR,
    "a reference action raises when replayed in order",
    _gold_action_error,
    Advice(
        Reach.EVERY_RUN,
        "changes the reward of every run of this task: the gold DB is built from a reference action that fails, "
        "so a correct agent can fail the DB check",
        Remedy.FIX_TASK,
        "correct the reference action's arguments or its place in the sequence (the error says why it raises), "
        "so the gold state is the one the task intends.",
        "A reference action of these tasks raises an error when the task's `expected_actions` are replayed in "
        "order from its initial state (the action, its arguments and the error are listed below). The gold DB "
        "is built from that replay, so it lacks what the failing action should have done, and an agent that "
        "performs the action successfully does not match it. Could the action's arguments (or the order of the "
        "actions) be corrected?",
    ),
)
TASK_RULES.add(
    "unknown_tool",
    ERROR,
    "a reference action names no tool of the domain (agent or user side)",
    _unknown_tool,
    Advice(
        Reach.EVERY_RUN,
        "changes the reward of every run of this task: a reference action names a tool no agent can call, so a "
        "correct agent fails the action check",
        Remedy.FIX_TASK,
        "rename the action to the domain's tool, or give it the requestor whose side has the tool.",
        "A reference action of these tasks names a tool the domain does not have on the requestor's side "
        "(listed below; sometimes the tool exists on the other side). No agent can make that call, so the "
        "action check fails for every agent and the gold state leaves the action out. Could the action's name "
        "or its requestor be corrected?",
    ),
)
TASK_RULES.add(
    "invalid_arguments",
    ERROR,
    "a reference action's arguments do not fit the tool's schema",
    _invalid_arguments,
    Advice(
        Reach.EVERY_RUN,
        "changes the reward of every run of this task: the reference call does not fit the tool's schema, so an "
        "agent that calls the tool correctly can fail the action check",
        Remedy.FIX_TASK,
        "make the action's arguments match the tool's parameters (names, required ones, types) as the finding "
        "lists them.",
        "The arguments of a reference action of these tasks do not fit the parameters the tool declares "
        "(unknown or missing names, wrong types; listed below). An agent that calls the tool as its schema "
        "says cannot match the reference call, so the action check (and a DB check built from it) can fail a "
        "correct agent. Could the arguments be corrected to the tool's schema?",
    ),
)
TASK_RULES.add(
    "duplicate_task",
    WARNING,
    "another task has the same scenario, criteria and initial state",
    _duplicate_task,
    Advice(
        Reach.AGGREGATE,
        "changes no single run's reward, only the averages: the scenario counts twice in average reward and pass^k",
        Remedy.FIX_TASK,
        "keep one of the copies in the task set you score, or make the scenarios differ if both were meant.",
        "These tasks share the same user scenario, evaluation criteria and initial state (the pairs are below), "
        "so the task set scores one scenario twice and averages (average reward, pass^k) weight it double. "
        "Was each copy intended? If not, could one be removed or changed?",
    ),
)
TASK_RULES.add(
    "nl_contradicts_actions",
    HEURISTIC,
    "an NL assertion denies what a reference action does (a wording heuristic)",
    _nl_contradicts_actions,
    Advice(
        Reach.EVERY_RUN,
        "can change the reward of every run of this task where NL assertions are scored: no agent meets both the "
        "assertion and the reference action (a wording heuristic: read it first)",
        Remedy.FIX_TASK,
        "read the assertion against the reference actions: if it really denies what they do, reword one of "
        "them; if it denies something else, ignore the finding.",
        "An NL assertion of these tasks says the agent must not do what one of the task's reference actions "
        "does (assertion and action below; found by a wording check, so each is worth a read). Where both are "
        "scored, no agent can satisfy the NL judge and the action check at once. Could the assertion or the "
        "reference actions be reworded so they agree?",
    ),
)


def check_task(probe: TaskProbe, domain: str, rules: Iterable[TaskRule] | None = None) -> Iterator[TaskFinding]:
    """Every finding of the rules (all registered ones by default) on one task; a rule that crashes is a finding."""
    for rule, (detail, evidence) in TASK_RULES.hits(probe, lambda crash: (crash, {"crash": True}), rules):
        yield TaskFinding(domain, probe.task.id, rule.name, rule.severity or "", detail, evidence)


def check_tasks(
    checker: GoldChecker, domain: str, tasks: Iterable[Task], every: dict[str, Task]
) -> Iterator[TaskFinding]:
    """Every finding over ``tasks`` (``every``: the domain's whole task set, for ``duplicate_task``)."""
    duplicates = DuplicateIndex(every.values())
    for task in tasks:
        yield from check_task(TaskProbe(checker, task, duplicates), domain)


def counts(findings: Iterable[TaskFinding]) -> dict[str, int]:
    """Findings per rule, every registered rule listed (zeros included: no rule is hidden)."""
    return counted((f.rule for f in findings), TASK_RULES)
