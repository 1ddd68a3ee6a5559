"""Participants from model strings: any litellm model, ``scripted/...``, or ``human``.

``scripted/gold`` (agent), ``scripted/flaky[:P]`` (agent: the gold agent
dropping each reference action with probability P) and ``scripted/user``
(user) need no model. More scripted participants can be registered in
``SCRIPTED_AGENTS`` / ``SCRIPTED_USERS`` (a factory taking the task, the
brief and the model arguments); a name that takes an option after a colon
(``scripted/flaky:0.3``) also registers a parser in ``SCRIPTED_OPTIONS``
turning the option into factory arguments.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from tau_tui.env.environment import Environment
from tau_tui.evaluate.judge import judge_credentials_problem
from tau_tui.llm.client import LLMSettings, RetryListener, RetryPolicy
from tau_tui.llm.credentials import MissingCredentials, credentials_problem
from tau_tui.model.tasks import Action, Task
from tau_tui.rollout.agents import GoldAgent, HumanAgent, LLMAgent
from tau_tui.rollout.human import HumanSource
from tau_tui.rollout.participants import AgentBrief, Participant, UserBrief, agent_brief, user_brief
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolError, ProtocolTexts
from tau_tui.rollout.users import HumanUser, LLMUser, NoUser, ScriptedUser

HUMAN = "human"
SCRIPTED_PREFIX = "scripted/"
DEFAULT_LLM_ARGS: dict[str, Any] = {"temperature": 0.0}

AgentFactory = Callable[[Task, AgentBrief, dict[str, Any]], Participant]
UserFactory = Callable[[Task, UserBrief, dict[str, Any]], Participant]

DEFAULT_DROP = 0.3


class ParticipantSpecError(ValueError):
    """A model string that names no participant; ``str()`` is one line."""


class FlakyAgent(GoldAgent):
    """``scripted/flaky[:P]``: the gold agent, but each reference action is dropped with probability P.

    The drops follow from the trial seed and the task id alone, so a trial
    replays identically and the tasks of one trial are independent; a higher
    P drops a superset of a lower one's actions. Used to produce tasks in
    every band (saturated, zero, learning zone) offline.
    """

    implementation = "scripted_flaky"

    def __init__(self, task: Task, brief: AgentBrief, drop: float = DEFAULT_DROP):
        super().__init__(task, brief)
        if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0.0 <= drop <= 1.0:
            raise ParticipantSpecError(f"scripted/flaky: the drop probability must be between 0 and 1, not {drop!r}")
        self.drop = float(drop)
        self.llm = f"scripted/flaky:{self.drop:g}"
        self.full_plan = list(self.plan)
        self.dropped: list[Action] = []
        self.set_seed(None)

    def set_seed(self, seed: int | None) -> None:
        rng = random.Random(f"{0 if seed is None else seed}/{self.task.id}")
        self.plan, self.dropped = [], []
        for kind, action in self.full_plan:
            if action is not None and rng.random() < self.drop:
                self.dropped.append(action)
            else:
                self.plan.append((kind, action))
        self.transferred = any(a is not None and a.name == "transfer_to_human_agents" for _, a in self.plan)

    def llm_args(self) -> dict[str, Any]:
        return {"drop": self.drop}


def _drop_option(option: str) -> dict[str, Any]:
    try:
        drop = float(option)
    except ValueError:
        drop = -1.0
    if not 0.0 <= drop <= 1.0:
        raise ParticipantSpecError(f"scripted/flaky:{option}: the drop probability must be a number from 0 to 1")
    return {"drop": drop}


SCRIPTED_AGENTS: dict[str, AgentFactory] = {
    "scripted/gold": lambda task, brief, args: GoldAgent(task, brief),
    "scripted/flaky": lambda task, brief, args: FlakyAgent(task, brief, args.get("drop", DEFAULT_DROP)),
}
SCRIPTED_USERS: dict[str, UserFactory] = {
    "scripted/user": lambda task, brief, args: ScriptedUser(brief, **args),
}
SCRIPTED_OPTIONS: dict[str, Callable[[str], dict[str, Any]]] = {
    "scripted/flaky": _drop_option,
}


@dataclass
class ParticipantSpec:
    """Which participant plays a side: a model string, its arguments, and how to call it."""

    model: str
    llm_args: dict[str, Any] | None = None
    timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def is_scripted(self) -> bool:
        return self.model.startswith(SCRIPTED_PREFIX)

    @property
    def is_human(self) -> bool:
        return self.model == HUMAN

    def credentials_problem(self, side: str) -> str | None:
        """The API key this model needs and the environment lacks, in one line (None: scripted, human, own
        endpoint, or set)."""
        if self.is_scripted or self.is_human or not self.model.strip():
            return None
        return credentials_problem(self.model, self.settings().args, side)

    def settings(self) -> LLMSettings:
        args = dict(DEFAULT_LLM_ARGS) if self.llm_args is None else dict(self.llm_args)
        return LLMSettings(self.model, args, self.timeout, self.retry)


def scripted_factory(model: str, side: str) -> tuple[Callable[..., Participant], dict[str, Any]]:
    """The factory of a scripted participant and the arguments its option (``name:option``) gives."""
    known = SCRIPTED_AGENTS if side == "agent" else SCRIPTED_USERS
    if model in known:
        return known[model], {}
    base, colon, option = model.partition(":")
    if colon and base in known and base in SCRIPTED_OPTIONS:
        return known[base], SCRIPTED_OPTIONS[base](option)
    raise ParticipantSpecError(f"no scripted {side} {model!r} (known: {', '.join(sorted(known))})")


def check_spec(spec: ParticipantSpec, side: str) -> None:
    """Refuse a model string that cannot play this side (before any episode starts)."""
    if spec.is_scripted:
        scripted_factory(spec.model, side)
    if not spec.model.strip():
        raise ParticipantSpecError(f"empty model string for the {side}")


def check_credentials(sides: Iterable[tuple[ParticipantSpec, str]], judge: Any = None) -> None:
    """Refuse to start (``MissingCredentials``, one line naming the variable) when a model of the sides
    (spec, "agent" or "user") or the judge has no API key set: every call of it would fail."""
    problems = [spec.credentials_problem(side) for spec, side in sides] + [judge_credentials_problem(judge)]
    problem = next((p for p in problems if p), None)
    if problem:
        raise MissingCredentials(problem)


def build_agent(
    spec: ParticipantSpec,
    task: Task,
    env: Environment,
    *,
    solo: bool = False,
    human: HumanSource | None = None,
    on_retry: RetryListener | None = None,
    protocol: ProtocolTexts = OWN_PROTOCOL,
) -> Participant:
    """The agent side; an LLM agent is prompted as ``protocol`` says."""
    check_spec(spec, "agent")
    brief = agent_brief(task, env, solo, protocol)
    if spec.is_scripted:
        make, options = scripted_factory(spec.model, "agent")
        return make(task, brief, {**(spec.llm_args or {}), **options})
    if spec.is_human:
        if human is None:
            raise ParticipantSpecError("a human agent needs an input source")
        return HumanAgent(brief, human)
    try:
        return LLMAgent(brief, spec.settings(), on_retry, protocol)
    except ProtocolError as exc:
        raise ParticipantSpecError(str(exc)) from None


def build_user(
    spec: ParticipantSpec,
    task: Task,
    env: Environment,
    *,
    solo: bool = False,
    human: HumanSource | None = None,
    on_retry: RetryListener | None = None,
    protocol: ProtocolTexts = OWN_PROTOCOL,
) -> Participant:
    """The user side; in solo mode there is no user, whatever the spec says (tau2's dummy user); an LLM user is
    prompted as ``protocol`` says."""
    if solo:
        return NoUser(protocol.solo_user_record(None if spec.is_scripted or spec.is_human else spec.settings()))
    check_spec(spec, "user")
    brief = user_brief(task, env, protocol)
    if spec.is_scripted:
        make, options = scripted_factory(spec.model, "user")
        return make(task, brief, {**(spec.llm_args or {}), **options})
    if spec.is_human:
        if human is None:
            raise ParticipantSpecError("a human user needs an input source")
        return HumanUser(brief, human)
    return LLMUser(brief, spec.settings(), on_retry, protocol)
