"""How far to trust a score: intervals, paired tests and trial-to-trial noise (headless, stdlib only).

- ``wilson``: the Wilson score interval of one rate (successes out of n).
- ``mcnemar_exact``: the exact (binomial) two-sided McNemar test on the discordant pairs of a
  paired comparison (A passed and B failed: ``b``; B passed and A failed: ``c``).
- ``bootstrap_tasks``: percentile intervals for average reward and pass^k, resampling *tasks*
  with replacement (the trials of a task are not independent, so tasks are the unit).
- ``paired_bootstrap``: the interval of mean(B - A) over paired units, resampling tasks.
- ``holm``: p-values of several comparisons adjusted for their number (Holm's step-down).
- ``flip_rate`` and ``noise_floor``: how often a task's trials disagree, and the size of a
  difference in average reward that trial-to-trial noise alone would produce.

Every resampling takes a ``seed`` and reports it, so an interval can be reproduced exactly.
Rewards are the scored ones only: unscored attempts are left out before they get here.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from tau_tui import formats
from tau_tui.evaluate.reward import is_success, scored_reward

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval; ``method`` says how it was made, ``seed`` when resampled."""

    estimate: float
    low: float
    high: float
    level: float
    method: str
    seed: int | None = None
    resamples: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
        }
        if self.seed is not None:
            out["seed"] = self.seed
            out["resamples"] = self.resamples
        return out

    def text(self, scale: float = 100.0, digits: int = 1) -> str:
        """``62.0% [51.3, 72.1]``-style text (``scale`` 100: percent)."""
        unit = "%" if scale == 100.0 else ""
        return (
            f"{self.estimate * scale:.{digits}f}{unit} [{self.low * scale:.{digits}f}, {self.high * scale:.{digits}f}]"
        )


def _z(level: float) -> float:
    """The two-sided normal quantile for ``level`` (0.95 → 1.959964)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson(successes: int, n: int, level: float = DEFAULT_LEVEL) -> Interval | None:
    """Wilson score interval of ``successes / n``; None when n is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    z = _z(level)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 / 1 at the ends, not rounding noise
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(p, low, high, level, "wilson")


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: P(a split at least as uneven as b:c | b + c discordant, p=1/2).

    1.0 when there is no discordant pair (no evidence of a difference).
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of several p-values for the number of comparisons (None stays None).

    The m tested p-values sorted ascending get (m − i)·p (i from 0), made non-decreasing and capped at 1.
    """
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        adjusted[i] = running
    return adjusted


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (the 'linear' rule of numpy) of sorted values; q in [0, 1]."""
    if not sorted_values:
        raise ValueError("no values")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _percentile_interval(
    estimate: float, draws: list[float], level: float, method: str, seed: int, resamples: int
) -> Interval:
    draws.sort()
    alpha = (1 - level) / 2
    return Interval(estimate, _percentile(draws, alpha), _percentile(draws, 1 - alpha), level, method, seed, resamples)


def _pass_hat_k(trials: int, successes: int, k: int) -> float:
    return math.comb(successes, k) / math.comb(trials, k)


@dataclass(frozen=True)
class TaskIntervals:
    """Bootstrap-over-tasks intervals of one file's metrics."""

    avg_reward: Interval | None
    pass_hat_k: dict[int, Interval]
    n_tasks: int

    def to_json(self) -> dict[str, Any]:
        return {
            "avg_reward": self.avg_reward.to_json() if self.avg_reward else None,
            "pass_hat_k": {str(k): v.to_json() for k, v in self.pass_hat_k.items()},
            "n_tasks": self.n_tasks,
        }


