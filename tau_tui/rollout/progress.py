"""A rollout's progress folded from the runner's events, once, for every front end.

``RunTally.apply`` is pure (no I/O, no clock): ``tau-tui run``'s progress bar
(``rollout/console.py``) and the TUI's runs screen (``views/live.py``) each fold
the same events into a tally and only format it differently.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau_tui.rollout.runner import LLMRetried, RunFinished, RunStarted, SimulationFinished, SimulationStarted


@dataclass(kw_only=True)
class RunTally:
    """Counts of one rollout: simulations to run, done (resumed ones included), running, their rewards."""

    total: int = 0
    done: int = 0
    already_done: int = 0
    running: int = 0
    rewards: list[float] = field(default_factory=list)
    unscored: int = 0
    retries: int = 0
    finished: bool = False
    by_node: Counter[str] = field(default_factory=Counter)  # finished simulations per Ray node (over Ray)

    @property
    def average(self) -> float | None:
        """The mean reward of the scored simulations finished in this run (None before the first)."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else None

    def apply(self, event: Any) -> bool:
        """Fold one runner event in; returns whether it was a progress event (others are ignored)."""
        if isinstance(event, RunStarted):
            self.total, self.already_done, self.done = event.total, event.already_done, event.already_done
        elif isinstance(event, SimulationStarted):
            self.running += 1
        elif isinstance(event, LLMRetried):
            self.retries += 1
        elif isinstance(event, SimulationFinished):
            self.running = max(self.running - 1, 0)
            self.done = event.completed
            if event.node:
                self.by_node[event.node] += 1
            if event.reward is None:
                self.unscored += 1
            else:
                self.rewards.append(event.reward)
        elif isinstance(event, RunFinished):
            self.finished, self.running = True, 0
        else:
            return False
        return True


@dataclass(kw_only=True)
class RolloutProgress(RunTally):
    """A front end's view of the rollout in progress (or the last one): the tally, the run's names, and
    whether it was stopped or failed."""

    path: Path
    domain: str
    agent: str
    user: str
    stopped: bool = False
    error: str | None = None
    shown: bool = False  # the runs table was narrowed to this run's file once

    @property
    def active(self) -> bool:
        return not (self.finished or self.stopped or self.error)


def retry_text(event: LLMRetried, limit: int = 120) -> str:
    """The one line a model-call retry reads as, on every front end (recorded error text clipped to ``limit``)."""
    error = event.error if len(event.error) <= limit else event.error[: limit - 1] + "…"
    return (
        f"task {event.task_id} trial {event.trial}: {event.side} model retry {event.attempt} in "
        f"{event.delay:.1f}s ({error})"
    )


__all__ = ["RolloutProgress", "RunTally", "retry_text"]
