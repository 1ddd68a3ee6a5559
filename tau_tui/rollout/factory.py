"""Participants from model strings: any litellm model, ``scripted/...``, or ``human``.

``scripted/gold`` (agent) and ``scripted/user`` (user) need no model. More
scripted participants can be registered in ``SCRIPTED_AGENTS`` /
``SCRIPTED_USERS`` (a factory taking the task, the brief and the model
arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from tau_tui.env.environment import Environment
from tau_tui.model.tasks import Task
from tau_tui.rollout.agents import GoldAgent, HumanAgent, LLMAgent
from tau_tui.rollout.human import HumanSource
from tau_tui.rollout.llm import LLMSettings, RetryListener, RetryPolicy
from tau_tui.rollout.participants import AgentBrief, Participant, UserBrief, agent_brief, user_brief
from tau_tui.rollout.users import HumanUser, LLMUser, NoUser, ScriptedUser

HUMAN = "human"
SCRIPTED_PREFIX = "scripted/"
DEFAULT_LLM_ARGS: dict[str, Any] = {"temperature": 0.0}

AgentFactory = Callable[[Task, AgentBrief, dict[str, Any]], Participant]
UserFactory = Callable[[Task, UserBrief, dict[str, Any]], Participant]

SCRIPTED_AGENTS: dict[str, AgentFactory] = {
    "scripted/gold": lambda task, brief, args: GoldAgent(task, brief),
}
SCRIPTED_USERS: dict[str, UserFactory] = {
    "scripted/user": lambda task, brief, args: ScriptedUser(brief, **args),
}


class ParticipantSpecError(ValueError):
    """A model string that names no participant; ``str()`` is one line."""


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

    @property
    def is_llm(self) -> bool:
        return not self.is_scripted and not self.is_human

    def settings(self) -> LLMSettings:
        args = dict(DEFAULT_LLM_ARGS) if self.llm_args is None else dict(self.llm_args)
        return LLMSettings(self.model, args, self.timeout, self.retry)


def check_spec(spec: ParticipantSpec, side: str) -> None:
    """Refuse a model string that cannot play this side (before any episode starts)."""
    known = SCRIPTED_AGENTS if side == "agent" else SCRIPTED_USERS
    if spec.is_scripted and spec.model not in known:
        raise ParticipantSpecError(f"no scripted {side} {spec.model!r} (known: {', '.join(sorted(known))})")
    if not spec.model.strip():
        raise ParticipantSpecError(f"empty model string for the {side}")


def build_agent(spec: ParticipantSpec, task: Task, env: Environment, *, solo: bool = False,
                human: HumanSource | None = None, on_retry: RetryListener | None = None) -> Participant:
    check_spec(spec, "agent")
    brief = agent_brief(task, env, solo)
    if spec.is_scripted:
        return SCRIPTED_AGENTS[spec.model](task, brief, dict(spec.llm_args or {}))
    if spec.is_human:
        if human is None:
            raise ParticipantSpecError("a human agent needs an input source")
        return HumanAgent(brief, human)
    return LLMAgent(brief, spec.settings(), on_retry)


def build_user(spec: ParticipantSpec, task: Task, env: Environment, *, solo: bool = False,
               human: HumanSource | None = None, on_retry: RetryListener | None = None) -> Participant:
    """The user side; in solo mode there is no user, whatever the spec says (tau2's dummy user)."""
    if solo:
        return NoUser()
    check_spec(spec, "user")
    brief = user_brief(task, env)
    if spec.is_scripted:
        return SCRIPTED_USERS[spec.model](task, brief, dict(spec.llm_args or {}))
    if spec.is_human:
        if human is None:
            raise ParticipantSpecError("a human user needs an input source")
        return HumanUser(brief, human)
    return LLMUser(brief, spec.settings(), on_retry)
