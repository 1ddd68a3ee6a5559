"""``llm.failures``: one taxonomy for both transports, and its one table to the names recordings hold."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau_tui.llm import failures
from tau_tui.llm.failures import (
    RECORDED_NAMES,
    BadReply,
    ContextTooLong,
    ProviderFailure,
    RateLimited,
    Refused,
    Rejected,
    ServerFailed,
    TimedOut,
    Unreachable,
    classify,
    from_status,
)

OURS = {"BadReply", "EmptyReply", "InvalidEndpoint"}  # names of our own making, not litellm's


def _litellm() -> Any:
    from tau_tui.llm.litellm_transport import import_litellm

    return import_litellm()


def test_every_name_the_table_gives_litellm_is_one_of_its_exception_classes() -> None:
    """The table is not stale: each litellm name in it is a class litellm still has (or the OpenAI SDK's, which
    litellm's classes derive from)."""
    litellm = _litellm()
    import openai

    missing = [
        name
        for name in RECORDED_NAMES
        if name not in OURS and not isinstance(getattr(litellm, name, None) or getattr(openai, name, None), type)
    ]
    assert not missing


def _raise(cls: type[BaseException], message: str, **extra: Any) -> BaseException:
    try:
        raise cls(message=message, llm_provider="openai", model="gpt-4.1", **extra)  # type: ignore[call-arg]
    except BaseException as exc:  # noqa: BLE001 - the instance, as litellm raises it
        return exc


@pytest.mark.parametrize(
    "name, kind, retried",
    [
        ("RateLimitError", RateLimited, True),
        ("Timeout", TimedOut, True),
        ("APIConnectionError", Unreachable, True),
        ("InternalServerError", ServerFailed, True),
        ("ServiceUnavailableError", ServerFailed, True),
        ("BadGatewayError", ServerFailed, True),
        ("ContextWindowExceededError", ContextTooLong, False),
        ("AuthenticationError", Refused, False),
        ("BadRequestError", Rejected, False),
        ("NotFoundError", Rejected, False),
    ],
)
def test_litellms_exceptions_are_classified_under_their_own_names(name: str, kind: type, retried: bool) -> None:
    cls = getattr(_litellm(), name)
    exc = _raise(cls, "something happened")
    found = classify(exc)
    assert type(found) is kind
    assert found.name == name  # recorded as litellm names it
    assert found.retryable is retried


def test_a_5xx_saying_the_key_is_missing_is_a_refusal_not_a_retry() -> None:
    exc = _raise(_litellm().InternalServerError, "OpenAIException - Missing credentials. Please pass an `api_key`")
    assert isinstance(classify(exc), Refused)


@pytest.mark.parametrize(
    "status, text, kind, name",
    [
        (400, "This model's maximum context length is 4096 tokens.", ContextTooLong, "ContextWindowExceededError"),
        (413, "prompt is too long", ContextTooLong, "ContextWindowExceededError"),
        (400, "bad thing", Rejected, "BadRequestError"),
        (401, "no", Refused, "AuthenticationError"),
        (403, "Incorrect API key provided", Refused, "PermissionDeniedError"),
        (404, "no such model", Rejected, "NotFoundError"),
        (408, "slow", TimedOut, "Timeout"),
        (418, "teapot", Rejected, "APIError"),
        (429, "slow down", RateLimited, "RateLimitError"),
        (500, "boom", ServerFailed, "InternalServerError"),
        (529, "overloaded", ServerFailed, "APIError"),
        (504, "gateway timeout", TimedOut, "Timeout"),
    ],
)
def test_an_http_status_is_the_kind_litellm_would_raise(status: int, text: str, kind: type, name: str) -> None:
    found = from_status(status, text)
    assert type(found) is kind and found.name == name and found.status == status


def test_python_failures_and_unknown_ones() -> None:
    assert type(classify(asyncio.TimeoutError())) is TimedOut
    assert type(classify(ConnectionResetError("reset"))) is Unreachable
    unknown = classify(KeyError("choices"))
    assert type(unknown) is ProviderFailure and not unknown.retryable and unknown.name == "KeyError"
    mine = BadReply("not JSON")
    assert classify(mine) is mine and mine.retryable


def test_every_kind_has_a_recorded_name() -> None:
    kinds = [cls for cls in vars(failures).values() if isinstance(cls, type) and issubclass(cls, ProviderFailure)]
    assert len(kinds) >= 10
    for cls in kinds:
        assert cls("x").name == cls.default_name and cls.default_name
