"""The noise split where a task has k ≥ 2 trials: how often each reward component flips between trials, and,
with a judge asked N times on the same trajectory, how much of the NL verdicts' flipping is the judge's own.

The flip rate is the share of pairs that disagree: of two trials of one task (the agent's, and the user
simulator's, variance), or of two answers of the judge on one trajectory (the judge's alone). A component
flipping across trials as often as the judge flips on one trajectory is judge noise, not the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from tau_tui.doctor.sim_rules import SimProbe
from tau_tui.evaluate.judge import Judge, JudgeError

NL = "NL_ASSERTION"


@dataclass
class FlipRate:
    """Disagreeing pairs over all pairs, and how many groups (tasks or trajectories) gave pairs."""

    pairs: int = 0
    flips: int = 0
    groups: int = 0

    def add(self, values: list[Any]) -> None:
        if len(values) < 2:
            return
        self.groups += 1
        for a, b in combinations(values, 2):
            self.pairs += 1
            self.flips += a != b

    @property
    def rate(self) -> float | None:
        return self.flips / self.pairs if self.pairs else None


@dataclass
class NoiseSplit:
    """Collects each simulation's component scores by (file, task) and, with a judge, its repeated verdicts."""

    judge: Judge | None = None
    repeats: int = 1
    trials: dict[tuple[str, str], list[dict[str, float]]] = field(default_factory=dict)
    judged: dict[str, FlipRate] = field(default_factory=dict)  # file → the judge's flips on one trajectory
    problems: list[str] = field(default_factory=list)

    def add(self, probe: SimProbe) -> None:
        analysis = probe.analysis
        file = str(analysis.run.path)
        breakdown = dict(probe.report.evaluation.breakdown)
        task = analysis.task
        assertions = list(task.evaluation_criteria.nl_assertions or []) if task and task.evaluation_criteria else []
        if self.judge is not None and assertions:
            verdicts = self._ask(probe, assertions)
            if verdicts:
                breakdown[NL] = 1.0 if all(verdicts[0]) else 0.0
                rate = self.judged.setdefault(file, FlipRate())
                for index in range(len(assertions)):
                    rate.add([answer[index] for answer in verdicts])
        self.trials.setdefault((file, analysis.sim.task_id), []).append(breakdown)

    def _ask(self, probe: SimProbe, assertions: list[str]) -> list[tuple[bool, ...]]:
        """The judge's verdicts ``repeats`` times on the same trajectory (fewer when it fails)."""
        assert self.judge is not None
        messages = [step.message for step in probe.timeline.steps]
        out: list[tuple[bool, ...]] = []
        for _ in range(self.repeats):
            try:
                checks = self.judge(messages, assertions)
            except JudgeError as exc:
                self.problems.append(f"{probe.analysis.run.path}: sim {probe.analysis.sim.id}: judge: {exc}")
                break
            out.append(tuple(bool(c.met) for c in checks))
        return out

    def rates(self) -> dict[str, dict[str, FlipRate]]:
        """file → component → its flip rate across trials of a task (tasks with k ≥ 2 only)."""
        out: dict[str, dict[str, FlipRate]] = {}
        for (file, _task), trials in self.trials.items():
            if len(trials) < 2:
                continue
            components = sorted({name for trial in trials for name in trial})
            for name in components:
                values = [trial[name] for trial in trials if name in trial]
                out.setdefault(file, {}).setdefault(name, FlipRate()).add(values)
        return out

    def records(self) -> list[dict[str, Any]]:
        """``{"kind": "noise", ...}`` lines: per file and component across trials, then the judge's own."""
        out: list[dict[str, Any]] = []
        for file, components in self.rates().items():
            for name, rate in components.items():
                out.append(
                    {
                        "kind": "noise",
                        "file": file,
                        "component": name,
                        "source": "trials",
                        "groups": rate.groups,
                        "pairs": rate.pairs,
                        "flip_rate": rate.rate,
                    }
                )
        for file, rate in self.judged.items():
            out.append(
                {
                    "kind": "noise",
                    "file": file,
                    "component": NL,
                    "source": "judge",
                    "repeats": self.repeats,
                    "groups": rate.groups,
                    "pairs": rate.pairs,
                    "flip_rate": rate.rate,
                }
            )
        return out

    def lines(self) -> list[str]:
        records = self.records()
        if not records:
            return []
        out = ["noise split (share of pairs that disagree):"]
        for record in records:
            rate = "—" if record["flip_rate"] is None else f"{record['flip_rate']:.1%}"
            if record["source"] == "judge":
                what = f"the judge itself, {record['repeats']} answers on each of {record['groups']} assertion(s)"
            else:
                what = f"across trials of {record['groups']} task(s) with k ≥ 2"
            out.append(f"  {record['file']}: {record['component']} flips {rate} ({what}, {record['pairs']} pairs)")
        out.append("")
        return out
