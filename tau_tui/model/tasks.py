"""Task definitions (tau2 ``Task``): scenario, initial state, evaluation criteria."""

from __future__ import annotations

import hashlib
import textwrap
from typing import Any

import orjson
from pydantic import Field, SerializeAsAny, field_validator

from tau_tui.model.messages import Loose, Message, parse_message

DEFAULT_REWARD_BASIS = ["DB", "COMMUNICATE"]


class StructuredInstructions(Loose):
    domain: str = ""
    reason_for_call: str = ""
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str = ""

    def render(self) -> str:
        """The text tau2 gives its user simulator for these instructions."""
        tab = "\t"
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{textwrap.indent(self.reason_for_call, tab)}"]
        if self.known_info is not None:
            lines.append(f"Known info:\n{textwrap.indent(self.known_info, tab)}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(self.unknown_info, tab)}")
        lines.append(f"Task instructions:\n{textwrap.indent(self.task_instructions, tab)}")
        return "\n".join(lines)


class UserScenario(Loose):
    persona: str | None = None
    instructions: StructuredInstructions | str = ""

    def render(self) -> str:
        """``str(user_scenario)`` in tau2: the scenario block of the user prompt."""
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        body = (
            self.instructions.render() if isinstance(self.instructions, StructuredInstructions) else self.instructions
        )
        lines += ["Instructions:", textwrap.indent(body, "\t")]
        return "\n".join(lines)


class EnvFunctionCall(Loose):
    env_type: str = "assistant"
    func_name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)


class EnvAssertion(EnvFunctionCall):
    assert_value: bool = True
    message: str | None = None


class Action(Loose):
    action_id: str = ""
    requestor: str = "assistant"
    name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None


class InitializationData(Loose):
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class InitialState(Loose):
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvFunctionCall] | None = None
    message_history: list[SerializeAsAny[Message]] | None = None

    @field_validator("message_history", mode="before")
    @classmethod
    def _messages(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [m if isinstance(m, Message) else parse_message(m) for m in value]
        return value


class EvaluationCriteria(Loose):
    actions: list[Action] | None = None
    env_assertions: list[EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] = Field(default_factory=lambda: list(DEFAULT_REWARD_BASIS))


class Description(Loose):
    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


class Task(Loose):
    """A tau2 task: the user's scenario, the initial state and how the run is evaluated."""

    id: str
    description: Description | None = None
    user_scenario: UserScenario | None = None
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    user_tools: list[str] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> str:
        return str(value)

    @property
    def history(self) -> list[Message]:
        """The task's initial message history ([] when none)."""
        if self.initial_state is None or self.initial_state.message_history is None:
            return []
        return list(self.initial_state.message_history)

    @property
    def expected_actions(self) -> list[Action]:
        if self.evaluation_criteria is None or self.evaluation_criteria.actions is None:
            return []
        return list(self.evaluation_criteria.actions)


# Fields of tau2 1.0.1's Task our model does not spell out (they do not change a reward), metadata tau2's own
# task files carry that its Task drops (airline's and banking's ``annotations``), and our own ``fault_plan``
# (``env.faults.FAULT_PLAN_KEY``: the faults a rollout injects, which its recording then holds as tool results).
TASK_FIELDS_NOT_GRADED = frozenset({"issues", "required_documents", "annotations", "fault_plan"})
# Fields tau2 1.0.1's own task files carry where its models have none, so that tau2 drops them and grades without
# them (two banking tasks, task_058 among them, put DB rows straight under ``initialization_data`` instead of in
# its ``agent_data``): grading as tau2 1.0.1 does means dropping them as well, gold and replay alike.
TAU2_DROPS = frozenset({"initial_state.initialization_data.users", "initial_state.initialization_data.accounts"})


def _extra(model: Loose | None, where: str) -> list[str]:
    return [f"{where}{key}" for key in (model.model_extra or {})] if model is not None else []


def ungraded_fields(task: Task) -> list[str]:
    """The fields of ``task`` tau2 1.0.1 does not have where they could change a reward (the evaluation
    criteria, their actions and assertions, the initial state the gold DB starts from, or the task itself: a
    fork's ``acceptable_outcomes``), by path; [] for a task tau2 1.0.1 grades as we do. A task with any is not
    graded: we cannot know what the field means to the fork that wrote it."""
    out = [key for key in (task.model_extra or {}) if key not in TASK_FIELDS_NOT_GRADED]
    criteria = task.evaluation_criteria
    if criteria is not None:
        out += _extra(criteria, "evaluation_criteria.")
        for i, action in enumerate(criteria.actions or []):
            out += _extra(action, f"evaluation_criteria.actions[{i}].")
        for i, assertion in enumerate(criteria.env_assertions or []):
            out += _extra(assertion, f"evaluation_criteria.env_assertions[{i}].")
    state = task.initial_state
    if state is not None:
        out += _extra(state, "initial_state.")
        out += _extra(state.initialization_data, "initial_state.initialization_data.")
        for i, call in enumerate(state.initialization_actions or []):
            out += _extra(call, f"initial_state.initialization_actions[{i}].")
    return [path for path in out if path not in TAU2_DROPS]


# How tau2 1.0.1's environment evaluator decides a task's DB check (``evaluator_env.py``), one rule for every
# path (replay, eval, compare, audit, the TUI): the hashes decide; or the task lists neither actions nor env
# assertions and the check passes without comparing; or the task has no evaluation criteria and no DB check
# is made at all (reward 1).
DB_COMPARED, DB_PASSES_UNCHECKED, DB_NOT_CHECKED = "compared", "no_actions_or_assertions", "no_criteria"
DB_RULE_TEXT = {
    DB_COMPARED: "final DB compared with gold",
    DB_PASSES_UNCHECKED: "the task lists no actions and no env assertions: tau2 passes the DB check without comparing",
    DB_NOT_CHECKED: "the task has no evaluation criteria: tau2 checks no DB and gives reward 1",
}


def db_check_rule(task: Task | None) -> str | None:
    """Which of the DB-check rules (``DB_COMPARED``…) tau2 applies to ``task``; None when the task is unknown."""
    if task is None:
        return None
    criteria = task.evaluation_criteria
    if criteria is None:
        return DB_NOT_CHECKED
    if criteria.actions is None and criteria.env_assertions is None:
        return DB_PASSES_UNCHECKED
    return DB_COMPARED


def db_verdict(rule: str | None, hashes_match: bool | None) -> bool | None:
    """tau2's ``db_match`` under ``rule``: the hash comparison (None: not made), true without one, or None."""
    if rule == DB_PASSES_UNCHECKED:
        return True
    if rule == DB_NOT_CHECKED:
        return None
    return hashes_match


def _without_nulls(value: Any, key: str | None = None) -> Any:
    """Null-valued keys dropped, except inside tool arguments (where null and missing differ)."""
    if isinstance(value, dict):
        if key == "arguments":
            return value
        return {k: _without_nulls(v, k) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def task_content_digest(task: Task) -> str:
    """The one hash of a task definition: its content with null fields ignored.

    A task saved by tau2 with every optional field written out hashes like the same
    task in a hand-written tasks.json (nulls inside tool arguments are kept: passing
    None and leaving an argument out differ). It is the ``task`` part of the calibration
    fingerprint (``tau_tui.rollout.records.fingerprint_parts``) and the key of the gold
    and initial-state caches; changing it changes every recorded fingerprint.
    """
    data = _without_nulls(task.model_dump(mode="json"))
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()
