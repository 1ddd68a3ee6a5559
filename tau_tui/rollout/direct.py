"""OpenAI-compatible endpoints without litellm: one chat-completions POST over aiohttp.

litellm takes seconds of CPU to import (5 s on this project's machines, longer than a whole wave of calls)
and milliseconds of CPU per call (its OpenAI client sends through httpx, whose pool alone costs 2 ms of CPU
per request at a hundred in flight; aiohttp here costs half a millisecond). For the case where latency matters most, a model on an OpenAI-compatible
endpoint the user names (``openai/<name>`` with an ``api_base``: vLLM, SGLang, llama.cpp, a proxy), litellm
sends the messages as JSON and reads the reply; this module does that itself, and ``llm.complete`` routes a
call here (``route``) only when litellm would do nothing more:

- the model is ``openai/<name>`` and its arguments give ``api_base`` (or ``base_url``) and a key
  (``api_key``, else ``OPENAI_API_KEY`` from the environment, as litellm takes it);
- every argument is one litellm sends on unchanged for such a model (``PASSED``), or one of ours;
- litellm's price map (read as the file the installed litellm ships, not imported) has no model of that
  name, so litellm would cost the call 0.0. A reply that names a model the map may price is costed by
  litellm itself (``cost``), so a cost never differs from litellm's.

``"llm_client": "litellm"`` in a model's arguments always takes litellm; ``"http"`` requires this path and
says why when it cannot be taken. The body sent is the one litellm sends (tests compare the two on a local
server); the raw reply kept is the provider's JSON as it came. Failures are raised as litellm's would be
classified, under litellm's names: an ``HTTPFailure`` subclass by status (a prompt too long for the context
window as ``ContextWindowExceededError``), ``Timeout`` and ``APIConnectionError`` (retried), and a reply too
large or not JSON as ``BadReply``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tau_tui.model.secrets import credential, known_secrets, scrub_text
from tau_tui.rollout import spend
from tau_tui.textsafe import one_line

CLIENT_ARG = "llm_client"
KEY_VARIABLE = "OPENAI_API_KEY"  # where litellm takes an openai/ model's key from when its arguments give none
CLIENTS = ("auto", "litellm", "http")
PROVIDER = "openai/"
# Arguments litellm sends on in the body unchanged for an ``openai/`` model (``extra_body``'s keys are
# merged into the body), and the ones that say where and how to send it.
PASSED = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "parallel_tool_calls",
        "user",
        "response_format",
        "tools",
        "tool_choice",
    }
)
ENDPOINT = frozenset({"api_base", "base_url", "api_key", "timeout", "extra_body", "extra_headers"})
OURS = frozenset({"num_retries", "max_retries", "drop_params", CLIENT_ARG})
MAX_REPLY_BYTES = 256 * 1024**2  # a reply larger than this is refused, not read into memory
PRICE_MAP = "model_prices_and_context_window_backup.json"


class HTTPFailure(Exception):
    """The endpoint answered with an error status; ``status_code`` as litellm's exceptions carry it. The
    subclasses are named as litellm names its own, so a failure reads and is recorded the same whichever
    client made the call."""

    def __init__(self, status_code: int, message: str):
        super().__init__(message)
        self.status_code = status_code


class BadRequestError(HTTPFailure):
    pass


class ContextWindowExceededError(BadRequestError):
    pass


class AuthenticationError(HTTPFailure):
    pass


class NotFoundError(HTTPFailure):
    pass


class RateLimitError(HTTPFailure):
    pass


class InternalServerError(HTTPFailure):
    pass


class BadGatewayError(HTTPFailure):
    pass


class ServiceUnavailableError(HTTPFailure):
    pass


class APIError(HTTPFailure):
    pass


class Timeout(TimeoutError):
    """No answer in time: from the client's own clock, or an endpoint's 408 or 504 (then ``status_code``)."""

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


class APIConnectionError(ConnectionError):
    pass


_BY_STATUS: dict[int, type[HTTPFailure]] = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    422: BadRequestError,
    429: RateLimitError,
    500: InternalServerError,
    502: BadGatewayError,
    503: ServiceUnavailableError,
}

# How OpenAI-compatible servers (OpenAI, vLLM, SGLang, llama.cpp, TGI, proxies) say a prompt is too long.
_TOO_LONG = re.compile(
    r"maximum context length|context[ _]window|context_length_exceeded|exceed(s|ed)? context limit|"
    r"prompt is too long|too many tokens|exceeds the available context size|input tokens exceed|"
    r"maximum input length is|is longer than the model|reduce the length",
    re.IGNORECASE,
)


def failure(status: int, text: str) -> Exception:
    """The exception of an error answer, by its status as litellm classifies it: a 400 or 413 saying the
    prompt is too long as ``ContextWindowExceededError``, a 408 or 504 as ``Timeout``, any other status
    ``APIError`` (retried from 500 on)."""
    if status in (400, 413) and _TOO_LONG.search(text):
        return ContextWindowExceededError(status, text)
    if status in (408, 504):
        return Timeout(text, status)
    return _BY_STATUS.get(status, APIError)(status, text)


class BadReply(Exception):
    """A 200 answer that is not a JSON object (or is too large to read)."""


class ClientChoiceError(ValueError):
    """``llm_client`` names no client, or ``http`` for a model this module cannot serve."""


@dataclass(frozen=True)
class Route:
    """Where a model's calls go when they bypass litellm."""

    model: str  # the model string as the user gave it (``openai/<name>``)
    name: str  # the name sent in the body
    url: str
    key: str
    timeout: float | None
    headers: tuple[tuple[str, str], ...]
    extra_body: tuple[tuple[str, Any], ...]
    secrets: frozenset[str]


