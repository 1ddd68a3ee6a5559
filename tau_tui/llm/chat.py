"""Our messages in the chat-completions shape, and a reply's message read back into text and tool calls."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tau_tui.llm.failures import BadReply, MalformedToolCall
from tau_tui.model.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from tau_tui.model.nesting import MAX_NESTING, too_deep

JSON = dict[str, Any]


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def to_litellm_messages(messages: list[Message]) -> list[JSON]:
    """Our messages in the chat-completions shape (tool calls with JSON-encoded arguments), key for key as tau2's
    ``to_litellm_messages`` writes them, so a conversation's requests are tau2's requests."""
    out: list[JSON] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: JSON = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [  # with a top-level "name" too, as tau2's runner sends them
                    {
                        "id": call.id,
                        "name": call.name,
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                        "type": "function",
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolMessage):
            out.append({"role": "tool", "content": message.content, "tool_call_id": message.id})
    return out


def content_text(content: Any) -> str | None:
    """A reply message's content as text: a string, None, or the text parts of a list of parts joined;
    anything else is ``BadReply``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str):
                raise BadReply("the reply's content has a part that is not text")
            texts.append(text)
        return "".join(texts)
    raise BadReply(f"the reply's content is a JSON {type(content).__name__}")


def _too_deep(name: str, call_id: str, text: Any) -> MalformedToolCall:
    return MalformedToolCall(
        f"tool call {name!r}: arguments nested deeper than {MAX_NESTING} levels",
        details={"tool": name, "call_id": call_id, "arguments": str(text)[:2000]},
    )


def parse_tool_calls(raw_calls: Any) -> list[ToolCall] | None:
    """The tool calls of a reply's message (JSON) with parsed arguments; ``MalformedToolCall`` when any is
    not a JSON object."""
    calls: list[ToolCall] = []
    for raw in raw_calls if isinstance(raw_calls, list) else []:
        raw = raw if isinstance(raw, dict) else {}
        function = raw.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name") or ""
        text = function.get("arguments")
        call_id = raw.get("id") or new_call_id()
        if not isinstance(call_id, str):
            call_id = new_call_id()
        if not isinstance(name, str):
            raise MalformedToolCall(
                f"tool call: its name is a {type(name).__name__}, not a string",
                details={"tool": None, "call_id": call_id, "arguments": str(text)[:2000]},
            )
        arguments: Any
        if text is None or (isinstance(text, str) and not text.strip()):
            arguments = {}
        elif isinstance(text, dict):
            arguments = text
        else:
            try:
                arguments = json.loads(text)
            except (TypeError, json.JSONDecodeError) as exc:
                raise MalformedToolCall(
                    f"tool call {name!r}: arguments are not valid JSON ({exc})",
                    details={"tool": name, "call_id": call_id, "arguments": str(text)},
                ) from None
            except RecursionError:
                raise _too_deep(name, call_id, text) from None
            if too_deep(arguments):
                raise _too_deep(name, call_id, text)
            if not isinstance(arguments, dict):
                raise MalformedToolCall(
                    f"tool call {name!r}: arguments are a JSON {type(arguments).__name__}, not an object",
                    details={"tool": name, "call_id": call_id, "arguments": str(text)},
                )
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
    return calls or None


__all__ = ["content_text", "new_call_id", "parse_tool_calls", "to_litellm_messages"]
