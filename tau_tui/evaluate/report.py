"""One simulation's full assessment: recomputed reward, explanation, tool-call score, process flags.

The CLI, the TUI and the tests all build it through ``assess``; the reward
lives in ``evaluation`` and nothing else feeds into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.evaluate.diagnostics import FLAG_KINDS, Flag, diagnose
from tau_tui.evaluate.explain import Explanation, explain
from tau_tui.evaluate.judge import Judge
from tau_tui.evaluate.reward import Evaluation, Replayed, evaluate, history_in_trajectory
from tau_tui.evaluate.scorer import ScorerResult, ScorerSpec, score_tool_calls
from tau_tui.model.provenance import RecordedExtras
from tau_tui.model.tasks import Task


@dataclass
class SimReport:
    sim_id: str
    task_id: str
    trial: int | None
    domain: str | None
    evaluation: Evaluation
    explanation: Explanation
    recorded_reward: float | None
    scorer: ScorerResult | None
    flags: list[Flag]
    recorded: RecordedExtras | None = None  # what the recording holds of tau2's fields newer than 1.0.1

    @property
    def agrees(self) -> bool | None:
        """Recomputed equals recorded (within 1e-6); None when either is missing."""
        if self.recorded_reward is None or self.evaluation.reward is None:
            return None
        return abs(self.recorded_reward - self.evaluation.reward) <= 1e-6

    def flag_counts(self) -> dict[str, int]:
        counts = {kind: 0 for kind in FLAG_KINDS}
        for flag in self.flags:
            counts[flag.kind] += 1
        return counts

    def to_json(self, file: str | None = None) -> dict[str, Any]:
        """The ``tau-tui eval --json`` record of one simulation."""
        ev = self.evaluation
        return {
            "kind": "simulation",
            "file": file,
            "sim": self.sim_id,
            "task": self.task_id,
            "trial": self.trial,
            "domain": self.domain,
            "termination": ev.termination,
            "reward": ev.reward,
            "recorded_reward": self.recorded_reward,
            "agrees": self.agrees,
            "status": ev.status,
            "reward_basis": ev.reward_basis,
            "breakdown": ev.breakdown,
            "nl_evaluated": ev.nl_evaluated,
            "not_evaluated": ev.not_evaluated,
            "decided_by": ev.decided_by,
            "strict_ok": ev.strict_ok,
            "graded_from": ev.graded_from,
            "notes": ev.notes,
            "checks": ev.checks_json(),
            "reward_info": ev.to_reward_info(),
            "explanation": self.explanation.to_json(),
            "scorer": self.scorer.to_json() if self.scorer else None,
            "diagnostics": {"counts": self.flag_counts(), "flags": [f.to_json() for f in self.flags]},
            "recorded": self.recorded.to_json() if self.recorded is not None else None,
        }


def assess(
    replayed: Replayed,
    *,
    judge: Judge | None = None,
    scorer: ScorerSpec | None = None,
    policy: str | None = None,
    domain: str | None = None,
    task_in_recording: bool = True,
    known_tasks: dict[str, Task] | None = None,
) -> SimReport:
    """Evaluate, explain, score and diagnose one replayed simulation.

    ``policy`` is the text the agent was given (for the one-call-at-a-time
    rule); it defaults to the replay environment's policy. ``task_in_recording``
    and ``known_tasks`` inform the recording check (see ``check_recording``).
    """
    evaluation = evaluate(replayed, judge)
    sim, timeline = replayed.sim, replayed.timeline
    history_len = history_in_trajectory(replayed)
    if policy is None and timeline.env is not None:
        policy = timeline.env.policy
    recorded = sim.reward_info.reward if sim.reward_info is not None else None
    return SimReport(
        sim_id=sim.id,
        task_id=sim.task_id,
        trial=sim.trial,
        domain=domain,
        evaluation=evaluation,
        explanation=explain(replayed, evaluation, task_in_recording, known_tasks),
        recorded_reward=recorded,
        scorer=score_tool_calls(timeline.calls, scorer) if scorer is not None else None,
        flags=diagnose(timeline, history_len, policy, replayed.task),
        recorded=RecordedExtras.of(sim),
    )
