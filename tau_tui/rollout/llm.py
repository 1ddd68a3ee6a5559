"""Talking to any model: message conversion, retries with backoff, cost, tool-call parsing.

A model on an OpenAI-compatible endpoint whose call litellm would only pass on
(``openai/<name>`` with an ``api_base``, arguments litellm sends unchanged, a
name litellm cannot price) is called straight (``direct``); every other model
goes through litellm, imported inside the call (it costs seconds), with its
cost map read from the installed package, never downloaded. Both ways send the
same body and classify failures under the same names. Retries are ours, not
litellm's or the provider SDK's (both are set to 0), so the policy is one
place and a test can count them: rate limits, timeouts, connection failures
5xx answers and replies without a choice (or whose choice has no message)
are retried with exponential backoff, and end as an infrastructure error
once the retries are spent; anything else fails at once. A missing or
refused credential raises ``MissingCredentials`` (``evaluate.credentials``)
at once: it stops the whole run, since every call would fail the same way.
A reply whose tool-call arguments are not a JSON object raises
``MalformedToolCall``; the orchestrator ends the episode with agent_error (or
user_error) and keeps the raw reply in the simulation's ``info``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from tau_tui.evaluate.credentials import is_refusal, refusal
from tau_tui.model.messages import (
    AssistantMessage,
    Message,
    ParticipantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau_tui.model.nesting import MAX_NESTING, too_deep
from tau_tui.rollout import direct, json_tools, spend

# litellm error classes worth another attempt (looked up by name: litellm is imported lazily).
RETRYABLE_ERRORS = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
)


class LLMError(Exception):
    """A model call that did not give a usable reply; ``str()`` is one line."""

    termination = "infrastructure_error"

    def __init__(self, message: str, *, error_type: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.error_type = error_type or type(self).__name__
        self.details = details or {}


class LLMUnavailable(LLMError):
    """The provider failed (after the retries, when the failure was transient)."""


class ContextWindowExceeded(LLMError):
    termination = "context_window_exceeded"


class MalformedToolCall(LLMError):
    """The model asked for a tool call whose arguments are not a JSON object."""

    termination = "agent_error"  # the user side maps it to user_error


class EmptyReply(Exception):
    """A provider reply without a usable choice: a provider failure, retried like a 5xx."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: ``initial * factor**attempt`` seconds, capped at ``max_delay``."""

    max_retries: int = 5
    initial: float = 1.0
    factor: float = 2.0
    max_delay: float = 30.0

    def delay(self, attempt: int) -> float:
        return min(self.max_delay, self.initial * self.factor**attempt)


@dataclass
class Completion:
    """One model reply, parsed."""

    content: str | None
    tool_calls: list[ToolCall] | None
    cost: float
    usage: dict[str, Any] | None
    raw: dict[str, Any] | None
    generation_time: float
    attempts: int = 1


@dataclass
class LLMSettings:
    """A model string and the arguments passed to litellm with every call (temperature, api_base, seed...)."""

    model: str
    args: dict[str, Any] = field(default_factory=dict)
    timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)


RetryListener = Callable[[int, float, BaseException], None]


_preloading: dict[str, threading.Thread] = {}  # what is being imported ahead ("litellm", "http") -> its thread


def import_frozen() -> Any:
    """litellm, imported with the collector off (its import makes some hundred thousand objects, and the
    collections they set off cost a fifth of the import), and what it made frozen after, so later collections
    no longer walk litellm's modules. No thread is started: a process may fork after it (``process_rollout``'s
    forkserver imports litellm this way once for all its workers)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        litellm = spend.import_litellm()
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    return litellm


def _warm_up() -> None:
    """Import litellm, then make one offline call (``mock_response``: nothing leaves the process) so the
    modules litellm imports on its first real call (some 50, its proxy types among them: a quarter of a
    second) are loaded before the run's first wave of calls instead of in its way."""
    litellm = import_frozen()
    try:
        litellm.completion(
            model="openai/tau-tui-warm-up",
            messages=[{"role": "user", "content": "-"}],
            mock_response="-",
            api_key="-",
        )
    except Exception:  # noqa: BLE001 - a warm-up only: the real call reports its own errors
        pass


def uses_litellm(settings: LLMSettings) -> bool:
    """Whether this model's calls go through litellm rather than straight to its endpoint (``direct``)."""
    args = {name: value for name, value in settings.args.items() if name != json_tools.TOOL_PROTOCOL_ARG}
    return direct.needs_litellm(settings.model, args)


