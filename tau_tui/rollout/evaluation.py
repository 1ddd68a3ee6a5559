"""Scoring a finished simulation with our evaluator (tau_tui.evaluate), in tau2's ``reward_info`` shape.

The simulation goes through the one scoring path (``tau_tui.evaluate.score``):
it is replayed on a fresh environment exactly as for a recorded run, the gold
state is built from the task (once per task, ``GoldCache``), and the reward is
recomputed with tau2's rules. When it cannot be computed (NL assertions in
the basis and no judge) the simulation keeps ``reward_info`` null, which is
what tau2's loader accepts for an unscored run, and the reason goes in
``info["evaluation"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.domains import Domain
from tau_tui.env.environment import Environment
from tau_tui.evaluate import GoldCache, score
from tau_tui.model.results import RewardInfo, SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.replay import GoldResult


@dataclass
class Scored:
    """The outcome of scoring one simulation."""

    reward: float | None
    reward_info: dict[str, Any] | None
    notes: list[str]
    status: str
    raises: str | None = None  # "Type: message" of the error tau2's evaluator raises here (a broken env assertion)


class SimulationEvaluator:
    """Evaluates simulations of one domain (variant) with an optional NL judge; caches gold states."""

    def __init__(self, domain: Domain, variant: str | None = None, judge: Any = None):
        self.domain = domain
        self.variant = variant
        self.judge = judge
        self.golds = GoldCache()

    def new_env(self, solo: bool) -> Environment:
        return self.domain.new_environment(solo=solo, variant=self.variant)

    def gold(self, task: Task) -> GoldResult:
        return self.golds.get(task, self.new_env)

    def score(self, sim: SimulationRun, task: Task, solo: bool = False) -> Scored:
        evaluation = score(sim, task, self.new_env, self.judge, solo=solo, golds=self.golds)
        reward_info = evaluation.to_reward_info() if evaluation.reward is not None else None
        raises = evaluation.raises if evaluation.reward is None else None
        return Scored(evaluation.reward, reward_info, list(evaluation.notes), evaluation.status, raises)

    def apply(self, sim: SimulationRun, task: Task, solo: bool = False) -> Scored:
        """Score ``sim`` and attach the result (``reward_info``, or a note in ``info`` when unscored)."""
        scored = self.score(sim, task, solo)
        if scored.reward_info is not None:
            sim.reward_info = RewardInfo.model_validate(scored.reward_info)
        else:
            sim.reward_info = None
            evaluation: dict[str, Any] = {"status": scored.status, "notes": scored.notes}
            if scored.raises:
                evaluation["tau2_raises"] = scored.raises
            sim.info = {**(sim.info or {}), "evaluation": evaluation}
        return scored
