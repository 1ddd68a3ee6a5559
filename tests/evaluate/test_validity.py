"""Validity beside every score: what of a run's simulations changes what its number means, said where the
number is shown (``eval``, ``compare`` two-way and N-way, ``report``; the TUI's in tests/tui/test_validity_ui.py).

The corpus's ToolOrchestra airline run is the case the issue names: 43 of its 50 simulations carry another
task's id (their recorded checks are another task's), so its recomputed 14 % grades them against tasks they did
not run."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.evaluate.cost_time import CostTime, SimCostTime, not_dollars
from tau_tui.evaluate.validity import SimValidity, Validity
from tests.conftest import CORPUS, ROOT

pytestmark = pytest.mark.corpus

ORCHESTRA = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"
GPT41 = CORPUS / "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json"
QWEN = CORPUS / "sierra-research__tau2-bench__qwen2.5-7b_airline_default_gpt-4.1-2025-04-14_1trials.json"
WRONG_ID = "43 of 50 simulations carry another task's id"


def _eval_json(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    main(["eval", str(path), "--json", "--tau2-data", str(CORPUS)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (file,) = [line for line in lines if line["kind"] == "file"]
    return [line for line in lines if line["kind"] == "simulation"], file


def test_eval_names_the_simulations_that_carry_another_tasks_id(capsys: pytest.CaptureFixture[str]) -> None:
    sims, file = _eval_json(ORCHESTRA, capsys)
    mislabelled = {
        s["sim"]
        for s in sims
        if any(i["kind"] == "mislabelled_task" and i["inconsistent"] for i in s["explanation"]["recording"]["issues"])
    }
    inconsistent = {s["sim"] for s in sims if s["explanation"]["recording"]["inconsistent"]}
    validity = file["validity"]
    assert len(mislabelled) == validity["wrong_task_id"] == 43
    assert set(validity["inconsistent"]) == inconsistent and len(inconsistent) == 47
    assert any(w.startswith(WRONG_ID) and "--recorded" in w for w in file["warnings"])
    main(["eval", str(ORCHESTRA), "--tau2-data", str(CORPUS)])
    text = capsys.readouterr().out
    block = text[text.index(": metrics over recomputed rewards") :]
    warning = block.index(f"⚠ warning: {WRONG_ID}")
    assert warning < block.index("avg reward 0.140")  # beside the score, above it


def test_compare_puts_the_warning_beside_the_difference(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", str(GPT41), str(ORCHESTRA), "--tau2-data", str(CORPUS), "--no-rows"])
    assert code == 1  # the difference is significant: it is the warnings that say what it rests on
    lines = capsys.readouterr().out.splitlines()
    delta = next(i for i, line in enumerate(lines) if line.startswith("mean reward B − A: -45.0 points"))
    warning = next(i for i, line in enumerate(lines) if line.startswith(f"warning: B: {WRONG_ID}"))
    assert warning in range(delta + 1, delta + 6)
    main(["compare", str(GPT41), str(ORCHESTRA), "--tau2-data", str(CORPUS), "--json"])
    record = json.loads(capsys.readouterr().out.splitlines()[-1])  # after the pairs
    assert record["validity"]["b"]["wrong_task_id"] == 43 and len(record["validity"]["b"]["inconsistent"]) == 47
    assert any(w.startswith(f"B: {WRONG_ID}") for w in record["warnings"])
    main(["compare", str(GPT41), str(ORCHESTRA), "--tau2-data", str(CORPUS), "--no-rows", "--recorded"])
    recorded = capsys.readouterr().out
    assert "--recorded scores the recorded rewards" not in recorded  # the recorded rewards are asked for already


def test_n_way_compare_marks_the_scores_and_deltas_it_affects(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(GPT41), str(ORCHESTRA), str(QWEN), "--tau2-data", str(CORPUS), "--no-rows"]
    assert main(argv) == 1  # significant differences
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("2 "))
    assert "-45.0 [-70.0, -25.0] ⚠" in row and "14.0% [6.0, 24.0] ⚠" in row
    assert any(line.startswith(f"warning: [2]: {WRONG_ID}") for line in lines)
    assert any(line.startswith("warning: [3]: 10 of 50 simulations ended early (agent_error 9") for line in lines)
    main([*argv, "--json"])
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["runs"][1]["validity"]["wrong_task_id"] == 43
    assert any(w.startswith(f"[2]: {WRONG_ID}") for w in record["warnings"])


def test_the_report_says_it_beside_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert main(["report", str(GPT41), str(ORCHESTRA), "--tau2-data", str(CORPUS), "--out", str(out)]) == 0
    page = html.unescape((out / "index.html").read_text())
    assert f"warning: [2]: {WRONG_ID}" in page


def test_one_simulations_facts() -> None:
    premature = SimValidity.of("s1", "t1", termination="max_steps", reward=0.0, agent_cost=0.1, duration=3.0)
    infra = SimValidity.of("s2", "t2", termination="infrastructure_error", reward=None)
    unscored = SimValidity.of("s3", "t3", termination="user_stop", reward=None, agent_cost=0.1, duration=1.0)
    assert premature.premature == "max_steps" and not premature.unscored and not premature.unpriced
    assert infra.infrastructure_error and not infra.unscored and infra.unpriced and infra.untimed
    assert unscored.unscored and unscored.premature is None
    validity = Validity.of([premature, infra, unscored, None])
    assert validity.simulations == 3 and not validity.clean
    assert validity.warnings() == [
        "1 of 3 simulations are infrastructure errors: left out of the score",
        "1 of 3 simulations ended early (max_steps 1): scored 0",
        "1 of 3 simulations unscored (no reward computable): left out of the score",
    ]
    assert Validity.of([SimValidity.of("s", "t", termination="user_stop", reward=1.0)]).clean


def test_costs_that_cannot_be_dollars_get_a_warning_not_a_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not_dollars("user_cost", [400.0, 1203.0]) is not None
    assert not_dollars("user_cost", [0.01, 0.2]) is None and not_dollars("agent_cost", [2.0, 1.0]) is None
    spend = CostTime.of([SimCostTime(user_usd=512.0), SimCostTime(user_usd=900.0)])
    assert spend.total_usd is None and spend.cost_json()["user_usd"] is None and "cannot be dollars" in spend.text()
    v1 = json.loads((CORPUS / "sierra-research__tau-bench__gpt-4o-airline.json").read_text())
    for i, sim in enumerate(v1):
        sim["info"]["user_cost"] = 400 + 7 * i  # whole numbers: tokens or cents, never dollars
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(v1))
    main(["eval", str(path), "--json", "--tau2-data", str(CORPUS)])
    (file,) = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["kind"] == "file"]
    assert file["cost"]["total_usd"] is None and file["cost"]["not_dollars"]
    assert any(w.startswith("costs: user_cost up to 1,793") for w in file["warnings"])
    main(["eval", str(path), "--tau2-data", str(CORPUS)])
    text = capsys.readouterr().out
    assert "⚠ warning: costs: user_cost" in text and "$1,793" not in text and "cost not given" in text


def test_a_per_task_export_keeps_its_cost_and_time_in_run_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((ROOT / "tests" / "fixtures" / "wild" / "per_task_export.json").read_text())
    data["run_info"].update(agent_cost=0.0123, user_cost=0.004, duration=31.5)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data))
    _, file = _eval_json(path, capsys)
    assert file["cost"]["agent_usd"] == pytest.approx(0.0123) and file["cost"]["unpriced"] == 0
    assert file["duration"]["total_s"] == 31.5 and file["validity"]["untimed"] == 0


def test_compare_of_a_side_without_its_domain_data_prints_no_half_empty_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(ORCHESTRA.read_text())
    data["info"]["environment_info"]["domain_name"] = "nosuchdomain"  # no tau2 data for it anywhere
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    code = main(["compare", str(GPT41), str(other), "--tau2-data", str(CORPUS)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "no simulation could be compared; nothing printed" in captured.err


def test_a_simulation_that_cannot_be_replayed_is_named_not_left_out_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(GPT41.read_text())
    data["simulations"][3]["messages"] = 5  # unreadable: no replay, no reward
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    _, file = _eval_json(path, capsys)
    assert file["validity"]["not_replayed"] == [data["simulations"][3]["id"]]
    assert "1 of 20 simulations not replayed: nothing recomputed for them" in file["warnings"]
    assert file["validity"]["unpriced"] == 0  # its recorded cost is still read
