"""One model client: every model call of tau-tui (the agent, the user simulator, the judge) goes through ``complete``.

A call is shaped once (our messages in the chat-completions shape, tau2's keys; the JSON tool protocol for
models without native tool calls, ``json_tools``), sent by one of two transports, and retried here only:
litellm's and the provider SDK's own retries are set to 0, so the policy is one place and a test can count
it. A model on an OpenAI-compatible endpoint that litellm would only pass the call on to goes straight
there (``http_transport``: no litellm import, no litellm per-call work); every other model goes through
litellm (``litellm_transport``). Both send the same body and report failures as the same kinds
(``failures``):

- a retryable kind (rate limit, timeout, no connection, a 5xx, a reply that is not a chat completion) is
  tried again with exponential backoff (``RetryPolicy``), and ends as ``LLMUnavailable`` (an
  infrastructure error) once the retries are spent; any other kind fails at once;
- a prompt too long for the model is ``ContextWindowExceeded`` (the episode ends so);
- a refused or missing key is ``MissingCredentials`` (``credentials.refusal``): it stops the whole run,
  since every call would fail the same way;
- a reply whose tool-call arguments are not a JSON object is ``MalformedToolCall``; the orchestrator ends
  the episode with agent_error (or user_error) and keeps the raw reply in the simulation's ``info``.

Transports live as long as the event loop that used them: one ``Client`` per running loop
(``for_running_loop``), closed with that loop (a loop closes the asynchronous generators begun on it, as
``asyncio.run`` and pytest do, and the one begun with each client closes it). ``complete_sync`` is the
same call, on a background loop, for code that is not on a loop (the judge).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Coroutine

from tau_tui.llm import http_transport, json_tools, litellm_transport
from tau_tui.llm.chat import content_text, new_call_id, parse_tool_calls, to_litellm_messages
from tau_tui.llm.credentials import refusal
from tau_tui.llm.failures import (
    ContextTooLong,
    ContextWindowExceeded,
    LLMError,
    LLMUnavailable,
    MalformedToolCall,
    ProviderFailure,
    Refused,
)
from tau_tui.llm.spend import reply_cost, usage
from tau_tui.llm.transport import JSON, Reply, Request, Transport
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage, ToolCall, UserMessage
from tau_tui.model.secrets import known_secrets, scrub_text
from tau_tui.textsafe import one_line


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
class LLMSettings:
    """A model string and the arguments passed with every call (temperature, api_base, seed...)."""

    model: str
    args: dict[str, Any] = field(default_factory=dict)
    timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    role: str = ""  # who calls ("judge"), as a refused key's message names it


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


RetryListener = Callable[[int, float, BaseException], None]


class Client:
    """The transports of one event loop, each made on its first call and closed together (``aclose``)."""

    def __init__(self) -> None:
        self._litellm: litellm_transport.LiteLLMTransport | None = None
        self._http: http_transport.HttpTransport | None = None

    def transport(self, route: http_transport.Route | None) -> Transport:
        if route is not None:
            if self._http is None:
                self._http = http_transport.HttpTransport()
            return self._http
        if self._litellm is None:
            self._litellm = litellm_transport.LiteLLMTransport()
        return self._litellm

    async def aclose(self) -> None:
        for transport in (self._http, self._litellm):
            if transport is not None:
                await transport.aclose()
        self._http = self._litellm = None


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Client] = weakref.WeakKeyDictionary()
# the generator that closes each loop's client when the loop shuts down (held here: the loop keeps only a
# weak reference to the generators begun on it)
_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncIterator[None]] = weakref.WeakKeyDictionary()


async def _closer(loop: weakref.ref[asyncio.AbstractEventLoop], client: Client) -> AsyncIterator[None]:
    try:
        yield
    finally:
        found = loop()
        if found is not None:
            _CLIENTS.pop(found, None)
        await client.aclose()


async def for_running_loop() -> Client:
    """The client of the running event loop, made on first use and closed when the loop shuts down."""
    loop = asyncio.get_running_loop()
    found = _CLIENTS.get(loop)
    if found is None:
        found = _CLIENTS[loop] = Client()
        closer = _closer(weakref.ref(loop), found)
        await closer.__anext__()  # begun on this loop: the loop closes it at shutdown, which closes the client
        _CLOSERS[loop] = closer
    return found


def uses_litellm(settings: LLMSettings) -> bool:
    """Whether this model's calls go through litellm rather than straight to its endpoint."""
    args = {name: value for name, value in settings.args.items() if name != json_tools.TOOL_PROTOCOL_ARG}
    return http_transport.needs_litellm(settings.model, args)


_preloading: dict[str, threading.Thread] = {}  # what is being imported ahead ("litellm", "http") -> its thread


def preload(models: list[LLMSettings] | None = None) -> None:
    """Start importing what the calls of ``models`` need in a thread (once): litellm, imported and warmed
    up, when any goes through it (None: litellm), else the HTTP client. Its seconds of import then
    overlap what a run does before its first call, which waits only for what is left of it."""
    kind = "litellm" if models is None or any(uses_litellm(settings) for settings in models) else "http"
    if kind in _preloading:
        return
    target = litellm_transport.warm_up if kind == "litellm" else http_transport.import_client
    thread = threading.Thread(target=target, name=f"tau-tui-{kind}-import", daemon=True)
    _preloading[kind] = thread
    thread.start()


def _said(failure: ProviderFailure, secrets: set[str]) -> str:
    """The failure on one line as a message shows it: its recorded name and the provider's words, keys blanked."""
    words = one_line(scrub_text(str(failure), secrets)).strip()
    words = words if len(words) <= 300 else words[:299] + "…"
    return f"{failure.name}: {words}".rstrip(": ")


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
    """One chat completion of our messages with retries; see ``complete_chat``."""
    return await complete_chat(settings, to_litellm_messages(messages), tools, tool_choice, on_retry)


