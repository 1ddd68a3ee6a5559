"""The NL judge: lenient parsing of its answer, and LiteLLMJudge against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tau_tui.evaluate import JudgeError, LiteLLMJudge, parse_verdicts
from tau_tui.evaluate.judge import judge_messages
from tau_tui.llm.client import RetryPolicy
from tau_tui.llm.credentials import MissingCredentials
from tau_tui.model import Message, parse_message
from tests.conftest import ROOT
from tests.evaluate.support import ASSERTIONS, REPLY, Server

# --- parsing -----------------------------------------------------------------------------


def test_plain_json_reply() -> None:
    checks = parse_verdicts(json.dumps(REPLY), ASSERTIONS)
    assert [(c.assertion, c.met, c.justification) for c in checks] == [
        (ASSERTIONS[0], True, "said please"),
        (ASSERTIONS[1], False, "no cancel call"),
    ]


def test_fenced_and_wrapped_reply() -> None:
    text = "Here is my grading:\n```json\n" + json.dumps(REPLY) + "\n```\nThanks."
    assert [c.met for c in parse_verdicts(text, ASSERTIONS)] == [True, False]
    assert [c.met for c in parse_verdicts("```json\n" + json.dumps(REPLY) + "\n```", ASSERTIONS)] == [True, False]


def test_bare_list_and_string_booleans() -> None:
    items = [{"expectedOutcome": a, "metExpectation": v} for a, v in zip(ASSERTIONS, ["true", "False"], strict=False)]
    assert [c.met for c in parse_verdicts(json.dumps(items), ASSERTIONS)] == [True, False]


def test_results_matched_by_text_when_counts_differ() -> None:
    extra = {"results": REPLY["results"][::-1] + [{"expectedOutcome": "something else", "metExpectation": True}]}
    assert [c.met for c in parse_verdicts(json.dumps(extra), ASSERTIONS)] == [True, False]


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "not json at all",
        '{"results": "nope"}',
        json.dumps({"results": [REPLY["results"][0]]}),  # one assertion has no verdict
        json.dumps({"results": [{"expectedOutcome": a, "metExpectation": "maybe"} for a in ASSERTIONS]}),
    ],
)
def test_unusable_replies_raise_instead_of_guessing(reply: str) -> None:
    with pytest.raises(JudgeError):
        parse_verdicts(reply, ASSERTIONS)


def test_prompt_holds_conversation_tool_calls_and_numbered_outcomes() -> None:
    messages = [
        parse_message({"role": "user", "content": "cancel #W1"}),
        parse_message(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "name": "cancel_pending_order", "arguments": {"order_id": "#W1"}}],
            }
        ),
    ]
    system, user = judge_messages(messages, ASSERTIONS)
    assert system["role"] == "system" and "metExpectation" in system["content"]
    assert "user: cancel #W1" in user["content"]
    assert 'cancel_pending_order({"order_id": "#W1"})' in user["content"]
    assert "1. The agent was polite\n2. The agent cancelled the order" in user["content"]


# --- LiteLLMJudge against a local server ---------------------------------------------------------


def conversation() -> list[Message]:
    return [
        parse_message({"role": "assistant", "content": "Hi! How can I help you today?"}),
        parse_message({"role": "user", "content": "Please cancel my order."}),
    ]


def test_litellm_judge_asks_at_temperature_zero_and_reads_the_answer(server: Server) -> None:
    handler, base = server
    judge = LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20)
    checks = judge(conversation(), ASSERTIONS)
    assert [c.met for c in checks] == [True, False]
    [request] = handler.requests
    assert request["path"].endswith("/chat/completions")
    assert request["body"]["model"] == "test" and request["body"]["temperature"] == 0
    assert "Please cancel my order." in request["body"]["messages"][1]["content"]


def test_litellm_judge_turns_bad_answers_and_errors_into_judge_errors(server: Server) -> None:
    handler, base = server
    handler.content = "I think the agent did fine."
    with pytest.raises(JudgeError, match="no JSON"):
        LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20)(conversation(), ASSERTIONS)
    handler.status = 500
    handler.requests.clear()
    with pytest.raises(JudgeError, match="judge openai/test failed: InternalServerError: boom"):
        LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20, num_retries=0)(
            conversation(), ASSERTIONS
        )
    assert len(handler.requests) == 1  # num_retries=0: asked once


@pytest.mark.parametrize("client", ["http", "litellm"])
def test_the_judge_retries_a_passing_failure_as_the_agent_does(server: Server, client: str) -> None:
    """A 500 then an answer: the judge gets its verdicts on the second attempt, through either transport."""
    handler, base = server
    answers = iter([500, 200])

    retry = RetryPolicy(max_retries=2, initial=0.01)
    judge = LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20, retry=retry, llm_client=client)
    original = handler.do_POST

    def flaky(self: Any) -> None:
        type(self).status = next(answers, 200)
        original(self)

    # the test swaps the method of its own handler class on purpose (mypy forbids assigning to a method)
    handler.do_POST = flaky  # type: ignore[method-assign]
    try:
        checks = judge(conversation(), ASSERTIONS)
    finally:
        handler.do_POST = original  # type: ignore[method-assign]
    assert [c.met for c in checks] == [True, False]
    assert len(handler.requests) == 2


def test_litellm_judge_stops_at_a_refused_key_naming_it_when_unset(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler, base = server
    handler.status = 401
    with pytest.raises(
        MissingCredentials,
        match=r"^the judge model openai/test: the provider refused the "
        r"credentials \(AuthenticationError: .*boom",
    ):
        LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20)(conversation(), ASSERTIONS)
    assert len(handler.requests) == 1
    monkeypatch.delenv("OPENAI_API_KEY")
    assert LiteLLMJudge("openai/test").credentials_problem() == (
        "OPENAI_API_KEY is not set (the judge model openai/test needs it)"
    )
    assert LiteLLMJudge("openai/test", api_base=base).credentials_problem() is None  # a local server needs none


def test_cli_and_evaluation_import_without_litellm() -> None:
    code = (
        "import sys, tau_tui.cli, tau_tui.evaluate, tau_tui.analysis; "
        "print('litellm' in sys.modules, 'textual' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.split() == ["False", "False"]
