"""The bundled recordings show every verdict and finding the inspector explains."""

from __future__ import annotations

from tau_tui.model import expand_paths, open_run
from tests.conftest import ROOT


def test_bundled_mock_recordings_cover_every_verdict(analyzer):
    run = open_run(ROOT / "recordings" / "mock_demo.json")
    results = {run.entries[i].id: analyzer.analyze(run, i).to_json() for i in range(len(run.entries))}
    clean = results["demo-clean-pass"]
    assert clean["strict_ok"] and clean["db_match"] and clean["verdicts"]["replayed"] == 1
    assert results["demo-mismatch"]["first_mismatch"]["tool"] == "update_task_status"
    assert results["demo-hallucinated-tool"]["verdicts"]["skipped_unknown"] == 1
    kinds = [f["kind"] for f in results["demo-structural-findings"]["findings"]]
    assert kinds == ["result_without_call", "call_without_result"]
    assert results["demo-user-tools"]["db_match"] is False


def test_recordings_folder_holds_only_readable_runs():
    for path in expand_paths([ROOT / "recordings"]):
        assert open_run(path).entries