def _price_names() -> frozenset[str] | None:
    """Every name litellm's installed price map may price a model by (lower case: each key, the key
    without its provider, and its last path segment); None when the map cannot be read."""
    global _PRICED
    if _PRICED is not _UNREAD:
        return _PRICED
    names: frozenset[str] | None = None
    try:
        spec = importlib.util.find_spec("litellm")
        origin = spec.origin if spec is not None else None
        if origin:
            table = json.loads((Path(origin).parent / PRICE_MAP).read_bytes())
            found: set[str] = set()
            for key in table if isinstance(table, dict) else ():
                low = str(key).lower()
                found.update((low, low.split("/", 1)[-1], low.rsplit("/", 1)[-1]))
            names = frozenset(found)
    except (OSError, ValueError, ImportError):
        names = None
    _PRICED = names
    return names


_UNREAD = object()
_PRICED: Any = _UNREAD


def maybe_priced(name: Any) -> bool:
    """Whether litellm may put a price on a model called ``name`` (True when the map cannot be read)."""
    if not isinstance(name, str):
        return False
    names = _price_names()
    if names is None:
        return True
    low = name.lower()
    if low.startswith("ft:"):  # a fine-tuned model: litellm prices it as its base
        return True
    candidates = {low, low.split("/", 1)[-1], low.rsplit("/", 1)[-1], low.removeprefix(PROVIDER)}
    return any(candidate in names for candidate in candidates)


def _remote_price_map() -> bool:
    """litellm fetches its price map over the network unless told to read its own copy (which tau-tui tells
    it by default, as ``llm`` does before it imports litellm)."""
    return os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True").strip().lower() not in ("true", "1")


def why_not(model: str, args: Mapping[str, Any]) -> str | None:
    """Why a call of ``model`` with ``args`` must go through litellm; None when it can go direct."""
    if not model.startswith(PROVIDER) or len(model) == len(PROVIDER):
        return f"{model} is not an {PROVIDER}<name> model"
    base = args.get("api_base") or args.get("base_url")
    if not isinstance(base, str) or not base.startswith(("http://", "https://")):
        return "its arguments give no http(s) api_base"
    key = args.get("api_key") if args.get("api_key") is not None else credential(KEY_VARIABLE)
    if not isinstance(key, str) or not key:
        return "it has no api_key (and OPENAI_API_KEY is not set)"
    others = sorted(str(name) for name in args if name not in PASSED and name not in ENDPOINT and name not in OURS)
    if others:
        return f"litellm handles its argument {others[0]!r}"
    for name in ("extra_body", "extra_headers"):
        if args.get(name) is not None and not isinstance(args.get(name), dict):
            return f"its {name} is not an object"
    timeout = args.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        return "its timeout is not a positive number"
    if _remote_price_map():
        return "litellm reads its price map from the network (LITELLM_LOCAL_MODEL_COST_MAP is not True)"
    if maybe_priced(model[len(PROVIDER) :]):
        return f"litellm prices {model[len(PROVIDER) :]!r}"
    return None


