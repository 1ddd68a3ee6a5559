"""The model client's two transports on a real local server: a call straight to an OpenAI-compatible endpoint
(``llm.http_transport``) against the same call through litellm (``llm.litellm_transport``): the same body
sent, the same completion, cost and failures, and one retry loop for both."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau_tui.llm import http_transport, litellm_transport
from tau_tui.llm.client import Completion, LLMSettings, RetryPolicy, complete, uses_litellm
from tau_tui.llm.credentials import MissingCredentials
from tau_tui.llm.failures import ContextWindowExceeded, LLMError, LLMUnavailable, MalformedToolCall
from tau_tui.model.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from tests.rollout.fake_llm import FakeLLM, Reply, call, calls, error, no_choices, text

ROOT = Path(__file__).resolve().parents[2]
NO_RETRY = RetryPolicy(max_retries=0)
ONE_RETRY = RetryPolicy(max_retries=1, initial=0.01)
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_task",
            "description": "A task by id.",
            "parameters": {"type": "object", "properties": {"task_id": {"type": "string"}}, "required": ["task_id"]},
        },
    }
]
HISTORY = [
    SystemMessage(content="You are a helpful agent."),
    UserMessage(content="What is task_1?"),
    AssistantMessage(content=None, tool_calls=[ToolCall(id="c0", name="get_task", arguments={"task_id": "task_1"})]),
    ToolMessage(id="c0", content='{"title": "Buy milk"}'),
]


def settings(
    fake_llm: FakeLLM, client: str, model: str = "openai/m", retry: RetryPolicy = NO_RETRY, **args: Any
) -> LLMSettings:
    return LLMSettings(model, fake_llm.args(llm_client=client, **args), retry=retry)


def both(
    fake_llm: FakeLLM,
    replies: list[Reply],
    model: str = "m",
    tools: list[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    args: dict[str, Any] | None = None,
) -> list[tuple[Completion | Exception, list[dict[str, Any]]]]:
    """The completion (or the exception) of the same call through litellm and straight, with the bodies sent."""
    out: list[tuple[Completion | Exception, list[dict[str, Any]]]] = []
    for client in ("litellm", "http"):
        fake_llm.requests.clear()
        fake_llm.script(model, list(replies))
        call_settings = settings(fake_llm, client, model=f"openai/{model}", **(args or {}))
        try:
            result: Completion | Exception = asyncio.run(
                complete(call_settings, HISTORY, tools=tools, tool_choice=tool_choice)
            )
        except Exception as exc:  # noqa: BLE001 - compared below
            result = exc
        out.append((result, [r.body for r in fake_llm.requests]))
    return out


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"seed": 7, "max_tokens": 64, "top_p": 0.5, "stop": ["\n\n"]},
        {"extra_body": {"top_k": 5, "repetition_penalty": 1.1}, "parallel_tool_calls": False},
        {"tool_protocol": "json_schema"},
    ],
)
def test_the_body_sent_is_litellms(fake_llm: FakeLLM, args: dict[str, Any]) -> None:
    reply = '{"name": "get_task", "arguments": {"task_id": "task_1"}}' if args.get("tool_protocol") else "Hi"
    (_, theirs), (_, ours) = both(fake_llm, [text(reply)], tools=TOOLS, tool_choice="auto", args=args)
    assert ours == theirs
    assert len(ours) == 1


def test_headers_sent_carry_the_key_and_the_extra_headers(fake_llm: FakeLLM) -> None:
    fake_llm.script("m", [text("Hi")])
    asyncio.run(complete(settings(fake_llm, "http", extra_headers={"X-Team": "eval"}), HISTORY))
    sent = fake_llm.requests[-1]
    assert sent.headers["authorization"] == "Bearer sk-test-not-a-real-key-000000"
    assert sent.headers["x-team"] == "eval"
    assert sent.path == "/v1/chat/completions"


@pytest.mark.parametrize(
    "reply",
    [
        text("Task 1 is 'Buy milk'."),
        call("get_task", {"task_id": "task_2"}, "call_9"),
        calls(("get_task", {"task_id": "a"}, "c1"), ("get_task", {}, "c2")),
        Reply(
            content="thinking aloud",
            tool_calls=[{"id": "c3", "type": "function", "function": {"name": "get_task", "arguments": ""}}],
        ),
        Reply(content="x", usage=(1234, 567)),
    ],
)
def test_the_completion_is_litellms(fake_llm: FakeLLM, reply: Reply) -> None:
    (theirs, _), (ours, _) = both(fake_llm, [reply], tools=TOOLS)
    assert isinstance(ours, Completion) and isinstance(theirs, Completion)
    assert (ours.content, ours.tool_calls, ours.usage, ours.cost, ours.attempts) == (
        theirs.content,
        theirs.tool_calls,
        theirs.usage,
        theirs.cost,
        theirs.attempts,
    )
    assert ours.raw is not None
    assert ours.raw["choices"][0]["message"]["role"] == "assistant"


@pytest.mark.parametrize(
    "status, message, expected, error_type",
    [
        (400, "bad thing", LLMUnavailable, "BadRequestError"),
        (
            400,
            "This model's maximum context length is 4096 tokens.",
            ContextWindowExceeded,
            "ContextWindowExceededError",
        ),
        (401, "Incorrect API key provided", MissingCredentials, None),
        (404, "no such model", LLMUnavailable, "NotFoundError"),
        (408, "slow", LLMUnavailable, "Timeout"),
        (429, "slow down", LLMUnavailable, "RateLimitError"),
        (500, "boom", LLMUnavailable, "InternalServerError"),
        (502, "bad gateway", LLMUnavailable, "BadGatewayError"),
        (503, "unavailable", LLMUnavailable, "ServiceUnavailableError"),
        (504, "gateway timeout", LLMUnavailable, "Timeout"),
    ],
)
def test_a_failure_is_classified_as_litellm_classifies_it(
    fake_llm: FakeLLM, status: int, message: str, expected: type[Exception], error_type: str | None
) -> None:
    (theirs, _), (ours, _) = both(fake_llm, [error(status, message)])
    assert type(ours) is type(theirs) is expected
    if error_type is not None:
        assert isinstance(ours, LLMError) and isinstance(theirs, LLMError)
        assert ours.error_type == theirs.error_type == error_type


@pytest.mark.parametrize(
    "status, retried", [(400, False), (404, False), (408, True), (429, True), (500, True), (529, True)]
)
def test_what_litellm_retries_is_retried(fake_llm: FakeLLM, status: int, retried: bool) -> None:
    results: list[int | None] = []
    for client in ("litellm", "http"):
        fake_llm.script("m", [error(status, "nope")], then=text("fine"))
        try:
            results.append(asyncio.run(complete(settings(fake_llm, client, retry=ONE_RETRY), HISTORY)).attempts)
        except LLMError:
            results.append(None)
    assert results == ([2, 2] if retried else [None, None])


def test_a_reply_naming_a_priced_model_costs_what_litellm_says(fake_llm: FakeLLM) -> None:
    """The endpoint's own model name is unpriced, so the call goes straight; its reply names gpt-4o, which
    litellm prices (by the reply's model): the direct call asks litellm for the same figure."""
    reply = Reply(content="x", model="gpt-4o", usage=(1000, 500))
    (theirs, _), (ours, _) = both(fake_llm, [reply])
    assert isinstance(ours, Completion) and isinstance(theirs, Completion)
    assert theirs.cost > 0
    assert ours.cost == pytest.approx(theirs.cost)


def test_no_price_the_map_knows_is_missed() -> None:
    """Every model litellm's map prices is one ``maybe_priced`` says may be priced (a sample of each
    provider's chat models, under the names a reply gives them). litellm is asked per token: pricing a whole
    reply resolves the provider first, and for some (github_copilot, chatgpt, xai) that starts an OAuth login
    over the network (seconds of retries here); the price is the same."""
    import litellm

    names = [name for name, info in litellm.model_cost.items() if isinstance(info, dict) and info.get("mode") == "chat"]
    sample = names[:: max(1, len(names) // 400)]
    missed: list[str] = []
    for name in sample:
        try:
            prompt, completion = litellm.cost_per_token(model=name, prompt_tokens=1000, completion_tokens=1000)
            cost = prompt + completion
        except Exception:  # noqa: BLE001 - unpriced
            cost = 0.0
        if cost and not litellm_transport.maybe_priced(name):
            missed.append(name)
    assert len(sample) > 100
    assert not missed


@pytest.mark.parametrize(
    "model, args, reason",
    [
        ("anthropic/claude-x", {"api_base": "http://127.0.0.1:1", "api_key": "k"}, "is not an openai/<name> model"),
        ("openai/m", {"api_key": "k"}, "no http(s) api_base"),
        ("openai/m", {"api_base": "http://127.0.0.1:1", "api_key": "k", "logprobs": True}, "'logprobs'"),
        ("openai/gpt-4o", {"api_base": "http://127.0.0.1:1", "api_key": "k"}, "litellm prices 'gpt-4o'"),
        ("openai/m", {"api_base": "http://127.0.0.1:1", "api_key": "k", "timeout": -1}, "timeout"),
    ],
)
def test_what_goes_through_litellm_and_why(model: str, args: dict[str, Any], reason: str) -> None:
    assert reason in (http_transport.why_not(model, args) or "")
    assert http_transport.route(model, args) is None
    assert uses_litellm(LLMSettings(model, args))
    with pytest.raises(http_transport.ClientChoiceError, match="cannot be used"):
        http_transport.route(model, {**args, "llm_client": "http"})


def test_a_key_from_the_environment_counts_as_litellm_takes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    why = http_transport.why_not("openai/m", {"api_base": "http://127.0.0.1:1"})
    assert why is not None and "no api_key" in why
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-0000")
    assert http_transport.why_not("openai/m", {"api_base": "http://127.0.0.1:1"}) is None


def test_a_wrong_llm_client_is_one_line(fake_llm: FakeLLM) -> None:
    with pytest.raises(LLMError, match="llm_client 'fast' is not one of auto, litellm, http"):
        asyncio.run(complete(settings(fake_llm, "fast"), HISTORY))
    assert http_transport.route("openai/m", fake_llm.args(llm_client="litellm")) is None
    assert not uses_litellm(LLMSettings("openai/m", fake_llm.args()))


@pytest.mark.parametrize(
    "reply, what",
    [
        (Reply(body=b"<html>not json</html>"), "not JSON"),
        (Reply(body=b"[1, 2]"), "a JSON list"),
        (Reply(body=b"[" * 100_000 + b"]" * 100_000), "not JSON"),
        (no_choices(), "no choices"),
        (Reply(choices=[{"index": 0, "message": {"role": "assistant", "content": 5}}]), "content is a JSON int"),
        (Reply(choices=[{"index": 0, "message": {"role": "assistant", "content": [{"type": "image"}]}}]), "not text"),
    ],
)
def test_a_hostile_reply_is_retried_then_an_infrastructure_error(fake_llm: FakeLLM, reply: Reply, what: str) -> None:
    fake_llm.script("m", [reply, reply])
    with pytest.raises(LLMUnavailable, match=what) as failed:
        asyncio.run(complete(settings(fake_llm, "http", retry=ONE_RETRY), HISTORY))
    assert len(fake_llm.requests) == 2
    assert "\n" not in str(failed.value)


def test_content_in_text_parts_is_joined(fake_llm: FakeLLM) -> None:
    parts = [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world."}]
    fake_llm.script("m", [Reply(choices=[{"index": 0, "message": {"role": "assistant", "content": parts}}])])
    assert asyncio.run(complete(settings(fake_llm, "http"), HISTORY)).content == "Hello, world."


def test_a_tool_call_whose_name_is_not_text_is_malformed(fake_llm: FakeLLM) -> None:
    bad = {"id": "c1", "type": "function", "function": {"name": 7, "arguments": "{}"}}
    fake_llm.script("m", [Reply(tool_calls=[bad])])
    with pytest.raises(MalformedToolCall, match="its name is a int"):
        asyncio.run(complete(settings(fake_llm, "http"), HISTORY, tools=TOOLS))


def test_a_reply_larger_than_the_cap_is_not_read(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_transport, "MAX_REPLY_BYTES", 1000)
    fake_llm.script("m", [text("x" * 5000)])
    with pytest.raises(LLMUnavailable, match="larger than"):
        asyncio.run(complete(settings(fake_llm, "http"), HISTORY))


def test_an_error_message_reaches_the_user_as_one_safe_line_without_the_key(fake_llm: FakeLLM) -> None:
    fake_llm.script("m", [error(400, "bad \x1b[31mred\x1b[0m\nsecond line sk-test-not-a-real-key-000000")])
    with pytest.raises(LLMUnavailable) as failed:
        asyncio.run(complete(settings(fake_llm, "http"), HISTORY))
    said = str(failed.value)
    assert "\x1b" not in said and "\n" not in said
    assert "sk-test-not-a-real-key-000000" not in said


def test_an_endpoint_that_is_down_is_a_connection_error_retried(fake_llm: FakeLLM) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = {"api_base": f"http://127.0.0.1:{port}/v1", "api_key": "k", "llm_client": "http"}
    retries: list[tuple[object, ...]] = []
    with pytest.raises(LLMUnavailable, match="after 2 attempts: APIConnectionError") as failed:
        asyncio.run(
            complete(LLMSettings("openai/m", args, retry=ONE_RETRY), HISTORY, on_retry=lambda *a: retries.append(a))
        )
    assert failed.value.error_type == "APIConnectionError"
    assert len(retries) == 1


def test_no_answer_in_time_is_a_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script("m", [text("late", delay=2.0)])
    with pytest.raises(LLMUnavailable, match="Timeout") as failed:
        asyncio.run(complete(settings(fake_llm, "http", timeout=0.3), HISTORY))
    assert failed.value.error_type == "Timeout"


def test_a_call_straight_to_the_endpoint_never_imports_litellm_and_closes_its_session(fake_llm: FakeLLM) -> None:
    """In a process of its own: the call is answered, litellm was never imported, and the session is closed
    with the loop (aiohttp says on stderr when one is left open)."""
    fake_llm.script("m", [text("hello")])
    program = f"""
import asyncio, gc, sys
from tau_tui.model.messages import UserMessage
from tau_tui.llm import client
from tau_tui.llm.client import LLMSettings, complete
args = {json.dumps(fake_llm.args())}
for _ in range(2):
    done = asyncio.run(complete(LLMSettings("openai/m", args), [UserMessage(content="hi")]))
gc.collect()
print(done.content, "litellm" in sys.modules, len(client._CLIENTS))
"""
    fake_llm.script("m", [text("hello"), text("hello")])
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="always::ResourceWarning")
    ran = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["hello", "False", "0"]
    assert "Unclosed" not in ran.stderr, ran.stderr


@pytest.fixture
def https_endpoint(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A chat endpoint on https://127.0.0.1 with a self-signed certificate (made by openssl)."""
    import shutil
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    answer = json.dumps(
        {"id": "x", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "secure"}}]}
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_port}/v1", cert
    server.shutdown()
    server.server_close()


def test_an_https_endpoint_is_verified(https_endpoint: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A certificate no trusted authority signed is refused; trusted through SSL_CERT_FILE, it is used."""
    base, cert = https_endpoint
    args = {"api_base": base, "api_key": "k", "llm_client": "http"}
    monkeypatch.setattr(http_transport, "_TLS", [])
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(LLMUnavailable, match="(?i)certificate"):
        asyncio.run(complete(LLMSettings("openai/m", args, retry=NO_RETRY), HISTORY))
    monkeypatch.setattr(http_transport, "_TLS", [])
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert asyncio.run(complete(LLMSettings("openai/m", args, retry=NO_RETRY), HISTORY)).content == "secure"


def test_complete_sync_works_off_and_on_an_event_loop_and_keeps_its_connections(fake_llm: FakeLLM) -> None:
    """The judge's door: the same call, with the same retries, from plain code and from inside a coroutine."""
    from tau_tui.llm.client import complete_sync

    payload = [{"role": "user", "content": "hi"}]
    fake_llm.script("m", [error(500, "boom"), text("first"), text("second")])
    sync = settings(fake_llm, "http", retry=ONE_RETRY)
    done = complete_sync(sync, payload)
    assert (done.content, done.attempts) == ("first", 2)

    async def inside() -> str | None:
        return complete_sync(sync, payload).content

    assert asyncio.run(inside()) == "second"
    assert len(fake_llm.requests) == 3


def test_a_forked_child_makes_its_own_background_loop(fake_llm: FakeLLM) -> None:
    """The parent's background loop thread does not exist in a forked child: the child's call must not wait on it."""
    import multiprocessing

    from tau_tui.llm.client import complete_sync

    payload = [{"role": "user", "content": "hi"}]
    fake_llm.script("m", [text("parent"), text("child")])
    sync = settings(fake_llm, "http")
    assert complete_sync(sync, payload).content == "parent"
    with multiprocessing.get_context("fork").Pool(1) as pool:
        said = pool.apply_async(_child_call, (sync, payload)).get(timeout=60)
    assert said == "child"


def _child_call(sync: LLMSettings, payload: list[dict[str, str]]) -> str | None:
    from tau_tui.llm.client import complete_sync

    return complete_sync(sync, list(payload)).content


def test_a_reply_naming_any_providers_model_costs_what_litellm_says_and_starts_no_login(
    fake_llm: FakeLLM, capfd: pytest.CaptureFixture[str]
) -> None:
    """An endpoint writes any model name in its reply. Priced as a reply of the provider that answered (openai),
    as litellm prices a reply to its own call: one chat model of each provider in litellm's map (91 of them
    cost otherwise when litellm was left to find the provider) costs the same through both transports; and a name such as github_copilot/gpt-4o
    never starts litellm's OAuth device login (network requests, retries, lines on stderr)."""
    import litellm

    first: dict[str, str] = {}
    for name, info in litellm.model_cost.items():
        if isinstance(info, dict) and info.get("mode") == "chat":
            first.setdefault(str(info.get("litellm_provider")), name)
    names = sorted({"github_copilot/gpt-4o", "gpt-4o", *first.values()})

    async def costs(client: str) -> list[float]:  # one event loop for every call (a loop each costs seconds)
        out = []
        for name in names:
            fake_llm.script("m", [Reply(content="x", model=name, usage=(1000, 500))])
            out.append((await complete(settings(fake_llm, client, model="openai/m"), HISTORY)).cost)
        return out

    theirs, ours = asyncio.run(costs("litellm")), asyncio.run(costs("http"))
    differ = [(name, a, b) for name, a, b in zip(names, theirs, ours, strict=True) if a != pytest.approx(b)]
    assert differ == [] and len(names) > 40
    assert "authenticator" not in capfd.readouterr().err