def _import_http() -> None:
    import aiohttp  # noqa: F401 - imported ahead of the first call


def preload(models: list[LLMSettings] | None = None) -> None:
    """Start importing what the calls of ``models`` need in a thread (once): litellm, imported and warmed
    up, when any goes through it (None: litellm), else the HTTP client. Its seconds of import then
    overlap what a run does before its first call, which waits only for what is left of it."""
    kind = "litellm" if models is None or any(uses_litellm(settings) for settings in models) else "http"
    if kind in _preloading:
        return
    target = _warm_up if kind == "litellm" else _import_http
    thread = threading.Thread(target=target, name=f"tau-tui-{kind}-import", daemon=True)
    _preloading[kind] = thread
    thread.start()


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def to_litellm_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions shape (tool calls with JSON-encoded arguments), key for key as tau2's
    ``to_litellm_messages`` writes them, so a conversation's requests are tau2's requests."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
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


def _first_message(response: Any) -> Any:
    """The message of the reply's first choice; ``EmptyReply`` when there is none."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise EmptyReply("the provider replied with no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise EmptyReply("the provider's first choice has no message")
    return message


def _context_exceeded(litellm: Any, exc: BaseException) -> bool:
    """Whether a failure says the prompt is longer than the model's context window."""
    if litellm is None:
        return isinstance(exc, direct.ContextWindowExceededError)
    context_cls = getattr(litellm, "ContextWindowExceededError", None)
    return isinstance(context_cls, type) and isinstance(exc, context_cls)


