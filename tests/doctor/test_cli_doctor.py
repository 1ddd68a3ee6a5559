"""``tau-tui doctor``: the command line over tau2's own data."""

from __future__ import annotations

import json

import pytest

from tau_tui.cli import main

pytestmark = pytest.mark.corpus


def test_doctor_domain_json_lines(tau2_data, capsys):
    status = main(["doctor", "--domain", "mock", "--json", "--tau2-data", str(tau2_data)])
    out = capsys.readouterr()
    records = [json.loads(line) for line in out.out.splitlines()]
    assert status == 1
    assert {r["kind"] for r in records} == {"task_finding"}
    assert set(records[0]) == {"kind", "domain", "task", "rule", "severity", "detail", "evidence"}
    unreachable = {r["task"] for r in records if r["rule"] == "unreachable"}
    assert unreachable == {"update_task_with_history_and_env_assertions", "update_task_with_user_tools"}
    assert "unknown_tool 0" in out.err  # every rule is counted, zeros too


def test_doctor_human_output_groups_by_rule(tau2_data, capsys):
    status = main(["doctor", "--domain", "retail", "--task", "64", "--task", "10", "--tau2-data", str(tau2_data)])
    out = capsys.readouterr().out
    assert status == 1
    assert "gold_action_error (error, 1)" in out
    assert "task 64: reference action 6 exchange_delivered_order_items (64_6) raises" in out
    assert "passes_on_inaction (warning, 1)" in out and "task 10:" in out


def test_doctor_unknown_task_is_one_line(tau2_data, capsys):
    assert main(["doctor", "--domain", "retail", "--task", "nope", "--tau2-data", str(tau2_data)]) == 2
    err = capsys.readouterr().err
    assert "no task 'nope'" in err and "Traceback" not in err