def bootstrap_tasks(
    by_task: Mapping[str, Sequence[float]],
    max_k: int,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> TaskIntervals:
    """Percentile intervals for average reward (over simulations) and pass^1..max_k (mean over tasks).

    Each resample draws as many tasks as there are, with replacement, and keeps all the trials of a
    drawn task. Average reward is the mean over the drawn simulations, as ``compute_metrics`` does.
    """
    tasks = [list(rewards) for rewards in by_task.values() if rewards]
    if not tasks:
        return TaskIntervals(None, {}, 0)
    sums = [sum(r) for r in tasks]
    counts = [len(r) for r in tasks]
    per_k = {
        k: [_pass_hat_k(len(r), sum(is_success(x) for x in r), k) for r in tasks]
        for k in range(1, max_k + 1)
        if all(len(r) >= k for r in tasks)
    }
    rng = random.Random(seed)
    n = len(tasks)
    avg_draws: list[float] = []
    k_draws: dict[int, list[float]] = {k: [] for k in per_k}
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        avg_draws.append(sum(sums[i] for i in picks) / sum(counts[i] for i in picks))
        for k, values in per_k.items():
            k_draws[k].append(sum(values[i] for i in picks) / n)
    avg = _percentile_interval(sum(sums) / sum(counts), avg_draws, level, "bootstrap over tasks", seed, resamples)
    passes = {
        k: _percentile_interval(sum(values) / n, k_draws[k], level, "bootstrap over tasks", seed, resamples)
        for k, values in per_k.items()
    }
    return TaskIntervals(avg, passes, n)


def paired_bootstrap(
    pairs_by_task: Mapping[str, Sequence[tuple[float, float]]],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Interval | None:
    """Interval of mean(B - A) over paired (A reward, B reward) units, resampling tasks with their pairs."""
    tasks = [list(pairs) for pairs in pairs_by_task.values() if pairs]
    if not tasks:
        return None
    sums = [sum(b - a for a, b in pairs) for pairs in tasks]
    counts = [len(pairs) for pairs in tasks]
    rng = random.Random(seed)
    n = len(tasks)
    draws = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        draws.append(sum(sums[i] for i in picks) / sum(counts[i] for i in picks))
    return _percentile_interval(sum(sums) / sum(counts), draws, level, "paired bootstrap over tasks", seed, resamples)


@dataclass(frozen=True)
class FlipRate:
    """How often trials of one task disagree (pass vs fail), over tasks with two or more trials.

    ``mean_pairwise``: the mean over tasks of the chance that two different trials of the task
    disagree, 2·c·(n−c) / (n·(n−1)); ``tasks_flipping``: tasks with at least one pass and one fail.
    """

    tasks_with_trials: int
    tasks_flipping: int
    mean_pairwise: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks_with_trials": self.tasks_with_trials,
            "tasks_flipping": self.tasks_flipping,
            "mean_pairwise": self.mean_pairwise,
        }

    def text(self) -> str:
        if not self.tasks_with_trials or self.mean_pairwise is None:
            return "flip rate: n/a (one trial per task)"
        return (
            f"flip rate: {self.tasks_flipping}/{self.tasks_with_trials} tasks mixed pass/fail across trials, "
            f"{self.mean_pairwise * 100:.1f}% of trial pairs disagree"
        )


def flip_rate(by_task: Mapping[str, Sequence[float]]) -> FlipRate:
    rates = []
    flipping = 0
    for rewards in by_task.values():
        n = len(rewards)
        if n < 2:
            continue
        c = sum(is_success(r) for r in rewards)
        rates.append(2 * c * (n - c) / (n * (n - 1)))
        flipping += 0 < c < n
    return FlipRate(len(rates), flipping, sum(rates) / len(rates) if rates else None)


@dataclass(frozen=True)
class NoiseFloor:
    """The smallest difference in average reward (in points, 0-100) that trial noise does not explain.

    Two runs of the same agent on the same tasks differ in average reward by about
    z·sqrt(2·v/T), where v is the mean over tasks of the variance of a task's reward across trials
    and T the number of tasks (each run's average has variance v/T, and the two are independent).
    None (with ``reason``) when no task has two scored trials.
    """

    points: float | None
    level: float
    tasks: int
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"points": self.points, "level": self.level, "tasks": self.tasks, "reason": self.reason}

    def text(self) -> str:
        if self.points is None:
            return f"noise floor: n/a ({self.reason})"
        tasks = f"{formats.count(self.tasks, 'task')} with trials"
        if self.points >= 100.0:
            return f"noise floor: any difference is within trial-to-trial noise here ({self.level:.0%}, {tasks})"
        return (
            f"noise floor: differences under {self.points:.1f} points are within trial-to-trial noise here "
            f"({self.level:.0%}, {tasks})"
        )


