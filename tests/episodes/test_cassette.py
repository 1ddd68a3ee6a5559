"""Cassette replay: recorded results served per request; anything else is refused and ends the episode."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.env import refusal_mark
from tau_tui.env.faults import fault_mark
from tau_tui.model.io import open_run
from tau_tui.model.messages import AssistantMessage, Message, ToolCall, ToolMessage
from tau_tui.model.results import NO_RECORDED_RESULT, TERMINATION_REASONS, SimulationRun
from tau_tui.replay import Verdict, replay
from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
from tau_tui.rollout.agents import GoldAgent
from tau_tui.rollout.cassette import Cassette, CassetteError, run_cassettes
from tau_tui.rollout.evaluation import SimulationEvaluator
from tau_tui.rollout.participants import Participant, agent_brief
from tau_tui.rollout.scripted import Step, StepAgent
from tests.episodes.conftest import extra, info_of, run_episode, tool_results

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.model.tasks import Task

TASK = "split_across_warehouses"
ORDER = {"order_id": "SO-5002", "line_no": 1}


@pytest.fixture(scope="module")
def recorded(warehouse: Domain) -> tuple[Task, SimulationRun]:
    """The gold agent's run of the split task: faults on the first south look-up and allocation."""
    task = warehouse.tasks()[TASK]
    env = warehouse.new_environment()
    sim, _ = run_episode(env, task, GoldAgent(task, agent_brief(task, env)), seed=9)
    return task, sim


def requests(sim: SimulationRun) -> dict[str, tuple[str, str]]:
    """Call id -> (tool, arguments) of every call in a trajectory."""
    assert sim.messages is not None
    return {
        call.id: (call.name, json.dumps(call.arguments, sort_keys=True))
        for m in sim.messages
        for call in (getattr(m, "tool_calls", None) or [])
    }


def result_id(message: Message) -> str:
    """The call id a recorded tool result answers."""
    assert isinstance(message, ToolMessage)
    return message.id


def served_for_the_same_request(recorded_sim: SimulationRun, new_sim: SimulationRun) -> bool:
    """Every served result was recorded for a call with the same tool and arguments as the one it answers."""
    recorded_calls, new_calls = requests(recorded_sim), requests(new_sim)
    served = [m for m in tool_results(new_sim) if extra(m).get("cassette")]
    recorded_messages = recorded_sim.messages
    assert recorded_messages is not None
    return bool(served) and all(
        recorded_calls[result_id(recorded_messages[extra(m)["cassette"]["step"]])] == new_calls[m.id] for m in served
    )


def over_cassette(warehouse: Domain, recorded: tuple[Task, SimulationRun], agent: Participant) -> SimulationRun:
    task, sim = recorded
    env = warehouse.new_environment()
    pristine = env.db_hash()
    result, orchestrator = run_episode(env, task, agent, tools=Cassette.from_simulation(sim, task, "rec.json"))
    assert env.db_hash() == pristine  # nothing ran against the environment
    return result


def test_the_same_agent_gets_every_recorded_result_back(
    warehouse: Domain, recorded: tuple[Task, SimulationRun]
) -> None:
    task, sim = recorded
    again = over_cassette(warehouse, recorded, GoldAgent(task, agent_brief(task, warehouse.new_environment())))
    assert again.termination_reason == "user_stop"
    assert [m.content for m in tool_results(again)] == [m.content for m in tool_results(sim)]
    assert served_for_the_same_request(sim, again)
    served = [extra(m)["cassette"] for m in tool_results(again)]
    assert [s["step"] for s in served] == [m.turn_idx for m in tool_results(sim)]
    # The recorded timeout comes back as the recorded timeout (still marked), then the recorded success.
    south = [m for m in tool_results(again) if '"warehouse": "south"' in m.content or fault_mark(m)]
    mark = fault_mark(south[0])
    assert mark is not None
    assert mark["kind"] == "timeout"
    assert info_of(again)["cassette"] == {
        "recording": "rec.json",
        "sim": sim.id,
        "recorded": 8,
        "served": 8,
        "unused": 0,
    }
    scored = SimulationEvaluator(warehouse).apply(again, task)
    assert scored.reward == 1.0


