"""Wire-level equivalence with tau2-bench 1.0.1 (``benchmarks/wire_tau2.py``), and its deterministic server.

The server tests need nothing; the equivalence test runs tau2 1.0.1 from the Python named by
``TAU2_101_PYTHON`` (tau2 1.0.1 needs Python 3.12, this project 3.11) on a slice of every domain: mock in
full and a few tasks of each other domain, solo cases included.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any, cast

import pytest

from benchmarks import wire_tau2
from benchmarks.wire_server import OUT_OF_SCOPE, STOP, TRANSFER, WireServer, answer, canonical
from tests.helpers import tau2_101_python

SCENARIO = (
    "<scenario>\nPersona: calm.\nInstructions: You are mia_li_3668 and want to cancel reservation EHGLP3; "
    "your phone is 555-123-2002 and your email mia.li3431@example.com.\n</scenario>"
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_reservation_details",
            "description": "Get the details of a reservation.",
            "parameters": {
                "type": "object",
                "properties": {"reservation_id": {"type": "string", "description": "The reservation id"}},
                "required": ["reservation_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_status",
            "parameters": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["pending", "completed"]},
                    "count": {"type": "integer"},
                },
                "required": ["status", "count"],
            },
        },
    },
]


def user_body(seed: int = 1, turns: int = 0) -> dict[str, Any]:
    messages = [{"role": "system", "content": f"Be a customer.\n\n{SCENARIO}"}]
    messages.append({"role": "user", "content": "Hi! How can I help you today?"})
    for turn in range(turns):
        messages.append({"role": "assistant", "content": f"My id is mia_li_3668 ({turn})."})
        messages.append({"role": "user", "content": f"Thanks, checking EHGLP3 ({turn})."})
    return {"model": "wire-user", "messages": messages, "seed": seed, "temperature": 0.0}


def agent_body(seed: int = 1, tool_choice: str = "auto", tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "model": "wire-agent",
        "messages": [
            {"role": "system", "content": "<policy>Help.</policy>"},
            {"role": "assistant", "content": "Hi! How can I help you today?"},
            {"role": "user", "content": "I am mia_li_3668, please look at reservation EHGLP3."},
        ],
        "tools": TOOLS if tools is None else tools,
        "tool_choice": tool_choice,
        "seed": seed,
        "temperature": 0.0,
    }


def message(body: dict[str, Any]) -> dict[str, Any]:
    return cast("dict[str, Any]", answer(body)["choices"][0]["message"])


def test_the_same_body_gets_the_same_reply_whatever_its_key_order() -> None:
    body = agent_body()
    shuffled = json.loads(json.dumps(dict(reversed(list(body.items())))))
    assert canonical(answer(body)) == canonical(answer(shuffled)) == canonical(answer(json.loads(json.dumps(body))))


def test_another_seed_can_give_another_reply() -> None:
    replies = {canonical(message(agent_body(seed))) for seed in range(40)}
    assert len(replies) > 5


def test_the_users_first_turn_quotes_its_scenario() -> None:
    said = message(user_body())["content"]
    assert "mia_li_3668" in said and "EHGLP3" in said and "555-123-2002" in said
    assert STOP not in said


def test_users_end_with_every_stop_condition_across_seeds() -> None:
    endings = set()
    for seed in range(300):
        said = message(user_body(seed, turns=3)).get("content") or ""
        endings |= {token for token in (STOP, TRANSFER, OUT_OF_SCOPE) if token in said}
    assert endings == {STOP, TRANSFER, OUT_OF_SCOPE}


def test_a_user_always_ends_after_nine_turns() -> None:
    said = message(user_body(7, turns=9))["content"]
    assert any(token in said for token in (STOP, TRANSFER, OUT_OF_SCOPE))


def test_agent_tool_calls_have_schema_arguments_from_the_conversation() -> None:
    calls = [c for seed in range(200) for c in message(agent_body(seed)).get("tool_calls") or []]
    assert calls
    names = {c["function"]["name"] for c in calls}
    assert {"get_reservation_details", "set_status"} <= names
    assert "lookup_everything" in names  # now and then a tool that does not exist
    for call in calls:
        args = json.loads(call["function"]["arguments"])
        assert " " not in call["function"]["arguments"].replace("Customer asks", "")  # compact JSON
        if call["function"]["name"] == "set_status" and "status" in args:
            assert args["status"] in ("pending", "completed")
            assert isinstance(args.get("count", 0), int)
    ids = {json.loads(c["function"]["arguments"]).get("reservation_id") for c in calls}
    assert {"EHGLP3", "mia_li_3668"} & ids


def test_tool_call_ids_come_from_the_hash() -> None:
    body = next(agent_body(s) for s in range(50) if message(agent_body(s)).get("tool_calls"))
    first = message(body)["tool_calls"][0]["id"]
    assert first == message(json.loads(json.dumps(body)))["tool_calls"][0]["id"]
    assert first.startswith("call_")


def test_required_tool_choice_only_calls_tools_and_ends_with_done() -> None:
    done = {"type": "function", "function": {"name": "done", "parameters": {"type": "object", "properties": {}}}}
    replies = [message(agent_body(s, "required", [*TOOLS, done])) for s in range(60)]
    assert all(r.get("tool_calls") for r in replies)
    finals = [r for r in replies if any(c["function"]["name"] == "done" for c in r["tool_calls"])]
    assert finals and all(len(r["tool_calls"]) == 1 for r in finals)


def test_replies_carry_usage() -> None:
    usage = answer(agent_body())["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


def test_judge_requests_grade_every_listed_outcome() -> None:
    body = {
        "model": "gpt-4.1-2025-04-14",
        "messages": [
            {"role": "system", "content": 'Return JSON with "expectedOutcome" and "metExpectation".'},
            {
                "role": "user",
                "content": "conversation:\nuser: hi\n\nexpectedOutcomes:\n['Agent greets', 'Agent helps']",
            },
        ],
    }
    results = json.loads(message(body)["content"])["results"]
    assert [r["expectedOutcome"] for r in results] == ["Agent greets", "Agent helps"]


def test_the_server_logs_each_run_under_its_url_and_answers_as_answer_does() -> None:
    with WireServer() as server:
        body = agent_body()
        request = urllib.request.Request(
            server.url("run-a") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
        assert reply == answer(body)
        assert [e["body"] for e in server.tagged("run-a")] == [body]
        assert server.tagged("run-b") == []
        assert len(server.drain()) == 1 and server.drain() == []


def test_request_differences_name_what_differs() -> None:
    a = agent_body()
    b = json.loads(json.dumps(a))
    b["tools"][1]["function"]["parameters"]["properties"]["status"].pop("enum")
    b["temperature"] = 0.5
    b["messages"][2]["content"] = "other"
    kinds = [kind for kind, _ in wire_tau2.differences(a, b)]
    assert kinds == ["parameter temperature", "tool schema set_status", "message[user] content"]


TAU2_PYTHON = tau2_101_python()


@pytest.mark.tau2_101
@pytest.mark.skipif(TAU2_PYTHON is None, reason="no tau2 1.0.1 (make tau2-101, or TAU2_101_PYTHON)")
def test_tau2_101_and_tau_tui_send_the_same_requests_and_save_the_same_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--per-domain", "4", "--telecom-sample", "4", "--concurrency", "4", "--jobs", "2"]
    code = wire_tau2.main([*args, "--tau2-python", str(TAU2_PYTHON), "--out", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    lines = [
        f"{c['name']}: {c['requests_tau2']} tau2, {c['requests_ours']} ours, {c['requests_equal']} equal;"
        f" kinds {c['difference_kinds']}; results {list(c['result_differences'])[:5]};"
        f" evaluator {c['evaluator_disagreements'][:2]}; failures {c['failures']}"
        for c in report["cases"]
    ]
    assert {c["name"] for c in report["cases"]} >= set(wire_tau2.DOMAINS)
    for case in report["cases"]:
        assert case["requests_tau2"] > 0
    assert code == 0 and report["equal"], "\n".join(lines)
