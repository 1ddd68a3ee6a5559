"""A rollout's progress folded from the runner's events, once, for every front end.

``RunTally.apply`` is pure (no I/O, no clock): ``tau-tui run``'s progress bar
(``rollout/console.py``) and the TUI's runs screen (``views/live.py``) each fold
the same events into a tally and only format it differently. Over Ray it also
counts per node (``RunTally.nodes``): simulations done and running, units lost
with a worker that died, and whether the node's every worker died;
``ranked_nodes`` and ``node_parts`` are the one order and wording of both
front ends.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau_tui.rollout.runner import (
    INFRASTRUCTURE_ERROR,
    LLMRetried,
    RunFinished,
    RunStarted,
    SimulationFinished,
    SimulationPlaced,
    SimulationStarted,
    WorkerLost,
    WorkersStarted,
)


@dataclass
class NodeTally:
    """One node's part of a rollout (a Ray node, or a local worker process)."""

    done: int = 0  # simulations it finished (saved)
    running: int = 0  # units sent to it and not back yet
    lost: int = 0  # units that came back as infrastructure errors (a worker died): --resume runs them again
    workers: int = 0  # workers started on it
    workers_lost: int = 0  # of them, those that died

    @property
    def dead(self) -> bool:
        """Every worker of the node died (it gets no more units)."""
        return self.workers > 0 and self.workers_lost >= self.workers


def node_parts(node: NodeTally) -> list[tuple[str, str]]:
    """A node's counts as (text, kind) parts, kind one of ``done``, ``running``, ``dead``, ``lost``: the one
    wording of the console and the TUI, which style each kind."""
    parts: list[tuple[str, str]] = []
    if node.dead:
        parts.append(("died", "dead"))
    elif node.workers_lost:
        parts.append((f"{node.workers_lost}/{node.workers} workers died", "dead"))
    parts.append((f"{node.done} done", "done"))
    if node.running:
        parts.append((f"{node.running} running", "running"))
    if node.lost:
        parts.append((f"{node.lost} lost", "lost"))
    return parts


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
    nodes: dict[str, NodeTally] = field(default_factory=dict)  # per Ray node, in the order they were named
    _placed: dict[tuple[int, str, int], str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def average(self) -> float | None:
        """The mean reward of the scored simulations finished in this run (None before the first)."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else None

    @property
    def dead_nodes(self) -> int:
        return sum(node.dead for node in self.nodes.values())

    def node(self, name: str) -> NodeTally:
        return self.nodes.setdefault(name, NodeTally())

    def ranked_nodes(self) -> list[tuple[str, NodeTally]]:
        """The nodes as front ends list them: dead ones first (they need a ``--resume``), then those with most
        work (done and running), then by name."""
        return sorted(
            self.nodes.items(), key=lambda item: (not item[1].dead, -(item[1].done + item[1].running), item[0])
        )

    def halt(self) -> None:
        """Nothing runs any more (the run finished, stopped or failed)."""
        self.running = 0
        for node in self.nodes.values():
            node.running = 0
        self._placed.clear()

    def apply(self, event: Any) -> bool:
        """Fold one runner event in; returns whether it was a progress event (others are ignored)."""
        if isinstance(event, RunStarted):
            self.total, self.already_done, self.done = event.total, event.already_done, event.already_done
        elif isinstance(event, SimulationStarted):
            self.running += 1
        elif isinstance(event, LLMRetried):
            self.retries += 1
        elif isinstance(event, WorkersStarted):
            for name in event.nodes:
                self.node(name).workers += 1
        elif isinstance(event, SimulationPlaced):
            self.node(event.node).running += 1
            self._placed[(event.trial, event.task_id, event.seed)] = event.node
        elif isinstance(event, WorkerLost):
            self.node(event.node).workers_lost += 1
        elif isinstance(event, SimulationFinished):
            self._finished(event)
        elif isinstance(event, RunFinished):
            self.finished = True
            self.halt()
        else:
            return False
        return True

    def _finished(self, event: SimulationFinished) -> None:
        self.running = max(self.running - 1, 0)
        self.done = event.completed
        if event.node:
            self.by_node[event.node] += 1
        if event.reward is None:
            self.unscored += 1
        else:
            self.rewards.append(event.reward)
        placed = self._placed.pop((event.trial, event.task_id, event.seed), None)
        name = event.node or placed  # a lost unit comes back without a node: where it was sent
        if name is None:
            return
        node = self.node(name)
        if placed is not None:
            node.running = max(node.running - 1, 0)
        if event.simulation.termination_reason == INFRASTRUCTURE_ERROR:
            node.lost += 1
        else:
            node.done += 1


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


def lost_text(event: WorkerLost, limit: int = 120) -> str:
    """The one line a worker that died reads as, on every front end (its reason clipped to ``limit``)."""
    reason = event.error if len(event.error) <= limit else event.error[: limit - 1] + "…"
    who = f"the worker process {event.node}" if event.local else f"the Ray worker on {event.node}"
    return (
        f"{who} died{f' ({reason})' if reason else ''}: its units are saved as "
        "infrastructure errors, which tau-tui run --resume runs again"
    )


__all__ = ["NodeTally", "RolloutProgress", "RunTally", "lost_text", "node_parts", "retry_text"]
