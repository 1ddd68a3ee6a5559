"""The participant interface, and what each side is allowed to know.

An episode has two participants, the agent and the user. The orchestrator
hands each one only the messages its side sees (tau2's rules: the agent sees
every assistant message, user messages without tool calls and tool results
it asked for; the user sees every user message, agent messages without tool
calls and tool results it asked for) and asks it for its next message.

What a participant is given at the start is a brief: ``AgentBrief`` holds the
domain policy, the agent's tool schemas and, in solo mode, the ticket;
``UserBrief`` holds the task's user scenario and the user's tool schemas. The
task itself, with its evaluation criteria, goes to nobody but the scripted
gold agent, which is an oracle by definition.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tau_tui.env.environment import Environment
from tau_tui.env.tool_schema import toolkit_schemas
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage, ToolMessage, UserMessage
from tau_tui.model.tasks import Task, UserScenario
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolTexts

AGENT, USER = "agent", "user"


def agent_sees(message: Message) -> bool:
    """tau2's agent history rule."""
    return (
        isinstance(message, AssistantMessage)
        or (isinstance(message, UserMessage) and not message.is_tool_call)
        or (isinstance(message, ToolMessage) and message.requestor == "assistant")
    )


def user_sees(message: Message) -> bool:
    """tau2's user history rule."""
    return (
        isinstance(message, UserMessage)
        or (isinstance(message, AssistantMessage) and not message.is_tool_call)
        or (isinstance(message, ToolMessage) and message.requestor == "user")
    )


@dataclass(frozen=True)
class AgentBrief:
    """Everything an agent may know before the conversation: policy, tools, and the ticket in solo mode."""

    domain: str
    policy: str
    tools: list[dict[str, Any]]
    solo: bool = False
    ticket: str | None = None

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]


@dataclass(frozen=True)
class UserBrief:
    """Everything the user may know: the task's scenario and the user's own tools."""

    scenario: UserScenario | None
    tools: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scenario_text(self) -> str:
        return self.scenario.render() if self.scenario is not None else ""

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]


def agent_brief(task: Task, env: Environment, solo: bool = False, protocol: ProtocolTexts | None = None) -> AgentBrief:
    """The agent's tools are the agent toolkit's (plus every user tool and ``done`` in solo mode, described as
    ``protocol`` describes it)."""
    protocol = protocol or OWN_PROTOCOL
    tools = toolkit_schemas(env.agent)
    if solo:
        tools += toolkit_schemas(env.user) + [protocol.done_schema()]
    tools = protocol.agent_tools(tools, solo)
    return AgentBrief(env.domain_name, env.policy, tools, solo, task.ticket if solo else None)


def user_brief(task: Task, env: Environment, protocol: ProtocolTexts | None = None) -> UserBrief:
    """The user's tools: the user toolkit filtered by ``task.user_tools`` (None: all; []: none), described as
    ``protocol`` describes them."""
    ours = toolkit_schemas(env.user, include=task.user_tools)
    return UserBrief(task.user_scenario, (protocol or OWN_PROTOCOL).user_tools(ours, task.user_tools))


class ParticipantError(Exception):
    """A participant broke the protocol (empty message, text in solo mode...)."""


class Participant(ABC):
    """One side of an episode. ``respond`` gets the messages addressed to it since its last turn."""

    side: ClassVar[str]
    implementation: str = "participant"
    llm: str | None = None

    def __init__(self) -> None:
        self.history: list[Message] = []

    def start(self, history: list[Message]) -> None:
        """Seed the conversation as this side sees it (a task's message history)."""
        self.history = list(history)

    def set_seed(self, seed: int | None) -> None:  # noqa: B027 - a hook: most participants have no seed to set
        """The trial's seed (LLM participants pass it to the model)."""

    def add_tools(self, schemas: list[dict[str, Any]]) -> None:
        """Tools this side found during the episode (discoverable ones): listed to it from its next turn."""
        tools = getattr(getattr(self, "brief", None), "tools", None)
        if isinstance(tools, list):
            known = {t["function"]["name"] for t in tools}
            tools.extend(s for s in schemas if s["function"]["name"] not in known)

    def llm_args(self) -> dict[str, Any]:
        """The model arguments to record (never secrets; see ``records.public_llm_args``)."""
        return {}

    def info(self) -> dict[str, Any]:
        """This participant as tau2's ``agent_info`` / ``user_info``."""
        return {"implementation": self.implementation, "llm": self.llm, "llm_args": self.llm_args()}

    async def respond(self, incoming: list[Message]) -> ParticipantMessage:
        """Take in ``incoming`` (one text message, or the tool results of our own calls) and answer."""
        self.history.extend(incoming)
        message = await self.generate(incoming)
        self.history.append(message)
        return message

    @abstractmethod
    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        """The next message; ``self.history`` already holds ``incoming``."""

    def is_stop(self, message: ParticipantMessage) -> bool:
        return False

    async def close(self) -> None:  # noqa: B027 - a hook: most participants hold nothing to release
        """Release resources at the end of the episode."""