def test_a_different_scripted_agent_stops_with_the_refusal_at_its_first_unmatched_request(
    warehouse: Domain, recorded: tuple[Task, SimulationRun]
) -> None:
    task, sim = recorded
    agent = StepAgent(
        [
            ("get_account", {"account_id": "ACC-1004"}),
            ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "north"}),  # recorded later than the south one: served
            ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "south"}),  # the recorded timeout
            ("allocate_line", {**ORDER, "warehouse": "south", "quantity": 60}),  # recorded only with 40: refused
            ("allocate_line", {**ORDER, "warehouse": "north", "quantity": 20}),  # never asked
        ],
        name="scripted/greedy",
    )
    result = over_cassette(warehouse, recorded, agent)
    assert result.termination_reason == NO_RECORDED_RESULT
    results = tool_results(result)
    assert [bool(extra(m).get("cassette")) for m in results] == [True, True, True, False]
    refused = results[-1]
    assert result.messages is not None
    assert result.messages[-1] is refused  # the episode ended right there
    assert refused.error and refused.content.startswith("Error: no recorded result for allocate_line(")
    assert "only with other arguments" in refused.content
    assert refusal_mark(refused) == {
        "reason": "different_arguments",
        "tool": "allocate_line",
        "arguments": {**ORDER, "warehouse": "south", "quantity": 60},
        "by": "cassette",
    }
    assert info_of(result)["cassette"]["refusal"]["reason"] == "different_arguments"
    assert info_of(result)["error"].startswith("no recorded result for allocate_line")
    assert agent.steps == [("allocate_line", {**ORDER, "warehouse": "north", "quantity": 20})]
    assert served_for_the_same_request(sim, result)
    scored = SimulationEvaluator(warehouse).apply(result, task)
    assert scored.reward == 0.0


@pytest.mark.parametrize(
    "steps, reason",
    [
        ([("cancel_order", {"order_id": "SO-5002", "reason": "customer_request"})], "unknown_tool"),
        ([("get_order", {"order_id": "SO-5001"})], "different_arguments"),
        ([("get_account", {"account_id": "ACC-1004"}), ("get_account", {"account_id": "ACC-1004"})], "past_end"),
    ],
)
def test_every_kind_of_unmatched_request_is_refused(
    warehouse: Domain, recorded: tuple[Task, SimulationRun], steps: list[Step], reason: str
) -> None:
    result = over_cassette(warehouse, recorded, StepAgent(steps))
    assert result.termination_reason == NO_RECORDED_RESULT
    mark = refusal_mark(tool_results(result)[-1])
    assert mark is not None
    assert mark["reason"] == reason
    assert len(tool_results(result)) == len(steps)


def test_calls_after_a_refusal_in_the_same_message_get_not_run_results(
    warehouse: Domain, recorded: tuple[Task, SimulationRun]
) -> None:
    task, _ = recorded
    calls = [
        ToolCall(id="a", name="get_account", arguments={"account_id": "ACC-1004"}),
        ToolCall(id="b", name="get_account", arguments={"account_id": "ACC-9999"}),
        ToolCall(id="c", name="get_order", arguments={"order_id": "SO-5002"}),
    ]

    class OneMessage(StepAgent):
        async def generate(self, incoming: list[Message]) -> AssistantMessage:
            return AssistantMessage(content=None, tool_calls=[c.model_copy() for c in calls], cost=0.0)

    result = over_cassette(warehouse, recorded, OneMessage([]))
    served, refused, not_run = tool_results(result)
    assert [m.id for m in (served, refused, not_run)] == ["a", "b", "c"]
    refused_mark, not_run_mark = refusal_mark(refused), refusal_mark(not_run)
    assert refused_mark is not None and not_run_mark is not None
    assert not served.error and refused_mark["reason"] == "different_arguments"
    assert not_run_mark["reason"] == "not_run" and "not run" in not_run.content
    assert result.messages is not None
    timeline = replay(result.messages, task, lambda solo: warehouse.new_environment(solo=solo))
    assert not timeline.findings  # every call still has its result
    assert [c.verdict for c in timeline.calls] == [Verdict.SKIPPED_READ, Verdict.REFUSED, Verdict.REFUSED]


