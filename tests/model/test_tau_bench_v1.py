"""tau-bench v1 result lists open read-only: conversation, recorded reward and its info, pass^k, one notice.

The hand-made records are shaped as v1's ``run.py`` writes them (``EnvRunResult.model_dump()``: task_id, reward,
info, traj, trial; a run that raised keeps ``{error, traceback}`` and an empty traj); the corpus holds one real
v1 file (gpt-4o on airline, 50 tasks × 4 trials).
"""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.cli import main
from tau_tui.model import open_run
from tau_tui.model.io import RecordedOnly
from tau_tui.model.messages import Message, ParticipantMessage, ToolCall, ToolMessage
from tau_tui.model.tau_bench_v1 import infer_domain
from tests.conftest import CORPUS
from tests.tui.conftest import build_app

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

V1_AIRLINE = CORPUS / "sierra-research__tau-bench__gpt-4o-airline.json"
V1_NAME = "tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_1116093125.json"  # v1's checkpoint name


def _calls_in(trajectory: list[Message]) -> list[ToolCall]:
    """The tool calls of a trajectory's tool-calling messages, in order."""
    calls: list[ToolCall] = []
    for m in trajectory:
        if m.is_tool_call:
            assert isinstance(m, ParticipantMessage) and m.tool_calls is not None
            calls.extend(m.tool_calls)
    return calls


def _results_in(trajectory: list[Message]) -> list[ToolMessage]:
    """A trajectory's tool results, in order."""
    results: list[ToolMessage] = []
    for m in trajectory:
        if m.role == "tool":
            assert isinstance(m, ToolMessage)
            results.append(m)
    return results


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": None,
        "role": "assistant",
        "tool_calls": [
            {"function": {"arguments": json.dumps(arguments), "name": name}, "id": call_id, "type": "function"}
        ],
    }


def _tool(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def _task(outputs: list[str]) -> dict[str, Any]:
    return {
        "user_id": "yusuf_rossi_9620",
        "actions": [{"name": "cancel_pending_order", "kwargs": {"order_id": "#W1", "reason": "no longer needed"}}],
        "instruction": "You are Yusuf Rossi; cancel order #W1.",
        "outputs": outputs,
    }


def _retail_records() -> list[dict[str, Any]]:
    traj = [
        {"role": "system", "content": "# Retail agent policy"},
        {"role": "user", "content": "Hi, cancel my order #W1."},
        _call("call_a", "find_user_id_by_email", {"email": "y@example.com"}),
        _tool("call_a", "find_user_id_by_email", "yusuf_rossi_9620"),
        _call("call_a", "cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"}),  # id reused
        _tool("call_a", "cancel_pending_order", "Error: non-pending order cannot be cancelled"),
        {"content": "It is cancelled, total 1,234 refunded.", "role": "assistant"},
        {"role": "user", "content": "Thanks ###STOP###"},
    ]
    done = {
        "task": _task(["1234"]),
        "source": "user",
        "user_cost": 0.01,
        "reward_info": {
            "reward": 1.0,
            "info": {"r_outputs": 1.0, "outputs": {"1234": True}},
            "actions": _task([])["actions"],
        },
    }
    failed = {"task": _task([]), "source": "user", "user_cost": 0.02}
    failed["reward_info"] = {"reward": 0.0, "info": {"r_actions": 0.0, "gt_data_hash": "ab12"}, "actions": []}
    return [
        {"task_id": 3, "reward": 1.0, "info": done, "traj": traj, "trial": 0},
        {"task_id": 3, "reward": 0.0, "info": failed, "traj": traj[:4], "trial": 1},
        {
            "task_id": 5,
            "reward": 0.0,
            "info": {"error": "rate limited", "traceback": "Traceback ..."},
            "traj": [],
            "trial": 0,
        },
        {"task_id": 5, "reward": 1.0, "info": done, "traj": traj, "trial": 1},
    ]


def _write(tmp_path: Path, records: list[Any], name: str = V1_NAME) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(records, indent=2))
    return path


def test_the_corpus_v1_file_opens_as_recorded_only() -> None:
    run = open_run(V1_AIRLINE)
    assert run.layout == "tau-bench-v1" and run.domain == "airline" and len(run.entries) == 200
    assert "tau-bench v1 results, domain airline (from the tools it calls" in (run.recorded_only or "")
    assert sum(e.reward == 1.0 for e in run.entries) == 84  # MANIFEST: reward=1 84
    assert {e.termination for e in run.entries} == {"user_stop", "agent_stop", "max_steps"}
    assert len(run.tasks()) == 50 and run.raw_info["num_trials"] == 4
    sim = run.simulation(0)
    call = next(m for m in sim.trajectory if m.is_tool_call)
    assert isinstance(call, ParticipantMessage) and call.tool_calls is not None
    assert call.tool_calls[0].name == "get_user_details" and call.tool_calls[0].arguments == {"user_id": "mia_li_3668"}
    ids = [c.id for c in _calls_in(sim.trajectory)]
    assert len(ids) == len(set(ids))  # v1 reused ids; each call keeps its own result
    results = _results_in(sim.trajectory)
    assert [r.id for r in results] == ids
    assert any(r.error and r.content.startswith("Error: payment amount") for r in results)
    assert sim.reward_info is not None
    assert sim.reward_info.db_check is not None
    assert sim.reward_info.reward == 0.0 and sim.reward_info.db_check.db_match is False
    assert sim.reward_info.info is not None
    assert sim.reward_info.info["gt_data_hash"].startswith("ea1402bc")


