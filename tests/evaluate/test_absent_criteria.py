"""tau2's rules for absent criteria, one rule in every path (replay, eval, compare, audit, the runs table).

tau2 1.0.1's environment evaluator passes the DB check (``db_match`` true, reward 1) when a task lists neither
``actions`` nor ``env_assertions``, and checks no DB (reward 1, no ``db_check``) when the task has no
``evaluation_criteria``. A run made against an older mock task with no expected actions writes to the DB, so
its final hash differs from the gold one: the hashes must not decide there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.catalog.summaries import summarize
from tau_tui.cli import main
from tau_tui.model import open_run
from tau_tui.model.tasks import DB_COMPARED, DB_NOT_CHECKED, DB_PASSES_UNCHECKED, Task, db_check_rule
from tau_tui.trust.audit import audit_file
from tau_tui.trust.compare import load_side
from tests.conftest import CORPUS
from tests.helpers import call, greet, result, results_file, say, user

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

NEW_TASK = {"task_id": "task_2", "title": "Meeting", "description": None, "status": "pending"}
NO_ACTIONS = {
    "id": "old_create_task",
    "user_scenario": {"instructions": "Create a task called Meeting for user_1."},
    "evaluation_criteria": {"nl_assertions": ["The agent created the task"], "reward_basis": ["DB", "COMMUNICATE"]},
}
NO_CRITERIA = {"id": "no_criteria", "user_scenario": {"instructions": "Say hello."}}


def _writes(tmp_path: Path, task: dict[str, Any], name: str) -> Path:
    """A mock run whose agent creates a task: its final DB differs from the (unchanged) gold DB."""
    return results_file(
        tmp_path / name,
        [
            greet(),
            user("Create a task called Meeting for user_1."),
            call("create_task", {"user_id": "user_1", "title": "Meeting"}),
            result(NEW_TASK),
            say("Created."),
        ],
        task=task,
    )


def _replay_record(capsys: pytest.CaptureFixture[str], path: Path, tau2_data: Path) -> dict[str, Any]:
    assert main(["replay", str(path), "--json", "--tau2-data", str(tau2_data)]) == 0
    record: dict[str, Any] = json.loads(capsys.readouterr().out)
    return record


def test_the_rule_names_each_case() -> None:
    assert db_check_rule(None) is None
    assert db_check_rule(Task.model_validate(NO_ACTIONS)) == DB_PASSES_UNCHECKED
    assert db_check_rule(Task.model_validate(NO_CRITERIA)) == DB_NOT_CHECKED
    with_actions = {**NO_ACTIONS, "evaluation_criteria": {"actions": [], "reward_basis": ["DB"]}}
    assert db_check_rule(Task.model_validate(with_actions)) == DB_COMPARED  # an empty list is not absent


def test_replay_passes_the_db_check_when_the_task_lists_no_actions_or_assertions(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _replay_record(capsys, _writes(tmp_path, NO_ACTIONS, "old.json"), tau2_data)
    assert record["pred_db"] != record["gold_db"]  # the agent wrote; gold did nothing
    assert record["db_match"] is True and record["db_rule"] == DB_PASSES_UNCHECKED
    assert main(["replay", str(tmp_path / "old.json"), "--tau2-data", str(tau2_data)]) == 0
    text = capsys.readouterr().out
    assert "match by tau2's rule: the task lists no actions and no env assertions" in text
    assert "db_match 1/1" in text


def test_replay_reports_no_db_check_without_criteria(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _replay_record(capsys, _writes(tmp_path, NO_CRITERIA, "none.json"), tau2_data)
    assert record["db_match"] is None and record["db_rule"] == DB_NOT_CHECKED


@pytest.mark.parametrize(("task", "db_match"), [(NO_ACTIONS, True), (NO_CRITERIA, None)])
def test_eval_runs_table_compare_and_audit_use_the_same_rule(
    tmp_path: Path,
    tau2_data: Path,
    analyzer: Analyzer,
    capsys: pytest.CaptureFixture[str],
    task: dict[str, Any],
    db_match: bool | None,
) -> None:
    path = _writes(tmp_path, task, "run.json")
    assert main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)]) == 0
    sim = json.loads(capsys.readouterr().out.splitlines()[0])
    assert sim["reward"] == 1.0
    assert (sim["reward_info"]["db_check"] or {}).get("db_match") is db_match

    run = open_run(path)
    analysis = analyzer.analyze(run, 0)
    summary = summarize(analyzer, analysis)
    assert summary.replay is not None
    assert summary.replay.db_match is db_match  # the runs table's DB column
    outcomes, errors = load_side([(path, run)], analyzer)
    assert not errors and outcomes[0].db_match is db_match and outcomes[0].reward == 1.0
    audit, problems = audit_file(path, run, analyzer)
    assert not problems and audit.sims[0].ours == 1.0


def test_oracle_records_absent_criteria_as_a_match(oracle_rows: list[dict[str, Any]]) -> None:
    """The oracle's one task without actions or env assertions (generated mock): db_match true, as tau2 says."""
    generated = json.loads((CORPUS / "generated" / "tau2-gold_mock.json").read_text())
    absent = {
        t["id"]
        for t in generated["tasks"]
        if t.get("evaluation_criteria") is not None
        and t["evaluation_criteria"].get("actions") is None
        and t["evaluation_criteria"].get("env_assertions") is None
    }
    rows = [r for r in oracle_rows if r["domain"] == "mock" and r["task"] in absent]
    assert rows and all(r["db_match"] is True and r["env_reward"] == 1.0 for r in rows)
