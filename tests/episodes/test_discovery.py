"""Discoverable tools: callable from the start, listed to the agent once a document read names them."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tau_tui.env import revealed_tools
from tau_tui.env.tool_schema import toolkit_schemas
from tau_tui.replay import Discovery, Verdict, replay
from tau_tui.rollout.agents import GoldAgent
from tau_tui.rollout.factory import ParticipantSpec, build_agent
from tau_tui.rollout.orchestrator import Orchestrator
from tau_tui.rollout.participants import agent_brief, user_brief
from tau_tui.rollout.scripted import StepAgent
from tau_tui.rollout.users import ScriptedUser
from tests.episodes.conftest import run_episode, tool_results
from tests.rollout.fake_llm import FakeLLM, call, text

if TYPE_CHECKING:
    from tau_tui.env.domain import Domain

HIDDEN = "issue_goodwill_credit"
TASK = "goodwill_for_late_delivery"
GOODWILL = {"customer_id": "cust_rohan_mehta", "amount": 20.0, "reason": "late_delivery", "order_id": "LH-10433"}


def names(schemas: list[dict[str, Any]]) -> list[str]:
    return [s["function"]["name"] for s in schemas]


def test_a_discoverable_tool_is_callable_but_not_listed(aftersales: Domain) -> None:
    env = aftersales.new_environment()
    task = aftersales.tasks()[TASK]
    assert HIDDEN not in agent_brief(task, env).tool_names
    assert HIDDEN in names(toolkit_schemas(env.agent, include_discoverable=True))
    assert env.agent is not None
    assert env.has_tool(HIDDEN) and env.agent.spec(HIDDEN).discoverable and env.mutates(HIDDEN)
    entry = env.make_tool_call(HIDDEN, arguments=GOODWILL)  # callable before anyone found it
    assert env.agent.db is not None
    assert entry["kind"] == "goodwill_credit" and env.agent.db.customers["cust_rohan_mehta"]["store_credit"] == 20.0


def test_only_a_successful_read_that_names_it_reveals_it(aftersales: Domain) -> None:
    env = aftersales.new_environment()
    kb = env.make_tool_call("read_document", arguments={"doc_id": "KB-205"})
    hits = env.make_tool_call("search_knowledge_base", arguments={"query": "goodwill late delivery"})
    assert [h["doc_id"] for h in hits][0] == "KB-205"
    assert revealed_tools(env, "read_document", "assistant", kb, False) == [HIDDEN]
    assert revealed_tools(env, "search_knowledge_base", "assistant", str(hits), False) == []  # summaries only
    assert revealed_tools(env, "read_document", "assistant", f"Error: Document {HIDDEN} not found", True) == []
    assert revealed_tools(env, "open_return", "assistant", f"... {HIDDEN} ...", False) == []  # not a read
    assert revealed_tools(env, "read_document", "assistant", f"{HIDDEN}s and more", False) == []  # whole words


def test_reading_the_procedure_lists_the_tool_to_a_model_agent_from_its_next_turn(
    aftersales: Domain, fake_llm: FakeLLM
) -> None:
    task = aftersales.tasks()[TASK]
    env = aftersales.new_environment()
    fake_llm.script(
        "agent-model",
        [
            call("find_customer_by_email", {"email": "rohan.mehta@example.net"}, "c1"),
            call("search_knowledge_base", {"query": "goodwill late delivery"}, "c2"),
            call("read_document", {"doc_id": "KB-205"}, "c3"),
            call(HIDDEN, GOODWILL, "c4"),
            text("I have added 20.00 to your store credit. Anything else?"),
        ],
    )
    agent = build_agent(ParticipantSpec("openai/agent-model", fake_llm.args()), task, env)
    sim, _ = run_episode(env, task, agent)
    assert sim.termination_reason == "user_stop"
    listed = [names(r.body["tools"]) for r in fake_llm.requests_for("agent-model")]
    assert [HIDDEN in tools for tools in listed] == [False, False, False, True, True]
    read = next(m for m in tool_results(sim) if m.id == "c3")
    assert read.model_extra is not None
    assert read.model_extra["discovered_tools"] == [HIDDEN]
    assert sim.info is not None
    assert sim.info["discovered_tools"] == {HIDDEN: read.turn_idx}
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.customers["cust_rohan_mehta"]["store_credit"] == 20.0


def test_replay_records_the_discovery_and_replays_the_tool_like_any_declared_one(aftersales: Domain) -> None:
    task = aftersales.tasks()[TASK]
    env = aftersales.new_environment()
    sim, _ = run_episode(env, task, GoldAgent(task, agent_brief(task, env)))
    assert sim.messages is not None
    timeline = replay(sim.messages, task, lambda solo: aftersales.new_environment(solo=solo))
    read = next(c for c in timeline.calls if c.name == "read_document")
    credit = next(c for c in timeline.calls if c.name == HIDDEN)
    assert read.result_step is not None
    assert timeline.discoveries == [Discovery(HIDDEN, read.result_step, read.index, "assistant")]
    assert timeline.discovered_at(HIDDEN) == read.result_step and read.revealed == [HIDDEN]
    assert credit.discoverable and credit.verdict is Verdict.REPLAYED and credit.call_step > read.result_step
    assert not any(c.discoverable for c in timeline.calls if c.name != HIDDEN)
    assert timeline.strict_ok and not timeline.findings


def test_a_tool_found_before_a_fork_stays_listed_and_a_call_before_discovery_is_visible(aftersales: Domain) -> None:
    task = aftersales.tasks()[TASK]
    env = aftersales.new_environment()
    sim, _ = run_episode(env, task, GoldAgent(task, agent_brief(task, env)))
    read_step = next(m.turn_idx for m in tool_results(sim) if (m.model_extra or {}).get("discovered_tools"))
    assert read_step is not None
    fork_env = aftersales.new_environment()
    agent = GoldAgent(task, agent_brief(task, fork_env))
    agent.plan = [("close", None)]
    assert sim.messages is not None
    orchestrator = Orchestrator(
        fork_env, task, agent, ScriptedUser(user_brief(task, fork_env)), history=sim.messages[: read_step + 1]
    )
    forked = asyncio.run(orchestrator.run())
    assert forked.info is not None
    assert HIDDEN in agent.brief.tool_names and forked.info["discovered_tools"] == {HIDDEN: read_step}

    # An agent that calls the tool without reading about it: the call runs, and nothing was discovered.
    blind = StepAgent([(HIDDEN, GOODWILL)])
    sim, _ = run_episode(aftersales.new_environment(), task, blind)
    assert sim.messages is not None
    timeline = replay(sim.messages, task, lambda solo: aftersales.new_environment(solo=solo))
    assert timeline.discoveries == [] and timeline.calls[0].discoverable
    assert "discovered_tools" not in (sim.info or {})
