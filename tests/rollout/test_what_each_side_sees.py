"""The agent is never given what the grader keeps; the user gets its scenario but not the criteria.

A task is filled with canary strings in every field the grader keeps (and in
the user's private scenario); the test then inspects exactly what went to
each model over HTTP, and what a human agent is shown.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from tau_tui.model.messages import ToolMessage
from tau_tui.model.tasks import Task
from tau_tui.rollout import ParticipantSpec, PlaySession, RetryPolicy
from tau_tui.rollout.human import TurnRequest
from tau_tui.rollout.participants import agent_brief
from tau_tui.rollout.session import Episode
from tests.rollout.fake_llm import FakeLLM, call, text

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain

SCENARIO_SECRETS = ["CANARY-UNKNOWN-INFO", "CANARY-TASK-INSTRUCTIONS", "CANARY-PERSONA"]
GRADER_SECRETS = [
    "CANARY-PURPOSE",
    "CANARY-RELEVANT-POLICIES",
    "CANARY-NOTES",
    "CANARY-ACTION-INFO",
    "CANARY-ASSERTION-MESSAGE",
    "CANARY-COMMUNICATE",
    "CANARY-NL-ASSERTION",
    "CANARY-TICKET",
    "CANARY-ISSUE",
]

TASK = Task.model_validate(
    {
        "id": "canary",
        "description": {
            "purpose": "CANARY-PURPOSE",
            "relevant_policies": "CANARY-RELEVANT-POLICIES",
            "notes": "CANARY-NOTES",
        },
        "user_scenario": {
            "persona": "CANARY-PERSONA",
            "instructions": {
                "domain": "mock",
                "reason_for_call": "Please mark task_1 as completed.",
                "known_info": "I am user_1.",
                "unknown_info": "CANARY-UNKNOWN-INFO",
                "task_instructions": "CANARY-TASK-INSTRUCTIONS",
            },
        },
        "ticket": "CANARY-TICKET",
        "user_tools": ["check_notifications"],
        "issues": [{"id": "i1", "title": "CANARY-ISSUE"}],
        "evaluation_criteria": {
            "actions": [
                {
                    "action_id": "a1",
                    "name": "update_task_status",
                    "info": "CANARY-ACTION-INFO",
                    "arguments": {"task_id": "task_1", "status": "completed"},
                }
            ],
            "env_assertions": [
                {
                    "env_type": "assistant",
                    "func_name": "assert_task_status",
                    "message": "CANARY-ASSERTION-MESSAGE",
                    "arguments": {"task_id": "task_1", "expected_status": "completed"},
                }
            ],
            "communicate_info": ["CANARY-COMMUNICATE"],
            "nl_assertions": ["CANARY-NL-ASSERTION"],
            "reward_basis": ["DB", "ENV_ASSERTION"],
        },
    }
)


def test_llm_agent_requests_hold_no_grader_or_scenario_secrets(mock_domain: Domain, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "agent-model",
        [
            text("Could you check your notifications?"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}, "c1"),
            text("Done. Anything else?"),
        ],
    )
    fake_llm.script(
        "user-model",
        [
            text("Please mark task_1 as completed."),
            call("check_notifications", {}, "u1"),
            text("I have one unread notification."),
            text("No. ###STOP###"),
        ],
    )
    retry = RetryPolicy(max_retries=0)
    episode = Episode(
        mock_domain,
        None,
        TASK,
        ParticipantSpec("openai/agent-model", fake_llm.args(), retry=retry),
        ParticipantSpec("openai/user-model", fake_llm.args(), retry=retry),
    )
    sim = asyncio.run(episode.run())
    assert sim.termination_reason == "user_stop"
    assert sim.messages is not None
    user_result = next(
        m for m in sim.messages if m.role == "tool" and isinstance(m, ToolMessage) and m.requestor == "user"
    )

    agent_requests = fake_llm.requests_for("agent-model")
    assert len(agent_requests) == 3
    for request in agent_requests:
        sent = request.dump()
        for secret in GRADER_SECRETS + SCENARIO_SECRETS:
            assert secret not in sent, secret
        assert "u1" not in sent and user_result.content not in sent  # the user's own tool use stays private
        assert "check_notifications" not in json.dumps(request.body.get("tools"))

    user_requests = fake_llm.requests_for("user-model")
    for request in user_requests:
        sent = request.dump()
        for secret in GRADER_SECRETS:
            assert secret not in sent, secret
        assert [t["function"]["name"] for t in request.body["tools"]] == ["check_notifications"]  # task.user_tools
        assert all(m.get("tool_calls") is None or m["role"] == "assistant" for m in request.messages)
    scenario = user_requests[0].messages[0]["content"]
    assert all(secret in scenario for secret in SCENARIO_SECRETS)  # the user does know its scenario
    assert "c1" not in user_requests[-1].dump()  # nor does it see the agent's calls


def test_agent_brief_carries_only_policy_tools_and_solo_ticket(mock_domain: Domain) -> None:
    env = mock_domain.new_environment()
    brief = agent_brief(TASK, env)
    dumped = json.dumps({"policy": brief.policy, "tools": brief.tools, "ticket": brief.ticket})
    for secret in GRADER_SECRETS + SCENARIO_SECRETS:
        assert secret not in dumped
    solo = agent_brief(TASK, mock_domain.new_environment(solo=True), solo=True)
    assert solo.ticket == "CANARY-TICKET"  # solo mode works from the ticket, as in tau2


async def _human_agent_view(registry: DomainRegistry) -> list[TurnRequest]:
    shown: list[TurnRequest] = []
    session = PlaySession(registry, "mock", TASK, "agent", "scripted/user", on_turn=shown.append)
    session.start()
    await session.wait_turn()
    session.call_tool("update_task_status", {"task_id": "task_1", "status": "completed"})
    await session.wait_turn()
    session.say("It is done. Anything else?")
    assert await session.wait_turn() is None
    await session.wait()
    return shown


def test_a_human_agent_is_shown_no_grader_or_scenario_secrets(registry: DomainRegistry) -> None:
    shown = asyncio.run(_human_agent_view(registry))
    assert len(shown) == 2
    for request in shown:
        dumped = json.dumps({"history": [m.model_dump(mode="json") for m in request.history], "tools": request.tools})
        for secret in GRADER_SECRETS + SCENARIO_SECRETS:
            assert secret not in dumped
