"""A reward a non-NL component already decides is scored in every path: eval, the runs table, compare, audit.

The task's basis is DB and NL_ASSERTION; the agent never updates the task, so the DB check fails and the reward
is 0 whatever a judge would say about the NL assertion. Without a judge it is scored 0 (with a note), never
"not computable".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.catalog.summaries import summarize
from tau_tui.cli import main
from tau_tui.model import open_run
from tau_tui.trust.audit import audit_file
from tau_tui.trust.compare import load_side
from tests.evaluate.support import UPDATE, action, mock_task
from tests.helpers import greet, results_file, say, user

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

TASK = mock_task(
    actions=[action("update_task_status", UPDATE)], nl=["The agent was polite"], basis=["DB", "NL_ASSERTION"]
)


def _run(tmp_path: Path) -> Path:
    messages = [greet(), user("finish task_1"), say("Sorry, I cannot.")]
    path = results_file(tmp_path / "decided.json", messages, task=TASK)
    data = json.loads(path.read_text())
    data["simulations"][0]["reward_info"] = {"reward": 0.0, "db_check": {"db_match": False, "db_reward": 0.0}}
    path.write_text(json.dumps(data, indent=2))
    return path


def test_eval_scores_a_decided_reward_and_counts_it_computable(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _run(tmp_path)
    assert main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)]) == 0
    sim, file = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert sim["reward"] == 0.0 and sim["status"] == "scored" and sim["agrees"] is True
    assert sim["decided_by"] == ["DB"] and sim["not_evaluated"] == ["NL_ASSERTION"]
    assert file["agreement"] == {"compared": 1, "agree": 1, "differ": 0, "not_computable": 0}
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) == 0
    text = capsys.readouterr().out
    assert "reward 0 whatever a judge would say: DB at 0" in text
    assert "NL_ASSERTION not evaluated (not needed: DB at 0 decides)" in text


def test_runs_table_compare_and_audit_score_it_too(tmp_path: Path, analyzer: Analyzer) -> None:
    path = _run(tmp_path)
    run = open_run(path)
    summary = summarize(analyzer, analyzer.analyze(run, 0)).evaluation
    assert summary is not None
    assert summary.reward == 0.0 and summary.agrees is True
    outcomes, errors = load_side([(path, run)], analyzer)
    assert not errors and outcomes[0].reward == 0.0 and not outcomes[0].unscored
    audit, problems = audit_file(path, run, analyzer)
    assert not problems and audit.sims[0].ours == 0.0 and audit.sims[0].hits == []  # no "NL judge needed" note
