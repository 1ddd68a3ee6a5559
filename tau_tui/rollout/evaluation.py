"""Scoring a finished simulation with our evaluator (tau_tui.evaluate), in tau2's ``reward_info`` shape.

The simulation is replayed on a fresh environment exactly as for a recorded
run, the gold state is built from the task (once per task), and the reward is
recomputed with tau2's rules. When it cannot be computed (NL assertions in
the basis and no judge) the simulation keeps ``reward_info`` null, which is
what tau2's loader accepts for an unscored run, and the reason goes in
``info["evaluation"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tau_tui.analysis import task_definition_hash
from tau_tui.domains import Domain
from tau_tui.env.environment import Environment
from tau_tui.evaluate import evaluate
from tau_tui.model.results import RewardInfo, SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.replay import GoldResult, Timeline, gold_state, replay, run_assertions


@dataclass
class _Replayed:
    sim: SimulationRun
    task: Task | None
    timeline: Timeline
    gold: GoldResult | None
    assertions: list[tuple[Any, bool | None, str | None]] = field(default_factory=list)


@dataclass
class Scored:
    """The outcome of scoring one simulation."""

    reward: float | None
    reward_info: dict[str, Any] | None
    notes: list[str]
    status: str


class SimulationEvaluator:
    """Evaluates simulations of one domain (variant) with an optional NL judge; caches gold states."""

    def __init__(self, domain: Domain, variant: str | None = None, judge: Any = None):
        self.domain = domain
        self.variant = variant
        self.judge = judge
        self._gold: dict[str, GoldResult] = {}

    def new_env(self, solo: bool) -> Environment:
        return self.domain.new_environment(solo=solo, variant=self.variant)

    def gold(self, task: Task) -> GoldResult:
        key = task_definition_hash(task)
        if key not in self._gold:
            self._gold[key] = gold_state(task, self.new_env)
        return self._gold[key]

    def score(self, sim: SimulationRun, task: Task, solo: bool = False) -> Scored:
        timeline = replay(sim.trajectory, task, self.new_env, solo)
        replayed = _Replayed(sim, task, timeline, self.gold(task), run_assertions(timeline, task))
        evaluation = evaluate(replayed, self.judge)
        reward_info = evaluation.to_reward_info() if evaluation.reward is not None else None
        return Scored(evaluation.reward, reward_info, list(evaluation.notes), evaluation.status)

    def apply(self, sim: SimulationRun, task: Task, solo: bool = False) -> Scored:
        """Score ``sim`` and attach the result (``reward_info``, or a note in ``info`` when unscored)."""
        scored = self.score(sim, task, solo)
        if scored.reward_info is not None:
            sim.reward_info = RewardInfo.model_validate(scored.reward_info)
        else:
            sim.reward_info = None
            sim.info = {**(sim.info or {}), "evaluation": {"status": scored.status, "notes": scored.notes}}
        return scored
