"""Simulation rules on hand-made trajectories (edited copies of the mock gold recordings): premature_end,
the user simulator's part (tool calls written as text, the out-of-scope stop) and whose fault a failure is."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.doctor.recordings import examine
from tau_tui.env.environment import Environment
from tau_tui.evaluate.compliance import users_writing_tool_calls
from tau_tui.model.io import open_run

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def gold_mock(tau2_data: Path) -> dict[str, Any]:
    gold: dict[str, Any] = json.loads((tau2_data / "generated" / "tau2-gold_mock.json").read_text())
    return gold


def _sim(gold_mock: dict[str, Any], sim_id: str) -> dict[str, Any]:
    sim: dict[str, Any] = copy.deepcopy(next(s for s in gold_mock["simulations"] if s["id"] == sim_id))
    return sim


def _file(tmp_path: Path, gold_mock: dict[str, Any], sims: list[dict[str, Any]]) -> Path:
    raw = {**gold_mock, "simulations": sims}
    raw.pop("simulation_index", None)
    path = tmp_path / "mock-cases.json"
    path.write_text(json.dumps(raw))
    return path


def _findings(analyzer: Analyzer, path: Path) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for finding in examine(analyzer, [open_run(path)]).findings:
        out.setdefault(finding.sim, []).append(finding)
    return out


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_premature_end_says_what_each_component_would_have_scored(
    tmp_path: Path, gold_mock: dict[str, Any], analyzer: Analyzer
) -> None:
    done = _sim(gold_mock, "gold-mock-create_task_1-gold")
    done.update(id="cut-done", termination_reason="max_steps")
    undone = _sim(gold_mock, "gold-mock-create_task_1-gold")
    undone["messages"] = undone["messages"][:2]
    undone.update(id="cut-undone", termination_reason="too_many_errors")
    normal = _sim(gold_mock, "gold-mock-create_task_1-gold")
    found = _findings(analyzer, _file(tmp_path, gold_mock, [done, undone, normal]))
    [whole] = [f for f in found["cut-done"] if f.rule == "premature_end"]
    assert whole.evidence["would_reward"] == 1.0 and whole.evidence["termination"] == "max_steps"
    assert "would have scored 1 — DB 1, COMMUNICATE 1" in whole.detail
    [cut] = [f for f in found["cut-undone"] if f.rule == "premature_end"]
    assert cut.evidence["would_reward"] == 0.0 and cut.evidence["would_breakdown"]["DB"] == 0.0
    assert not [f for f in found.get(normal["id"], []) if f.rule == "premature_end"]


def test_user_writing_a_tool_call_as_text_is_the_user_simulators_part(
    tmp_path: Path, gold_mock: dict[str, Any], analyzer: Analyzer
) -> None:
    sim = _sim(gold_mock, "gold-mock-create_task_1-gold")
    sim["id"] = "user-calls-in-text"
    sim["messages"][1] = _user('{"name": "create_task", "arguments": {"user_id": "user_1", "title": "x"}}')
    sim["messages"].insert(2, _user("create_task(user_id='user_1', title='Important Meeting')"))
    sim["messages"].insert(3, _user("<tool_response>done</tool_response>"))
    clean = _sim(gold_mock, "gold-mock-create_task_1-gold")
    clean["messages"][1] = _user("Please create a task called Important Meeting for me.")
    found = _findings(analyzer, _file(tmp_path, gold_mock, [sim, clean]))
    hints = [f for f in found["user-calls-in-text"] if f.rule == "user_simulator"]
    assert [(f.step, f.evidence["flag"]) for f in hints] == [
        (1, "user_text_tool_call"),
        (2, "user_text_tool_call"),
        (3, "user_text_tool_call"),
    ]
    assert "a call of create_task" in hints[0].detail and "'<tool_response'" in hints[2].detail
    assert not [f for f in found.get(clean["id"], []) if f.rule == "user_simulator"]


def test_the_detector_needs_no_domain_to_see_markup() -> None:
    from tau_tui.model.messages import UserMessage
    from tau_tui.replay import replay

    timeline = replay(
        [UserMessage(content='{"tool_call_id": "c1", "content": "ok"}'), UserMessage(content="hello")],
        None,
        lambda solo: _no_env(),
    )
    assert [f.step for f in users_writing_tool_calls(timeline, 0)] == [0]


def _no_env() -> Environment:
    return Environment(domain_name="none", policy="", agent=None)


def test_whose_fault(tmp_path: Path, gold_mock: dict[str, Any], analyzer: Analyzer) -> None:
    ok = _sim(gold_mock, "gold-mock-create_task_1-gold")
    agent_error = _sim(gold_mock, "gold-mock-create_task_1-gold")
    agent_error.update(id="agent-error", termination_reason="agent_error")
    out_of_scope = _sim(gold_mock, "gold-mock-create_task_1-gold")
    out_of_scope["id"] = "out-of-scope"
    out_of_scope["messages"] = [*out_of_scope["messages"][:2], _user("###OUT-OF-SCOPE###")]
    user_only = _sim(gold_mock, "gold-mock-create_task_1-gold")
    user_only["id"] = "user-only"
    user_only["messages"] = [
        *user_only["messages"][:1],
        _user("create_task(user_id='user_1', title='Important Meeting')"),
        _user("###STOP###"),
    ]
    unreachable = _sim(gold_mock, "gold-mock-update_task_with_user_tools-gold")
    nothing = _sim(gold_mock, "gold-mock-create_task_1-gold")
    nothing["id"] = "agent-did-nothing"
    nothing["messages"] = [*nothing["messages"][:2], _user("###STOP###")]
    found = _findings(
        analyzer, _file(tmp_path, gold_mock, [ok, agent_error, out_of_scope, user_only, unreachable, nothing])
    )

    def fault(sim_id: str) -> tuple[str, str] | None:
        hits = [f for f in found.get(sim_id, []) if f.rule == "whose_fault"]
        return (hits[0].evidence["fault"], hits[0].evidence["confidence"]) if hits else None

    assert fault(ok["id"]) is None  # not a failure
    assert fault("agent-error") == ("agent", "high")
    assert fault("out-of-scope") == ("task", "medium")
    assert fault("user-only") == ("user simulator", "medium")
    assert fault(unreachable["id"]) == ("task", "high")
    assert fault("agent-did-nothing") == ("agent", "low")
    line = next(f for f in found["user-only"] if f.rule == "whose_fault").detail
    assert line.startswith("whose fault: user simulator (medium): user_text_tool_call at step 1")
