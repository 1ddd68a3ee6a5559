"""The doctor over recordings: replay every simulation once and run the simulation rules on it.

``examine(analyzer, runs)`` is what ``tau-tui doctor PATH...`` and the TUI's doctor screen call; the
``Examination`` it returns holds the findings, and what cannot be replayed as one line each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.doctor.clusters import Cluster, ClusterBuilder, why_no_clusters
from tau_tui.doctor.sim_rules import SIM_RULES, GoldVerdicts, SimFinding, SimProbe, check_simulation
from tau_tui.domains import DomainError
from tau_tui.model.io import RecordedOnly, RunFile, RunFileError
from tau_tui.model.results import SimulationRun
from tau_tui.model.tally import counted


@dataclass
class Examination:
    """What the doctor found in a set of recordings."""

    findings: list[SimFinding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # a file or simulation that could not be replayed
    notes: list[str] = field(default_factory=list)  # files left out on purpose (recorded only)
    simulations: int = 0
    failures: int = 0  # replayed simulations that failed (what clusters are made of)
    clusters: list[Cluster] = field(default_factory=list)  # suspect tasks first

    def records(self) -> Iterator[dict[str, Any]]:
        """The ``--json`` lines: every finding, in file and step order, then the clusters."""
        for finding in self.findings:
            yield finding.to_json()
        for cluster in self.clusters:
            yield cluster.to_json()

    def counts(self) -> dict[str, int]:
        """Findings per rule, every registered rule listed (zeros too)."""
        return counted((f.rule for f in self.findings), SIM_RULES)

    def why_no_clusters(self) -> str | None:
        """Why the clusters are empty (None: there are some)."""
        return None if self.clusters else why_no_clusters(self.simulations, self.failures)

    def summary(self) -> str:
        shown = ", ".join(f"{rule} {n}" for rule, n in self.counts().items())
        suspects = sum(1 for c in self.clusters if c.suspect)
        return (
            f"{self.simulations} simulation(s) checked; {shown}; "
            f"{len(self.clusters)} failure cluster(s), {suspects} suspect task(s)"
        )


def examine(
    analyzer: Analyzer,
    runs: Iterable[RunFile],
    keep: Callable[[SimulationRun], bool] | None = None,
    on_probe: Callable[[SimProbe], None] | None = None,
    *,
    analyze: Callable[[RunFile, int], SimAnalysis] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Examination:
    """Replay each simulation of ``runs`` (those ``keep`` accepts) and run every simulation rule on it.

    ``on_probe`` sees each probe after its rules ran (the noise split reads them); ``analyze`` replays one
    simulation instead of ``analyzer.analyze`` (the TUI's thread-safe replay service); ``cancelled`` is asked
    before each simulation.
    """
    replay = analyze if analyze is not None else analyzer.analyze
    exam = Examination()
    golds = GoldVerdicts()
    clusters = ClusterBuilder()
    for run in runs:
        for index in range(len(run.raw_sims)):
            if cancelled is not None and cancelled():
                return exam
            try:
                sim = run.simulation(index)
                if keep is not None and not keep(sim):
                    continue
                analysis = replay(run, index)
            except RecordedOnly as exc:
                exam.notes.append(f"note: {exc}")
                break
            except (RunFileError, DomainError) as exc:
                exam.problems.append(str(exc) if str(run.path) in str(exc) else f"{run.path}: {exc}")
                if isinstance(exc, DomainError):
                    break
                continue
            probe = SimProbe(analyzer, analysis, golds)
            exam.simulations += 1
            exam.findings.extend(check_simulation(probe))
            clusters.add(probe)
            if on_probe is not None:
                on_probe(probe)
    exam.failures = clusters.failures
    exam.clusters = clusters.clusters()
    return exam
