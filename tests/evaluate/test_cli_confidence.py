"""Confidence beside the metrics of ``tau-tui eval``: bootstrap intervals, Wilson, flip rate, noise floor, seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau_tui.cli import main
from tests.conftest import CORPUS

SOLO_4 = (
    CORPUS / "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
)


@pytest.mark.corpus
def test_eval_json_file_record_carries_confidence(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(SOLO_4.read_text())
    code = main(["eval", "--tau2-data", str(tau2_data), "--json", "--seed", "9", str(SOLO_4)])
    out, _ = capsys.readouterr()
    record = [json.loads(line) for line in out.splitlines()][-1]
    assert record["kind"] == "file" and code == 0
    conf = record["confidence"]
    # 16 of 20 pass: 4 tasks always pass, one never does (counted from the file)
    passes = sum(s["reward_info"]["reward"] == 1.0 for s in data["simulations"])
    assert passes == 16
    assert conf["avg_reward"]["estimate"] == pytest.approx(0.8)
    assert conf["avg_reward"]["seed"] == 9 and conf["n_tasks"] == 5
    assert set(conf["pass_hat_k"]) == {"1", "2", "3", "4"}
    assert conf["success_rate"]["method"] == "wilson"
    assert conf["flip_rate"] == {"tasks_with_trials": 5, "tasks_flipping": 0, "mean_pairwise": 0.0}
    assert conf["noise_floor"]["points"] == pytest.approx(0.0)
    # the bootstrap interval over 5 tasks is far wider than Wilson's over 20 simulations taken as independent
    width = conf["avg_reward"]["high"] - conf["avg_reward"]["low"]
    assert width > conf["success_rate"]["high"] - conf["success_rate"]["low"]
    assert record["recorded_confidence"]["avg_reward"]["estimate"] == pytest.approx(0.8)


@pytest.mark.corpus
def test_eval_text_prints_the_seed_and_the_noise_floor(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = json.loads(SOLO_4.read_text())
    flipped = next(s for s in data["simulations"] if "airplane_mode_on|data_mode_off" in s["task_id"])
    flipped["messages"] = flipped["messages"][:1]  # nothing done: this trial now fails on replay
    path = tmp_path / "flipped.json"
    path.write_text(json.dumps(data))
    main(["eval", "--tau2-data", str(tau2_data), str(path)])
    out, _ = capsys.readouterr()
    assert "bootstrap seed 0, 2000 resamples" in out
    assert "flip rate: 1/5 tasks mixed pass/fail across trials" in out
    # one task of 5 with rewards [0,1,1,1]: variance 0.25, v = 0.05: 1.96 * sqrt(2 * 0.05 / 5) = 27.7 points
    assert "differences under 27.7 points are within trial-to-trial noise" in out
