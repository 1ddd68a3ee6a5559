"""OpenAI-compatible endpoints without litellm: one chat-completions POST over aiohttp.

litellm takes seconds of CPU to import and milliseconds of CPU per call (its OpenAI client sends through
httpx, whose pool alone costs 2 ms of CPU per request at a hundred in flight; aiohttp here costs half a
millisecond). For a model on an OpenAI-compatible endpoint the user names (``openai/<name>`` with an
``api_base``: vLLM, SGLang, llama.cpp, a proxy) litellm only sends the messages as JSON and reads the reply;
this transport does that itself, and the client takes it (``route``) only when litellm would do nothing more:

- the model is ``openai/<name>`` and its arguments give ``api_base`` (or ``base_url``) and a key
  (``api_key``, else ``OPENAI_API_KEY`` from the environment, as litellm takes it);
- every argument is one litellm sends on unchanged for such a model (``PASSED``), or one of ours;
- litellm's price map has no model of that name (``litellm_transport.maybe_priced``), so litellm would cost
  the call 0.0. A reply that names a model the map may price is priced by litellm itself (``llm.spend``).

``"llm_client": "litellm"`` in a model's arguments always takes litellm; ``"http"`` requires this transport
and says why when it cannot be taken. The body sent is the one litellm sends (tests compare the two on a
local server); the raw reply kept is the provider's JSON as it came. A failure is one of our kinds
(``failures.from_status`` for an error status), under the name litellm gives the same failure.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Mapping

from tau_tui.llm.failures import BadReply, InvalidEndpoint, TimedOut, Unreachable, from_status
from tau_tui.llm.litellm_transport import COST_MAP_VARIABLE, local_cost_map, maybe_priced
from tau_tui.llm.transport import JSON, Reply, Request, Route, first_message
from tau_tui.model.secrets import credential, known_secrets, scrub_text
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
KEEP_ALIVE = 4.0  # seconds an idle connection is kept: under the 5 s after which uvicorn (vLLM, SGLang) drops it


class ClientChoiceError(ValueError):
    """``llm_client`` names no client, or ``http`` for a model this transport cannot serve."""


def why_not(model: str, args: Mapping[str, Any]) -> str | None:
    """Why a call of ``model`` with ``args`` must go through litellm; None when it can go straight."""
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
    if not local_cost_map():
        return f"litellm reads its price map from the network ({COST_MAP_VARIABLE} is not True)"
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
    cache_key: tuple[str, str, Any] | None
    try:
        # the key taken from the environment when the arguments give none is part of what decides the route
        given = args.get("api_key") is not None
        cache_key = (model, json.dumps(dict(args), sort_keys=True, default=repr), given or credential(KEY_VARIABLE))
    except (TypeError, ValueError):
        cache_key = None
    if cache_key is not None and cache_key in _ROUTES and choice == "auto":
        return _ROUTES[cache_key]
    reason = why_not(model, args)
    found: Route | None = None
    if reason is not None:
        if choice == "http":
            raise ClientChoiceError(f"{model}: {CLIENT_ARG} 'http' cannot be used: {reason}")
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


def body(route: Route, messages: list[JSON], params: Mapping[str, Any]) -> JSON:
    """The JSON body litellm sends for these messages and parameters: an assistant message's ``content``
    is left out when it is None, and ``extra_body``'s keys are merged in last."""
    sent: list[JSON] = []
    for message in messages:
        if message.get("role") == "assistant" and message.get("content") is None:
            message = {k: v for k, v in message.items() if k != "content"}
        sent.append(message)
    out: JSON = {"model": route.name, "messages": sent}
    out.update((name, value) for name, value in params.items() if name in PASSED and value is not None)
    out.update(route.extra_body)
    return out


_TLS: list[Any] = []  # the TLS context, made once per process


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
            return str(error["message"])
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return payload[:2000].decode("utf-8", "replace")


def import_client() -> None:
    """Import the HTTP client ahead of the first call (``client.preload``)."""
    import aiohttp  # noqa: F401


class HttpTransport:
    """POSTs to the route's endpoint through one aiohttp session, made on the first call and bound to the
    event loop it was made on (aiohttp places and reads a request for a fifth of httpx's CPU, which at a
    hundred calls in flight decides how soon the next wave goes out); ``aclose`` closes it."""

    name = "http"

    def __init__(self) -> None:
        self._session: Any = None

    def prepare(self, model: str, messages: list[JSON], params: JSON, timeout: float, route: Route | None) -> Request:
        assert route is not None  # the client takes this transport only for a model with a route
        return Request(model, messages, params, timeout, body=body(route, messages, params), route=route)

    async def _open(self) -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEP_ALIVE)  # the run's concurrency bounds it
            self._session = aiohttp.ClientSession(connector=connector, trust_env=True, auto_decompress=True)
        return self._session

    async def send(self, request: Request) -> Reply:
        raw = await self.post(request)
        return Reply(message=first_message(raw), raw=raw, provider=PROVIDER.rstrip("/"))

    async def post(self, request: Request) -> JSON:
        """The reply to ``request`` as a JSON object, or a ``ProviderFailure``."""
        import aiohttp

        found = request.route
        assert found is not None and request.body is not None  # ``prepare`` made the request
        headers = {"Authorization": f"Bearer {found.key}", "Content-Type": "application/json", **dict(found.headers)}
        data = json.dumps(request.body).encode()
        seconds = found.timeout if found.timeout is not None else request.timeout
        limits = aiohttp.ClientTimeout(total=None, sock_connect=seconds, sock_read=seconds)
        session = await self._open()
        try:
            async with session.post(
                found.url, data=data, headers=headers, timeout=limits, ssl=_tls(found.url) or True
            ) as response:
                status = response.status
                length = response.content_length
                if length is not None and length > MAX_REPLY_BYTES:
                    raise BadReply(f"the reply is larger than {MAX_REPLY_BYTES // 1024**2} MB")
                if length is not None:
                    payload = await response.read()
                else:
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.content.iter_any():
                        size += len(chunk)
                        if size > MAX_REPLY_BYTES:
                            raise BadReply(f"the reply is larger than {MAX_REPLY_BYTES // 1024**2} MB")
                        chunks.append(chunk)
                    payload = b"".join(chunks)
        except TimeoutError as exc:  # aiohttp's timeouts are TimeoutError
            raise TimedOut(f"no answer in time ({type(exc).__name__})") from None
        except aiohttp.InvalidURL as exc:
            raise InvalidEndpoint(f"api_base {_said(found, str(exc))!r} is not a URL a request can go to") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise Unreachable(f"{type(exc).__name__}: {_said(found, str(exc))}") from None
        if status >= 400:
            raise from_status(status, f"{_said(found, _error_text(payload))} (HTTP {status})")
        try:
            reply = json.loads(payload)
        except (ValueError, RecursionError):
            raise BadReply("the reply is not JSON") from None
        if not isinstance(reply, dict):
            raise BadReply(f"the reply is a JSON {type(reply).__name__}, not an object")
        return reply

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
            await asyncio.sleep(0)  # let the connector's transports close before the loop does


def needs_litellm(model: str, args: Mapping[str, Any]) -> bool:
    """Whether calls of ``model`` go through litellm (a wrong ``llm_client`` is reported by the call)."""
    try:
        return route(model, args) is None
    except ClientChoiceError:
        return False


__all__ = [
    "CLIENT_ARG",
    "ClientChoiceError",
    "HttpTransport",
    "Route",
    "body",
    "needs_litellm",
    "route",
    "why_not",
]