def noise_floor(by_task: Mapping[str, Sequence[float]], level: float = DEFAULT_LEVEL) -> NoiseFloor:
    variances = []
    for rewards in by_task.values():
        n = len(rewards)
        if n < 2:
            continue
        mean = sum(rewards) / n
        variances.append(sum((r - mean) ** 2 for r in rewards) / (n - 1))
    if not variances:
        return NoiseFloor(None, level, 0, "needs two or more scored trials of a task")
    tasks = len(variances)
    v = sum(variances) / tasks
    return NoiseFloor(100 * _z(level) * math.sqrt(2 * v / tasks), level, tasks)


@dataclass(frozen=True)
class Confidence:
    """Everything ``confidence`` says about one file's scored rewards."""

    intervals: TaskIntervals
    success_rate: Interval | None  # Wilson, over all scored simulations
    flips: FlipRate
    noise: NoiseFloor
    n_scored: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            **self.intervals.to_json(),
            "success_rate": self.success_rate.to_json() if self.success_rate else None,
            "flip_rate": self.flips.to_json(),
            "noise_floor": self.noise.to_json(),
        }

    def lines(self) -> list[str]:
        """The plain-text block shown under a file's metrics."""
        out = []
        avg = self.intervals.avg_reward
        if avg is not None:
            out.append(f"avg reward {avg.text()}  ({avg.level:.0%} bootstrap over {self.intervals.n_tasks} tasks)")
        for k, iv in self.intervals.pass_hat_k.items():
            out.append(f"pass^{k} {iv.text()}")
        if self.success_rate is not None:
            out.append(
                f"success rate {self.success_rate.text()}  (Wilson, {self.n_scored} simulations taken as independent)"
            )
        out.append(self.flips.text())
        out.append(self.noise.text())
        if avg is not None and avg.seed is not None:
            out.append(f"bootstrap seed {avg.seed}, {avg.resamples} resamples")
        return out


def group_by_task(outcomes: Sequence[tuple[str, float | None]]) -> dict[str, list[float]]:
    """Scored rewards per task from (task, reward or None) pairs; unscored attempts (and rewards no run can have,
    ``scored_reward``) are left out."""
    by_task: dict[str, list[float]] = {}
    for task, given in outcomes:
        reward = scored_reward(given)
        if reward is not None:
            by_task.setdefault(task, []).append(reward)
    return by_task


def outcome_confidence(
    outcomes: Iterable[Any],
    max_k: int,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Confidence:
    """``confidence`` of ``MetricOutcome``s, left out as ``compute_metrics`` leaves them (unscored, infra errors)."""
    from tau_tui.evaluate.metrics import INFRASTRUCTURE_ERROR

    kept = [(o.task_id, o.reward) for o in outcomes if o.termination != INFRASTRUCTURE_ERROR]
    return confidence(group_by_task(kept), max_k, seed=seed, resamples=resamples, level=level)


def confidence(
    by_task: Mapping[str, Sequence[float]],
    max_k: int,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Confidence:
    """Intervals, Wilson rate, flip rate and noise floor of one file's scored rewards per task."""
    rewards = [r for values in by_task.values() for r in values]
    return Confidence(
        bootstrap_tasks(by_task, max_k, seed=seed, resamples=resamples, level=level),
        wilson(sum(is_success(r) for r in rewards), len(rewards), level),
        flip_rate(by_task),
        noise_floor(by_task, level),
        len(rewards),
    )


__all__ = [
    "Confidence",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "FlipRate",
    "Interval",
    "NoiseFloor",
    "TaskIntervals",
    "bootstrap_tasks",
    "confidence",
    "flip_rate",
    "group_by_task",
    "holm",
    "mcnemar_exact",
    "noise_floor",
    "outcome_confidence",
    "paired_bootstrap",
    "wilson",
]
