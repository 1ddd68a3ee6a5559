"""One episode's front to the environment: attempt counters, injected faults and a call log.

The orchestrator sends every tool call of an episode through a ``ToolBackend``.
``EpisodeTools`` is the live one: it counts attempts per operation (tool +
arguments), asks the task's fault plan whether this attempt fails, and either
answers with the fault or lets the environment run the call. A new episode
gets a new ``EpisodeTools``, so its counters start at zero. The call log keeps
private copies of what was asked and answered: nothing a caller does to the
objects it got back changes the log (or the environment, which hands out
copies too). A cassette (``tau_tui.rollout.cassette``) is the other backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.env.environment import Environment
from tau_tui.env.faults import FAULT_KEY, AttemptCounter, FaultPlan, InjectedFault
from tau_tui.env.store import clone
from tau_tui.model.messages import Message, ParticipantMessage, ToolCall, ToolMessage

REFUSAL_KEY = "refused"  # on a tool message: the backend refused the call, which was never carried out
NOT_RUN = "not_run"  # refusal reason of the calls left in a message after the episode ended
CASSETTE_KEY = "cassette"  # on a tool message a cassette served: where the result was recorded (sim, step)


def refusal_mark(message: Message) -> dict[str, Any] | None:
    """The ``refused`` mark of a tool message, if it has one."""
    if not isinstance(message, ToolMessage):
        return None
    mark = (message.model_extra or {}).get(REFUSAL_KEY)
    return mark if isinstance(mark, dict) else None


def cassette_mark(message: Message) -> dict[str, Any] | None:
    """The ``cassette`` mark of a served tool message (the simulation and step it was recorded at), if any."""
    if not isinstance(message, ToolMessage):
        return None
    mark = (message.model_extra or {}).get(CASSETTE_KEY)
    return mark if isinstance(mark, dict) else None


def refused_message(tool_call: ToolCall, text: str, mark: dict[str, Any]) -> ToolMessage:
    """The error result of a call that was refused (``mark`` says why)."""
    message = ToolMessage(id=tool_call.id, content=text, requestor=tool_call.requestor, error=True)
    setattr(message, REFUSAL_KEY, dict(mark))
    return message


def not_run_message(tool_call: ToolCall) -> ToolMessage:
    """The result of a call left in a message when an earlier call of it ended the episode."""
    return refused_message(
        tool_call,
        "Error: not run: the episode ended at an earlier call of this message",
        {"reason": NOT_RUN, "tool": tool_call.name},
    )


class ToolBackend:
    """Where an episode's tool calls go; ``call`` answers one call with its tool message."""

    def call(self, tool_call: ToolCall) -> ToolMessage:
        raise NotImplementedError

    def prime(self, history: list[Message]) -> None:
        """Take in the calls already made before the episode resumes (a task history, a fork)."""

    def episode_info(self) -> dict[str, Any]:
        """What the simulation's ``info`` should record about this backend."""
        return {}


@dataclass(frozen=True)
class LoggedCall:
    """One call as the episode's environment saw it (private copies only)."""

    index: int
    call_id: str
    tool: str
    requestor: str
    arguments: Any
    attempt: int
    content: str
    error: bool
    fault: InjectedFault | None = None


def answered_calls(history: list[Message]) -> list[ToolCall]:
    """The tool calls in ``history`` that have a result, in the order their results came."""
    calls: dict[str, ToolCall] = {}
    out: list[ToolCall] = []
    for message in history:
        if isinstance(message, ParticipantMessage):
            for call in message.tool_calls or []:
                calls[call.id] = call
        elif isinstance(message, ToolMessage) and message.id in calls:
            out.append(calls.pop(message.id))
    return out


class EpisodeTools(ToolBackend):
    """The live backend: faults from the task's plan, then the environment."""

    def __init__(self, env: Environment, plan: FaultPlan | None = None):
        self.env = env
        self.plan = plan
        self.attempts = AttemptCounter()
        self.log: list[LoggedCall] = []

    def prime(self, history: list[Message]) -> None:
        for call in answered_calls(history):
            self.attempts.next(call.name, call.arguments)

    def call(self, tool_call: ToolCall) -> ToolMessage:
        attempt = self.attempts.next(tool_call.name, tool_call.arguments)
        fault = self.plan.fault_for(tool_call.name, tool_call.arguments, attempt) if self.plan else None
        if fault is not None and fault.withheld:
            message = ToolMessage(id=tool_call.id, content=fault.text(), requestor=tool_call.requestor, error=True)
        else:
            message = self.env.call(tool_call)
        if fault is not None:
            setattr(message, FAULT_KEY, fault.mark())
        self.log.append(
            LoggedCall(
                len(self.log),
                tool_call.id,
                tool_call.name,
                tool_call.requestor,
                clone(tool_call.arguments),
                attempt,
                message.text,
                bool(message.error),
                fault,
            )
        )
        return message

    @property
    def injected(self) -> list[LoggedCall]:
        """The calls of this episode that got an injected fault."""
        return [entry for entry in self.log if entry.fault is not None]
