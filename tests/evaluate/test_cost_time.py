"""Cost and time of a run: ``eval --json``'s ``cost``, ``duration`` and ``tokens`` equal the recorded sums."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.evaluate.cost_time import CostTime, SimCostTime, percentile
from tests.conftest import CORPUS, CorpusPass
from tests.helpers import call, greet, result, results_file, say, user

AIRLINE = "sierra-research__tau2-bench__airline.json"
SOLO_4 = "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"


def hand_sums(path: Path) -> tuple[list[dict[str, Any]], list[float], list[float], list[float]]:
    """What the file records, summed by hand from its raw JSON."""
    sims = json.loads(path.read_text())["simulations"]
    agent = [s["agent_cost"] for s in sims if s.get("agent_cost") is not None]
    user_costs = [s["user_cost"] for s in sims if s.get("user_cost") is not None]
    durations = sorted(s["duration"] for s in sims if s.get("duration") is not None)
    return sims, agent, user_costs, durations


def hand_tokens(sims: list[dict[str, Any]]) -> dict[str, float] | None:
    """The messages' recorded ``usage`` summed by hand per side (None: no message records any)."""
    out: dict[str, float] = {}
    for sim in sims:
        for message in sim.get("messages") or []:
            side = {"assistant": "agent", "user": "user"}.get(message.get("role"))
            usage = message.get("usage")
            if side and isinstance(usage, dict):
                for part in ("prompt_tokens", "completion_tokens"):
                    if isinstance(usage.get(part), (int, float)):
                        out[f"{side}_{part}"] = out.get(f"{side}_{part}", 0) + usage[part]
    return out or None


def _tokens_without_totals(tokens: dict[str, Any] | None) -> dict[str, Any] | None:
    if tokens is None:
        return None
    return {k: v for k, v in tokens.items() if k not in ("total_tokens", "per_solved_task", "simulations")} or None


def nearest_ranks(values: Sequence[float], q: float) -> float:
    """The linear-between-ranks quantile, written out by hand."""
    position = (len(values) - 1) * q
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


