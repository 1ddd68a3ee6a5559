"""Tool calls for models without native tool calling: every reply is one JSON object, held to a schema.

A small local model (SmolLM2 behind llama-cpp-python's server, say) has no tool-call format of
its own. With the model argument ``"tool_protocol": "json_schema"`` (in ``--agent-llm-args`` /
``--user-llm-args``; taken out before the call), ``complete`` sends no ``tools``: the system
prompt lists the tools and asks for either ``{"message": TEXT}`` or ``{"tool": NAME,
"arguments": {...}}``, and ``response_format`` carries a JSON schema of exactly those shapes
(one branch per tool, its parameters as declared), which a server such as llama-cpp-python
turns into a grammar that the sampler cannot leave. Earlier tool calls and results are shown
to the model in the same JSON shape, as plain chat turns. The reply is parsed back into text
or one ``ToolCall``; anything else is a ``MalformedToolCall`` (the episode ends with
agent_error, the raw reply kept), exactly as a malformed native tool call.
"""

from __future__ import annotations

import json
from typing import Any

from tau_tui.model.messages import ToolCall
from tau_tui.model.nesting import MAX_NESTING, too_deep

TOOL_PROTOCOL_ARG = "tool_protocol"
JSON_SCHEMA = "json_schema"
PROTOCOLS = (JSON_SCHEMA,)


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    found = tool.get("function", tool) if isinstance(tool, dict) else {}
    return found if isinstance(found, dict) else {}


def _parameters(tool: dict[str, Any]) -> dict[str, Any]:
    parameters = _function(tool).get("parameters")
    if not isinstance(parameters, dict) or not parameters:
        return {"type": "object", "properties": {}}
    return parameters


def reply_schema(tools: list[dict[str, Any]], require_tool: bool = False) -> dict[str, Any]:
    """The JSON schema of one reply: a message, or a call of one of ``tools`` with its declared parameters."""
    branches: list[dict[str, Any]] = []
    if not require_tool:
        branches.append(
            {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
                "additionalProperties": False,
            }
        )
    for tool in tools:
        name = _function(tool).get("name")
        if isinstance(name, str) and name:
            branches.append(
                {
                    "type": "object",
                    "properties": {"tool": {"const": name}, "arguments": _parameters(tool)},
                    "required": ["tool", "arguments"],
                    "additionalProperties": False,
                }
            )
    return {"anyOf": branches}


def response_format(tools: list[dict[str, Any]], require_tool: bool = False) -> dict[str, Any]:
    """``response_format`` for the call: JSON held to ``reply_schema`` (llama-cpp-python's and OpenAI's shapes)."""
    schema = reply_schema(tools, require_tool)
    return {"type": "json_object", "schema": schema}


def instructions(tools: list[dict[str, Any]], require_tool: bool = False) -> str:
    """What the system prompt gains: the reply format and the tools, one line each."""
    lines = ["", "# How to reply", "Reply with exactly one JSON object and nothing else."]
    if not require_tool:
        lines.append('To write to the other party: {"message": "your text"}')
    lines.append('To call a tool: {"tool": "tool_name", "arguments": {...}}')
    lines.append("One tool call per reply; its result comes back in the next message.")
    lines.append("# Tools")
    for tool in tools:
        function = _function(tool)
        properties = _parameters(tool).get("properties") or {}
        args = ", ".join(
            f"{name}: {spec.get('type', 'any') if isinstance(spec, dict) else 'any'}"
            for name, spec in properties.items()
        )
        description = " ".join(str(function.get("description") or "").split())
        lines.append(f"- {function.get('name')}({args}){': ' + description if description else ''}")
    return "\n".join(lines)


def _call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except (TypeError, json.JSONDecodeError):
        arguments = function.get("arguments")
    return json.dumps({"tool": function.get("name"), "arguments": arguments})


def plain_messages(
    payload: list[dict[str, Any]], tools: list[dict[str, Any]], require_tool: bool = False
) -> list[dict[str, Any]]:
    """The chat-completions messages with tool calls and results as plain turns in the reply format."""
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for entry in payload
        for call in entry.get("tool_calls") or []
    }
    out: list[dict[str, Any]] = []
    added = False
    for entry in payload:
        role = entry.get("role")
        if role == "system" and not added:
            out.append(
                {"role": "system", "content": (entry.get("content") or "") + "\n" + instructions(tools, require_tool)}
            )
            added = True
        elif role == "assistant":
            if entry.get("content"):
                out.append({"role": "assistant", "content": json.dumps({"message": entry["content"]})})
            for call in entry.get("tool_calls") or []:
                out.append({"role": "assistant", "content": _call_text(call)})
        elif role == "tool":
            name = names.get(entry.get("tool_call_id")) or "the tool"
            out.append({"role": "user", "content": f"Result of {name}: {entry.get('content') or ''}"})
        else:
            out.append({"role": role, "content": entry.get("content") or ""})
    if not added:
        out.insert(0, {"role": "system", "content": instructions(tools, require_tool).lstrip()})
    return out


class ReplyError(ValueError):
    """A reply that is not one of the shapes the schema allows; ``str()`` is one line."""


def parse_reply(content: Any, call_id: str) -> tuple[str | None, list[ToolCall] | None]:
    """(text, None) or (None, [call]) from the model's JSON reply; ``ReplyError`` for anything else."""
    if not isinstance(content, str) or not content.strip():
        raise ReplyError("the reply is empty, not a JSON object")
    try:
        data = json.loads(content, strict=False)  # a raw newline inside a string is still the model's text
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON ({exc})") from None
    except RecursionError:
        raise ReplyError("the reply is nested too deeply") from None
    if not isinstance(data, dict):
        raise ReplyError(f"the reply is a JSON {type(data).__name__}, not an object")
    if "tool" in data:  # a name that is not a tool goes through, as a native call would: it is never executed
        name = data.get("tool")
        if not isinstance(name, str) or not name:
            raise ReplyError('"tool" is not a tool name')
        arguments = data.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ReplyError(f"the arguments of {name!r} are a JSON {type(arguments).__name__}, not an object")
        if too_deep(arguments):
            raise ReplyError(f"the arguments of {name!r} are nested deeper than {MAX_NESTING} levels")
        return None, [ToolCall(id=call_id, name=name, arguments=arguments)]
    message = data.get("message")
    if isinstance(message, str):
        return message, None
    raise ReplyError('the reply has neither "message" (text) nor "tool"')