_ROUTES: dict[tuple[str, str, Any], Route | None] = {}


def route(model: str, args: Mapping[str, Any]) -> Route | None:
    """The direct route of ``model`` called with ``args``, or None for litellm (see the module docstring);
    ``ClientChoiceError`` when ``llm_client`` asks for something impossible."""
    choice = args.get(CLIENT_ARG, "auto")
    if choice not in CLIENTS:
        raise ClientChoiceError(f"{model}: {CLIENT_ARG} {str(choice)[:40]!r} is not one of {', '.join(CLIENTS)}")
    if choice == "litellm":
        return None
    try:
        # the key taken from the environment when the arguments give none is part of what decides the route
        given = args.get("api_key") is not None
        cache_key = (model, json.dumps(dict(args), sort_keys=True, default=repr), given or credential(KEY_VARIABLE))
    except (TypeError, ValueError):
        cache_key = None
    if cache_key is not None and cache_key in _ROUTES and choice == "auto":
        return _ROUTES[cache_key]
    reason = why_not(model, args)
    if reason is not None:
        if choice == "http":
            raise ClientChoiceError(f"{model}: {CLIENT_ARG} 'http' cannot be used: {reason}")
        found = None
    else:
        base = str(args.get("api_base") or args.get("base_url"))
        key = args.get("api_key") if args.get("api_key") is not None else credential(KEY_VARIABLE) or ""
        headers = {str(k): str(v) for k, v in dict(args.get("extra_headers") or {}).items()}
        timeout = args.get("timeout")
        found = Route(
            model=model,
            name=model[len(PROVIDER) :],
            url=base.rstrip("/") + "/chat/completions",
            key=str(key),
            timeout=float(timeout) if timeout is not None else None,
            headers=tuple(headers.items()),
            extra_body=tuple(dict(args.get("extra_body") or {}).items()),
            secrets=frozenset(known_secrets(dict(args)) | {str(key)}),
        )
    if cache_key is not None:
        _ROUTES[cache_key] = found
    return found


def body(route: Route, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body litellm sends for these messages and parameters: an assistant message's ``content``
    is left out when it is None, and ``extra_body``'s keys are merged in last."""
    sent: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "assistant" and message.get("content") is None:
            message = {k: v for k, v in message.items() if k != "content"}
        sent.append(message)
    out: dict[str, Any] = {"model": route.name, "messages": sent}
    out.update((name, value) for name, value in params.items() if name in PASSED and value is not None)
    out.update(route.extra_body)
    return out


# One aiohttp session per event loop (a session is bound to the loop it was made on; aiohttp places and
# reads a request for a fifth of httpx's CPU, which at a hundred calls in flight decides how soon the next
# wave goes out). Each is closed when its loop shuts down: a loop closes the asynchronous generators begun
# on it (``asyncio.run`` and pytest do), and the one begun with each session closes it.
_SESSIONS: dict[int, tuple[Any, Any, Any]] = {}  # id(loop) -> (session, the generator closing it, weakref to loop)
KEEP_ALIVE = 4.0  # seconds an idle connection is kept: under the 5 s after which uvicorn (vLLM, SGLang) drops it


async def _closer(loop_id: int, session: Any) -> Any:
    try:
        yield
    finally:
        _SESSIONS.pop(loop_id, None)
        await session.close()


def _tls(url: str) -> Any:
    """The TLS context of an https endpoint: the system's CAs (or the bundle ``SSL_CERT_FILE`` or
    ``SSL_CERT_DIR`` names) and certifi's, which httpx and the OpenAI SDK verify against; None for http."""
    if not url.startswith("https://"):
        return None
    if not _TLS:
        import ssl

        context = ssl.create_default_context()  # the system's CAs, or those SSL_CERT_FILE / SSL_CERT_DIR name
        try:
            import certifi

            context.load_verify_locations(certifi.where())
        except (ImportError, OSError):
            pass
        _TLS.append(context)
    return _TLS[0]


_TLS: list[Any] = []


async def _session() -> Any:
    import aiohttp

    loop = asyncio.get_running_loop()
    found = _SESSIONS.get(id(loop))
    if found is not None and not found[0].closed and found[2]() is loop:
        return found[0]
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEP_ALIVE)  # the run's concurrency bounds it
    session = aiohttp.ClientSession(connector=connector, trust_env=True, auto_decompress=True)
    closer = _closer(id(loop), session)
    await closer.__anext__()
    _SESSIONS[id(loop)] = (session, closer, weakref.ref(loop))
    return session


