"""Users: an LLM user simulator, the scripted user, a human user, and the empty user of solo mode."""

from __future__ import annotations

import json
import re
from typing import Any

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
from tau_tui.model.tasks import StructuredInstructions
from tau_tui.rollout.agents import HumanTurns, LLMTurns
from tau_tui.rollout.participants import USER, Participant, ParticipantError, UserBrief
from tau_tui.rollout.prompts import OUT_OF_SCOPE, STOP, TRANSFER, is_user_stop
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolTexts
from tau_tui.textsafe import clip


class _UserSide(Participant):
    side = USER

    def is_stop(self, message: ParticipantMessage) -> bool:
        """tau2: a text message holding ###STOP###, ###TRANSFER### or ###OUT-OF-SCOPE### ends the episode."""
        return not message.is_tool_call and is_user_stop(message.content)


def flip_roles(history: list[Message]) -> list[Message]:
    """The user's view with roles swapped for its model: its own turns become the assistant's."""
    out: list[Message] = []
    for message in history:
        if isinstance(message, UserMessage):
            out.append(AssistantMessage(content=message.content, tool_calls=message.tool_calls))
        elif isinstance(message, AssistantMessage) and not message.is_tool_call:
            out.append(UserMessage(content=message.content))
        elif isinstance(message, ToolMessage) and message.requestor == "user":
            out.append(ToolMessage(id=message.id, content=message.content))
    return out


class LLMUser(LLMTurns, _UserSide):
    """tau2's user simulator on any litellm model: guidelines plus the task's scenario, user tools if any."""

    implementation = "user_simulator"

    def __init__(
        self,
        brief: UserBrief,
        settings: LLMSettings,
        on_retry: RetryListener | None = None,
        protocol: ProtocolTexts = OWN_PROTOCOL,
    ):
        super().__init__()
        self.brief = brief
        self.use_model(settings, on_retry)
        self.protocol = protocol
        self.system_prompt = protocol.user_system_prompt(brief.scenario_text, with_tools=bool(brief.tools))

    def info(self) -> dict[str, Any]:
        return {**super().info(), "global_simulation_guidelines": self.protocol.recorded_guidelines()}

    def prompt(self) -> list[Message]:
        """Exactly the messages the model is given for its next turn."""
        return [SystemMessage(content=self.system_prompt), *flip_roles(self.history)]

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        completion = await complete(self.settings, self.prompt(), self.brief.tools or None, on_retry=self.on_retry)
        return completion_message("user", completion)


CLOSING_CUES = ("anything else", "something else i can", "have a great day", "have a nice day", "goodbye")
_TRANSFER_CUE = re.compile(
    r"\btransferr?(?:ed|ing)?\b.*\b(?:human|agent|specialist|representative)\b", re.IGNORECASE | re.DOTALL
)
_DECODER = json.JSONDecoder()


def _clip(text: str, limit: int = 600) -> str:
    return clip(text, limit, " …")


