"""The bundled recordings (what `make run` opens): our own domains, no tau2 data, every verdict and episode event."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.domains import DomainRegistry
from tau_tui.evaluate import evaluate
from tau_tui.model import expand_paths, open_run
from tau_tui.replay import Verdict
from tests.conftest import ROOT

RECORDINGS = ROOT / "recordings"


def marked(mark: dict[str, Any] | None, key: str) -> Any:
    """One key of a replayed call's recorded mark (its fault or its refusal): the call has that mark."""
    assert mark is not None
    return mark[key]


@pytest.fixture(scope="module")
def analyses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SimAnalysis]:
    """Every bundled simulation replayed with a registry that cannot see any tau2 data."""
    analyzer = Analyzer(DomainRegistry(tmp_path_factory.mktemp("no-tau2-data"), use_tau2=False))
    out = {}
    for path in expand_paths([RECORDINGS]):
        run = open_run(path)
        for index, entry in enumerate(run.entries):
            out[entry.id] = analyzer.analyze(run, index)
    return out


def test_the_recordings_are_runs_of_our_own_domains_only() -> None:
    paths = expand_paths([RECORDINGS])
    assert sorted(p.name for p in paths) == ["aftersales.json", "warehouse.json", "warehouse_cassette.json"]
    for path in paths:
        run = open_run(path)
        assert run.entries and run.domain in ("aftersales", "warehouse")
        assert set(run.tasks()) == {e.task_id for e in run.entries}  # the tasks travel with the runs


def test_every_verdict_kind_and_episode_event_is_on_show(
    analyses: dict[str, SimAnalysis], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    verdicts = {c.verdict for a in analyses.values() for c in a.timeline.calls}
    assert {
        Verdict.REPLAYED,
        Verdict.MISMATCH,
        Verdict.SKIPPED_READ,
        Verdict.SKIPPED_UNKNOWN,
        Verdict.INJECTED_FAULT,
        Verdict.REFUSED,
    } <= verdicts
    assert all(not a.findings for a in analyses.values())

    for sim_id in ("as-gold-goodwill", "as-gold-two-returns", "wh-gold-split", "wh-gold-timeouts"):
        assert analyses[sim_id].db_match and analyses[sim_id].timeline.strict_ok, sim_id
    assert analyses["as-gold-goodwill"].timeline.discovered_at("issue_goodwill_credit") == 7
    timeouts = analyses["wh-gold-timeouts"].timeline.injected_faults
    assert [(c.name, marked(c.fault, "kind"), c.attempt) for c in timeouts] == [
        ("lookup_stock", "timeout", 1),
        ("lookup_stock", "timeout", 2),
        ("allocate_line", "transient_error", 1),
    ]

    refused = analyses["cas-greedy-refused"]
    assert refused.sim.termination_reason == "no_recorded_result"
    assert [(c.name, marked(c.refusal, "reason")) for c in refused.timeline.refusals] == [
        ("allocate_line", "different_arguments")
    ]
    reordered = analyses["cas-reordered-mismatch"]
    assert [c.name for c in reordered.timeline.mismatches] == ["allocate_line", "allocate_line"]
    assert reordered.db_match  # the same final state: only the served results disagree with the environment
    assert analyses["as-hasty-refund"].hallucinated == 1


def test_the_failing_runs_fail_for_the_reasons_the_tour_gives(analyses: dict[str, SimAnalysis]) -> None:
    hasty = evaluate(analyses["as-hasty-refund"])
    assert (
        hasty.reward == 0.0
        and hasty.db_match is False
        and hasty.breakdown == {"DB": 0.0, "ENV_ASSERTION": 0.0, "COMMUNICATE": 0.0}
    )
    gave_up = evaluate(analyses["wh-gives-up"])
    assert gave_up.reward == 0.0 and [c.name for c in analyses["wh-gives-up"].timeline.injected_faults] == [
        "lookup_stock"
    ]
    assert evaluate(analyses["cas-greedy-refused"]).reward == 0.0
    for sim_id in (
        "as-gold-goodwill",
        "as-gold-two-returns",
        "wh-gold-split",
        "wh-gold-timeouts",
        "cas-reordered-mismatch",
    ):
        assert evaluate(analyses[sim_id]).reward == 1.0, sim_id
    for analysis in analyses.values():
        assert analysis.sim.reward_info is not None
        assert analysis.sim.reward_info.reward == evaluate(analysis).reward  # recorded and recomputed agree


def test_the_script_regenerates_the_recordings_byte_for_byte(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_recordings.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    for path in RECORDINGS.glob("*.json"):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