def _is_retryable(litellm: Any, exc: BaseException) -> bool:
    if isinstance(exc, (asyncio.TimeoutError, ConnectionError, EmptyReply, direct.BadReply)):
        return True
    if litellm is None:
        status = getattr(exc, "status_code", None)
        return isinstance(status, int) and (status in (408, 429) or status >= 500)
    for name in RETRYABLE_ERRORS:
        cls = getattr(litellm, name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _too_deep(name: str, call_id: str, text: Any) -> MalformedToolCall:
    return MalformedToolCall(
        f"tool call {name!r}: arguments nested deeper than {MAX_NESTING} levels",
        details={"tool": name, "call_id": call_id, "arguments": str(text)[:2000]},
    )


def parse_tool_calls(raw_calls: Any) -> list[ToolCall] | None:
    """Tool calls of a reply with parsed arguments; ``MalformedToolCall`` when any is not a JSON object."""
    calls: list[ToolCall] = []
    for raw in raw_calls or []:
        function = getattr(raw, "function", None)
        name = getattr(function, "name", None) or ""
        text = getattr(function, "arguments", None)
        call_id = getattr(raw, "id", None) or new_call_id()
        if not isinstance(call_id, str):
            call_id = new_call_id()
        if not isinstance(name, str):
            raise MalformedToolCall(
                f"tool call: its name is a {type(name).__name__}, not a string",
                details={"tool": None, "call_id": call_id, "arguments": str(text)[:2000]},
            )
        if text is None or (isinstance(text, str) and not text.strip()):
            arguments: Any = {}
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


def _json_reply(content: Any) -> tuple[str | None, list[ToolCall] | None]:
    """Text or one tool call from a reply in the JSON tool protocol; ``MalformedToolCall`` otherwise."""
    call_id = new_call_id()
    try:
        return json_tools.parse_reply(content, call_id)
    except json_tools.ReplyError as exc:
        raise MalformedToolCall(
            f"reply in the {json_tools.JSON_SCHEMA} tool protocol: {exc}",
            details={"tool": None, "call_id": call_id, "arguments": str(content)[:2000]},
        ) from None


async def complete(
    settings: LLMSettings,
    messages: list[Message],
    tools: list[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    on_retry: RetryListener | None = None,
) -> Completion:
    """One chat completion with retries; raises an ``LLMError`` subclass when there is no usable reply, and
    ``MissingCredentials`` when the key is missing or refused.

    A model on an OpenAI-compatible endpoint that litellm would only pass the call on to goes straight
    there (``direct``): no litellm import, no litellm per-call work; any other model goes through litellm."""
    kwargs = dict(settings.args)
    protocol = kwargs.pop(json_tools.TOOL_PROTOCOL_ARG, None)
    if protocol is not None and protocol not in json_tools.PROTOCOLS:
        raise LLMError(
            f"{settings.model}: {json_tools.TOOL_PROTOCOL_ARG} {str(protocol)[:40]!r} is not one of "
            f"{', '.join(json_tools.PROTOCOLS)}",
            error_type="BadArgument",
        )
    try:
        path = direct.route(settings.model, kwargs)
    except direct.ClientChoiceError as exc:
        raise LLMError(str(exc), error_type="BadArgument") from None
    kwargs.pop(direct.CLIENT_ARG, None)
    litellm: Any = None if path is not None else spend.import_litellm()
    kwargs.update(num_retries=0, max_retries=0, drop_params=True)
    kwargs.setdefault("timeout", settings.timeout)
    payload = to_litellm_messages(messages)
    as_json = bool(tools) and protocol == json_tools.JSON_SCHEMA
    if as_json and tools:  # no native tool calls: the reply is one JSON object held to a schema (json_tools.py)
        payload = json_tools.plain_messages(payload, tools, require_tool=tool_choice == "required")
        kwargs["response_format"] = json_tools.response_format(tools, require_tool=tool_choice == "required")
    elif tools:
        kwargs["tools"] = tools
        kwargs["tool_choice"] = tool_choice or "auto"
    body = direct.body(path, payload, kwargs) if path is not None else None
    attempt = 0
    reply: dict[str, Any] | None = None
    while True:
        started = time.perf_counter()
        try:
            if path is not None:
                assert body is not None
                reply = await direct.chat(path, body, settings.timeout)
                response: Any = direct.Fields(reply)
                message = _first_message(response)
                content = direct.content_text(message.content)
            else:
                response = await litellm.acompletion(model=settings.model, messages=payload, **kwargs)
                message = _first_message(response)
                content = getattr(message, "content", None)
            break
        except Exception as exc:  # noqa: BLE001 - classified below
            if _context_exceeded(litellm, exc):
                raise ContextWindowExceeded(_one_line(exc), error_type=type(exc).__name__) from None
            if is_refusal(exc):
                raise refusal(settings.model, settings.args, exc) from None
            if attempt < settings.retry.max_retries and _is_retryable(litellm, exc):
                delay = settings.retry.delay(attempt)
                if on_retry is not None:
                    on_retry(attempt + 1, delay, exc)
                attempt += 1
                await asyncio.sleep(delay)
                continue
            tried = f" after {attempt + 1} attempts" if attempt else ""
            raise LLMUnavailable(
                f"{settings.model}{tried}: {_one_line(exc)}",
                error_type=type(exc).__name__,
                details={"attempts": attempt + 1},
            ) from None
    elapsed = time.perf_counter() - started
    if path is not None:
        assert reply is not None
        raw: dict[str, Any] | None = reply
    else:
        raw = response.to_dict() if hasattr(response, "to_dict") else None
    usage = spend.usage(raw)
    try:
        if as_json:
            content, tool_calls = _json_reply(content)
        else:
            tool_calls = parse_tool_calls(getattr(message, "tool_calls", None))
    except MalformedToolCall as exc:
        exc.details["content"] = getattr(message, "content", None) if path is None else content
        exc.details["cost"] = await _reply_cost(litellm, response, reply)
        raise
    return Completion(
        content=content,
        tool_calls=tool_calls,
        cost=await _reply_cost(litellm, response, reply),
        usage=usage,
        raw=raw,
        generation_time=elapsed,
        attempts=attempt + 1,
    )


async def _reply_cost(litellm: Any, response: Any, reply: dict[str, Any] | None) -> float:
    """The reply's cost: litellm's figure, whichever way the call went."""
    if litellm is None:
        assert reply is not None
        return await direct.cost(reply)
    return spend.litellm_cost(response, litellm)


def completion_message(role: str, completion: Completion) -> ParticipantMessage:
    """The trajectory message for a completion (``role`` "assistant" or "user")."""
    cls = AssistantMessage if role == "assistant" else UserMessage
    calls = completion.tool_calls
    if calls is not None and role == "user":
        calls = [call.model_copy(update={"requestor": "user"}) for call in calls]
    return cls(
        content=completion.content,
        tool_calls=calls,
        cost=completion.cost,
        usage=completion.usage,
        raw_data=completion.raw,
        generation_time_seconds=completion.generation_time,
    )
