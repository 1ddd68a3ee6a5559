"""Fault plans: rules keyed by (tool, arguments, attempt), marked in the trajectory, reproduced by replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.domains import DomainRegistry
from tau_tui.env import EpisodeTools, FaultKind, FaultPlan, FaultPlanError, LoggedCall, fault_mark
from tau_tui.llm.chat import to_litellm_messages
from tau_tui.model.messages import ToolCall, ToolMessage
from tau_tui.model.tasks import Task
from tau_tui.replay import FindingKind, Verdict, replay
from tau_tui.replay.timeline import CallRecord
from tau_tui.rollout.agents import GoldAgent, LLMAgent
from tau_tui.rollout.factory import ParticipantSpec, build_agent, build_user
from tau_tui.rollout.participants import agent_brief
from tau_tui.rollout.scripted import StepAgent
from tau_tui.rollout.users import LLMUser
from tests.episodes.conftest import info_of, run_episode, tool_results, with_plan

if TYPE_CHECKING:
    from tau_tui.env.domain import Domain
    from tau_tui.model.results import SimulationRun

SOUTH = {"warehouse": "south"}


def lookup(sku: str, warehouse: str = "south", call_id: str = "c") -> ToolCall:
    return ToolCall(id=call_id, name="lookup_stock", arguments={"sku": sku, "warehouse": warehouse})


# --- the plan itself ----------------------------------------------------------------------------


def test_rules_match_on_tool_arguments_and_attempt() -> None:
    plan = FaultPlan.parse(
        {
            "seed": 1,
            "faults": [
                {
                    "tool": "lookup_stock",
                    "arguments": {"warehouse": "south", "sku": "CP-15-3M"},
                    "attempt": 2,
                    "fault": "transient_error",
                },
                {"tool": "lookup_stock", "where": SOUTH, "fault": "timeout", "seconds": 12},
                {"tool": "allocate_line", "attempt": None, "fault": "slow_response"},
            ],
        }
    )
    first = plan.fault_for("lookup_stock", {"sku": "CP-15-3M", "warehouse": "south"}, 1)
    assert first is not None
    assert first.kind is FaultKind.TIMEOUT and first.seconds == 12 and first.rule == 1 and first.withheld
    second = plan.fault_for("lookup_stock", {"sku": "CP-15-3M", "warehouse": "south"}, 2)
    assert second is not None
    assert second.kind is FaultKind.TRANSIENT_ERROR
    assert plan.fault_for("lookup_stock", {"sku": "CP-15-3M", "warehouse": "south"}, 3) is None
    assert plan.fault_for("lookup_stock", {"sku": "CP-15-3M", "warehouse": "north"}, 1) is None
    slow = plan.fault_for("allocate_line", {"order_id": "SO-1"}, 7)
    assert slow is not None
    assert slow.kind is FaultKind.SLOW_RESPONSE and not slow.withheld and slow.seconds == 8.0
    assert "did not respond within 12 seconds" in first.text()


@pytest.mark.parametrize(
    "raw, problem",
    [
        ([], "expected an object"),
        ({"faults": [{"tool": "x", "fault": "explode"}]}, "'fault' must be one of"),
        ({"faults": [{"fault": "timeout"}]}, "'tool' must name a tool"),
        ({"faults": [{"tool": "x", "fault": "timeout", "attempt": 0}]}, "'attempt'"),
        ({"faults": [{"tool": "x", "fault": "timeout", "rate": 2}]}, "'rate'"),
        ({"faults": [{"tool": "x", "fault": "timeout", "arguments": {}, "where": {}}]}, "not both"),
        ({"faults": [{"tool": "x", "fault": "timeout", "when": 1}]}, "unknown key 'when'"),
        ({"seed": "a", "faults": []}, "seed"),
    ],
)
def test_malformed_plans_are_refused_with_one_line(raw: Any, problem: str) -> None:
    with pytest.raises(FaultPlanError) as info:
        FaultPlan.parse(raw)
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_rate_rules_depend_on_the_operation_and_the_fault_seed_only() -> None:
    rule: dict[str, Any] = {"tool": "lookup_stock", "where": SOUTH, "attempt": None, "fault": "timeout", "rate": 0.5}
    skus = [f"SKU-{i:03d}" for i in range(200)]

    def faulted(seed: int, order: list[str]) -> set[str]:
        plan = FaultPlan.parse({"seed": seed, "faults": [rule]})
        return {sku for sku in order if plan.fault_for("lookup_stock", {"sku": sku, "warehouse": "south"}, 1)}

    forward = faulted(5, skus)
    assert forward == faulted(5, list(reversed(skus)))  # the order of asking changes nothing
    assert 60 < len(forward) < 140  # about half
    assert faulted(6, skus) != forward  # another fault seed, other faults
    never = FaultPlan.parse({"faults": [{**rule, "rate": 0.0}]})
    assert never.fault_for("lookup_stock", {"sku": "SKU-001", "warehouse": "south"}, 1) is None


# --- live episodes ------------------------------------------------------------------------------


def injected_kind(entry: LoggedCall) -> str:
    """The kind of fault a logged call got (the log's ``injected`` entries all have one)."""
    assert entry.fault is not None
    return entry.fault.kind.value


def test_withheld_faults_change_nothing_and_slow_responses_go_through(warehouse: Domain) -> None:
    env = warehouse.new_environment()
    assert env.agent is not None
    assert env.agent.db is not None
    plan = FaultPlan.parse(
        {
            "faults": [
                {"tool": "allocate_line", "where": SOUTH, "fault": "timeout"},
                {"tool": "allocate_line", "where": SOUTH, "attempt": 2, "fault": "slow_response", "seconds": 15},
            ]
        }
    )
    tools = EpisodeTools(env, plan)
    call = ToolCall(
        id="a1",
        name="allocate_line",
        arguments={"order_id": "SO-5002", "line_no": 1, "warehouse": "south", "quantity": 40},
    )
    timed_out = tools.call(call)
    assert timed_out.error and "did not respond" in timed_out.content
    assert fault_mark(timed_out) == {
        "kind": "timeout",
        "tool": "allocate_line",
        "attempt": 1,
        "rule": 0,
        "seconds": 30.0,
    }
    assert env.agent.db.stock["TRV-15-WH"]["levels"]["south"]["reserved"] == 10  # not carried out
    slow = tools.call(call.model_copy(update={"id": "a2"}))
    assert not slow.error and json.loads(slow.content)["status"] == "part_allocated"
    slow_mark = fault_mark(slow)
    assert slow_mark is not None
    assert slow_mark["kind"] == "slow_response" and slow_mark["seconds"] == 15
    assert env.agent.db.stock["TRV-15-WH"]["levels"]["south"]["reserved"] == 50
    assert [e.attempt for e in tools.log] == [1, 2] and [injected_kind(e) for e in tools.injected] == [
        "timeout",
        "slow_response",
    ]


def test_injected_faults_are_marked_in_the_trajectory_and_listed_with_the_seeds(warehouse: Domain) -> None:
    task = warehouse.tasks()["south_times_out_twice"]
    env = warehouse.new_environment()
    sim, _ = run_episode(env, task, GoldAgent(task, agent_brief(task, env)), seed=4242)
    marked = [(m.turn_idx, mark) for m in tool_results(sim) if (mark := fault_mark(m))]
    assert [(mark["tool"], mark["kind"], mark["attempt"]) for _, mark in marked] == [
        ("lookup_stock", "timeout", 1),
        ("lookup_stock", "timeout", 2),
        ("allocate_line", "transient_error", 1),
    ]
    assert [entry["step"] for entry in info_of(sim)["faults"]["injected"]] == [step for step, _ in marked]
    assert info_of(sim)["seeds"] == {"instance": None, "faults": 13, "sampling": 4242}
    assert info_of(sim)["faults"]["seed"] == 13 and sim.seed == 4242
    # The unmarked results are the real ones: the retry after two timeouts saw the stock.
    after = [m for m in tool_results(sim) if not fault_mark(m)]
    assert any('"available": 65' in m.content for m in after)


def test_sampling_seeds_never_change_the_faults_and_the_fault_seed_does(warehouse: Domain) -> None:
    kit = warehouse.new_environment().agent
    assert kit is not None
    assert kit.db is not None
    skus = sorted(kit.db.products)
    base = warehouse.tasks()["quote_available_stock"]
    rule: dict[str, Any] = {
        "tool": "lookup_stock",
        "where": SOUTH,
        "attempt": None,
        "fault": "transient_error",
        "rate": 0.5,
    }

    def faults(fault_seed: int, sampling_seed: int) -> tuple[list[str], list[Any]]:
        task = with_plan(base, {"seed": fault_seed, "faults": [rule]})
        env = warehouse.new_environment()
        agent = StepAgent([("lookup_stock", {"sku": s, "warehouse": "south"}) for s in skus])
        sim, _ = run_episode(env, task, agent, seed=sampling_seed)
        assert info_of(sim)["seeds"] == {"instance": None, "faults": fault_seed, "sampling": sampling_seed}
        return [e["tool"] + json.dumps(e["attempt"]) for e in info_of(sim)["faults"]["injected"]], [
            m.content for m in tool_results(sim)
        ]

    same_a, texts_a = faults(1, 100)
    same_b, texts_b = faults(1, 999)
    assert texts_a == texts_b and same_a  # two trials, two sampling seeds: the same faults on the same calls
    _, texts_c = faults(2, 100)
    assert texts_c != texts_a  # another fault seed: other calls fail


def test_the_plan_is_never_shown_to_the_agent(warehouse: Domain, own_registry: DomainRegistry) -> None:
    task = warehouse.tasks()["south_times_out_twice"]
    env = warehouse.new_environment()
    agent = build_agent(ParticipantSpec("openai/any-model"), task, env)
    user = build_user(ParticipantSpec("openai/any-model"), task, env)
    assert isinstance(agent, LLMAgent) and isinstance(user, LLMUser)
    shown = json.dumps([m.model_dump(mode="json") for m in agent.prompt()]) + json.dumps(agent.brief.tools)
    shown_to_user = json.dumps([m.model_dump(mode="json") for m in user.prompt()])
    for secret in ("fault_plan", "transient_error", '"attempt"'):
        assert secret not in shown and secret not in shown_to_user
    marked = ToolMessage(id="x", content="Error: timeout", injected_fault={"kind": "timeout", "attempt": 1})
    assert to_litellm_messages([marked]) == [{"role": "tool", "content": "Error: timeout", "tool_call_id": "x"}]


# --- replay ------------------------------------------------------------------------------------


def gold_run(warehouse: Domain, task_id: str) -> tuple[Task, SimulationRun]:
    task = warehouse.tasks()[task_id]
    env = warehouse.new_environment()
    sim, _ = run_episode(env, task, GoldAgent(task, agent_brief(task, env)), seed=1)
    return task, sim


def fault_kind(call: CallRecord) -> Any:
    """The kind in a replayed call's recorded fault mark."""
    assert call.fault is not None
    return call.fault["kind"]


def test_replay_reproduces_injected_faults_instead_of_re_running_them(warehouse: Domain) -> None:
    task, sim = gold_run(warehouse, "split_across_warehouses")
    assert sim.messages is not None
    timeline = replay(sim.messages, task, lambda solo: warehouse.new_environment(solo=solo))
    faulted = [c for c in timeline.calls if c.fault is not None]
    assert [(c.name, fault_kind(c), c.verdict) for c in faulted if fault_kind(c) != "slow_response"] == [
        ("lookup_stock", "timeout", Verdict.INJECTED_FAULT),
        ("allocate_line", "transient_error", Verdict.INJECTED_FAULT),
    ]
    allocate = next(c for c in faulted if c.name == "allocate_line")
    assert allocate.replayed == allocate.recorded and allocate.replayed_error  # the same fault, not a success
    assert timeline.verdict_counts()["injected_fault"] == 2 and timeline.strict_ok and not timeline.findings
    assert timeline.final.agent["stock"]["TRV-15-WH"]["levels"]["south"]["reserved"] == 50

    # The counterexample: a replay that does not know the marks re-executes the faulted allocation as a
    # success (where the recording says it never ran), and then the agent's retry no longer fits the line.
    unmarked = [m.model_copy(deep=True) for m in sim.messages]
    for message in unmarked:
        if isinstance(message, ToolMessage) and message.model_extra:
            message.model_extra.pop("injected_fault", None)
    naive = replay(unmarked, task, lambda solo: warehouse.new_environment(solo=solo))
    first, retry = naive.mismatches
    assert first.name == "allocate_line" and not first.replayed_error and first.recorded_error
    assert retry.replayed is not None
    assert retry.replayed_error and "needs only 20 more" in retry.replayed and not naive.strict_ok
    # ... and with the task's plan at hand, our replay says which recorded results the plan would have faulted.
    assert {f.kind for f in naive.findings} == {FindingKind.FAULT_NOT_RECORDED}


def test_replay_flags_a_recorded_fault_the_plan_does_not_give(warehouse: Domain) -> None:
    task, sim = gold_run(warehouse, "split_across_warehouses")
    assert sim.messages is not None
    other_plan = with_plan(
        task,
        {"seed": 11, "faults": [{"tool": "lookup_stock", "where": SOUTH, "attempt": 1, "fault": "transient_error"}]},
    )
    timeline = replay(sim.messages, other_plan, lambda solo: warehouse.new_environment(solo=solo))
    kinds = [f.kind for f in timeline.findings]
    assert FindingKind.FAULT_NOT_IN_PLAN in kinds
    assert "the task's fault plan gives transient_error" in timeline.findings[0].message
    no_plan = replay(sim.messages, with_plan(task, None), lambda solo: warehouse.new_environment(solo=solo))
    assert not no_plan.findings and no_plan.verdict_counts()["injected_fault"] == 2  # the marks alone suffice
    broken = replay(sim.messages, with_plan(task, {"faults": "all"}), lambda solo: warehouse.new_environment(solo=solo))
    assert [f.kind for f in broken.findings] == [FindingKind.BAD_FAULT_PLAN]


def test_cli_replay_reports_injected_faults(
    warehouse: Domain, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tau_tui.cli import main
    from tau_tui.model.io import save_results
    from tau_tui.model.results import Results, RunInfo

    task, sim = gold_run(warehouse, "south_times_out_twice")
    results = Results(
        timestamp="2025-03-14T10:00:00",
        info=RunInfo(environment_info={"domain_name": "warehouse"}),
        tasks=[task],
        simulations=[sim],
    )
    save_results(results, tmp_path / "run.json")
    assert main(["replay", str(tmp_path / "run.json")]) == 0
    out = capsys.readouterr().out
    assert "injected faults" in out and "lookup_stock timeout (attempt 2" in out
    assert main(["replay", "--json", str(tmp_path / "run.json")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["verdicts"]["injected_fault"] == 3 and record["db_match"] is True