async def complete_chat(
    settings: LLMSettings,
    payload: list[JSON],
    tools: list[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    on_retry: RetryListener | None = None,
) -> Completion:
    """One chat completion of messages already in the chat-completions shape, with retries; raises an
    ``LLMError`` subclass when there is no usable reply, and ``MissingCredentials`` when the key is missing
    or refused."""
    params = dict(settings.args)
    protocol = params.pop(json_tools.TOOL_PROTOCOL_ARG, None)
    if protocol is not None and protocol not in json_tools.PROTOCOLS:
        raise LLMError(
            f"{settings.model}: {json_tools.TOOL_PROTOCOL_ARG} {str(protocol)[:40]!r} is not one of "
            f"{', '.join(json_tools.PROTOCOLS)}",
            error_type="BadArgument",
        )
    try:
        route = http_transport.route(settings.model, params)
    except http_transport.ClientChoiceError as exc:
        raise LLMError(str(exc), error_type="BadArgument") from None
    params.pop(http_transport.CLIENT_ARG, None)
    params.update(num_retries=0, max_retries=0, drop_params=True)
    params.setdefault("timeout", settings.timeout)
    as_json = bool(tools) and protocol == json_tools.JSON_SCHEMA
    if as_json and tools:  # no native tool calls: the reply is one JSON object held to a schema (json_tools.py)
        payload = json_tools.plain_messages(payload, tools, require_tool=tool_choice == "required")
        params["response_format"] = json_tools.response_format(tools, require_tool=tool_choice == "required")
    elif tools:
        params["tools"] = tools
        params["tool_choice"] = tool_choice or "auto"
    transport = (await for_running_loop()).transport(route)
    request = transport.prepare(settings.model, payload, params, settings.timeout, route)
    reply, content, attempts, elapsed = await _send(settings, transport, request, on_retry)
    raw = reply.raw
    try:
        if as_json:
            content, tool_calls = _json_reply(content)
        else:
            tool_calls = parse_tool_calls(reply.message.get("tool_calls"))
    except MalformedToolCall as exc:
        exc.details["content"] = reply.message.get("content") if transport.name == "litellm" else content
        exc.details["cost"] = await reply_cost(reply)
        raise
    return Completion(
        content=content,
        tool_calls=tool_calls,
        cost=await reply_cost(reply),
        usage=usage(raw),
        raw=raw,
        generation_time=elapsed,
        attempts=attempts,
    )


async def _send(
    settings: LLMSettings, transport: Transport, request: Request, on_retry: RetryListener | None
) -> tuple[Reply, str | None, int, float]:
    """The one retry loop: the reply, its content as text, the attempts made and the last one's seconds."""
    attempt = 0
    while True:
        started = time.perf_counter()
        try:
            reply = await transport.send(request)
            return reply, content_text(reply.message.get("content")), attempt + 1, time.perf_counter() - started
        except ProviderFailure as failure:
            secrets = known_secrets(settings.args)
            if isinstance(failure, ContextTooLong):
                raise ContextWindowExceeded(_said(failure, secrets), error_type=failure.name) from None
            if isinstance(failure, Refused):
                raise refusal(settings.model, settings.args, failure, settings.role) from None
            if attempt < settings.retry.max_retries and failure.retryable:
                delay = settings.retry.delay(attempt)
                if on_retry is not None:
                    on_retry(attempt + 1, delay, failure)
                attempt += 1
                await asyncio.sleep(delay)
                continue
            tried = f" after {attempt + 1} attempts" if attempt else ""
            raise LLMUnavailable(
                f"{settings.model}{tried}: {_said(failure, secrets)}",
                error_type=failure.name,
                details={"attempts": attempt + 1, "said": _said(failure, secrets)},
            ) from None


class _Background:
    """One event loop in a daemon thread for the calls of code that is not on a loop (``complete_sync``): its
    transports, and litellm's clients cached for it, live as long as the process, and are closed at exit."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="tau-tui-llm-sync", daemon=True)
        self.thread.start()
        atexit.register(self.close)

    def run(self, call: Coroutine[Any, Any, Completion]) -> Completion:
        return asyncio.run_coroutine_threadsafe(call, self.loop).result()

    def close(self) -> None:
        client = _CLIENTS.get(self.loop)
        if client is not None and self.loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(client.aclose(), self.loop).result(timeout=5)
            except Exception:  # noqa: BLE001 - at exit: nothing left to tell
                pass


_BACKGROUND: list[_Background] = []
_BACKGROUND_LOCK = threading.Lock()


def _forget_background() -> None:
    """In a forked child: the parent's loop thread is not there, so the child makes its own when it needs one."""
    global _BACKGROUND_LOCK
    _BACKGROUND.clear()
    _BACKGROUND_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_background)


def complete_sync(settings: LLMSettings, payload: list[JSON], on_retry: RetryListener | None = None) -> Completion:
    """``complete_chat`` for code not on an event loop (the judge), with the same retries: the call runs on
    one background loop, so its connections are kept from call to call. Blocks the calling thread."""
    with _BACKGROUND_LOCK:
        if not _BACKGROUND:
            _BACKGROUND.append(_Background())
    return _BACKGROUND[0].run(complete_chat(settings, payload, on_retry=on_retry))


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


__all__ = [
    "Client",
    "Completion",
    "LLMSettings",
    "RetryListener",
    "RetryPolicy",
    "complete",
    "complete_chat",
    "complete_sync",
    "completion_message",
    "for_running_loop",
    "preload",
    "uses_litellm",
]
