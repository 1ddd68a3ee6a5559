"""What a transport is: it sends one prepared chat-completions request and gives back the reply as JSON.

The client (``llm.client``) shapes the request once (messages in the chat-completions shape, the call's
parameters) and asks a transport to ``prepare`` it, then to ``send`` it as many times as its retry loop
decides. A transport never retries and never interprets the reply beyond finding its first choice's
message: a failure of any kind comes out of ``send`` as a ``ProviderFailure`` (``llm.failures``). Each
transport object owns what it opened (litellm's nothing, the HTTP client's session) and closes it in
``aclose``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tau_tui.llm.failures import BadReply

JSON = dict[str, Any]


@dataclass(frozen=True)
class Route:
    """Where a model's calls go when they bypass litellm (``http_transport.route``)."""

    model: str  # the model string as the user gave it (``openai/<name>``)
    name: str  # the name sent in the body
    url: str
    key: str
    timeout: float | None
    headers: tuple[tuple[str, str], ...]
    extra_body: tuple[tuple[str, Any], ...]
    secrets: frozenset[str]


@dataclass(frozen=True)
class Request:
    """One call, ready to send: ``body`` is what goes on the wire for a transport that writes it itself."""

    model: str
    messages: list[JSON]
    params: JSON
    timeout: float
    body: JSON | None = None
    route: Route | None = None


@dataclass(frozen=True)
class Reply:
    """A usable reply: the first choice's message and the whole reply, both as JSON; ``cost`` when the
    transport priced the reply itself (litellm does), else None and ``llm.spend`` prices it as a reply of
    ``provider`` (litellm's provider name of the endpoint that answered)."""

    message: JSON
    raw: JSON
    cost: float | None = None
    provider: str | None = None


class Transport(Protocol):
    name: str

    def prepare(
        self, model: str, messages: list[JSON], params: JSON, timeout: float, route: Route | None
    ) -> Request: ...

    async def send(self, request: Request) -> Reply: ...

    async def aclose(self) -> None: ...


def first_message(raw: Any) -> JSON:
    """The message of a reply's first choice; ``BadReply`` when there is none."""
    choices = raw.get("choices") if isinstance(raw, dict) else None
    if not isinstance(choices, list) or not choices:
        raise BadReply("the provider replied with no choices", name="EmptyReply")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise BadReply("the provider's first choice has no message", name="EmptyReply")
    return message
