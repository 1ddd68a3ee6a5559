"""Fixtures for episode tests: our own domains (no tau2 data needed) and a way to run one episode."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.domains import DomainRegistry
from tau_tui.model.messages import Message, ToolMessage
from tau_tui.model.tasks import Task
from tau_tui.rollout.orchestrator import EpisodeOptions, Orchestrator
from tau_tui.rollout.participants import Participant, user_brief
from tau_tui.rollout.users import ScriptedUser
from tests.helpers import split_options
from tests.rollout.fake_llm import FakeLLM

if TYPE_CHECKING:
    from tau_tui.env.domain import Domain
    from tau_tui.env.environment import Environment
    from tau_tui.model.results import SimulationRun


@pytest.fixture(scope="session")
def own_registry() -> DomainRegistry:
    """Domains of this project only: never reads tau2 data, never asks an installed tau2."""
    return DomainRegistry(None, use_tau2=False)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A local OpenAI-compatible server (127.0.0.1) answering with scripted replies."""
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture(scope="session")
def warehouse(own_registry: DomainRegistry) -> Domain:
    return own_registry.get("warehouse")


@pytest.fixture(scope="session")
def aftersales(own_registry: DomainRegistry) -> Domain:
    return own_registry.get("aftersales")


def with_plan(task: Task, plan: dict[str, Any] | None) -> Task:
    """A copy of ``task`` with another fault plan (None: without one)."""
    data = task.model_dump(mode="json")
    data.pop("fault_plan", None)
    if plan is not None:
        data["fault_plan"] = plan
    return Task.model_validate(data)


# tests.helpers.split_options, seen through its real signature (it has no annotations of its own).
_split_options: Callable[[dict[str, Any]], tuple[EpisodeOptions, dict[str, Any]]] = split_options


def run_episode(
    env: Environment, task: Task, agent: Participant, user: Participant | None = None, **kwargs: Any
) -> tuple[SimulationRun, Orchestrator]:
    """One episode with the scripted user unless another user is given; returns (simulation, orchestrator)."""
    user = user if user is not None else ScriptedUser(user_brief(task, env))
    options, rest = _split_options(kwargs)
    orchestrator = Orchestrator(env, task, agent, user, options, **rest)
    return asyncio.run(orchestrator.run()), orchestrator


def tool_results(sim: SimulationRun) -> list[ToolMessage]:
    assert sim.messages is not None
    results: list[ToolMessage] = []
    for m in sim.messages:
        if m.role == "tool":
            assert isinstance(m, ToolMessage)
            results.append(m)
    return results


def extra(message: Message) -> dict[str, Any]:
    """A message's fields beyond the declared ones (a dict on our models, which allow extra fields)."""
    assert message.model_extra is not None
    return message.model_extra


def info_of(sim: SimulationRun) -> dict[str, Any]:
    """A simulation's ``info`` (the orchestrator always records one)."""
    assert sim.info is not None
    return sim.info
