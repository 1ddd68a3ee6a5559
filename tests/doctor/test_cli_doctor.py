"""``tau-tui doctor``: the command line over tau2's own data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau_tui.cli import main

pytestmark = pytest.mark.corpus


def test_doctor_domain_json_lines(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["doctor", "--domain", "mock", "--json", "--tau2-data", str(tau2_data)])
    out = capsys.readouterr()
    records = [json.loads(line) for line in out.out.splitlines()]
    assert status == 1
    assert {r["kind"] for r in records} == {"task_finding"}
    assert set(records[0]) == {
        *("kind", "domain", "task", "rule", "severity", "detail", "evidence"),
        *("reward_changes", "effect", "action", "advice"),  # the rule's advice (tests/doctor/test_doctor_advice.py)
    }
    unreachable = {r["task"] for r in records if r["rule"] == "unreachable"}
    assert unreachable == {"update_task_with_history_and_env_assertions", "update_task_with_user_tools"}
    assert "unknown_tool 0" in out.err  # every rule is counted, zeros too


def test_doctor_human_output_groups_by_rule(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["doctor", "--domain", "retail", "--task", "64", "--task", "10", "--tau2-data", str(tau2_data)])
    out = capsys.readouterr().out
    assert status == 1
    assert "gold_action_error (error, 1)" in out
    assert "task 64: reference action 6 exchange_delivered_order_items (64_6) raises" in out
    assert "passes_on_inaction (warning, 1)" in out and "task 10:" in out


def test_doctor_unknown_task_is_one_line(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--domain", "retail", "--task", "nope", "--tau2-data", str(tau2_data)]) == 2
    err = capsys.readouterr().err
    assert "no task 'nope'" in err and "Traceback" not in err


def test_doctor_on_bad_recordings_is_one_line_each(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"simulations": [')
    nowhere = tmp_path / "nowhere.json"
    nowhere.write_text(
        json.dumps(
            {
                "info": {"environment_info": {"domain_name": "no_such_domain"}},
                "tasks": [],
                "simulations": [{"id": "s", "task_id": "t", "messages": []}],
            }
        )
    )
    status = main(["doctor", "--tau2-data", str(tau2_data), str(broken), str(nowhere)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert any(str(broken) in line for line in err.splitlines())
    assert any(str(nowhere) in line and "no_such_domain" in line for line in err.splitlines())


def test_recorded_text_reaches_the_terminal_escaped(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = json.loads((tau2_data / "generated" / "tau2-gold_mock.json").read_text())
    sim = next(s for s in gold["simulations"] if s["id"] == "gold-mock-create_task_1-gold")
    sim["id"] = "evil\x1b[31m"
    sim["messages"] = [*sim["messages"][:2], {"role": "user", "content": "###STOP###\x1b]0;title\x07"}]
    raw = {**gold, "simulations": [sim]}
    raw.pop("simulation_index", None)
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(raw))
    main(["doctor", "--tau2-data", str(tau2_data), str(path)])
    out = capsys.readouterr()
    assert "sim evil" in out.out and "whose fault" in out.out
    assert "\x1b" not in out.out and "\x1b" not in out.err