@pytest.mark.corpus
@pytest.mark.parametrize("name", [AIRLINE, SOLO_4])
def test_eval_file_record_carries_the_recorded_cost_and_duration(
    name: str, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CORPUS / name
    main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    sims_out = [line for line in lines if line["kind"] == "simulation"]
    (file,) = [line for line in lines if line["kind"] == "file"]
    sims, agent, user_costs, durations = hand_sums(path)
    cost, duration = file["cost"], file["duration"]
    assert cost["agent_usd"] == pytest.approx(sum(agent))
    assert cost["user_usd"] == pytest.approx(sum(user_costs))
    assert cost["total_usd"] == pytest.approx(sum(agent) + sum(user_costs))
    assert cost["unpriced"] == len(sims) - len(agent) == 0
    assert cost["per_simulation_usd"] == pytest.approx((sum(agent) + sum(user_costs)) / len(agent))
    solved = sum(1 for s in sims_out if s["reward"] is not None and s["reward"] >= 1 - 1e-6)
    assert cost["solved"] == solved
    assert cost["per_solved_task_usd"] == pytest.approx((sum(agent) + sum(user_costs)) / solved)
    assert duration["total_s"] == pytest.approx(sum(durations))
    assert duration["mean_s"] == pytest.approx(sum(durations) / len(durations))
    assert duration["p50_s"] == pytest.approx(nearest_ranks(durations, 0.5))
    assert duration["p95_s"] == pytest.approx(nearest_ranks(durations, 0.95))
    assert _tokens_without_totals(file["tokens"]) == hand_tokens(sims)  # the messages' usage, per side


def test_null_agent_cost_is_unpriced_not_zero(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One priced simulation, one with ``agent_cost: null`` and ``agent_usage`` tokens: the sum is the priced one,
    the other is counted unpriced, and no cost per solved task is claimed from a partial sum."""
    messages = [
        greet(),
        user("finish task_1"),
        call("update_task_status", {"task_id": "task_1", "status": "completed"}),
        result({"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}),
        say("Done."),
    ]
    path = results_file(tmp_path / "run.json", messages)
    data = json.loads(path.read_text())
    first = data["simulations"][0]
    first.update(agent_cost=0.25, user_cost=0.05, duration=4.0)
    second = {**first, "id": "sim-2", "trial": 1, "agent_cost": None, "user_cost": None, "duration": 8.0}
    second["agent_usage"] = {
        "records": [
            {"component": "realtime", "input_tokens": 1000, "output_tokens": 200},
            {"component": "stt", "audio_input_seconds": 3.0},
            "not a record",
        ]
    }
    data["simulations"].append(second)
    path.write_text(json.dumps(data))
    main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    file = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert file["cost"]["agent_usd"] == 0.25 and file["cost"]["user_usd"] == 0.05
    assert file["cost"]["total_usd"] == pytest.approx(0.30) and file["cost"]["unpriced"] == 1
    assert file["cost"]["per_simulation_usd"] == pytest.approx(0.30)  # over the one priced simulation
    assert file["cost"]["solved"] == 2 and file["cost"]["per_solved_task_usd"] is None
    assert file["duration"]["total_s"] == 12.0 and file["duration"]["p50_s"] == 6.0
    assert file["tokens"] == {
        "input_tokens": 1000.0,
        "output_tokens": 200.0,
        "total_tokens": 1200.0,
        "per_solved_task": None,  # two simulations record no tokens: a partial sum would understate it
        "simulations": 1,
    }
    main(["eval", str(path), "--tau2-data", str(tau2_data)])
    text = capsys.readouterr().out
    assert "recorded cost $0.3000 (agent $0.2500; user $0.0500; 1 unpriced, not $0)" in text
    assert "tokens input 1,000, output 200" in text


def test_all_unpriced_is_null_and_wrong_values_are_ignored() -> None:
    spends = [SimCostTime.of_raw({"agent_cost": None, "duration": -1}), SimCostTime.of_raw({"agent_cost": "1"})]
    spends.append(SimCostTime.of_raw("not a simulation"))
    summary = CostTime.of(spends, solved=1)
    assert summary.cost_json()["agent_usd"] is None and summary.total_usd is None and summary.unpriced == 3
    assert summary.per_simulation_usd is None and summary.duration_json()["total_s"] is None
    assert SimCostTime.of_raw({"duration": math.inf, "agent_cost": True}) == SimCostTime()


def test_percentile_is_linear_between_ranks() -> None:
    assert percentile([], 0.5) is None
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([float(v) for v in range(1, 21)], 0.95) == pytest.approx(19.05)


@pytest.mark.corpus
def test_compare_shows_each_sides_recorded_cost_and_time(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = CORPUS / AIRLINE, CORPUS / SOLO_4
    main(["compare", str(a), str(b), "--recorded", "--json", "--tau2-data", str(tau2_data)])
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    for side, path in (("a_cost", a), ("b_cost", b)):
        _, agent, user_costs, durations = hand_sums(path)
        assert summary[side]["cost"]["agent_usd"] == pytest.approx(sum(agent))
        assert summary[side]["cost"]["total_usd"] == pytest.approx(sum(agent) + sum(user_costs))
        assert summary[side]["duration"]["total_s"] == pytest.approx(sum(durations))
    main(["compare", str(a), str(b), "--recorded", "--no-rows", "--tau2-data", str(tau2_data)])
    text = capsys.readouterr().out
    assert any(line.startswith("A: recorded cost $") for line in text.splitlines())


@pytest.mark.corpus
def test_recorded_only_file_carries_its_recorded_cost(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tau-bench v1 file records only the user simulator's cost: the agent's is unpriced, never $0."""
    path = CORPUS / "sierra-research__tau-bench__gpt-4o-airline.json"
    main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    file = json.loads(capsys.readouterr().out.splitlines()[-1])
    results = json.loads(path.read_text())
    assert file["recomputed"] is False
    assert file["cost"]["user_usd"] == pytest.approx(sum(r["info"].get("user_cost") or 0 for r in results))
    assert file["cost"]["agent_usd"] is None and file["cost"]["unpriced"] == len(results)
    assert file["cost"]["solved"] == sum(1 for r in results if r["reward"] == 1)
    assert file["duration"]["total_s"] is None and file["duration"]["timed"] == 0


@pytest.mark.corpus
def test_eval_tokens_are_the_sum_of_the_messages_usage_on_every_corpus_file(corpus_eval: CorpusPass) -> None:
    """On ``tau-tui eval --json`` of the whole corpus (the run's shared one, ``corpus_eval``)."""
    files = {
        Path(line["file"]).resolve(): line
        for line in map(json.loads, corpus_eval.stdout.decode().splitlines())
        if line["kind"] == "file"
    }
    runs = sorted(CORPUS.glob("*.json")) + sorted((CORPUS / "generated").glob("*.json"))
    checked = 0
    for path in runs:
        data = json.loads(path.read_text())
        if not (isinstance(data, dict) and isinstance(data.get("simulations"), list)):
            continue  # another format (tau-bench v1, a lone trajectory): its own tests
        record = files[path.resolve()]
        expected = hand_tokens(data["simulations"])
        assert _tokens_without_totals(record["tokens"]) == expected, path.name
        if expected:
            assert record["tokens"]["total_tokens"] == pytest.approx(sum(expected.values())), path.name
        checked += 1
    assert checked >= 20
