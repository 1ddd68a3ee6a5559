"""Human turns: what a person is shown when it is their turn, and what they answer.

A human participant asks its ``HumanSource`` for each turn with a
``TurnRequest`` (the conversation as that side sees it and the tools it may
call) and waits for a ``HumanReply``: a message, or tool calls given as a
tool name plus a dict of arguments (what a form with the tool's parameters
produces). ``QueueSource`` is the source a UI drives: requests come out of
one asyncio queue (or a callback), replies go in through ``reply()``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from tau_tui.model.messages import Message


@dataclass(frozen=True)
class ToolRequest:
    """One tool call filled in by a person: a tool name and its arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HumanReply:
    """A person's turn: a message, or one or more tool calls (never both)."""

    text: str | None = None
    tool_calls: tuple[ToolRequest, ...] = ()

    @classmethod
    def say(cls, text: str) -> HumanReply:
        return cls(text=text)

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any] | None = None) -> HumanReply:
        return cls(tool_calls=(ToolRequest(name, dict(arguments or {})),))


@dataclass
class TurnRequest:
    """It is a person's turn: what their side has seen (``incoming`` last) and what they may call."""

    side: str  # "agent" | "user"
    history: list[Message]
    incoming: list[Message]
    tools: list[dict[str, Any]]

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    def schema(self, name: str) -> dict[str, Any] | None:
        return next((t for t in self.tools if t["function"]["name"] == name), None)


class HumanSource(Protocol):
    async def __call__(self, request: TurnRequest) -> HumanReply: ...


def argument_problems(schema: dict[str, Any], arguments: Any) -> list[str]:
    """What is wrong with a filled-in form: not an object, unknown or missing parameters."""
    if not isinstance(arguments, dict):
        return [f"arguments must be an object, not {type(arguments).__name__}"]
    params = schema["function"]["parameters"]
    known = set(params.get("properties", {}))
    problems = [f"unknown parameter {k!r}" for k in arguments if k not in known]
    problems += [f"missing parameter {k!r}" for k in params.get("required", []) if k not in arguments]
    return problems


def check_reply(request: TurnRequest, reply: HumanReply) -> None:
    """Refuse a reply the participant could not send: empty, mixed, or naming a tool it does not have.

    Arguments are not checked against the schema beyond being an object: as
    for a model, the environment answers a wrong call with an error.
    """
    has_text = bool(reply.text and reply.text.strip())
    if has_text and reply.tool_calls:
        raise ValueError("a turn is either a message or tool calls, not both")
    if not has_text and not reply.tool_calls:
        raise ValueError("an empty turn: write a message or call a tool")
    for call in reply.tool_calls:
        if call.name not in request.tool_names:
            raise ValueError(f"no tool named {call.name!r} on the {request.side} side")
        if not isinstance(call.arguments, dict):
            raise ValueError(f"{call.name}: arguments must be an object")


class QueueSource:
    """A human source driven from outside (a TUI screen, a test, a line reader).

    Each turn puts a ``TurnRequest`` on ``requests`` (and calls ``on_request``
    if given, e.g. to post a Textual message), then waits for ``reply()``.
    ``pending`` is the request waiting for an answer, if any.
    """

    def __init__(self, on_request: Callable[[TurnRequest], None] | None = None):
        self.on_request = on_request
        self.requests: asyncio.Queue[TurnRequest] = asyncio.Queue()
        self._replies: asyncio.Queue[HumanReply] = asyncio.Queue()
        self.pending: TurnRequest | None = None

    async def __call__(self, request: TurnRequest) -> HumanReply:
        self.pending = request
        if self.on_request is not None:
            self.on_request(request)
        self.requests.put_nowait(request)
        try:
            return await self._replies.get()
        finally:
            self.pending = None

    def reply(self, reply: HumanReply) -> None:
        """Answer the pending turn; raises ``ValueError`` (nothing is sent) if the reply is not acceptable."""
        if self.pending is None:
            raise ValueError("it is not this participant's turn")
        check_reply(self.pending, reply)
        self._replies.put_nowait(reply)

    async def next_request(self) -> TurnRequest:
        """Wait until it is the person's turn."""
        return await self.requests.get()
