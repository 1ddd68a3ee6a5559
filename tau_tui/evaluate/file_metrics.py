"""One file's metrics, ours beside the recording's: the one assembly ``eval``, the metrics screen and ``audit`` use.

Each simulation contributes a ``MetricOutcome`` to both sides (our recomputed reward, the recorded one);
``FileMetrics.of`` computes pass^k and the rest over each side (``compute_metrics``) with the file's
``num_trials`` read by one rule, and the confidence intervals when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from tau_tui.evaluate.metrics import MetricOutcome, RunMetrics, compute_metrics
from tau_tui.evaluate.stats import DEFAULT_SEED, Confidence, outcome_confidence


def recorded_trials(info: Mapping[str, Any]) -> int | None:
    """The run's ``info.num_trials`` when it is a real count (an int above 0, not a bool), else None."""
    trials = info.get("num_trials")
    return trials if isinstance(trials, int) and not isinstance(trials, bool) and trials > 0 else None


@dataclass(frozen=True)
class FileMetrics:
    """Metrics of one file over our recomputed rewards and over the recorded ones."""

    ours: RunMetrics
    recorded: RunMetrics
    confidence: Confidence | None = None  # of ours (bootstrap over tasks), when asked for
    recorded_confidence: Confidence | None = None

    @classmethod
    def of(
        cls,
        ours: Iterable[MetricOutcome],
        recorded: Iterable[MetricOutcome],
        info: Mapping[str, Any],
        *,
        confidence: bool = True,
        seed: int = DEFAULT_SEED,
    ) -> FileMetrics:
        """``info``: the run's top-level info (``num_trials``); ``confidence``: also the intervals (``seed``)."""
        ours, recorded = list(ours), list(recorded)
        trials = recorded_trials(info)
        mine, theirs = compute_metrics(ours, trials), compute_metrics(recorded, trials)
        if not confidence:
            return cls(mine, theirs)
        return cls(
            mine,
            theirs,
            outcome_confidence(ours, mine.max_k, seed=seed),
            outcome_confidence(recorded, theirs.max_k, seed=seed),
        )
