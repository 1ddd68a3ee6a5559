"""Fields newer than tau2 1.0.1, shown where they belong and never an error when absent.

Shapes as tau2-bench's branches write them: ``SimulationRun.agent_usage`` (PR 454's ``SessionUsage``), the
reward provenance of PR 467 (``evaluation_mode``, ``state_source``, ``replayed_actions``, ``warnings``), the
run config's ``judge_llm`` (PR 479), PR 469's "Evaluation failed…" verdicts, the ``###OUT-OF-SCOPE###`` stop
(issue 517) and a UTF-8 byte-order mark (issue 375).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from tau_tui.cli import main
from tau_tui.evaluate.diagnostics import DETECTORS
from tau_tui.model import SimulationRun, open_run, runtime
from tau_tui.model.provenance import (
    NOT_RECORDED,
    PRICED,
    UNPRICED,
    CostSummary,
    RecordedExtras,
    agent_cost_state,
    raw_agent_cost,
    recorded_judge,
)
from tau_tui.model.stream import SpanSims
from tau_tui.model.usage import read_agent_usage
from tau_tui.views.panels import render_recorded
from tests.helpers import call, greet, result, results_file, say, user

TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}
DONE = [
    greet(),
    user("finish task_1"),
    call("update_task_status", {"task_id": "task_1", "status": "completed"}),
    result(TASK_1),
    say("Done."),
]
USAGE = {  # PR 454: one aggregated record per (provider, model, component, billable)
    "records": [
        {
            "provider": "openai",
            "model": "gpt-realtime",
            "component": "realtime",
            "semantics": "delta",
            "scope_id": None,
            "tick_number": None,
            "billable": True,
            "input_tokens": 1200,
            "output_tokens": 300,
            "input_audio_tokens": 900,
            "raw": None,
        },
        {"provider": "deepgram", "model": "nova-3", "component": "stt", "billable": True, "audio_input_seconds": 41.5},
    ],
    "cost": None,
    "cost_breakdown": {"realtime:openai/gpt-realtime": 0.0123},
    "pricing_version": "2026-07-01",
    "num_raw_records": 17,
}
PROVENANCE = {  # PR 467's RewardInfo fields
    "evaluation_mode": "replay",
    "state_source": "replayed",
    "replayed_actions": [
        {"source": "trajectory", "tool_call": {"id": "c1", "name": "update_task_status", "arguments": {}}},
        {"source": "reference", "tool_call": {"id": "", "name": "update_task_status", "arguments": {}}},
        {"source": "reference", "tool_call": {"id": "", "name": "create_task", "arguments": {}}},
    ],
    "warnings": ["strict_replay=False: recorded tool outputs were not required to match"],
}
FAILED_JUDGE = "Evaluation failed: could not parse LLM response after 3 attempts. Error: Expecting value"


def _newer_run(tmp_path: Path, name: str = "newer.json", bom: bool = False, indent: int | None = 2) -> Path:
    path = results_file(tmp_path / name, DONE + [user("I can't go on. ###OUT-OF-SCOPE###")])
    data = json.loads(path.read_text())
    data["info"]["judge_llm"] = "gpt-5.2"
    data["info"]["judge_llm_args"] = {"temperature": 0.0}
    sim = data["simulations"][0]
    sim["agent_cost"] = None
    sim["agent_usage"] = USAGE
    sim["reward_info"] = {
        "reward": 0.0,
        "db_check": {"db_match": True, "db_reward": 1.0},
        "nl_assertions": [{"nl_assertion": "The agent was polite", "met": False, "justification": FAILED_JUDGE}],
        "reward_basis": ["DB"],
        **PROVENANCE,
    }
    text = json.dumps(data, indent=indent)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_agent_cost_null_is_unpriced_not_zero() -> None:
    assert agent_cost_state(SimulationRun.model_validate({"agent_cost": None})) == UNPRICED
    assert agent_cost_state(SimulationRun.model_validate({})) == NOT_RECORDED
    assert agent_cost_state(SimulationRun.model_validate({"agent_cost": 0.0})) == PRICED
    assert raw_agent_cost({"agent_cost": None}) == (UNPRICED, None)
    assert raw_agent_cost({}) == (NOT_RECORDED, None) and raw_agent_cost({"agent_cost": 2}) == (PRICED, 2.0)
    summary = CostSummary.of([(PRICED, 0.02), (PRICED, 0.04), (UNPRICED, None), (NOT_RECORDED, None)])
    assert summary.mean == 0.03 and summary.unpriced == 1
    assert summary.text() == "agent cost: avg $0.0300 over 2 priced; 1 unpriced (left out, not $0)"


def test_agent_usage_is_read_tolerantly() -> None:
    usage = read_agent_usage({"agent_usage": USAGE})
    assert usage is not None and [line.label for line in usage.lines] == [
        "realtime:openai/gpt-realtime",
        "stt:deepgram/nova-3",
    ]
    assert usage.lines[0].meters == {"input_tokens": 1200.0, "output_tokens": 300.0, "input_audio_tokens": 900.0}
    assert usage.cost is None and usage.pricing_version == "2026-07-01" and usage.raw_records == 17
    assert read_agent_usage({"agent_usage": None}) is None
    odd = read_agent_usage(
        {"agent_usage": {"records": ["x", {"provider": 3}], "cost_breakdown": [1], "num_raw_records": True}}
    )
    assert odd is not None and len(odd.lines) == 1 and len(odd.problems) == 2 and odd.raw_records is None
    wrong_shape = read_agent_usage({"agent_usage": "nope"})
    assert wrong_shape is not None and wrong_shape.problems  # a wrong shape is a problem line, not an exception
    infinite = read_agent_usage({"agent_usage": {"records": [{"input_tokens": float("inf")}]}})
    assert infinite is not None and infinite.tokens is None


def test_eval_shows_the_newer_fields_in_text_and_json(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _newer_run(tmp_path)
    main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    sim, file = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    recorded = sim["recorded"]
    assert recorded["agent_cost_state"] == UNPRICED and recorded["agent_usage"]["pricing_version"] == "2026-07-01"
    assert recorded["provenance"]["replayed_actions"] == {"trajectory": 1, "reference": 2}
    assert recorded["judge_failures"] == ["The agent was polite"] and recorded["out_of_scope_stop"] is True
    issues = {i["kind"]: i for i in sim["explanation"]["recording"]["issues"]}
    assert issues["judge_failure"]["inconsistent"] is False and "tau2-bench#469" in issues["judge_failure"]["message"]
    assert sim["diagnostics"]["counts"]["out_of_scope_stop"] == 1
    assert file["recorded_costs"] == {"priced": 0, "unpriced": 1, "not_recorded": 0, "avg_agent_cost": None}
    assert file["judge_llm"] == "gpt-5.2 (temperature 0)"
    main(["eval", str(path), "--tau2-data", str(tau2_data)])
    text = capsys.readouterr().out
    for line in (
        "recorded agent cost: unpriced (agent_cost null: not $0)",
        "recorded agent usage: 2 records (realtime:openai/gpt-realtime, stt:deepgram/nova-3), cost unpriced, "
        "pricing 2026-07-01",
        "recorded reward provenance: evaluation replay, state replayed, 3 replayed actions (1 trajectory, 2 reference)",
        "provenance warning: strict_replay=False",
        "recording note: the recorded NL verdicts are a judge failure",
        "out_of_scope_stop ×1",
        "recorded agent cost: none priced; 1 unpriced (left out, not $0)",
        "recorded judge: gpt-5.2 (temperature 0)",
    ):
        assert line in text, line


def test_the_reward_tab_shows_them_as_recorded(tmp_path: Path) -> None:
    sim = open_run(_newer_run(tmp_path)).simulation(0)
    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(render_recorded(sim, judge=recorded_judge({"judge_llm": "gpt-5.2"})))
    text = console.export_text()
    assert "agent unpriced" in text and "$0.00" not in text
    assert "agent usage: 2 records" in text and "judge: gpt-5.2" in text
    assert "judge failure, not the agent's (tau2-bench#469)" in text
    assert "provenance: evaluation replay, state replayed" in text and "warning: strict_replay=False" in text
    assert "###OUT-OF-SCOPE###" in text and "tau2-bench#517" in text


def test_absent_fields_are_never_an_error(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(tmp_path / "plain.json", DONE)  # tau2 1.0.1's fields only
    extras = RecordedExtras.of(open_run(path).simulation(0))
    assert extras.lines() == [] and extras.usage is None and not extras.provenance.present
    assert extras.judge_failures == [] and extras.out_of_scope is False and extras.cost_state == NOT_RECORDED
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) == 0
    text = capsys.readouterr().out
    assert "recorded agent" not in text and "provenance" not in text and "judge" not in text


def test_the_out_of_scope_stop_is_a_registered_flag() -> None:
    detector = DETECTORS["out_of_scope_stop"]
    assert detector.letter == "O" and "OUT-OF-SCOPE" in detector.description


def test_a_byte_order_mark_is_read_past_whole_and_streamed(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = open_run(_newer_run(tmp_path, "bom.json", bom=True))
    extra = whole.simulation(0).model_extra  # agent_usage: a field tau2 added after our model
    assert extra is not None
    assert extra["agent_usage"] == USAGE and whole.raw_info["judge_llm"] == "gpt-5.2"
    before = runtime.configure(stream_bytes=1)
    try:
        streamed = open_run(_newer_run(tmp_path, "bom_streamed.json", bom=True))
    finally:
        runtime.restore(before)
    assert isinstance(streamed.raw_sims, SpanSims) and streamed.simulation(0).id == "sim-1"
    compact = _newer_run(tmp_path, "bom_compact.json", bom=True, indent=None)
    assert main(["replay", str(compact), "--json", "--tau2-data", str(tau2_data)]) == 0
    assert json.loads(capsys.readouterr().out)["sim"] == "sim-1"


def test_a_byte_order_mark_in_a_scorer_sidecar_and_a_notes_file(tmp_path: Path) -> None:
    from tau_tui.evaluate.scorer import load_scorer_config
    from tau_tui.model.notes import NoteBook

    sidecar = tmp_path / "run.scorer.json"
    sidecar.write_bytes(b"\xef\xbb\xbf" + json.dumps({"tasks": {}}).encode())
    assert load_scorer_config(sidecar) is not None
    run = results_file(tmp_path / "run.json", DONE)
    book = NoteBook(run)
    book.add("sim-1", "agent", "policy_violation", "first")
    notes_file = book.path
    notes_file.write_bytes(b"\xef\xbb\xbf" + notes_file.read_bytes())
    assert [n.text for n in NoteBook(run).notes] == ["first"]


async def test_the_metrics_screen_counts_unpriced_costs_apart_and_names_the_judge(
    tmp_path: Path, tau2_data: Path
) -> None:
    from textual.widgets import Static

    from tau_tui.tui.screens.metrics import MetricsScreen
    from tests.tui.conftest import build_app, settle

    path = _newer_run(tmp_path)
    app = build_app([path], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MetricsScreen) and screen.costs is not None and screen.costs.unpriced == 1
        console = Console(width=150, record=True, file=io.StringIO())
        console.print(screen.query_one("#metrics-terminations", Static).content)
        side = console.export_text().replace("\n", " ")
        assert "1 unpriced (left out, not $0)" in side and "judge: gpt-5.2 (temperature 0)" in side
