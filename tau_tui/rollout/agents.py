"""Agents: an LLM agent, the scripted gold agent, and a human agent."""

from __future__ import annotations

import copy
import json
from typing import Any

from tau_tui.env.faults import is_withheld_fault
from tau_tui.llm.chat import new_call_id
from tau_tui.llm.client import LLMSettings, RetryListener, complete, completion_message
from tau_tui.model.messages import (
    AssistantMessage,
    Message,
    ParticipantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau_tui.model.tasks import Action, Task
from tau_tui.rollout.human import HumanReply, HumanSource, TurnRequest
from tau_tui.rollout.participants import AGENT, AgentBrief, Participant
from tau_tui.rollout.prompts import SOLO_DONE_TOOL, STOP
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolTexts


def _solo_stop(message: ParticipantMessage) -> ParticipantMessage:
    """tau2's solo agent: a call to ``done`` turns the whole message into the stop token."""
    if message.tool_calls and any(call.name == SOLO_DONE_TOOL for call in message.tool_calls):
        message.content = STOP
        message.tool_calls = None
    return message


def _has_stop(message: ParticipantMessage) -> bool:
    return isinstance(message.content, str) and STOP in message.content


class LLMTurns:
    """A side played by a litellm model: its settings (a private copy), seed and retry listener."""

    llm: str | None = None  # as ``Participant.llm``: the model this side records

    def use_model(self, settings: LLMSettings, on_retry: RetryListener | None) -> None:
        self.settings = LLMSettings(settings.model, dict(settings.args), settings.timeout, settings.retry)
        self.llm = settings.model
        self.on_retry = on_retry

    def set_seed(self, seed: int | None) -> None:
        if seed is not None:
            self.settings.args["seed"] = seed

    def llm_args(self) -> dict[str, Any]:
        return dict(self.settings.args)


class LLMAgent(LLMTurns, Participant):
    """An agent backed by any litellm model: the policy in the system prompt, tools as function schemas.

    Like tau2's ``LLMAgent`` it never ends the conversation itself (the user
    does); in solo mode it must call tools every turn and ends by calling ``done``.
    """

    side = AGENT

    def __init__(
        self,
        brief: AgentBrief,
        settings: LLMSettings,
        on_retry: RetryListener | None = None,
        protocol: ProtocolTexts = OWN_PROTOCOL,
    ):
        super().__init__()
        self.brief = brief
        self.use_model(settings, on_retry)
        self.implementation = "llm_agent_solo" if brief.solo else "llm_agent"
        self.system_prompt = protocol.agent_system_prompt(brief.policy, brief.solo, brief.ticket)

    def prompt(self) -> list[Message]:
        """Exactly the messages the model is given for its next turn."""
        return [SystemMessage(content=self.system_prompt), *self.history]

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        completion = await complete(
            self.settings,
            self.prompt(),
            self.brief.tools,
            tool_choice="required" if self.brief.solo else None,
            on_retry=self.on_retry,
        )
        message = completion_message("assistant", completion)
        return _solo_stop(message) if self.brief.solo else message

    def is_stop(self, message: ParticipantMessage) -> bool:
        return self.brief.solo and _has_stop(message)


def ask_user_text(action: Action) -> str:
    """How the gold agent asks the user to run one of the user's own tools (the scripted user parses it)."""
    return (
        f"Please do this on your side: call `{action.name}` with arguments "
        f"{json.dumps(action.arguments, sort_keys=True)} and tell me what you get."
    )


def closing_text(task: Task, transferred: bool) -> str:
    """The gold agent's last message: every required piece of information, then a close."""
    criteria = task.evaluation_criteria
    info = [i for i in (criteria.communicate_info or []) if i] if criteria is not None else []
    parts = []
    if info:
        parts.append("Here is what you need to know: " + "; ".join(info) + ".")
    if transferred:
        parts.append("I have transferred you to a human agent; they will take it from here.")
    else:
        parts.append("Your request has been handled. Is there anything else I can help you with?")
    return " ".join(parts)


class GoldAgent(Participant):
    """``scripted/gold``: performs the task's expected actions in order, says what it must, then ends.

    It reads the task's evaluation criteria: it is the reference solution, not
    an agent under test. Actions whose requestor is the user are asked of the
    user (in solo mode the agent runs them itself, as tau2 routes user tools
    to the user toolkit there). One tool call per turn; a call that an
    injected fault kept from being carried out (a timeout, a transient error)
    is retried, up to ``MAX_FAULT_RETRIES`` times. After its closing message
    it answers anything further with the stop token (agent_stop).
    """

    MAX_FAULT_RETRIES = 3

    side = AGENT
    implementation = "scripted_gold"
    llm = "scripted/gold"

    def __init__(self, task: Task, brief: AgentBrief):
        super().__init__()
        self.task = task
        self.brief = brief
        self.plan: list[tuple[str, Action | None]] = []
        for action in task.expected_actions:
            kind = "ask" if action.requestor == "user" and not brief.solo else "call"
            self.plan.append((kind, action))
        self.plan.append(("done" if brief.solo else "close", None))
        self.position = 0
        transfers = [a for a in task.expected_actions if a.name == "transfer_to_human_agents"]
        self.transferred = bool(transfers)
        self.last_call: ToolCall | None = None
        self.retries = 0

    def _retry(self, incoming: list[Message]) -> AssistantMessage | None:
        """The last call again, when an injected fault kept it from being carried out."""
        last = self.last_call
        if last is None:
            return None
        result = next((m for m in incoming if isinstance(m, ToolMessage) and m.id == last.id), None)
        if result is None or not is_withheld_fault(result) or self.retries >= self.MAX_FAULT_RETRIES:
            return None
        self.retries += 1
        self.last_call = ToolCall(
            id=new_call_id(), name=last.name, arguments=copy.deepcopy(last.arguments), requestor="assistant"
        )
        return AssistantMessage(content=None, tool_calls=[self.last_call], cost=0.0)

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        retry = self._retry(incoming)
        if retry is not None:
            return retry
        if self.position >= len(self.plan):
            return AssistantMessage(content=f"Everything for this request is done. {STOP}", cost=0.0)
        kind, action = self.plan[self.position]
        self.position += 1
        if kind == "call" and action is not None:
            call = ToolCall(
                id=new_call_id(), name=action.name, arguments=copy.deepcopy(action.arguments), requestor="assistant"
            )
            self.last_call, self.retries = call, 0
            return AssistantMessage(content=None, tool_calls=[call], cost=0.0)
        if kind == "ask" and action is not None:
            return AssistantMessage(content=ask_user_text(action), cost=0.0)
        if kind == "done":
            return AssistantMessage(content=STOP, cost=0.0)
        return AssistantMessage(content=closing_text(self.task, self.transferred), cost=0.0)

    def is_stop(self, message: ParticipantMessage) -> bool:
        return _has_stop(message)


def reply_message(reply: HumanReply, role: str) -> ParticipantMessage:
    """A person's reply as a trajectory message (no model, so cost 0.0)."""
    cls = AssistantMessage if role == "assistant" else UserMessage
    if reply.tool_calls:
        calls = [
            ToolCall(id=new_call_id(), name=c.name, arguments=dict(c.arguments), requestor=role)
            for c in reply.tool_calls
        ]
        return cls(content=None, tool_calls=calls, cost=0.0)
    return cls(content=reply.text, cost=0.0)


class HumanTurns:
    """A side played by a person: each turn is a ``TurnRequest`` answered by ``source`` (a form, a prompt)."""

    def __init__(self, brief: Any, source: HumanSource):
        super().__init__()
        self.brief = brief
        self.source = source

    async def human_reply(self, side: str, role: str, incoming: list[Message]) -> ParticipantMessage:
        request = TurnRequest(side, list(self.history), list(incoming), self.brief.tools)  # type: ignore[attr-defined]
        return reply_message(await self.source(request), role)


class HumanAgent(HumanTurns, Participant):
    """A person playing the agent: writes messages, calls the agent's tools through structured requests.

    Sending a message containing ###STOP### ends the conversation (agent_stop);
    in solo mode, calling ``done`` does.
    """

    side = AGENT
    implementation = "human_agent"
    llm = "human"
    brief: AgentBrief

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        message = await self.human_reply(AGENT, "assistant", incoming)
        return _solo_stop(message) if self.brief.solo else message

    def is_stop(self, message: ParticipantMessage) -> bool:
        return _has_stop(message)
