"""The one scoring path: replay a simulation, take the task's gold state (cached), recompute the reward.

Used by the analyzer (recorded runs, through ``GoldCache``), the rollout's
``SimulationEvaluator`` (a finished episode) and the gold check (the gold
agent's episode), so that all three score a simulation the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import orjson

from tau_tui.evaluate.judge import Judge
from tau_tui.evaluate.reward import Evaluation, evaluate
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task, task_content_digest
from tau_tui.replay import (
    GoldResult,
    InitCache,
    Timeline,
    gold_state,
    replay,
    run_assertions,
)
from tau_tui.replay.replayer import EnvFactory


def _exact_key(task: Task) -> str:
    """The whole task definition, nulls included (a null in initialization data sets a field, so two
    tasks that differ only there have different gold states): the cache's key, not a fingerprint."""
    return hashlib.sha256(orjson.dumps(task.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)).hexdigest()


class GoldCache:
    """Gold states per (scope, exact task definition); ``scope`` tells domains (variants) apart."""

    def __init__(self) -> None:
        self._states: dict[tuple[Hashable, str], GoldResult] = {}
        self._digests: dict[int, tuple[Task, str]] = {}
        self._keys: dict[int, tuple[Task, str]] = {}

    def exact_key(self, task: Task) -> str:
        """``_exact_key`` memoised per task object (tasks are immutable once loaded)."""
        hit = self._keys.get(id(task))
        if hit is None or hit[0] is not task:
            hit = self._keys[id(task)] = (task, _exact_key(task))
        return hit[1]

    def digest(self, task: Task) -> str:
        """``task_content_digest`` memoised per task object (tasks are immutable once loaded)."""
        hit = self._digests.get(id(task))
        if hit is None or hit[0] is not task:
            hit = self._digests[id(task)] = (task, task_content_digest(task))
        return hit[1]

    def get(
        self,
        task: Task,
        new_env: EnvFactory,
        scope: Hashable = None,
        init: InitCache | None = None,
        init_key: Any = None,
    ) -> GoldResult:
        """The gold state of ``task`` (built on the first call for its definition and scope).

        ``init``/``init_key`` (the key of a non-solo replay of the task) let it start from the initialised
        state replays share.
        """
        key = (scope, self.exact_key(task))
        if key not in self._states:
            self._states[key] = gold_state(task, new_env, init, init_key)
        return self._states[key]


@dataclass
class ScoredSimulation:
    """A simulation replayed for scoring (``evaluate.Replayed``)."""

    sim: SimulationRun
    task: Task | None
    timeline: Timeline
    gold: GoldResult | None
    assertions: list[tuple[Any, bool | None, str | None]] = field(default_factory=list)


def score(
    sim: SimulationRun,
    task: Task,
    new_env: EnvFactory,
    judge: Judge | None = None,
    *,
    solo: bool = False,
    golds: GoldCache | None = None,
    gold: GoldResult | None = None,
    scope: Hashable = None,
    init: InitCache | None = None,
    init_key: Any = None,
) -> Evaluation:
    """Replay ``sim`` on fresh environments from ``new_env`` and recompute its reward with tau2's rules.

    The gold state is ``gold`` when given, else taken from ``golds`` (under ``scope``), else built.
    ``init``/``init_key`` let replays of one task share its initialised state.
    """
    timeline = replay(sim.trajectory, task, new_env, solo, cache=init, cache_key=init_key)
    if gold is None:
        gold = golds.get(task, new_env, scope) if golds is not None else gold_state(task, new_env)
    return evaluate(ScoredSimulation(sim, task, timeline, gold, run_assertions(timeline, task)), judge)


__all__ = ["GoldCache", "ScoredSimulation", "score"]
