"""``tau-tui calibrate`` (grid and --gold-check) and ``tau-tui notes``: output contracts and one-line errors."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.model.io import open_run
from tests.calibrate.test_workbench import TELECOM_4_TRIALS

ROW_FIELDS = ("task", "n_scored", "n_passed", "n_unscored", "band", "pass_hat_k", "pass_at_k", "fingerprint")
GOLD_FIELDS = ("task", "gold_reward", "gold_consistent", "reason")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_calibrate_json_rows(tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "cal.json"
    code, out, err = run_cli(
        capsys,
        "calibrate",
        "--domain",
        "mock",
        "--agent-llm",
        "scripted/flaky:0.5",
        "--user-llm",
        "scripted/user",
        "-k",
        "4",
        "--concurrency",
        "4",
        "--json",
        "--quiet",
        "--out",
        str(out_file),
        "--tau2-data",
        str(tau2_data),
    )
    assert code == 0, err
    rows = json_lines(out)
    assert len(rows) == 10  # tau2 1.0.1's mock tasks
    for row in rows:
        for key in ROW_FIELDS:
            assert key in row, key
        assert row["band"] in ("saturated", "zero", "learning_zone", "unscored")
        assert row["n_scored"] + row["n_unscored"] == 4
        assert set(row["pass_hat_k"]) == {str(k) for k in range(1, row["n_scored"] + 1)}
        assert row["agent"] == "scripted/flaky:0.5" and row["user"] == "scripted/user"
        interval = row["pass_rate_interval"]  # Wilson over the scored trials
        if row["n_scored"]:
            assert interval["method"] == "wilson" and interval["estimate"] == row["pass_rate"]
            assert interval["low"] <= row["pass_rate"] <= interval["high"]
            assert (interval["low"] == 0.0) == (row["n_passed"] == 0)
        else:
            assert interval is None
    assert {r["band"] for r in rows} >= {"saturated", "zero", "learning_zone"}
    assert len(open_run(out_file).entries) == 40  # 10 tasks x 4 trials

    # the same command again resumes the file: nothing left to run, the same grid
    code, again, _ = run_cli(
        capsys,
        "calibrate",
        "--domain",
        "mock",
        "--agent-llm",
        "scripted/flaky:0.5",
        "--user-llm",
        "scripted/user",
        "-k",
        "4",
        "--json",
        "--quiet",
        "--out",
        str(out_file),
        "--tau2-data",
        str(tau2_data),
    )
    assert code == 0 and json_lines(again) == rows
    # recorded runs alone, filtered by band: the two tasks no agent of this kind can pass are in the zero band
    code, out, _ = run_cli(
        capsys,
        "calibrate",
        "--domain",
        "mock",
        "--from",
        str(out_file),
        "--band",
        "zero",
        "--json",
        "--tau2-data",
        str(tau2_data),
    )
    assert code == 0
    assert {r["task"] for r in json_lines(out)} >= {
        "update_task_with_history_and_env_assertions",
        "update_task_with_user_tools",
    }


def test_calibrate_human_grid(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "calibrate",
        "--domain",
        "telecom",
        "--from",
        str(TELECOM_4_TRIALS),
        "--sort",
        "band",
        "--tau2-data",
        str(tau2_data),
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["task", "version", "trials"]
    assert "✗✗✗✗" in lines[1] and lines[1].rstrip().endswith("zero")  # no learning zone: the zero row first
    assert all("✓✓✓✓" in line and line.rstrip().endswith("saturated") for line in lines[2:6])
    assert "bands: 4 saturated, 1 zero, 0 learning zone, 0 unscored" in out
    # 0 of 4 and 4 of 4: the Wilson 95% intervals [0, 0.49] and [0.51, 1]
    assert "0.00–0.49" in lines[1] and all("0.51–1.00" in line for line in lines[2:6])
    assert "95% CI: Wilson interval" in out


def test_gold_check_json_and_exit_status(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "calibrate", "--gold-check", "--domain", "mock", "--json", "--tau2-data", str(tau2_data)
    )
    assert code == 1  # a task fails
    records = json_lines(out)
    assert len(records) == 10
    for record in records:
        for key in GOLD_FIELDS:
            assert key in record
    failing = [r for r in records if not r["ok"]]
    # tau2 1.0.1's two mock tasks whose reference solution cannot reach 1.0 (see tests/calibrate/test_gold.py)
    assert [r["task"] for r in failing] == [
        "update_task_with_history_and_env_assertions",
        "update_task_with_user_tools",
    ]
    assert all(r["gold_reward"] == 0.0 and r["gold_consistent"] is True for r in failing)
    assert "assert_task_status" in failing[0]["reason"] and failing[0]["reachable"] is True
    assert "unreachable task" in failing[1]["reason"] and failing[1]["reachable"] is False
    assert "gold check mock: 10 tasks, 2 failing" in err
    code, out, _ = run_cli(
        capsys,
        "calibrate",
        "--gold-check",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "--tau2-data",
        str(tau2_data),
    )
    assert code == 0 and "1 task, 0 failing" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--domain", "mock"], "give --agent-llm"),
        (["--domain", "mock", "--agent-llm", "scripted/gold"], "--user-llm is required"),
        (["--domain", "nowhere", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user"], "unknown domain"),
        (["--domain", "mock", "--agent-llm", "scripted/flaky:7", "--user-llm", "scripted/user"], "from 0 to 1"),
        (
            ["--domain", "mock", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user", "--task", "nope"],
            "no task 'nope'",
        ),
        (["--domain", "mock", "--gold-check", "--task", "nope"], "no task 'nope'"),
        (["--domain", "mock", "--from", "/does/not/exist"], "no simulation of domain 'mock'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run_cli(
        capsys, "calibrate", *args, "--quiet", "--out", str(tmp_path / "x.json"), "--tau2-data", str(tau2_data)
    )
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if not line.startswith("tau-tui: note:")]) == 1


def test_notes_add_list_export_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recording = tmp_path / "run.json"
    shutil.copy(TELECOM_4_TRIALS, recording)
    before = hashlib.sha256(recording.read_bytes()).hexdigest()
    sim = open_run(recording).entries[3]
    code, out, err = run_cli(
        capsys,
        "notes",
        "add",
        str(recording),
        "--sim",
        sim.id[:8],
        "--step",
        "4",
        "--source",
        "agent",
        "--type",
        "wrong_action",
        "--text",
        "reads the wrong line",
        "--json",
    )
    assert code == 0, err
    note = json.loads(out)
    assert (note["sim_id"], note["task_id"], note["trial"], note["step"]) == (sim.id, sim.task_id, sim.trial, 4)
    assert (
        run_cli(capsys, "notes", "add", str(recording), "--sim", sim.id, "--source", "task", "--type", "task_defect")[0]
        == 0
    )

    code, out, _ = run_cli(capsys, "notes", "list", str(tmp_path), "--json")
    assert code == 0 and len(json_lines(out)) == 2
    code, out, _ = run_cli(capsys, "notes", "list", str(tmp_path), "--source", "agent")
    assert out.count("\n") == 1 and "[agent/wrong_action]: reads the wrong line" in out
    code, out, _ = run_cli(capsys, "notes", "export", str(recording), "--format", "csv")
    assert out.splitlines()[0].startswith("recording,id,sim_id") and len(out.splitlines()) == 3
    exported = tmp_path / "notes.json"
    assert run_cli(capsys, "notes", "export", str(tmp_path), "--out", str(exported))[0] == 0
    assert [n["error_type"] for n in json.loads(exported.read_text())] == ["wrong_action", "task_defect"]
    code, out, _ = run_cli(capsys, "notes", "remove", str(recording), note["id"])
    assert (
        code == 0
        and json_lines(run_cli(capsys, "notes", "list", str(recording), "--json")[1])[0]["error_type"] == "task_defect"
    )
    assert hashlib.sha256(recording.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["add", "RUN", "--sim", "nope", "--source", "agent", "--type", "other"], "no simulation 'nope'"),
        (["add", "RUN", "--sim", "SIM", "--step", "999", "--source", "agent", "--type", "other"], "no step 999"),
        (["add", "/nowhere.json", "--sim", "x", "--source", "agent", "--type", "other"], "does not exist"),
        (["remove", "RUN", "zzz"], "no note 'zzz'"),
    ],
)
def test_notes_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    recording = tmp_path / "run.json"
    shutil.copy(TELECOM_4_TRIALS, recording)
    sim = open_run(recording).entries[0].id
    args = [a.replace("RUN", str(recording)).replace("SIM", sim) for a in args]
    code, _, err = run_cli(capsys, "notes", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_notes_usage_errors_come_from_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["notes", "add", "x.json", "--sim", "s", "--source", "model", "--type", "other"])
    assert exc.value.code == 2
    assert "invalid choice: 'model'" in capsys.readouterr().err


def test_notes_on_a_bundled_recording_are_added_and_listed_from_the_user_data_folder(
    user_data_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import ROOT

    folder = ROOT / "recordings"
    before = sorted(folder.iterdir())
    code, out, err = run_cli(
        capsys,
        "notes",
        "add",
        str(folder / "warehouse.json"),
        "--sim",
        "wh-gives-up",
        "--source",
        "agent",
        "--type",
        "premature_end",
        "--text",
        "gave up",
    )
    assert code == 0, err
    assert str(user_data_home) in out and sorted(folder.iterdir()) == before
    code, out, _ = run_cli(capsys, "notes", "list", str(folder), "--json")
    assert [n["text"] for n in json_lines(out) if n["sim_id"] == "wh-gives-up"] == ["gave up"]


def test_a_fork_is_left_out_of_the_grid_and_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fork's first messages were played by the run it continues: it is no trial of its agent and user."""
    from tests.conftest import ROOT

    recording = tmp_path / "warehouse.json"
    shutil.copyfile(ROOT / "recordings" / "warehouse.json", recording)
    fork = tmp_path / "fork.json"
    assert (
        main(
            [
                "fork",
                str(recording),
                "--sim",
                "wh-gold-split",
                "--after",
                "2",
                "--agent-llm",
                "scripted/gold",
                "--out",
                str(fork),
            ]
        )
        == 0
    )
    forked_from = open_run(fork).forked_from
    assert forked_from is not None and forked_from["simulation"] == "wh-gold-split"
    rollout = tmp_path / "gold.json"
    assert (
        main(
            [
                "run",
                "--domain",
                "warehouse",
                "--task",
                "split_across_warehouses",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--out",
                str(rollout),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    code, out, err = run_cli(
        capsys, "calibrate", "--domain", "warehouse", "--from", str(recording), str(fork), str(rollout), "--json"
    )
    assert code == 0, err
    gold = [r for r in json_lines(out) if r["task"] == "split_across_warehouses" and r["agent"] == "scripted/gold"]
    assert len(gold) == 1 and gold[0]["n_scored"] == 1, gold  # the rollout's trial, not the fork
    assert "note: 1 fork left out (a fork continues another run's recorded messages" in err
