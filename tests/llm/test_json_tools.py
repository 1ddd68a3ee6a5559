"""The JSON tool protocol (``"tool_protocol": "json_schema"``) for models without native tool calls.

Offline, against the local OpenAI-compatible test server: what is sent (no ``tools``, a
``response_format`` schema, the tools listed in the system prompt, earlier calls and results as
plain turns) and what comes back (text, one tool call, or a malformed reply → agent_error).
The same protocol against a real model (SmolLM2 behind llama-cpp-python) is tests/rollout/test_real_model.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainRegistry
from tau_tui.llm.json_tools import ReplyError, parse_reply, plain_messages, reply_schema
from tau_tui.model.io import RunFile, open_run
from tau_tui.model.messages import AssistantMessage
from tau_tui.rollout import ParticipantSpec, RetryPolicy, RunConfig, Runner, RunSummary
from tests.rollout.fake_llm import FakeLLM, text

FAST = RetryPolicy(max_retries=1, initial=0.01, factor=2.0, max_delay=0.02)
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_users", "description": "All users.", "parameters": {}}},
    {
        "type": "function",
        "function": {
            "name": "update_task_status",
            "description": "Set a task's status.",
            "parameters": {
                "type": "object",
                "required": ["task_id", "status"],
                "properties": {"task_id": {"type": "string"}, "status": {"type": "string"}},
            },
        },
    },
]


def test_reply_schema_has_a_message_branch_and_one_branch_per_tool() -> None:
    branches = reply_schema(TOOLS)["anyOf"]
    assert branches[0]["required"] == ["message"]
    assert [b["properties"]["tool"]["const"] for b in branches[1:]] == ["get_users", "update_task_status"]
    assert branches[2]["properties"]["arguments"] == TOOLS[1]["function"]["parameters"]
    assert branches[1]["properties"]["arguments"] == {"type": "object", "properties": {}}
    assert all("message" not in b["properties"] for b in reply_schema(TOOLS, require_tool=True)["anyOf"])


def test_parse_reply_gives_text_or_one_call_and_names_what_is_wrong() -> None:
    assert parse_reply('{"message": "Done."}', "c1") == ("Done.", None)
    content, calls = parse_reply(
        '{"tool": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}', "c1"
    )
    assert calls is not None
    assert content is None and (calls[0].id, calls[0].name) == ("c1", "update_task_status")
    assert calls[0].arguments == {"task_id": "task_1", "status": "completed"}
    assert parse_reply('{"message": "two\nlines"}', "c1")[0] == "two\nlines"  # a raw newline in a string
    for bad, why in [
        ("", "empty"),
        ("[1]", "list"),
        ('{"tool": "x", "arguments": [1]}', "not an object"),
        ('{"note": 1}', 'neither "message"'),
        ("{oops", "not valid JSON"),
        ('{"tool": "x", "arguments": ' + "[" * 150 + "]" * 150 + "}", "not an object"),
    ]:
        with pytest.raises(ReplyError, match=why):
            parse_reply(bad, "c1")


def test_plain_messages_show_calls_and_results_as_turns_in_the_reply_format() -> None:
    payload: list[dict[str, Any]] = [
        {"role": "system", "content": "POLICY"},
        {"role": "user", "content": "Mark task_1 done."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_users", "arguments": "{}"}}],
        },
        {"role": "tool", "content": '[{"user_id": "user_1"}]', "tool_call_id": "c1"},
        {"role": "assistant", "content": "Found you."},
    ]
    out = plain_messages(payload, TOOLS)
    assert out[0]["role"] == "system" and out[0]["content"].startswith("POLICY")
    assert "- update_task_status(task_id: string, status: string): Set a task's status." in out[0]["content"]
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert json.loads(out[2]["content"]) == {"tool": "get_users", "arguments": {}}
    assert out[3]["content"] == 'Result of get_users: [{"user_id": "user_1"}]'
    assert json.loads(out[4]["content"]) == {"message": "Found you."}
    assert all("tool_calls" not in m for m in out)


def rollout(
    registry: DomainRegistry, tmp_path: Path, fake: FakeLLM, agent_args: dict[str, Any]
) -> tuple[RunSummary, RunFile]:
    cfg = RunConfig(
        domain="mock",
        agent=ParticipantSpec("openai/json-agent", fake.args(**agent_args), retry=FAST),
        user=ParticipantSpec("scripted/user"),
        task_ids=["update_task_1"],
        max_steps=20,
    )
    path = tmp_path / "run.json"
    summary = asyncio.run(Runner(cfg, path, registry).run())
    return summary, open_run(path)


def test_a_rollout_in_the_json_protocol_calls_tools_and_is_scored(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        "json-agent",
        [
            text('{"tool": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}'),
            text('{"message": "task_1 is now completed. Anything else?"}'),
        ],
    )
    summary, run = rollout(registry, tmp_path, fake_llm, {"tool_protocol": "json_schema"})
    sim = run.simulation(0)
    assert sim.termination_reason == "user_stop" and summary.rewards == [1.0]
    assert sim.messages is not None
    step = sim.messages[2]
    assert isinstance(step, AssistantMessage) and step.tool_calls is not None
    call = step.tool_calls[0]
    assert (call.name, call.arguments) == ("update_task_status", {"task_id": "task_1", "status": "completed"})
    assert sim.messages[4].content == "task_1 is now completed. Anything else?"
    first, second = fake_llm.requests_for("json-agent")
    assert "tools" not in first.body and "tool_choice" not in first.body and "tool_protocol" not in first.body
    schema = first.body["response_format"]["schema"]
    assert {b["properties"].get("tool", {}).get("const") for b in schema["anyOf"]} >= {None, "update_task_status"}
    assert "# Tools" in first.messages[0]["content"]
    assert second.messages[-1]["role"] == "user" and second.messages[-1]["content"].startswith(
        "Result of update_task_status: "
    )
    assert json.loads(second.messages[-2]["content"])["tool"] == "update_task_status"
    recorded = json.loads((tmp_path / "run.json").read_text())["info"]["agent_info"]["llm_args"]
    assert recorded["tool_protocol"] == "json_schema"  # how the run was made is recorded
    analysis = Analyzer(registry).analyze(run, 0)
    assert analysis.timeline.strict_ok and analysis.db_match


def test_a_reply_outside_the_protocol_ends_the_episode_as_agent_error(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("json-agent", [text("Sure, I will update it now.")])
    summary, run = rollout(registry, tmp_path, fake_llm, {"tool_protocol": "json_schema"})
    sim = run.simulation(0)
    assert sim.termination_reason == "agent_error"
    assert sim.info is not None
    assert "json_schema tool protocol: the reply is not valid JSON" in sim.info["error"]
    assert summary.rewards == [0.0]


def test_an_unknown_tool_protocol_is_an_error_naming_it(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    summary, run = rollout(registry, tmp_path, fake_llm, {"tool_protocol": "xml"})
    sim = run.simulation(0)
    assert sim.termination_reason == "infrastructure_error"
    assert sim.info is not None
    assert "tool_protocol 'xml' is not one of json_schema" in sim.info["error"]
    assert fake_llm.requests_for("json-agent") == []
