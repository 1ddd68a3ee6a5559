"""``scripted/flaky[:P]``: the gold agent dropping each reference action with a seeded probability."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.calibrate import Band, Calibrator
from tau_tui.rollout import ParticipantSpec, ParticipantSpecError, RunConfig, Runner, build_agent
from tau_tui.rollout.factory import DEFAULT_DROP, SCRIPTED_AGENTS, FlakyAgent, check_spec
from tau_tui.rollout.participants import Participant

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.model.tasks import Task


@pytest.fixture(scope="module")
def retail(registry: DomainRegistry) -> Domain:
    return registry.get("retail")


def as_flaky(agent: Participant) -> FlakyAgent:
    assert isinstance(agent, FlakyAgent)
    return agent


def flaky(domain: Domain, task: Task, model: str, seed: int | None) -> FlakyAgent:
    agent = as_flaky(build_agent(ParticipantSpec(model), task, domain.new_environment()))
    if seed is not None:
        agent.set_seed(seed)
    return agent


def test_registered_in_the_factory_with_an_optional_probability() -> None:
    assert "scripted/flaky" in SCRIPTED_AGENTS
    check_spec(ParticipantSpec("scripted/flaky"), "agent")
    check_spec(ParticipantSpec("scripted/flaky:0.25"), "agent")
    for bad in ("scripted/flaky:2", "scripted/flaky:-0.1", "scripted/flaky:abc", "scripted/flaky:"):
        with pytest.raises(ParticipantSpecError, match="between 0 and 1|from 0 to 1"):
            check_spec(ParticipantSpec(bad), "agent")
    with pytest.raises(ParticipantSpecError, match="no scripted agent"):
        check_spec(ParticipantSpec("scripted/gold:0.3"), "agent")  # gold takes no option
    with pytest.raises(ParticipantSpecError, match="no scripted user"):
        check_spec(ParticipantSpec("scripted/flaky"), "user")


def test_probability_from_the_name_or_the_arguments(retail: Domain) -> None:
    task = retail.tasks()["2"]
    env = retail.new_environment()
    assert as_flaky(build_agent(ParticipantSpec("scripted/flaky"), task, env)).drop == DEFAULT_DROP
    agent = as_flaky(build_agent(ParticipantSpec("scripted/flaky:0.5"), task, env))
    assert agent.drop == 0.5
    assert agent.info() == {"implementation": "scripted_flaky", "llm": "scripted/flaky:0.5", "llm_args": {"drop": 0.5}}
    assert as_flaky(build_agent(ParticipantSpec("scripted/flaky", {"drop": 0.75}), task, env)).drop == 0.75
    with pytest.raises(ParticipantSpecError):
        build_agent(ParticipantSpec("scripted/flaky", {"drop": "lots"}), task, env)


def test_drops_are_determined_by_seed_and_task(retail: Domain) -> None:
    task = retail.tasks()["4"]  # 13 reference actions

    def names(agent: FlakyAgent) -> list[str]:
        return [a.action_id for a in agent.dropped]

    first = flaky(retail, task, "scripted/flaky:0.5", 1234)
    assert names(first) == names(flaky(retail, task, "scripted/flaky:0.5", 1234))
    assert 0 < len(first.dropped) < len(task.expected_actions)
    patterns = {tuple(names(flaky(retail, task, "scripted/flaky:0.5", seed))) for seed in range(20)}
    assert len(patterns) > 5  # different seeds drop different actions
    other_task = retail.tasks()["3"]
    assert names(flaky(retail, other_task, "scripted/flaky:0.5", 1234)) != names(first)
    # what is kept is the gold plan minus the dropped actions, in order
    kept = [a.action_id for kind, a in first.plan if a is not None]
    assert kept == [a.action_id for a in task.expected_actions if a.action_id not in names(first)]


def test_a_higher_probability_drops_a_superset(retail: Domain) -> None:
    task = retail.tasks()["4"]
    for seed in range(10):
        low = {a.action_id for a in flaky(retail, task, "scripted/flaky:0.2", seed).dropped}
        high = {a.action_id for a in flaky(retail, task, "scripted/flaky:0.7", seed).dropped}
        assert low <= high
    assert flaky(retail, task, "scripted/flaky:0", 7).dropped == []
    assert [a for _, a in flaky(retail, task, "scripted/flaky:1", 7).plan if a is not None] == []


def test_the_same_run_twice_gives_the_same_trajectories(registry: DomainRegistry, tmp_path: Path) -> None:
    def run(path: Path) -> list[tuple[str, int, float, list[list[str]]]]:
        # tau2 1.0.1's retail tasks 0, 1 and 5 have no NL assertions, so every trial is scored without a judge
        config = RunConfig(
            domain="retail",
            agent=ParticipantSpec("scripted/flaky:0.5"),
            user=ParticipantSpec("scripted/user"),
            task_ids=["0", "1", "5"],
            num_trials=3,
            concurrency=3,
        )
        asyncio.run(Runner(config, path, registry).run())
        data = json.loads(path.read_text())
        return sorted(
            (
                s["task_id"],
                s["trial"],
                s["reward_info"]["reward"],
                [[c["name"] for c in m.get("tool_calls") or []] for m in s["messages"]],
            )
            for s in data["simulations"]
        )

    first = run(tmp_path / "a.json")
    assert first == run(tmp_path / "b.json")
    assert {reward for _, _, reward, _ in first} == {0.0, 1.0}  # some trials lose an action, some do not


def test_all_three_bands_on_mock_with_k_trials(registry: DomainRegistry, tmp_path: Path) -> None:
    calibrator = Calibrator(registry, "mock")
    config = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/flaky:0.5"),
        user=ParticipantSpec("scripted/user"),
        num_trials=6,
        concurrency=4,
    )
    asyncio.run(calibrator.run(config, tmp_path / "flaky.json"))
    bands = {row.task_id: row.band for row in calibrator.grid.rows()}
    assert {Band.SATURATED, Band.ZERO, Band.LEARNING_ZONE} <= set(bands.values()), bands
    # the task no action can pass (its reward needs a change no expected action makes) is in the zero band;
    # a task without expected actions has nothing to drop
    assert bands["update_task_with_history_and_env_assertions"] is Band.ZERO
    assert bands["create_task_1_nl_eval"] is Band.SATURATED
    assert bands["update_task_1"] is Band.LEARNING_ZONE
