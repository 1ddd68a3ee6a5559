"""Trajectory messages in tau2's shape, tolerant of drift.

tau2 picks a message's type by its ``role``. Recordings from other tools and
older versions add, drop or mistype fields, so every model here allows extra
keys (kept on save) and ``parse_message`` never raises: a message it cannot
read becomes an ``OtherMessage`` that replay reports as a finding.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tau_tui.model.nesting import clip_nesting, too_deep, was_cut


class Loose(BaseModel):
    """Base for recorded data: unknown keys are kept, nothing is forbidden."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ToolCall(Loose):
    """A tool call a participant made: name, arguments, who requested it."""

    id: str = ""
    name: str = ""
    arguments: Any = Field(default_factory=dict)
    requestor: str = "assistant"

    @field_validator("arguments", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        """Arguments nested deeper than ``MAX_NESTING`` are cut there (see ``tau_tui.model.nesting``)."""
        return clip_nesting(value) if too_deep(value) else value

    @property
    def arguments_cut(self) -> bool:
        """Whether the recorded arguments nested too deep and were cut."""
        return was_cut(self.arguments)

    @field_validator("id", "name", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("requestor", mode="before")
    @classmethod
    def _requestor(cls, value: Any) -> str:
        return "assistant" if value is None else str(value)


class Message(Loose):
    """One message of a trajectory; the subclasses are the roles."""

    role: str
    content: Any = None
    turn_idx: int | None = None
    timestamp: str | None = None

    @field_validator("content", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        """Content that is not text and nests deeper than ``MAX_NESTING`` is cut there."""
        return clip_nesting(value) if not isinstance(value, str) and too_deep(value) else value

    @property
    def text(self) -> str:
        """The content as display text ('' when there is none)."""
        if self.content is None:
            return ""
        return self.content if isinstance(self.content, str) else str(self.content)

    @property
    def is_tool_call(self) -> bool:
        return False


class SystemMessage(Message):
    role: Literal["system"] = "system"


class ParticipantMessage(Message):
    tool_calls: list[ToolCall] | None = None
    cost: float | None = None
    usage: dict[str, Any] | None = None
    raw_data: Any = None

    @property
    def is_tool_call(self) -> bool:
        # tau2: an empty list still counts as a tool call.
        return self.tool_calls is not None


class AssistantMessage(ParticipantMessage):
    role: Literal["assistant"] = "assistant"


class UserMessage(ParticipantMessage):
    role: Literal["user"] = "user"


class ToolMessage(Message):
    role: Literal["tool"] = "tool"
    id: str = ""
    requestor: str = "assistant"
    error: bool = False

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> str:
        return "" if value is None else str(value)


class OtherMessage(Message):
    """A message with an unknown role, or one whose fields could not be read."""

    problem: str | None = Field(default=None, exclude=True)


_BY_ROLE: dict[str, type[Message]] = {
    "system": SystemMessage,
    "assistant": AssistantMessage,
    "user": UserMessage,
    "tool": ToolMessage,
}


def parse_message(raw: Any) -> Message:
    """Build the message model for one raw message; never raises."""
    if not isinstance(raw, dict):
        return OtherMessage(role="?", content=raw, problem=f"message is a {type(raw).__name__}, not an object")
    role = raw.get("role")
    model = _BY_ROLE.get(role) if isinstance(role, str) else None
    if model is None:
        data = {k: v for k, v in raw.items() if k not in ("role", "turn_idx", "timestamp")}
        return OtherMessage(role=str(role), problem=f"unknown role {role!r}", **data)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return OtherMessage(
            role=str(role),
            content=raw.get("content"),
            problem=f"{role} message unreadable at {where or 'top'}: {first.get('msg')}",
        )


def message_to_dict(message: Message) -> dict[str, Any]:
    """Plain JSON-ready dict of a message (extra keys included)."""
    return message.model_dump(mode="json")
