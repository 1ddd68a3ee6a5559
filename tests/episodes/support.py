"""Helpers shared by the episode tests and the tests of our own domains."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

from tau_tui.domains import Domain, DomainRegistry
from tau_tui.model.io import open_run
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
from tau_tui.rollout.evaluation import SimulationEvaluator
from tau_tui.rollout.orchestrator import EpisodeOptions, Orchestrator
from tau_tui.rollout.participants import Participant, user_brief
from tau_tui.rollout.users import ScriptedUser


def gold_rewards(registry: DomainRegistry, domain: str, path: Path) -> dict[str, tuple[str | None, float | None]]:
    """Task id -> (termination, reward) of ``scripted/gold`` with ``scripted/user`` on every task."""
    config = RunConfig(
        domain=domain, agent=ParticipantSpec("scripted/gold"), user=ParticipantSpec("scripted/user"), concurrency=4
    )
    summary = asyncio.run(Runner(config, path, registry).run())
    assert summary.unscored == 0
    run = open_run(path)
    return {e.task_id: (e.termination, e.reward) for e in run.entries}


def scored_episode(domain: Domain, task: Task, agent: Participant) -> tuple[SimulationRun, float | None]:
    """One evaluated episode of ``agent`` with the scripted user."""
    env = domain.new_environment()
    orchestrator = Orchestrator(env, task, agent, ScriptedUser(user_brief(task, env)), EpisodeOptions(seed=1))
    sim = asyncio.run(orchestrator.run())
    return sim, SimulationEvaluator(domain).apply(sim, task).reward


def needs_something_done(task: Task, writes: Callable[[str], bool]) -> bool:
    """Whether the reference solution changes the DB or must tell the customer something."""
    criteria = task.evaluation_criteria
    return any(writes(a.name) for a in task.expected_actions) or bool(criteria and criteria.communicate_info)