def _said(route: Route, text: str) -> str:
    """A line of the endpoint's own words, keys blanked and nothing that drives a terminal."""
    said = one_line(scrub_text(text, set(route.secrets))).strip()
    return said if len(said) <= 300 else said[:299] + "…"


def _error_text(payload: bytes) -> str:
    """What an error answer says: OpenAI's ``error.message`` when it has one, else its start."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return payload[:2000].decode("utf-8", "replace")
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return data["message"]
    return payload[:2000].decode("utf-8", "replace")


class InvalidEndpoint(ValueError):
    """An ``api_base`` no request can be made to."""


async def chat(route: Route, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """POST ``payload`` to the route's endpoint; the reply as a JSON object."""
    import aiohttp

    headers = {"Authorization": f"Bearer {route.key}", "Content-Type": "application/json", **dict(route.headers)}
    data = json.dumps(payload).encode()
    seconds = route.timeout if route.timeout is not None else timeout
    limits = aiohttp.ClientTimeout(total=None, sock_connect=seconds, sock_read=seconds)
    session = await _session()
    try:
        async with session.post(
            route.url, data=data, headers=headers, timeout=limits, ssl=_tls(route.url) or True
        ) as response:
            status = response.status
            length = response.content_length
            if length is not None and length > MAX_REPLY_BYTES:
                raise BadReply(f"the reply is larger than {MAX_REPLY_BYTES // 1024**2} MB")
            if length is not None:
                raw = await response.read()
            else:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.content.iter_any():
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise BadReply(f"the reply is larger than {MAX_REPLY_BYTES // 1024**2} MB")
                    chunks.append(chunk)
                raw = b"".join(chunks)
    except TimeoutError as exc:  # aiohttp's timeouts are TimeoutError
        raise Timeout(f"no answer in time ({type(exc).__name__})") from None
    except aiohttp.InvalidURL as exc:
        raise InvalidEndpoint(f"api_base {_said(route, str(exc))!r} is not a URL a request can go to") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise APIConnectionError(f"{type(exc).__name__}: {_said(route, str(exc))}") from None
    if status >= 400:
        raise failure(status, f"{_said(route, _error_text(raw))} (HTTP {status})")
    try:
        reply = json.loads(raw)
    except (ValueError, RecursionError):
        raise BadReply("the reply is not JSON") from None
    if not isinstance(reply, dict):
        raise BadReply(f"the reply is a JSON {type(reply).__name__}, not an object")
    return reply


class Fields:
    """Attribute access to a reply's JSON, as litellm's response objects give it (missing: None)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]):
        self._data = data

    def __getattr__(self, name: str) -> Any:
        return _fields(self._data.get(name))


def _fields(value: Any) -> Any:
    if isinstance(value, dict):
        return Fields(value)
    if isinstance(value, list):
        return [_fields(item) for item in value]
    return value


def content_text(content: Any) -> str | None:
    """A reply message's content as text: a string, None, or the text parts of a list of parts joined;
    anything else is ``BadReply``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            text = part.text if isinstance(part, Fields) else None
            if part is None or not isinstance(part, Fields) or not isinstance(text, str):
                raise BadReply("the reply's content has a part that is not text")
            texts.append(text)
        return "".join(texts)
    raise BadReply(f"the reply's content is a JSON {type(content).__name__}")


async def cost(reply: dict[str, Any]) -> float:
    """What litellm would cost the reply: 0.0 for a model its map cannot price (the route's own name
    is unpriced, or it would not be a route), else litellm's own figure, computed off the event loop."""
    if not maybe_priced(reply.get("model")):
        return 0.0
    return await asyncio.to_thread(spend.litellm_cost, reply)


def needs_litellm(model: str, args: Mapping[str, Any]) -> bool:
    """Whether calls of ``model`` go through litellm (a wrong ``llm_client`` is reported by the call)."""
    try:
        return route(model, args) is None
    except ClientChoiceError:
        return False


__all__ = [
    "BadReply",
    "CLIENT_ARG",
    "ClientChoiceError",
    "Fields",
    "HTTPFailure",
    "Route",
    "body",
    "chat",
    "content_text",
    "cost",
    "maybe_priced",
    "needs_litellm",
    "route",
    "why_not",
]
