"""Metrics of a run file: average reward, pass^k, pass@k, terminations (tau2-facts §6).

tau2's rules: success is a reward of 1 within 1e-6; infrastructure errors are
left out of every metric (and counted apart); pass^k of a task is
C(successes, k) / C(trials, k) and the reported pass^k is its mean over tasks,
for k from 1 to min(num_trials, fewest trials of any task). pass@k uses the
unbiased estimator 1 - C(failures, k) / C(trials, k), averaged the same way.
Simulations whose reward could not be computed are counted as unscored and
left out like infrastructure errors, never counted as failures.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from tau_tui.config import id_order
from tau_tui.evaluate.reward import is_success, scored_reward

INFRASTRUCTURE_ERROR = "infrastructure_error"


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """Probability that k trials drawn without replacement all succeed."""
    if trials < k:
        raise ValueError(f"{trials} trials is fewer than k={k}")
    return math.comb(successes, k) / math.comb(trials, k)


def pass_at_k(trials: int, successes: int, k: int) -> float:
    """Probability that at least one of k trials drawn without replacement succeeds."""
    if trials < k:
        raise ValueError(f"{trials} trials is fewer than k={k}")
    return 1.0 - math.comb(trials - successes, k) / math.comb(trials, k)


@dataclass(frozen=True)
class MetricOutcome:
    """One simulation as metrics see it; ``reward`` None means unscored."""

    task_id: str
    reward: float | None
    termination: str | None


@dataclass
class TaskMetrics:
    task_id: str
    trials: int
    successes: int
    avg_reward: float
    pass_hat_k: dict[int, float]
    pass_at_k: dict[int, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task_id,
            "trials": self.trials,
            "successes": self.successes,
            "avg_reward": self.avg_reward,
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
        }


@dataclass
class RunMetrics:
    n_simulations: int
    n_scored: int
    n_unscored: int
    infrastructure_errors: int
    avg_reward: float | None
    max_k: int
    pass_hat_k: dict[int, float]
    pass_at_k: dict[int, float]
    terminations: dict[str, int]
    tasks: list[TaskMetrics] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "n_simulations": self.n_simulations,
            "n_scored": self.n_scored,
            "n_unscored": self.n_unscored,
            "infrastructure_errors": self.infrastructure_errors,
            "avg_reward": self.avg_reward,
            "max_k": self.max_k,
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "terminations": self.terminations,
            "tasks": [t.to_json() for t in self.tasks],
        }


def compute_metrics(outcomes: Iterable[MetricOutcome], num_trials: int | None = None) -> RunMetrics:
    """Metrics over one file's simulations; ``num_trials`` is the run's ``info.num_trials`` when known."""
    outcomes = list(outcomes)
    terminations = Counter(o.termination or "unknown" for o in outcomes)
    infra = terminations.get(INFRASTRUCTURE_ERROR, 0)
    counted = [o for o in outcomes if o.termination != INFRASTRUCTURE_ERROR]
    scored = [(o.task_id, r) for o in counted if (r := scored_reward(o.reward)) is not None]
    by_task: dict[str, list[float]] = {}
    for task_id, reward in scored:
        by_task.setdefault(task_id, []).append(reward)
    max_k = min((len(r) for r in by_task.values()), default=0)
    if num_trials:
        max_k = min(max_k, num_trials)
    tasks = []
    for task_id, rewards in sorted(by_task.items(), key=lambda item: _task_order(item[0])):
        n, c = len(rewards), sum(is_success(r) for r in rewards)
        ks = range(1, n + 1)
        tasks.append(
            TaskMetrics(
                task_id,
                n,
                c,
                sum(rewards) / n,
                {k: pass_hat_k(n, c, k) for k in ks},
                {k: pass_at_k(n, c, k) for k in ks},
            )
        )
    return RunMetrics(
        n_simulations=len(outcomes),
        n_scored=len(scored),
        n_unscored=len(counted) - len(scored),
        infrastructure_errors=infra,
        avg_reward=sum(reward for _, reward in scored) / len(scored) if scored else None,
        max_k=max_k,
        pass_hat_k={k: sum(t.pass_hat_k[k] for t in tasks) / len(tasks) for k in range(1, max_k + 1)},
        pass_at_k={k: sum(t.pass_at_k[k] for t in tasks) / len(tasks) for k in range(1, max_k + 1)},
        terminations=dict(sorted(terminations.items())),
        tasks=tasks,
    )


def _task_order(task_id: str) -> tuple[int, int, str]:
    """Numeric task ids in numeric order, then the others by name (as tau2's viewer sorts them)."""
    return id_order(task_id)