def test_hand_made_records_map_every_v1_field(tmp_path: Path) -> None:
    run = open_run(_write(tmp_path, _retail_records()))
    assert run.domain == "retail" and run.agent_model == "gpt-4o" and run.user_model == "gpt-4o"
    assert [e.id for e in run.entries] == [
        "v1-task-3-trial-0",
        "v1-task-3-trial-1",
        "v1-task-5-trial-0",
        "v1-task-5-trial-1",
    ]
    first, cut, broken = run.simulation(0), run.simulation(1), run.simulation(2)
    calls = _calls_in(first.trajectory)
    assert [c.id for c in calls] == ["call_a", "call_a~2"]
    tool_results = _results_in(first.trajectory)
    assert [m.id for m in tool_results] == ["call_a", "call_a~2"] and [m.error for m in tool_results] == [False, True]
    assert first.termination_reason == "user_stop" and cut.termination_reason == "max_steps"
    assert first.reward_info is not None
    assert first.reward_info.communicate_checks == [{"info": "1234", "met": True, "justification": None}]
    assert cut.reward_info is not None
    assert cut.reward_info.db_check is not None
    assert cut.reward_info.db_check.db_match is False
    assert broken.info is not None
    assert broken.termination_reason is None and broken.info["error"] == "rate limited" and broken.messages == []
    assert run.entries[2].error == "rate limited"
    task = run.tasks()["3"]
    assert task.user_scenario is not None
    assert isinstance(task.user_scenario.instructions, str)
    assert task.user_scenario.instructions.startswith("You are Yusuf Rossi")
    assert [a.name for a in task.expected_actions] == ["cancel_pending_order"]
    assert task.evaluation_criteria is not None
    assert task.evaluation_criteria.communicate_info == ["1234"]


def test_the_domain_comes_from_the_tools_else_the_file_name(tmp_path: Path) -> None:
    shared = [{"task_id": 0, "reward": 0.0, "info": {}, "trial": 0, "traj": [_call("c", "think", {"thought": "x"})]}]
    assert infer_domain(shared, tmp_path / "retail_results.json")[0] == "retail"
    domain, why = infer_domain(shared, tmp_path / "results.json")
    assert domain is None and "airline or retail" in why
    run = open_run(
        _write(tmp_path, shared + [{"task_id": 1, "reward": 0.0, "info": {}, "traj": [], "trial": 0}], "results.json")
    )
    assert run.recorded_only is not None
    assert run.domain is None and "domain unknown" in run.recorded_only
    assert [e.termination for e in run.entries] == ["max_steps", None]  # an empty traj says nothing of its end


def test_eval_prints_recorded_metrics_and_says_they_are_not_recomputed(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _retail_records())
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) == 0
    text = capsys.readouterr().out
    assert "metrics over the recorded rewards, not recomputed" in text and "tau-bench v1 results" in text
    assert "avg reward 0.500" in text and "pass^k  1: 0.500  2: 0.000" in text
    assert main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)]) == 0
    (record,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record["kind"] == "file" and record["recomputed"] is False and record["metrics"] is None
    assert record["format"] == "tau-bench-v1" and record["domain"] == "retail"


def test_eval_pass_hat_k_is_v1s_own(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pass^k over the recorded rewards, as v1's display_metrics computes it: C(c, k) / C(trials, k) per task."""
    records = json.loads(V1_AIRLINE.read_text())
    successes: dict[int, int] = {}
    for r in records:
        successes[r["task_id"]] = successes.get(r["task_id"], 0) + (abs(r["reward"] - 1) <= 1e-6)
    expected = {k: sum(comb(c, k) / comb(4, k) for c in successes.values()) / len(successes) for k in range(1, 5)}
    assert main(["eval", str(V1_AIRLINE), "--json", "--tau2-data", str(tau2_data)]) == 0
    (record,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    ours = {int(k): v for k, v in record["recorded_metrics"]["pass_hat_k"].items()}
    assert ours.keys() == expected.keys() and all(abs(ours[k] - expected[k]) < 1e-12 for k in ours)


def test_replay_says_in_one_line_that_v1_is_not_replayed(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _retail_records())
    assert main(["replay", str(path), "--tau2-data", str(tau2_data)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "4 simulations not replayed" in err and "tau-bench v1" in err


def test_show_prints_the_conversation_and_a_note(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _retail_records())
    assert main(["show", str(path), "--sim", "v1-task-3-trial-0", "--tau2-data", str(tau2_data)]) == 0
    out, err = capsys.readouterr()
    assert "cancel_pending_order" in out and "It is cancelled" in out and "note: not replayed" in err


def test_replaying_a_v1_run_raises_one_recorded_only_error(tmp_path: Path, analyzer: Analyzer) -> None:
    run = open_run(_write(tmp_path, _retail_records()))
    try:
        analyzer.analyze(run, 0)
    except RecordedOnly as exc:
        assert "tau-bench v1" in str(exc) and str(run.path) in str(exc)
    else:
        raise AssertionError("a v1 run was replayed")


async def test_the_runs_table_names_the_domain_and_one_notice_says_not_replayed(
    tmp_path: Path, tau2_data: Path
) -> None:
    path = _write(tmp_path, _retail_records())
    app = build_app([path], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.session.library.progress is None or app.busy:
            await pilot.pause(0.05)
        rows = app.session.catalog.rows
        assert len(rows) == 4 and {r.domain for r in rows} == {"retail"}
        assert [r.entry.reward for r in rows] == [1.0, 0.0, 0.0, 1.0]
        assert all(r.replay is None and "tau-bench v1" in (r.replay_error or "") for r in rows)
    notices = [n for n in app.session.catalog.all_notices() if "tau-bench v1" in n.text]
    assert len(notices) == 1 and "not replayed" in notices[0].text
