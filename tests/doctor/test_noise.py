"""The noise split: flip rates per reward component across k ≥ 2 trials, and the judge's own variance on one
trajectory (``--judge-repeats N``) against the local OpenAI-compatible server."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.cli import main
from tau_tui.doctor.noise import FlipRate, NoiseSplit
from tau_tui.doctor.recordings import examine
from tau_tui.evaluate.judge import LiteLLMJudge
from tau_tui.model.io import open_run

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tests.evaluate.support import FakeOpenAI

pytestmark = pytest.mark.corpus

ASSERTIONS = ["The task is created successfully", "The user is complimented"]


def _reply(*met: bool) -> str:
    return json.dumps(
        {
            "results": [
                {"expectedOutcome": a, "reasoning": "r", "metExpectation": m}
                for a, m in zip(ASSERTIONS, met, strict=True)
            ]
        }
    )


def _trials(tmp_path: Path, tau2_data: Path, sim_id: str, done: list[bool]) -> Path:
    gold = json.loads((tau2_data / "generated" / "tau2-gold_mock.json").read_text())
    base = next(s for s in gold["simulations"] if s["id"] == sim_id)
    sims = []
    for trial, complete in enumerate(done):
        sim = copy.deepcopy(base)
        sim.update(id=f"trial-{trial}", trial=trial)
        if not complete:
            sim["messages"] = [*sim["messages"][:2], {"role": "user", "content": "###STOP###"}]
        sims.append(sim)
    raw = {**gold, "simulations": sims}
    raw.pop("simulation_index", None)
    path = tmp_path / "trials.json"
    path.write_text(json.dumps(raw))
    return path


def test_flip_rate_counts_disagreeing_pairs() -> None:
    rate = FlipRate()
    rate.add([1.0, 1.0, 0.0, 0.0])
    rate.add([1.0])  # one trial: no pair
    assert (rate.flips, rate.pairs, rate.groups) == (4, 6, 1) and rate.rate == pytest.approx(4 / 6)


def test_trials_flip_per_component(tmp_path: Path, tau2_data: Path, analyzer: Analyzer) -> None:
    path = _trials(tmp_path, tau2_data, "gold-mock-create_task_1-gold", [True, True, False, False])
    noise = NoiseSplit()
    examine(analyzer, [open_run(path)], on_probe=noise.add)
    records = {r["component"]: r for r in noise.records()}
    assert records["DB"]["flip_rate"] == pytest.approx(4 / 6) and records["DB"]["groups"] == 1
    assert all(r["source"] == "trials" for r in records.values())


def test_judge_repeats_split_the_judges_variance_from_the_trials(
    tmp_path: Path,
    tau2_data: Path,
    analyzer: Analyzer,
    server: tuple[type[FakeOpenAI], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handler, base = server
    answers = itertools.cycle([_reply(True, True), _reply(True, False)])  # the judge flips on the second assertion
    original = handler.do_POST

    def answer(self: FakeOpenAI) -> None:
        handler.content = next(answers)
        original(self)

    monkeypatch.setattr(handler, "do_POST", answer)
    path = _trials(tmp_path, tau2_data, "gold-mock-create_task_1_nl_eval-gold", [True, True, True])
    judge = LiteLLMJudge("openai/test", api_base=base, api_key="sk-test", timeout=20)
    noise = NoiseSplit(judge, repeats=2)
    examine(analyzer, [open_run(path)], on_probe=noise.add)
    assert len(handler.requests) == 6  # 3 trajectories, asked twice each
    records = {(r["component"], r["source"]): r for r in noise.records()}
    judged = records[("NL_ASSERTION", "judge")]
    assert judged["groups"] == 6 and judged["pairs"] == 6 and judged["flip_rate"] == pytest.approx(3 / 6)
    # each trial's first answer is the same: across trials NL does not flip, the judge alone does
    assert records[("NL_ASSERTION", "trials")]["flip_rate"] == 0.0


def test_cli_judge_repeats(
    tmp_path: Path, tau2_data: Path, server: tuple[type[FakeOpenAI], str], capsys: pytest.CaptureFixture[str]
) -> None:
    handler, base = server
    handler.content = _reply(True, True)
    path = _trials(tmp_path, tau2_data, "gold-mock-create_task_1_nl_eval-gold", [True, True])
    args = ["doctor", "--json", "--tau2-data", str(tau2_data), "--judge", "openai/test", "--judge-api-base", base]
    main([*args, "--judge-repeats", "3", str(path)])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    judged = [r for r in records if r["kind"] == "noise" and r["source"] == "judge"]
    assert judged and judged[0]["repeats"] == 3 and judged[0]["flip_rate"] == 0.0
    assert len(handler.requests) == 6


def test_judge_repeats_need_a_judge(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trials(tmp_path, tau2_data, "gold-mock-create_task_1-gold", [True])
    assert main(["doctor", "--judge-repeats", "2", "--tau2-data", str(tau2_data), str(path)]) == 2
    assert "--judge-repeats needs a judge" in capsys.readouterr().err
