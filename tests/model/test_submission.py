"""Leaderboard submission folders: one unit (metadata + per-domain trajectories), claims beside our pass^k."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.model.io import open_run, scan_paths
from tau_tui.model.submission import (
    SubmissionError,
    open_submission,
    read_submission,
    submission_for,
    submission_label,
)
from tests.conftest import CORPUS

pytestmark = pytest.mark.corpus

BASELINES = {
    d: CORPUS / f"sierra-research__tau2-bench__e2e_{d}_baseline.json" for d in ("airline", "retail", "telecom")
}


def submission_meta(**changes: Any) -> dict[str, Any]:
    """A submission.json as ``tau2 submit prepare`` writes it (percentages, domain → file name)."""
    meta = {
        "model_name": "gpt-4.1-mini",
        "model_organization": "OpenAI",
        "submitting_organization": "Tests Inc",
        "submission_date": "2026-03-26",
        "submission_type": "standard",
        "modality": "text",
        "contact_info": {"email": "someone@example.org"},
        "is_new": False,
        "trajectories_available": True,
        "trajectory_files": {d: f"{d}_results.json" for d in BASELINES},
        "results": {
            "airline": {"pass_1": 100.0},
            "retail": {"pass_1": 50.0, "cost": 0.25},
            "telecom": {"pass_1": 100.0, "pass_2": None},
        },
        "methodology": {"user_simulator": "gpt-4.1-mini", "tau2_bench_version": "1.0.1"},
    }
    meta.update(changes)
    return meta


def build_submission(root: Path, meta: dict[str, Any] | None = None, raw: bytes | None = None) -> Path:
    """A submission folder made of corpus files: one results file per domain under trajectories/."""
    folder = root / "gpt-4.1-mini_openai_2026-03-26"
    (folder / "trajectories").mkdir(parents=True)
    for domain, source in BASELINES.items():
        shutil.copyfile(source, folder / "trajectories" / f"{domain}_results.json")
    payload = raw if raw is not None else json.dumps(meta or submission_meta()).encode()
    (folder / "submission.json").write_bytes(payload)
    return folder


def build_voice_submission(root: Path) -> Path:
    """A voice submission: trajectories/<experiment>/ in tau2's dir layout (results.json + simulations/)."""
    folder = root / "voice_org_2026-03-01"
    exp = folder / "trajectories" / "voice_retail"
    (exp / "simulations").mkdir(parents=True)
    data = json.loads(BASELINES["retail"].read_text())
    sims = data.pop("simulations")
    data["info"]["audio_native_config"] = {"provider": "openai", "model": "gpt-realtime"}
    data["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"]} for s in sims]
    (exp / "results.json").write_text(json.dumps(data))
    for sim in sims:
        (exp / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    meta = submission_meta(
        modality="voice",
        trajectory_files={"retail": "voice_retail"},
        results={"retail": {"pass_1": 100.0}},
        voice_config={"provider": "openai", "model": "gpt-realtime", "tick_duration_seconds": 0.2},
    )
    (folder / "submission.json").write_text(json.dumps(meta))
    return folder


def test_a_submission_folder_opens_as_one_unit(tmp_path: Path) -> None:
    folder = build_submission(tmp_path)
    unit = open_submission(folder)
    sub = unit.submission
    assert (sub.model_name, sub.model_organization, sub.submitting_organization) == (
        "gpt-4.1-mini",
        "OpenAI",
        "Tests Inc",
    )
    assert sub.submission_type == "standard" and sub.modality == "text" and sub.user_simulator == "gpt-4.1-mini"
    assert sorted(unit.runs) == ["airline", "retail", "telecom"] and unit.problems == [] and unit.unclaimed == []
    assert unit.runs["retail"].domain == "retail" and len(unit.runs["retail"].entries) == 1
    assert sub.claims["retail"].pass_hat_k == {1: 0.5} and sub.claims["retail"].cost == 0.25
    assert sub.claims["telecom"].pass_hat_k == {1: 1.0}  # a null pass^2 is no claim
    assert sub.label == "gpt-4.1-mini · OpenAI"


def test_scan_lists_the_trajectories_never_submission_json(tmp_path: Path) -> None:
    folder = build_submission(tmp_path)
    for given in (tmp_path, folder, folder / "submission.json"):
        scan = scan_paths([given])
        assert scan.submissions == [folder]
        assert [p.name for p in scan.files] == ["airline_results.json", "retail_results.json", "telecom_results.json"]
    assert submission_label(folder / "trajectories" / "retail_results.json") == "gpt-4.1-mini · OpenAI"
    assert submission_for(BASELINES["retail"]) is None


def test_voice_submission_with_dir_layout_and_voice_config(tmp_path: Path) -> None:
    folder = build_voice_submission(tmp_path)
    unit = open_submission(folder)
    assert unit.problems == [] and list(unit.runs) == ["retail"]
    run = unit.runs["retail"]
    assert run.layout == "dir" and len(run.entries) == 1
    sub = unit.submission
    assert sub.voice_config is not None
    assert sub.modality == "voice" and sub.voice_config["tick_duration_seconds"] == 0.2
    claim = sub.claim_for(run)
    assert claim is not None
    assert claim.pass_hat_k == {1: 1.0} and sub.label.endswith("voice")


def test_banking_claims_keep_their_retrieval_config_and_a_missing_one_is_a_warning(tmp_path: Path) -> None:
    meta = submission_meta(results={"banking_knowledge": {"pass_1": 20.0, "retrieval_config": "bm25"}})
    sub = read_submission(build_submission(tmp_path / "a", meta))
    assert sub.retrieval_config("banking_knowledge") == "bm25" and sub.warnings == []
    meta = submission_meta(results={"banking_knowledge": {"pass_1": 20.0}})
    sub = read_submission(build_submission(tmp_path / "b", meta))
    assert sub.warnings == ["results.banking_knowledge has no retrieval_config (tau2 requires one)"]


@pytest.mark.parametrize(
    "raw, problem",
    [
        (b"{not json", "is not valid JSON"),
        (b"", "is empty"),
        (b"[1, 2]", "top level is list"),
        (b'{"model_organization": "X"}', "has no model_name"),
        (b'{"model_name": 7}', "has no model_name"),
    ],
)
def test_an_unusable_submission_json_is_one_line_naming_it(tmp_path: Path, raw: bytes, problem: str) -> None:
    folder = build_submission(tmp_path, raw=raw)
    with pytest.raises(SubmissionError) as caught:
        read_submission(folder)
    line = str(caught.value)
    assert "\n" not in line and line.startswith(str(folder / "submission.json")) and problem in line
    assert submission_label(folder / "trajectories" / "airline_results.json") == "(unreadable submission.json)"


def test_wrong_fields_are_warnings_and_a_name_is_never_a_path(tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    shutil.copyfile(BASELINES["airline"], outside)
    meta = submission_meta(
        results={"airline": {"pass_1": 250, "pass_2": "high", "cost": -1}, "retail": "great"},
        trajectory_files={
            "airline": "../../secret.json",
            "retail": "/etc/passwd",
            "telecom": 5,
            "mock": "missing.json",
        },
    )
    unit = open_submission(build_submission(tmp_path / "s", meta))
    warnings = unit.submission.warnings
    assert "results.airline.pass_1 is not a percentage (0-100): ignored" in warnings
    assert "results.airline.pass_2 is not a percentage (0-100): ignored" in warnings
    assert "results.airline.cost is not a non-negative number: ignored" in warnings
    assert "results.retail is not an object: ignored" in warnings
    assert "trajectory_files.airline leads outside trajectories/: ignored" in warnings
    assert "trajectory_files.retail leads outside trajectories/: ignored" in warnings
    assert "trajectory_files.telecom is not a file name: ignored" in warnings
    assert unit.submission.claims["airline"].pass_hat_k == {}
    assert all(str(outside) not in str(run.path) for run in unit.runs.values())
    missing = [p for p in unit.problems if "missing.json" in p]
    assert len(missing) == 1 and missing[0].endswith(
        f"does not exist (trajectory_files.mock of {unit.submission.path})"
    )
    assert all("\n" not in p for p in unit.problems)
    # files no valid entry names are kept, as unclaimed runs
    assert sorted(r.path.name for r in unit.unclaimed) == [
        "airline_results.json",
        "retail_results.json",
        "telecom_results.json",
    ]


def test_a_missing_or_broken_trajectory_is_a_problem_line(tmp_path: Path) -> None:
    folder = build_submission(tmp_path)
    (folder / "trajectories" / "telecom_results.json").write_text('{"simulations": 3}')
    (folder / "trajectories" / "airline_results.json").unlink()
    unit = open_submission(folder)
    assert sorted(unit.runs) == ["retail"]
    assert any(
        p.startswith(str(folder / "trajectories" / "airline_results.json")) and "does not exist" in p
        for p in unit.problems
    )
    assert (
        f"{folder / 'trajectories' / 'telecom_results.json'}: 'simulations' is a number, expected a list"
        in unit.problems
    )


def test_a_trajectory_filed_under_the_wrong_domain_is_reported(tmp_path: Path) -> None:
    meta = submission_meta(trajectory_files={"airline": "retail_results.json", "retail": "airline_results.json"})
    unit = open_submission(build_submission(tmp_path, meta))
    assert any("its domain is retail, but" in p and "files it under airline" in p for p in unit.problems)


def unfiled_telecom(root: Path) -> Path:
    """A submission that claims telecom but whose trajectory_files names only airline and retail."""
    files = {d: f"{d}_results.json" for d in ("airline", "retail")}
    folder = build_submission(root, submission_meta(trajectory_files=files))
    (folder / "trajectories" / "telecom_results.json").unlink()
    return folder


UNFILED = "results.telecom has no trajectory file"


def test_a_claim_without_a_trajectory_file_is_a_note_of_every_run_of_the_submission(tmp_path: Path) -> None:
    from tau_tui.model.submission import submission_notes

    folder = unfiled_telecom(tmp_path)
    assert [p for p in open_submission(folder).problems if UNFILED in p] == [f"{folder / 'submission.json'}: {UNFILED}"]
    for domain in ("airline", "retail"):
        assert submission_notes(folder / "trajectories" / f"{domain}_results.json") == [
            f"{folder / 'submission.json'}: {UNFILED}"
        ]


def eval_json(
    capsys: pytest.CaptureFixture[str], tau2_data: Path, *paths: object
) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["eval", "--json", "--tau2-data", str(tau2_data), *map(str, paths)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_eval_shows_the_claimed_pass_k_beside_ours(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = build_submission(tmp_path)
    code, records, err = eval_json(capsys, tau2_data, folder)
    files = {Path(r["file"]).name: r for r in records if r.get("kind") == "file"}
    assert set(files) == {"airline_results.json", "retail_results.json", "telecom_results.json"}
    retail = files["retail_results.json"]
    assert retail["submission"]["label"] == "gpt-4.1-mini · OpenAI" and retail["submission"]["domain"] == "retail"
    assert retail["submission"]["claimed_pass_hat_k"] == {"1": 0.5}
    assert retail["metrics"]["pass_hat_k"]["1"] == 1.0  # ours: the one simulation passes
    assert retail["submission"]["claimed_cost"] == 0.25
    assert main(["eval", "--tau2-data", str(tau2_data), str(folder)]) == code
    out = capsys.readouterr().out
    assert "submission gpt-4.1-mini · OpenAI (retail): pass^k 1: claimed 0.500 / ours 1.000" in out


def test_eval_reports_a_claim_without_a_trajectory_file_once_and_in_each_file_record(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = unfiled_telecom(tmp_path)
    code, records, err = eval_json(capsys, tau2_data, folder)
    assert err.count(UNFILED) == 1 and f"tau-tui: note: {folder / 'submission.json'}: {UNFILED}" in err
    files = [r for r in records if r.get("kind") == "file"]
    assert len(files) == 2 and all(
        r["submission"]["problems"] == [f"{folder / 'submission.json'}: {UNFILED}"] for r in files
    )
    assert main(["eval", "--tau2-data", str(tau2_data), str(folder)]) == code
    assert capsys.readouterr().err.count(UNFILED) == 1


def test_eval_with_a_broken_submission_json_says_so_once_and_exits_2(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = build_submission(tmp_path, raw=b'{"model_name": ')
    code, records, err = eval_json(capsys, tau2_data, folder)
    lines = [line for line in err.splitlines() if "submission.json" in line]
    assert code == 2 and len(lines) == 1 and "is truncated JSON" in lines[0]
    assert all("submission" not in r for r in records if r.get("kind") == "file")
    assert len([r for r in records if r.get("kind") == "file"]) == 3  # the runs still evaluate


def test_runs_table_groups_and_filters_by_submission(tmp_path: Path) -> None:
    from tau_tui.catalog import Catalog, RunFilter, SortSpec

    folder = build_submission(tmp_path / "sub")
    catalog = Catalog()
    loose = tmp_path / "loose.json"
    shutil.copyfile(BASELINES["airline"], loose)
    for path in [
        folder / "trajectories" / "airline_results.json",
        loose,
        folder / "trajectories" / "retail_results.json",
    ]:
        catalog.add_run(open_run(path))
    assert catalog.values("submission") == [("gpt-4.1-mini · OpenAI", 2)]
    kept = catalog.view(RunFilter(submission="gpt-4.1-mini · OpenAI"), SortSpec())
    assert [r.path.name for r in kept] == ["airline_results.json", "retail_results.json"]
    grouped = catalog.view(RunFilter(), SortSpec("submission"))
    assert [r.submission for r in grouped] == ["gpt-4.1-mini · OpenAI", "gpt-4.1-mini · OpenAI", ""]
    assert "submission:gpt-4.1-mini · OpenAI" in RunFilter(submission="gpt-4.1-mini · OpenAI").chips()
