"""Why a model call failed, in our own words: one taxonomy for both transports, and what the client does next.

A transport turns whatever went wrong (an HTTP status and the endpoint's words, a litellm exception, a
timeout, a reply that is not JSON) into one ``ProviderFailure`` subclass. Each kind says whether another
attempt may help (``retryable``); the client's retry loop reads nothing else. ``name`` is the error name a
simulation records in its ``info`` (``error_type``): litellm's class names, which tau2's own recordings
hold, so a failure reads the same whichever transport made the call. ``RECORDED_NAMES`` is the one table
from those names to our kinds; a litellm exception is classified by the first class of its MRO the table
names.

What the client raises to its callers (``LLMError`` and its subclasses) is the end of a call: the
provider's failure after the retries (``LLMUnavailable``), a prompt too long for the model
(``ContextWindowExceeded``), a tool call whose arguments are not an object (``MalformedToolCall``).
A refused or missing key is ``MissingCredentials`` (``llm.credentials``): it stops the whole run.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar


class ProviderFailure(Exception):
    """A call that got no usable reply; ``str()`` is the provider's words on one line (keys blanked)."""

    retryable: ClassVar[bool] = False
    default_name: ClassVar[str] = "APIError"

    def __init__(self, message: str, *, name: str | None = None, status: int | None = None):
        super().__init__(message)
        self.name = name or self.default_name
        self.status = status


class RateLimited(ProviderFailure):
    retryable = True
    default_name = "RateLimitError"


class TimedOut(ProviderFailure):
    retryable = True
    default_name = "Timeout"


class Unreachable(ProviderFailure):
    """No connection to the endpoint (refused, reset, DNS)."""

    retryable = True
    default_name = "APIConnectionError"


class ServerFailed(ProviderFailure):
    """The provider's own failure (a 5xx)."""

    retryable = True
    default_name = "InternalServerError"


class BadReply(ProviderFailure):
    """A 200 answer that is not a chat completion: not JSON, too large, no choice, a choice with no message,
    content that is not text. Retried: a provider that answers so once usually answers properly the next time."""

    retryable = True
    default_name = "BadReply"


class ContextTooLong(ProviderFailure):
    """The prompt is longer than the model's context window: the episode ends (``context_window_exceeded``)."""

    default_name = "ContextWindowExceededError"


class Refused(ProviderFailure):
    """The credentials are missing or refused (no retry helps; the run stops)."""

    default_name = "AuthenticationError"


class Rejected(ProviderFailure):
    """The provider refused the request itself (a 400, 404, 422, an unknown model, a bad argument)."""

    default_name = "BadRequestError"


class InvalidEndpoint(ProviderFailure):
    """An ``api_base`` no request can be made to."""

    default_name = "InvalidEndpoint"


# The error names recordings hold (litellm's exception classes, which tau2 records) -> our kind. A litellm
# exception not listed under any class of its MRO is ``Rejected`` unless its status says otherwise.
RECORDED_NAMES: dict[str, type[ProviderFailure]] = {
    "RateLimitError": RateLimited,
    "Timeout": TimedOut,
    "APITimeoutError": TimedOut,
    "APIConnectionError": Unreachable,
    "InternalServerError": ServerFailed,
    "ServiceUnavailableError": ServerFailed,
    "BadGatewayError": ServerFailed,
    "ContextWindowExceededError": ContextTooLong,
    "AuthenticationError": Refused,
    "PermissionDeniedError": Rejected,
    "BadRequestError": Rejected,
    "NotFoundError": Rejected,
    "UnprocessableEntityError": Rejected,
    "UnsupportedParamsError": Rejected,
    "ContentPolicyViolationError": Rejected,
    "BadReply": BadReply,
    "EmptyReply": BadReply,
    "InvalidEndpoint": InvalidEndpoint,
}

# The names an HTTP status is recorded under, as litellm names the exception it raises for it.
_STATUS_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "Timeout",
}

# How OpenAI-compatible servers (OpenAI, vLLM, SGLang, llama.cpp, TGI, proxies) say a prompt is too long.
_TOO_LONG = re.compile(
    r"maximum context length|context[ _]window|context_length_exceeded|exceed(s|ed)? context limit|"
    r"prompt is too long|too many tokens|exceeds the available context size|input tokens exceed|"
    r"maximum input length is|is longer than the model|reduce the length",
    re.IGNORECASE,
)

_REFUSED_WORDS = re.compile(
    r"missing credentials|(invalid|incorrect|missing|no)\s+(x-)?api[ _-]?key|"
    r"api[ _-]?key\s+(is\s+)?(invalid|not valid|missing|required|must be set|not set|not provided)|unauthori[sz]ed",
    re.IGNORECASE,
)


def refused_words(text: str) -> bool:
    """Whether a provider's words say the credentials are missing or refused."""
    return bool(_REFUSED_WORDS.search(text))


def from_status(status: int, text: str) -> ProviderFailure:
    """The failure of an error answer, by its status as litellm classifies it: a 400 or 413 saying the
    prompt is too long is ``ContextTooLong``, a 401 or words refusing the key ``Refused``, a 408 or 504
    ``TimedOut``, a 429 ``RateLimited``, any 5xx ``ServerFailed``, any other status ``Rejected``."""
    if status in (400, 413) and _TOO_LONG.search(text):
        return ContextTooLong(text, status=status)
    name = _STATUS_NAMES.get(status)
    if status == 401 or refused_words(text):
        return Refused(text, name=name, status=status)
    if status in (408, 504):
        return TimedOut(text, name=name, status=status)
    if status == 429:
        return RateLimited(text, status=status)
    if status >= 500:
        return ServerFailed(text, name=name or "APIError", status=status)
    return Rejected(text, name=name or "APIError", status=status)


def classify(exc: BaseException, text: str | None = None) -> ProviderFailure:
    """Our kind of any exception a transport met (litellm's, the SDK's, the OS's), named as it was raised.

    The first class of its MRO that ``RECORDED_NAMES`` lists decides; then its ``status_code``; then the
    Python kind (a timeout, a connection failure). ``text`` is its message as the caller may show it."""
    if isinstance(exc, ProviderFailure):
        return exc
    said = text if text is not None else one_line_of(exc)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    kind = next((RECORDED_NAMES[c.__name__] for c in type(exc).__mro__ if c.__name__ in RECORDED_NAMES), None)
    if kind is ContextTooLong:
        return ContextTooLong(said, name=name, status=status)
    if kind is Refused or status == 401 or refused_words(said):
        return Refused(said, name=name, status=status)
    if kind is not None:
        return kind(said, name=name, status=status)
    if isinstance(exc, TimeoutError):
        return TimedOut(said, name=name, status=status)
    if isinstance(exc, ConnectionError):
        return Unreachable(said, name=name, status=status)
    if status is not None:
        found = from_status(status, said)
        found.name = name
        return found
    return ProviderFailure(said, name=name)


def one_line_of(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


class LLMError(Exception):
    """A model call that did not give a usable reply; ``str()`` is one line. ``error_type`` is the name the
    simulation records (``RECORDED_NAMES``), ``termination`` how the episode ends."""

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


__all__ = [
    "BadReply",
    "ContextTooLong",
    "ContextWindowExceeded",
    "InvalidEndpoint",
    "LLMError",
    "LLMUnavailable",
    "MalformedToolCall",
    "ProviderFailure",
    "RECORDED_NAMES",
    "RateLimited",
    "Refused",
    "Rejected",
    "ServerFailed",
    "TimedOut",
    "Unreachable",
    "classify",
    "from_status",
]