def requested_tool(text: str, tool_names: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The user tool the agent asks for in ``text`` (first mentioned) and the JSON object after its name."""
    found = []
    for name in tool_names:
        match = re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)
        if match:
            found.append((match.start(), match.end(), name))
    if not found:
        return None
    _, end, name = min(found)
    arguments: dict[str, Any] = {}
    brace = text.find("{", end)
    while brace >= 0:
        try:
            value, _ = _DECODER.raw_decode(text, brace)
        except json.JSONDecodeError:
            brace = text.find("{", brace + 1)
            continue
        if isinstance(value, dict):
            arguments = value
        break
    return name, arguments


class ScriptedUser(_UserSide):
    """``scripted/user``: a deterministic customer for offline runs.

    On its first turn it states the reason for the call (unless the agent is
    already closing, as when a fork resumes near the end). Then it runs a user
    tool when the agent names one of its tools (arguments: the JSON object
    after the name) and reports the result, gives its known info once when
    asked a question, ends with ###TRANSFER### after a transfer and with
    ###STOP### once the agent closes ("anything else?"). It says
    ###OUT-OF-SCOPE### after three turns with nothing to add, and ###STOP###
    after ``max_turns`` turns.
    """

    implementation = "scripted_user"
    llm = "scripted/user"

    def __init__(self, brief: UserBrief, max_turns: int = 30):
        super().__init__()
        self.brief = brief
        self.max_turns = max_turns
        self.turns = 0
        self.stated_reason = False
        self.gave_known_info = False
        self.idle_turns = 0

    def _say(self, text: str) -> UserMessage:
        return UserMessage(content=text, cost=0.0)

    def reason(self) -> str:
        """The reason for the call, without the end-of-call markers free-text instructions may quote."""
        scenario = self.brief.scenario
        if scenario is None:
            return "Hi, I need some help."
        instructions = scenario.instructions
        if isinstance(instructions, StructuredInstructions):
            text = instructions.reason_for_call.strip() or instructions.task_instructions.strip()
        else:
            text = str(instructions).strip()
        for marker in (STOP, TRANSFER, OUT_OF_SCOPE):
            text = text.replace(marker, "")
        return text.strip() or "Hi, I need some help."

    def known_info(self) -> str | None:
        scenario = self.brief.scenario
        if scenario is not None and isinstance(scenario.instructions, StructuredInstructions):
            return scenario.instructions.known_info
        return None

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        self.turns += 1
        last = incoming[-1] if incoming else None
        if isinstance(last, ToolMessage):
            results = " | ".join(_clip(m.text) for m in incoming if isinstance(m, ToolMessage))
            return self._say(f"I did that. This is what I got: {results}")
        if self.turns > self.max_turns:
            return self._say(f"I have to go now. {STOP}")
        text = last.text if last is not None else ""
        request = requested_tool(text, self.brief.tool_names) if self.stated_reason else None
        if request is not None:
            name, arguments = request
            self.idle_turns = 0
            call = ToolCall(id=new_call_id(), name=name, arguments=arguments, requestor="user")
            return UserMessage(content=None, cost=0.0, tool_calls=[call])
        if _TRANSFER_CUE.search(text):
            return self._say(TRANSFER)
        if any(cue in text.lower() for cue in CLOSING_CUES):
            return self._say(f"No, that's all. Thank you! {STOP}")
        if not self.stated_reason:
            self.stated_reason = True
            return self._say(self.reason())
        known = self.known_info()
        if "?" in text and known and not self.gave_known_info:
            self.gave_known_info = True
            return self._say(f"Sure. {known.strip()}")
        self.idle_turns += 1
        if self.idle_turns >= 3:
            return self._say(f"I don't have anything else to go on. {OUT_OF_SCOPE}")
        return self._say("I don't know more than what I told you. Could you go ahead with my request?")


class HumanUser(HumanTurns, _UserSide):
    """A person playing the customer: writes messages, calls the user's tools of dual-control domains.

    A message containing ###STOP### (or ###TRANSFER###, ###OUT-OF-SCOPE###) ends the conversation.
    """

    implementation = "human_user"
    llm = "human"
    brief: UserBrief

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        return await self.human_reply(USER, "user", incoming)


class NoUser(_UserSide):
    """Solo mode has no user (tau2's ``DummyUser``): it is never asked to speak.

    ``recorded``: what ``user_info`` says beyond the implementation. tau2's runner records the user model it was
    given and the plain guidelines even in solo mode, so under protocol ``tau2`` so do we.
    """

    implementation = "dummy_user"

    def __init__(self, recorded: dict[str, Any] | None = None):
        super().__init__()
        self.recorded = dict(recorded or {})

    def info(self) -> dict[str, Any]:
        return {**super().info(), **self.recorded}

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        raise ParticipantError("there is no user in solo mode")
