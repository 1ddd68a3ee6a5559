"""A scripted agent that follows a fixed list of steps: for demo recordings, tests and cassette runs.

Each step is either text the agent says, or ``(tool, arguments)`` — one tool
call in its own turn. It does not look at what comes back, except that with
``retry_faults`` a call an injected fault kept from running (a timeout, a
temporary error) is made again, as a patient agent would. Once the steps run
out it ends the conversation (###STOP###, agent_stop).
"""

from __future__ import annotations

import copy
from typing import Any, Union

from tau_tui.env.faults import is_withheld_fault
from tau_tui.llm.chat import new_call_id
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage, ToolCall, ToolMessage
from tau_tui.rollout.participants import AGENT, Participant
from tau_tui.rollout.prompts import STOP

Step = Union[str, tuple[str, dict[str, Any]]]


class StepAgent(Participant):
    side = AGENT
    implementation = "scripted_steps"

    def __init__(
        self, steps: list[Step], *, name: str = "scripted/steps", retry_faults: bool = False, max_retries: int = 3
    ):
        super().__init__()
        self.steps = list(steps)
        self.llm = name
        self.retry_faults = retry_faults
        self.max_retries = max_retries
        self.last_call: ToolCall | None = None
        self.retries = 0

    def _call(self, name: str, arguments: dict[str, Any]) -> AssistantMessage:
        self.last_call = ToolCall(
            id=new_call_id(), name=name, arguments=copy.deepcopy(arguments), requestor="assistant"
        )
        return AssistantMessage(content=None, tool_calls=[self.last_call], cost=0.0)

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        last = self.last_call
        result = next(
            (m for m in incoming if isinstance(m, ToolMessage) and last is not None and m.id == last.id), None
        )
        if (
            self.retry_faults
            and result is not None
            and is_withheld_fault(result)
            and self.retries < self.max_retries
            and last is not None
        ):
            self.retries += 1
            return self._call(last.name, last.arguments)
        self.retries = 0
        if not self.steps:
            return AssistantMessage(content=f"Thank you for calling. {STOP}", cost=0.0)
        step = self.steps.pop(0)
        if isinstance(step, str):
            return AssistantMessage(content=step, cost=0.0)
        name, arguments = step
        return self._call(name, arguments)

    def is_stop(self, message: ParticipantMessage) -> bool:
        return isinstance(message.content, str) and STOP in message.content
