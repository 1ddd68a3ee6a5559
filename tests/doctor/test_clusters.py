"""Failure clusters across files: the same task failed the same way by several models is a suspect task, first."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.doctor.recordings import examine
from tau_tui.model.io import open_run

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

pytestmark = pytest.mark.corpus


def _run_file(tmp_path: Path, gold: dict[str, Any], name: str, model: str, sims: list[dict[str, Any]]) -> Path:
    raw = copy.deepcopy({**gold, "simulations": sims})
    raw.pop("simulation_index", None)
    raw["info"].setdefault("agent_info", {})["llm"] = model
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(raw))
    return path


def _nothing_done(gold: dict[str, Any], task_sim: str, new_id: str) -> dict[str, Any]:
    sim: dict[str, Any] = copy.deepcopy(next(s for s in gold["simulations"] if s["id"] == task_sim))
    sim["id"] = new_id
    sim["messages"] = [*sim["messages"][:2], {"role": "user", "content": "###STOP###"}]
    return sim


def test_clusters_group_failures_by_task_and_signature_suspects_first(
    tmp_path: Path, tau2_data: Path, analyzer: Analyzer
) -> None:
    gold = json.loads((tau2_data / "generated" / "tau2-gold_mock.json").read_text())
    create, update = "gold-mock-create_task_1-gold", "gold-mock-update_task_1-gold"
    ok = copy.deepcopy(next(s for s in gold["simulations"] if s["id"] == create))
    files = [
        _run_file(
            tmp_path, gold, "a", "model-a", [_nothing_done(gold, create, "a1"), _nothing_done(gold, update, "a2"), ok]
        ),
        _run_file(
            tmp_path, gold, "b", "model-b", [_nothing_done(gold, create, "b1"), _nothing_done(gold, update, "b2")]
        ),
        _run_file(tmp_path, gold, "c", "model-a", [_nothing_done(gold, update, "c2")]),
    ]
    exam = examine(analyzer, [open_run(p) for p in files])
    records = [r for r in exam.records() if r["kind"] == "cluster"]
    assert [(r["task"], r["suspect"], len(r["simulations"]), r["models"]) for r in records] == [
        ("update_task_1", True, 3, ["model-a", "model-b"]),
        ("create_task_1", True, 2, ["model-a", "model-b"]),
    ]
    signature = records[1]["signature"]
    assert signature["termination"] == "user_stop" and signature["first_missed_action"]
    assert signature["db_diff"] and all("[0]" not in p for p in signature["db_diff"])
    assert set(records[0]) == {"kind", "domain", "task", "signature", "simulations", "models", "suspect"}


def test_one_model_failing_alone_is_no_suspect(tmp_path: Path, tau2_data: Path, analyzer: Analyzer) -> None:
    gold = json.loads((tau2_data / "generated" / "tau2-gold_mock.json").read_text())
    create = "gold-mock-create_task_1-gold"
    path = _run_file(
        tmp_path, gold, "solo", "model-a", [_nothing_done(gold, create, "x1"), _nothing_done(gold, create, "x2")]
    )
    [cluster] = examine(analyzer, [open_run(path)]).clusters
    assert not cluster.suspect and len(cluster.members) == 2
