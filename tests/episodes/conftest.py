"""Fixtures for episode tests: our own domains (no tau2 data needed) and a way to run one episode."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.domains import DomainRegistry
from tau_tui.model.tasks import Task
from tau_tui.rollout.orchestrator import Orchestrator
from tau_tui.rollout.participants import user_brief
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


def run_episode(env: Environment, task, agent, user=None, **kwargs: Any) -> tuple[SimulationRun, Orchestrator]:
    """One episode with the scripted user unless another user is given; returns (simulation, orchestrator)."""
    user = user if user is not None else ScriptedUser(user_brief(task, env))
    options, rest = split_options(kwargs)
    orchestrator = Orchestrator(env, task, agent, user, options, **rest)
    return asyncio.run(orchestrator.run()), orchestrator


def tool_results(sim):
    return [m for m in sim.messages if m.role == "tool"]
