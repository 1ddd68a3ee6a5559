"""Recomputed vs recorded rewards over every recorded corpus simulation, per domain.

No corpus simulation with a recorded reward needs the NL judge, so every one
of them is compared. The counts are pinned: the test fails if agreement
drops (or moves at all, so a change is looked at). Every disagreement must
come with an explanation from the recording check. The one known cause: the
toolorchestra leaderboard files carry the wrong task id on most simulations
(their recorded checks are another task's): 25 of 50 airline and 95 of 114
retail simulations. Every other recorded reward agrees, so the pinned counts
are the recorded totals less those: airline 380 - 25 = 355, retail 196 - 95 =
101. Run with ``-s`` to see the counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tau_tui.domains import DomainError
from tau_tui.model import RunFile, expand_paths, open_run
from tests.conftest import CORPUS

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

pytestmark = pytest.mark.corpus

# domain: (simulations with a recorded reward, recomputed == recorded)
EXPECTED = {"airline": (380, 355), "retail": (196, 101), "telecom": (162, 162), "mock": (1, 1)}
# file name fragment: disagreements expected in it
EXPECTED_DISAGREEMENTS = {"toolorchestra_airline": 25, "toolorchestra_retail": 95}
# per-domain tallies, unexplained disagreements, disagreements by file, domains not available
# (a run's domain is None when nothing tells it)
Comparison = tuple[dict[str | None, Counter[str]], list[str], Counter[str], set[str | None]]


def recorded_runs() -> Iterator[RunFile]:
    for path in expand_paths([CORPUS]):
        if "generated" in path.parts:  # tau2's own gold trajectories carry no recorded reward
            continue
        run = open_run(path)
        if not run.recorded_only:  # the tau-bench v1 file: nothing to recompute
            yield run


@pytest.fixture(scope="module")
def comparison(analyzer: Analyzer) -> Comparison:
    counts: dict[str | None, Counter[str]] = {}
    unexplained: list[str] = []
    by_file: Counter[str] = Counter()
    missing: set[str | None] = set()
    for run in recorded_runs():
        for index, entry in enumerate(run.entries):
            if entry.reward is None:
                continue
            try:
                report = analyzer.evaluate(run, index)
            except DomainError:
                missing.add(run.domain)
                break
            tally = counts.setdefault(run.domain, Counter())
            tally["compared"] += report.agrees is not None
            tally["agree"] += bool(report.agrees)
            tally["not_computable"] += report.evaluation.reward is None
            if report.agrees is False:
                by_file[next((k for k in EXPECTED_DISAGREEMENTS if k in run.path.name), run.path.name)] += 1
                if not report.explanation.recording:
                    unexplained.append(f"{run.path.name} {report.sim_id} task {report.task_id}")
    return counts, unexplained, by_file, missing


@pytest.mark.parametrize("domain", sorted(EXPECTED))
def test_recomputed_rewards_agree_with_recorded(
    domain: str,
    comparison: Comparison,
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts, _, _, missing = comparison
    if domain in missing:
        pytest.skip(f"domain {domain} is not available")
    tally = counts[domain]
    with capsys.disabled():
        print(
            f"\n[rewards] {domain}: {tally['agree']}/{tally['compared']} recomputed rewards equal the recorded "
            f"ones ({tally['compared'] - tally['agree']} differ, {tally['not_computable']} not computable)"
        )
    assert tally["not_computable"] == 0  # no recorded corpus reward needs the NL judge
    assert (tally["compared"], tally["agree"]) == EXPECTED[domain]


def test_every_disagreement_is_explained_by_the_recording_check(
    comparison: Comparison,
) -> None:
    _, unexplained, by_file, missing = comparison
    if missing:
        pytest.skip(f"domains not available: {', '.join(sorted(map(str, missing)))}")
    assert not unexplained, "\n".join(unexplained[:20])
    assert dict(by_file) == EXPECTED_DISAGREEMENTS


def test_adaptive_agent_file_agrees_fully_with_the_data_folder_tasks(analyzer: Analyzer) -> None:
    """This bare-list run embeds no tasks: they come from the data folder, tau2 1.0.1's, as it was graded."""
    run = open_run(CORPUS / "sierra-research__tau2-bench__adaptive-agent_airline_claude-opus-4-6_1trial.json")
    assert run.raw_tasks is None or not run.raw_tasks
    agrees = [analyzer.evaluate(run, i).agrees for i in range(len(run.entries))]
    assert agrees == [True] * 50
