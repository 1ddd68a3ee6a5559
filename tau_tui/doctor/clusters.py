"""Failure clusters across files: failed simulations of one task grouped by how they failed.

The signature of a failure is the final-vs-gold DB diff paths (list indices left out), the first
reference action no call matched, and the termination. A cluster is one task and one signature, with its
simulations and the models that ran them; a cluster that two or more models share is a suspect task (the
task, not the agents, may be what is wrong) and is listed first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tau_tui.doctor.rules import Advice, Reach, Remedy
from tau_tui.doctor.sim_rules import SimProbe
from tau_tui.replay import diff_states, path_text

_INDEX = re.compile(r"\[\d+\]")
MINIMUM = 2  # failed simulations a cluster needs: one task, failed the same way

# What a suspect cluster means (clusters are no rule: they group findings' failures, and are never counted as
# findings in the exit status); a cluster of one model's failures is more likely that agent's own.
SUSPECT_ADVICE = Advice(
    Reach.EVERY_RUN,
    "can change the reward of every run of this task: several models fail it the same way, which points at the "
    "task rather than at the agents",
    Remedy.FIX_TASK,
    "open the cluster's simulations: where the shared failure is the task's (its gold DB, a criterion no answer "
    "meets), fix the task; where each agent really erred, ignore it.",
    "Several models fail these tasks in the same way (the same DB paths differ from the gold state, the same "
    "reference action is missed, the same termination). When different agents agree on a failure, the task's "
    "reference solution or criteria are the likelier cause. Could the task be checked against these "
    "trajectories?",
)


@dataclass(frozen=True)
class Signature:
    """How one simulation failed."""

    db_paths: tuple[str, ...]
    first_missed_action: str | None
    termination: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "db_diff": list(self.db_paths),
            "first_missed_action": self.first_missed_action,
            "termination": self.termination,
        }

    @property
    def text(self) -> str:
        parts = [f"DB differs at {', '.join(self.db_paths)}" if self.db_paths else "DB as gold"]
        parts.append(f"first missed {self.first_missed_action}" if self.first_missed_action else "no action missed")
        parts.append(f"ended {self.termination}")
        return "; ".join(parts)


def signature(probe: SimProbe) -> Signature:
    analysis = probe.analysis
    paths: set[str] = set()
    gold = analysis.gold
    if gold is not None and analysis.hashes_match is False:
        final = analysis.timeline.final
        for before, after in ((gold.state.agent, final.agent), (gold.state.user, final.user)):
            if before is not None and after is not None:
                paths |= {_INDEX.sub("[]", path_text(c.path)) for c in diff_states(before, after)}
    return Signature(tuple(sorted(paths)), probe.first_missed_action, probe.termination)


@dataclass(frozen=True)
class Member:
    file: str
    sim: str
    model: str | None


@dataclass
class Cluster:
    """Failed simulations of one task that failed the same way."""

    domain: str
    task: str
    signature: Signature
    members: list[Member] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted({m.model or "?" for m in self.members})

    @property
    def suspect(self) -> bool:
        """Several models fail this task the same way."""
        return len(self.models) >= 2

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "cluster",
            "domain": self.domain,
            "task": self.task,
            "signature": self.signature.to_json(),
            "simulations": [{"file": m.file, "sim": m.sim} for m in self.members],
            "models": self.models,
            "suspect": self.suspect,
        }


class ClusterBuilder:
    """Collects failed simulations (``add`` each probe) and groups them (``clusters``)."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str, Signature], Cluster] = {}
        self.failures = 0  # failed simulations added

    def add(self, probe: SimProbe) -> None:
        if not probe.failed:
            return
        self.failures += 1
        analysis = probe.analysis
        sig = signature(probe)
        key = (probe.domain, analysis.sim.task_id, sig)
        cluster = self._groups.get(key)
        if cluster is None:
            cluster = self._groups[key] = Cluster(probe.domain, analysis.sim.task_id, sig)
        cluster.members.append(Member(str(analysis.run.path), analysis.sim.id, analysis.run.agent_model))

    def clusters(self, minimum: int = MINIMUM) -> list[Cluster]:
        """Clusters of at least ``minimum`` simulations: suspect tasks first, then larger ones first."""
        return order(c for c in self._groups.values() if len(c.members) >= minimum)


def why_no_clusters(simulations: int, failures: int, minimum: int = MINIMUM) -> str:
    """Why there is no cluster among ``simulations`` replayed ones of which ``failures`` failed."""
    if simulations == 0:
        return "no simulation was replayed, so there is nothing to cluster"
    if failures == 0:
        return f"no failed simulations to cluster ({simulations} checked, none failed)"
    if failures < minimum:
        return f"only {failures} failed simulation(s) of {simulations}: a cluster needs {minimum} or more failures"
    return (
        f"{failures} failed simulations of {simulations}, but no {minimum} of them failed the same task the same "
        f"way (a cluster needs {minimum} or more)"
    )


def order(clusters: Iterable[Cluster]) -> list[Cluster]:
    return sorted(clusters, key=lambda c: (not c.suspect, -len(c.models), -len(c.members), c.domain, c.task))
