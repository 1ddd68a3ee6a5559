"""`tau-tui eval`: JSON records, human blocks, per-file metrics, exit codes, sidecar scorer, judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tests.evaluate.support import TASK_1_DONE, UPDATE, Server, mock_task
from tests.helpers import call, greet, result, results_file, say, user

SIM_FIELDS = {
    "file",
    "sim",
    "task",
    "reward",
    "recorded_reward",
    "reward_basis",
    "breakdown",
    "nl_evaluated",
    "checks",
    "explanation",
    "scorer",
    "diagnostics",
    "reward_info",
    "termination",
}
DONE = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
NOTHING = [greet(), user("finish task_1"), say("No.")]


def run_file(
    tmp_path: Path,
    messages: list[dict[str, Any]],
    recorded: float | None = None,
    task: dict[str, Any] | None = None,
    extra_sims: list[dict[str, Any]] | None = None,
    trials: int = 1,
) -> Path:
    path = results_file(tmp_path / "run.json", messages, task=task, extra_sims=extra_sims)
    data = json.loads(path.read_text())
    data["info"]["num_trials"] = trials
    if recorded is not None:
        data["simulations"][0]["reward_info"] = {"reward": recorded}
    path.write_text(json.dumps(data))
    return path


def evaluate_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def records(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_json_records_and_file_metrics_last(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {"id": "sim-2", "task_id": "t_update", "trial": 1, "termination_reason": "max_steps", "messages": DONE}
    path = run_file(tmp_path, DONE, recorded=1.0, extra_sims=[extra], trials=2)
    code, out, err = evaluate_cli(capsys, path, "--json", "--tau2-data", tau2_data)
    first, second, file_record = records(out)
    assert code == 0 and err == ""
    assert SIM_FIELDS <= set(first)
    assert (first["reward"], first["recorded_reward"], first["agrees"]) == (1.0, 1.0, True)
    assert first["reward_basis"] == ["DB"] and first["breakdown"] == {"DB": 1.0} and first["nl_evaluated"] is True
    assert second["reward"] == 0.0 and second["status"] == "premature"
    metrics = file_record["metrics"]
    assert file_record["kind"] == "file" and file_record["file"] == str(path)
    assert metrics["avg_reward"] == 0.5 and metrics["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    assert metrics["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert metrics["terminations"] == {"max_steps": 1, "user_stop": 1}


def test_differing_reward_exits_1_and_says_why(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run_file(tmp_path, NOTHING, recorded=1.0)
    code, out, _ = evaluate_cli(capsys, path, "--tau2-data", tau2_data)
    assert code == 1
    assert "reward 0 recomputed, 1 recorded: DIFFERS" in out
    assert "DB differs from gold at 1 agent path(s)" in out
    assert "update_task_status(task_id='task_1', status='completed') never done" in out
    assert 'agent tasks.task_1.status: "pending" vs gold "completed"' in out
    assert "metrics over recomputed rewards" in out and "pass^k  1: 0.000" in out


def test_unreadable_input_exits_2_with_one_line(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = evaluate_cli(capsys, bad, "--json", "--tau2-data", tau2_data)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_unknown_sim_exits_2(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = evaluate_cli(capsys, run_file(tmp_path, DONE), "--sim", "nope", "--tau2-data", tau2_data)
    assert code == 2 and "no simulation 'nope'" in err


def test_sidecar_scorer_is_shown_beside_the_reward(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run_file(tmp_path, DONE, recorded=1.0)
    (tmp_path / "run.scorer.json").write_text(
        json.dumps({"default": {"expected_tools": ["update_task_status", "get_users"]}})
    )
    code, out, _ = evaluate_cli(capsys, tmp_path, "--json", "--tau2-data", tau2_data)  # the folder: sidecar skipped
    sim, _ = records(out)
    assert code == 0 and sim["reward"] == 1.0 and sim["file"] == str(path)
    assert sim["scorer"]["value"] == 0.5 and sim["scorer"]["passed"] is False


def test_broken_sidecar_is_reported_and_scores_skipped(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run_file(tmp_path, DONE, recorded=1.0)
    (tmp_path / "run.scorer.json").write_text("[]")
    code, out, err = evaluate_cli(capsys, path, "--json", "--tau2-data", tau2_data)
    assert code == 2 and "run.scorer.json" in err and records(out)[0]["scorer"] is None


def test_nl_assertions_without_and_with_a_judge(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], server: Server
) -> None:
    handler, base = server
    handler.content = json.dumps(
        {"results": [{"expectedOutcome": "The agent was polite", "reasoning": "ok", "metExpectation": True}]}
    )
    task = mock_task(nl=["The agent was polite"], basis=["NL_ASSERTION"], task_id="t_update")
    path = run_file(tmp_path, DONE, recorded=1.0, task=task)
    code, out, _ = evaluate_cli(capsys, path, "--json", "--tau2-data", tau2_data)
    sim = records(out)[0]
    assert code == 0 and sim["reward"] is None and sim["nl_evaluated"] is False and sim["agrees"] is None
    code, out, _ = evaluate_cli(
        capsys, path, "--json", "--tau2-data", tau2_data, "--judge", "openai/test", "--judge-api-base", base
    )
    sim = records(out)[0]
    assert code == 0 and sim["reward"] == 1.0 and sim["nl_evaluated"] is True
    assert sim["checks"]["nl_assertions"][0]["met"] is True and len(handler.requests) == 1


def test_a_judge_that_refuses_the_key_stops_eval_in_one_line_without_retrying(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], server: Server
) -> None:
    handler, base = server
    handler.status = 401
    task = mock_task(nl=["The agent was polite"], basis=["NL_ASSERTION"], task_id="t_update")
    extra = {"id": "sim-2", "task_id": "t_update", "trial": 1, "termination_reason": "user_stop", "messages": DONE}
    path = run_file(tmp_path, DONE, recorded=1.0, task=task, extra_sims=[extra])
    code, out, err = evaluate_cli(
        capsys,
        path,
        "--json",
        "--tau2-data",
        tau2_data,
        "--judge",
        "openai/test",
        "--judge-api-base",
        base,
        "--workers",
        "1",
    )
    ours = [line for line in err.splitlines() if line.startswith("tau-tui: ")]
    assert code == 2 and out == "" and len(ours) == 1, err
    assert ours[0].startswith(
        "tau-tui: the judge model openai/test: the provider refused the credentials (AuthenticationError: "
    )
    assert len(handler.requests) == 1  # not retried, and the second simulation was not judged


def test_only_problems_prints_differing_uncomputable_and_replay_problem_simulations(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.commands.test_cli_replay import TASK_1

    differs = {
        "id": "differs",
        "task_id": "t_update",
        "trial": 1,
        "termination_reason": "user_stop",
        "messages": NOTHING,
        "reward_info": {"reward": 1.0},
    }
    mismatch = {
        "id": "mismatch",
        "task_id": "t_update",
        "trial": 2,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0},
        "messages": [
            greet(),
            user("finish task_1"),
            call("update_task_status", UPDATE),
            result(dict(TASK_1, title="Other")),
            say("Done."),
        ],
    }
    path = run_file(tmp_path, DONE, recorded=1.0, extra_sims=[differs, mismatch], trials=3)
    (tmp_path / "nl").mkdir()
    nl_task = mock_task(nl=["The agent was polite"], basis=["NL_ASSERTION"], task_id="t_update")
    unjudged = run_file(tmp_path / "nl", DONE, recorded=1.0, task=nl_task)  # no judge: not computable
    code, out, err = evaluate_cli(capsys, path, unjudged, "--json", "--tau2-data", tau2_data)
    code_only, only, _ = evaluate_cli(capsys, path, unjudged, "--json", "--only-problems", "--tau2-data", tau2_data)
    assert code == code_only == 1
    sims = [(r["file"], r["sim"]) for r in records(only) if r["kind"] == "simulation"]
    assert sims == [(str(path), "differs"), (str(path), "mismatch"), (str(unjudged), "sim-1")]
    files = [r for r in records(out) if r["kind"] == "file"]
    assert files == [r for r in records(only) if r["kind"] == "file"]  # the file records count every simulation
    assert files[0]["agreement"]["compared"] == 3
    code, text, _ = evaluate_cli(capsys, path, "--only-problems", "--tau2-data", tau2_data)
    assert "sim-1  task" not in text and "differs  task" in text and "mismatch  task" in text
    assert "simulations 3" in text  # the metrics block of the file is unchanged


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--help"])
    assert exit_info.value.code == 0 and "--judge MODEL" in capsys.readouterr().out