def test_replay_of_a_cassette_run_keeps_refusals_and_shows_results_served_out_of_order(
    warehouse: Domain, recorded: tuple[Task, SimulationRun]
) -> None:
    task, _ = recorded
    # Refused writes are never run by replay.
    greedy = over_cassette(
        warehouse, recorded, StepAgent([("allocate_line", {**ORDER, "warehouse": "south", "quantity": 60})])
    )
    assert greedy.messages is not None
    timeline = replay(greedy.messages, task, lambda solo: warehouse.new_environment(solo=solo))
    assert [c.verdict for c in timeline.calls] == [Verdict.REFUSED]
    assert timeline.calls[0].refusal is not None
    assert timeline.calls[0].refusal["reason"] == "different_arguments"
    assert timeline.final.agent_hash() == timeline.initial.agent_hash()
    assert timeline.verdict_counts()["refused"] == 1

    # The recorded allocations, made in the other order: each gets the result recorded for it, but that result
    # was recorded in another state. Replay shows what the environment would have said.
    swapped = over_cassette(
        warehouse,
        recorded,
        StepAgent(
            [
                ("allocate_line", {**ORDER, "warehouse": "north", "quantity": 20}),
                ("allocate_line", {**ORDER, "warehouse": "south", "quantity": 40}),
            ],
            retry_faults=True,
        ),
    )
    assert swapped.messages is not None
    timeline = replay(swapped.messages, task, lambda solo: warehouse.new_environment(solo=solo))
    assert [c.verdict for c in timeline.calls] == [Verdict.MISMATCH, Verdict.INJECTED_FAULT, Verdict.MISMATCH]
    first = timeline.calls[0]
    assert first.recorded is not None and first.replayed is not None
    assert (
        json.loads(first.recorded)["status"] == "allocated" and json.loads(first.replayed)["status"] == "part_allocated"
    )


def test_no_recorded_result_is_a_termination_of_its_own_next_to_tau2s() -> None:
    assert TERMINATION_REASONS[:10] == (
        "user_stop",
        "agent_stop",
        "max_steps",
        "timeout",
        "too_many_errors",
        "agent_error",
        "user_error",
        "infrastructure_error",
        "context_window_exceeded",
        "unexpected_error",
    )
    assert TERMINATION_REASONS[10:] == (NO_RECORDED_RESULT,)


# --- the command line -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recording_file(own_registry: DomainRegistry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cassette") / "gold.json"
    config = RunConfig(
        domain="warehouse",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        task_ids=[TASK, "quote_available_stock"],
    )
    asyncio.run(Runner(config, path, own_registry).run())
    return path


def test_run_cassettes_writes_an_evaluated_results_file(
    own_registry: DomainRegistry, recording_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "over.json"
    summary = asyncio.run(
        run_cassettes(
            recording_file, own_registry, ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), out
        )
    )
    assert [o.reward for o in summary.outcomes] == [1.0, 1.0]
    run = open_run(out)
    assert run.raw_info["tau_tui"]["cassette"]["recording"] == str(recording_file)
    assert {t for t in run.tasks()} == {TASK, "quote_available_stock"}
    sources = [info_of(run.simulation(i))["cassette"]["sim"] for i in range(len(run.entries))]
    assert sources == [e.id for e in open_run(recording_file).entries]
    with pytest.raises(CassetteError, match="already exists"):
        asyncio.run(
            run_cassettes(
                recording_file, own_registry, ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), out
            )
        )
    with pytest.raises(CassetteError, match="not 'mock'"):
        asyncio.run(
            run_cassettes(
                recording_file,
                own_registry,
                ParticipantSpec("scripted/gold"),
                ParticipantSpec("scripted/user"),
                tmp_path / "x.json",
                domain="mock",
            )
        )


def test_cli_run_cassette(
    recording_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.cli import main

    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "no-tau2-data-here"))
    sim_id = open_run(recording_file).entries[0].id
    out = tmp_path / "cli.json"
    code = main(
        [
            "run",
            "--cassette",
            str(recording_file),
            "--cassette-sim",
            sim_id[:8],
            "--agent-llm",
            "scripted/flaky:1.0",
            "--user-llm",
            "scripted/user",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"{sim_id} -> " in printed and "1 simulations over" in printed
    sim = open_run(out).simulation(0)
    assert sim.info is not None
    assert sim.info["cassette"] is not None
    assert sim.reward_info is not None
    assert sim.info["cassette"]["sim"] == sim_id and sim.reward_info.reward == 0.0  # it skipped every action

    assert (
        main(
            [
                "run",
                "--cassette",
                str(recording_file),
                "--cassette-sim",
                "nope",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--out",
                str(tmp_path / "n.json"),
            ]
        )
        == 2
    )
    assert "no simulation 'nope'" in capsys.readouterr().err
    assert main(["run", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user"]) == 2
    assert "--domain is required" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                "--cassette",
                str(recording_file),
                "-k",
                "2",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
            ]
        )
        == 2
    )
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--cassette RECORDING" in capsys.readouterr().out
