"""`tau-tui replay`: fields, human blocks, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tests.conftest import CORPUS, ROOT
from tests.helpers import call, greet, result, results_file, say, user

TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}
FIELDS = {
    "file",
    "sim",
    "task",
    "domain",
    "termination",
    "strict_ok",
    "first_mismatch",
    "verdicts",
    "findings",
    "pred_db",
    "pred_user_db",
    "gold_db",
    "gold_user_db",
    "db_match",
}


def replay(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["replay", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_run_exits_0_with_all_fields(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(
        tmp_path / "ok.json",
        [
            greet(),
            user("done?"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(TASK_1),
            say("Done."),
        ],
    )
    code, out, err = replay(capsys, path, "--json", "--tau2-data", tau2_data)
    record = json.loads(out)
    assert code == 0 and err == ""
    assert FIELDS <= set(record)
    assert record["verdicts"] == {
        "replayed": 1,
        "mismatch": 0,
        "skipped_read": 0,
        "skipped_unknown": 0,
        "recorded_error": 0,
    }
    assert record["db_match"] is True and record["strict_ok"] is True and record["first_mismatch"] is None


def test_mismatch_exits_1_and_shows_both_outputs(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = results_file(
        tmp_path / "bad.json",
        [
            greet(),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(dict(TASK_1, title="Other")),
        ],
    )
    code, out, _ = replay(capsys, path, "--tau2-data", tau2_data)
    assert code == 1
    assert "1 mismatch" in out and "first mismatch at step 2: update_task_status" in out
    assert '"title": "Other"' in out and '"title": "Test task"' in out
    code, out, _ = replay(capsys, path, "--json", "--tau2-data", tau2_data)
    mismatch = json.loads(out)["first_mismatch"]
    assert code == 1 and mismatch["step"] == 2 and mismatch["tool"] == "update_task_status"


def test_findings_exit_1(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(tmp_path / "orphan.json", [greet(), result("x", "nope")])
    code, out, _ = replay(capsys, path, "--tau2-data", tau2_data)
    assert code == 1 and "finding [result_without_call] step 1" in out


def test_human_output_ends_with_totals_and_json_has_none(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = results_file(
        tmp_path / "ok.json",
        [
            greet(),
            user("done?"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(TASK_1),
            say("Done."),
        ],
    )
    bad = results_file(
        tmp_path / "bad.json",
        [
            greet(),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(dict(TASK_1, title="Other")),
        ],
        extra_sims=[
            {
                "id": "orphan",
                "task_id": "t_update",
                "termination_reason": "user_stop",
                "messages": [greet(), result("x", "nope")],
            }
        ],
    )
    code, out, _ = replay(capsys, good, bad, "--tau2-data", tau2_data)
    assert code == 1
    assert out.splitlines()[-1] == "3 simulations in 2 files: 1 ok, 1 with divergences, 1 with findings; db_match 2/3"
    code, out, _ = replay(capsys, good, bad, "--json", "--tau2-data", tau2_data)
    assert [json.loads(line)["sim"] for line in out.splitlines()] == ["sim-1", "sim-1", "orphan"]


def test_sim_selection(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = {"id": "other-sim", "task_id": "t_update", "messages": [greet()], "termination_reason": "user_stop"}
    path = results_file(tmp_path / "two.json", [greet()], extra_sims=[extra])
    code, out, _ = replay(capsys, path, "--json", "--sim", "other", "--tau2-data", tau2_data)
    assert code == 0 and [json.loads(line)["sim"] for line in out.splitlines()] == ["other-sim"]
    code, _, err = replay(capsys, path, "--sim", "missing-id", "--tau2-data", tau2_data)
    assert code == 2 and "no simulation 'missing-id'" in err


@pytest.mark.parametrize("payload", [b"", b"{", b"\xff\xfe", b"[1]", b"7", b"[" * 3000])
def test_unreadable_input_exits_2_with_one_line(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], payload: bytes
) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(payload)
    code, out, err = replay(capsys, path, "--tau2-data", tau2_data)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_directory_without_results_exits_2(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run" / "simulations").mkdir(parents=True)
    code, _, err = replay(capsys, tmp_path / "run", "--tau2-data", tau2_data)
    assert code == 2 and "without results.json" in err


def _clean_mismatch_finding_and_stored_db(tmp_path: Path) -> Path:
    """One file: a clean simulation, one with a mismatch, one with a finding, one whose stored final DB differs."""
    done = [
        greet(),
        user("done?"),
        call("update_task_status", {"task_id": "task_1", "status": "completed"}),
        result(TASK_1),
        say("Done."),
    ]
    mismatch = [
        greet(),
        call("update_task_status", {"task_id": "task_1", "status": "completed"}),
        result(dict(TASK_1, title="Other")),
    ]
    extra: list[dict[str, Any]] = [
        {"id": "mismatch", "task_id": "t_update", "termination_reason": "user_stop", "messages": mismatch},
        {
            "id": "orphan",
            "task_id": "t_update",
            "termination_reason": "user_stop",
            "messages": [greet(), result("x", "nope")],
        },
        {
            "id": "stored-db",
            "task_id": "t_update",
            "termination_reason": "user_stop",
            "messages": done,
            "info": {"inspect": {"final_db": {"tasks": {}}}},
        },
    ]
    return results_file(tmp_path / "four.json", done, sim_id="clean", extra_sims=extra)


def test_only_problems_prints_the_simulations_with_one_and_counts_every_one(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _clean_mismatch_finding_and_stored_db(tmp_path)
    code, everything, _ = replay(capsys, path, "--tau2-data", tau2_data)
    code_only, out, _ = replay(capsys, path, "--only-problems", "--tau2-data", tau2_data)
    assert code == code_only == 1
    shown = [
        line.split()[0]
        for line in out.splitlines()
        if line.split() and line.split()[0] in ("clean", "mismatch", "orphan", "stored-db")
    ]
    assert shown == ["mismatch", "orphan", "stored-db"]
    assert (
        out.splitlines()[-1]
        == everything.splitlines()[-1]
        == ("4 simulations in 1 file: 2 ok, 1 with divergences, 1 with findings; db_match 3/4")
    )
    code, out, _ = replay(capsys, path, "--only-problems", "--json", "--workers", "1", "--tau2-data", tau2_data)
    assert code == 1 and [json.loads(line)["sim"] for line in out.splitlines()] == ["mismatch", "orphan", "stored-db"]


def test_a_stored_final_db_that_differs_from_ours_exits_1(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _clean_mismatch_finding_and_stored_db(tmp_path)
    code, out, _ = replay(capsys, path, "--sim", "stored-db", "--tau2-data", tau2_data)
    assert code == 1 and "final DB stored in the Inspect log: DIFFERS from ours" in out


@pytest.mark.parametrize("command", ["replay", "eval"])
@pytest.mark.parametrize("content", [[], ["notes.txt"], ["sub/readme.md"]])
def test_a_folder_with_nothing_usable_says_no_run_files_were_found(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], command: str, content: list[str]
) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    for name in content:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("not a run")
    code = main([command, str(folder), "--tau2-data", str(tau2_data)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err == f"tau-tui: {folder}: no run files found in it\n"


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_an_unknown_sim_is_only_its_error_line(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code = main(
        [command, str(ROOT / "recordings" / "aftersales.json"), "--sim", "nosuch", "--tau2-data", str(tau2_data)]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err == "tau-tui: no simulation 'nosuch' in the given files\n"


def test_missing_tau2_data_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setattr("tau_tui.domains._installed_tau2_data", lambda: None)
    path = results_file(tmp_path / "ok.json", [greet()])
    code, _, err = replay(capsys, path, "--tau2-data", tmp_path / "nowhere")
    assert code == 2 and "no tau2 data for domain 'mock'" in err and "--tau2-data" in err and err.count("\n") == 1


def test_corpus_notes_for_v1_and_empty_files(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = replay(
        capsys,
        CORPUS / "sierra-research__tau-bench__gpt-4o-airline.json",
        CORPUS / "sierra-research__tau2-bench__qwen2.5-1.5b_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json",
        "--tau2-data",
        tau2_data,
    )
    assert code == 0  # neither has a simulation to replay: a note each
    assert "empty run" in err
    v1 = [line for line in err.splitlines() if "tau-bench v1" in line]
    assert len(v1) == 1 and "200 simulations not replayed" in v1[0]


def test_entry_point_runs_without_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "x.json"
    broken.write_text("{")
    proc = subprocess.run(
        [sys.executable, "-m", "tau_tui", "replay", str(broken)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "truncated JSON" in proc.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "tau_tui", "replay", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert helped.returncode == 0 and "--sim" in helped.stdout


def test_core_imports_without_textual_or_litellm() -> None:
    code = (
        "import sys, tau_tui.cli, tau_tui.analysis, tau_tui.model, tau_tui.env, tau_tui.replay;"
        "bad=[m for m in ('textual','litellm') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_totals_count_every_simulation_a_missing_domain_keeps_from_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # banking_knowledge is a domain now: its gold file, renamed to a domain nobody has, keeps 291 from replay
    unknown = tmp_path / "unknown_domain.json"
    unknown.write_bytes(
        (CORPUS / "generated" / "tau2-gold_banking_knowledge.json")
        .read_bytes()
        .replace(b'"banking_knowledge"', b'"no_such_domain"')
    )
    code, out, err = replay(
        capsys, unknown, CORPUS / "sierra-research__tau2-bench__e2e_mock_baseline.json", "--tau2-data", str(CORPUS)
    )
    assert code == 2 and err.count("unknown domain 'no_such_domain'") == 1
    assert out.splitlines()[-1].startswith("1 simulation in 1 file: 1 ok")
    assert "; 291 more not replayed;" in out.splitlines()[-1]


def test_banking_knowledge_replays_every_simulation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay(
        capsys, CORPUS / "generated" / "tau2-gold_banking_knowledge.json", "--tau2-data", str(CORPUS)
    )
    assert code == 0 and not err
    assert out.splitlines()[-1].startswith("291 simulations in 1 file: 291 ok")


def test_the_corpus_replays_with_the_data_folder_found_in_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tau2_data: Path
) -> None:
    """``tau-tui replay ../shared/tau2-corpus --json`` with no TAU2_DATA_DIR: the data beside the runs is used,
    and said so."""
    import json as json_module

    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    code = main(["replay", str(tau2_data / "generated" / "tau2-gold_mock.json"), "--json", "--workers", "1"])
    out, err = capsys.readouterr()
    records = [json_module.loads(line) for line in out.splitlines()]
    assert code == 0 and records and all(r["db_match"] is not None for r in records)
    assert f"note: tau2 data: {tau2_data} (found beside the files opened" in err
