"""Numbers that are not what they look like (issue 23, class 4): ``²`` is not a digit we read, a recorded
1e308 is no reward, a trial of 2**63 fits no 64-bit column, and every numeric flag is range-checked."""

from __future__ import annotations

import copy
import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau_tui.calibrate.grid import task_order
from tau_tui.catalog.query import _natural
from tau_tui.cli import main
from tau_tui.config import ConfigError, id_order, resolve, whole_number
from tau_tui.evaluate.metrics import MetricOutcome, compute_metrics
from tau_tui.evaluate.stats import confidence, group_by_task
from tests.hostile import DEMO

LOOKALIKES = ["²", "١٢", "𝟓", "+5", "-1", "5.0", " ", ""]


def demo(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(json.loads(DEMO.read_text()))
    for index, fields in changes.items():
        data["simulations"][int(index[1:])].update(fields)
    return data


def write(tmp_path: Path, data: dict[str, Any], name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([*map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("text", LOOKALIKES)
def test_only_ascii_digits_are_whole_numbers(text: str) -> None:
    assert whole_number(text) is None
    assert id_order(text) == task_order(text) == _natural(text) == (1, 0, text)


def test_ids_as_numbers_sort_numerically_before_names() -> None:
    ids = ["10", "²", "2", "task", "١٢"]
    assert sorted(ids, key=id_order) == ["2", "10", "task", "²", "١٢"]
    assert whole_number("007") == 7 and whole_number("3", minimum=4) is None


@pytest.mark.parametrize("variable", ["TAU_TUI_STREAM_BYTES", "TAU_TUI_INDEX_WORKERS", "TAU_TUI_MAX_READ_BYTES"])
@pytest.mark.parametrize("value", ["²", "١٢", "-3"])
def test_integer_settings_refuse_lookalike_digits(tmp_path: Path, variable: str, value: str) -> None:
    environ = {variable: value, "TAU_TUI_CONFIG": str(tmp_path / "none.toml")}
    with pytest.raises(ConfigError, match=variable):
        resolve(None, environ)


@pytest.mark.parametrize("command", [["eval"], ["audit"], ["replay"], ["compare", DEMO]])
def test_a_superscript_task_id_is_a_name_everywhere(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], command: list[str | Path]
) -> None:
    path = write(tmp_path, demo(s0={"task_id": "²"}, s2={"task_id": "١٢"}))
    code, out, _ = cli(capsys, command[0], "--tau2-data", tau2_data, path, *command[1:])
    assert code in (0, 1) and out


def test_an_export_and_the_grid_with_lookalike_task_ids(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, demo(s0={"task_id": "²"}))
    code, _, _ = cli(capsys, "export", "--tau2-data", tau2_data, "--out", tmp_path / "out", path)
    assert code == 0
    with open(tmp_path / "out" / "grid.csv", newline="") as handle:
        assert "²" in {row["task_id"] for row in csv.DictReader(handle)}


# --- rewards no run can have ----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1e308, -1e308, math.inf, math.nan, 2.0])
def test_statistics_leave_out_rewards_no_run_can_have(bad: float) -> None:
    outcomes = [MetricOutcome("t", r, "user_stop") for r in (1.0, bad, 0.0, 1.0)]
    metrics = compute_metrics(outcomes)
    assert metrics.n_scored == 3 and metrics.n_unscored == 1
    assert metrics.avg_reward is not None
    assert math.isfinite(metrics.avg_reward) and all(math.isfinite(v) for v in metrics.pass_hat_k.values())
    by_task = group_by_task([(o.task_id, o.reward) for o in outcomes])
    assert by_task == {"t": [1.0, 0.0, 1.0]}
    noise = confidence(by_task, metrics.max_k).noise
    assert noise.points is not None and math.isfinite(noise.points)


@pytest.mark.parametrize("command", [["eval", "--json"], ["audit", "--json"], ["compare", "--recorded", "--json"]])
def test_a_recorded_1e308_is_unscored_in_every_command(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    data = demo(s1={"reward_info": {"reward": 1e308}}, s4={"reward_info": {"reward": -1e308}})
    path = write(tmp_path, data)
    extra = [path] if command[0] == "compare" else []
    code, out, _ = cli(capsys, command[0], "--tau2-data", tau2_data, *command[1:], path, *extra)
    assert code in (0, 1)
    assert "Infinity" not in out and "NaN" not in out
    for line in out.splitlines():
        assert all(abs(n) <= 1e6 for n in derived_numbers(json.loads(line)))


def derived_numbers(value: Any, key: str = "") -> Iterator[float]:
    """Every number of a JSON record but the recorded rewards it echoes (``compare --recorded``: ``reward``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if "recorded" not in k and k != "reward":
                yield from derived_numbers(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from derived_numbers(v, key)
    elif isinstance(value, float):
        yield value


def test_audit_effect_points_stay_finite(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, demo(s1={"reward_info": {"reward": 1e308}}))
    _, out, _ = cli(capsys, "audit", "--tau2-data", tau2_data, path)
    shown = out.replace(str(tmp_path), "TMP")  # a path may spell anything
    assert "nan" not in shown and "inf" not in shown


# --- a trial of 2**63 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "duckdb", "csv", "jsonl"])
def test_a_trial_beyond_64_bits_is_left_empty_with_a_line_in_every_format(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    pytest.importorskip("pyarrow" if fmt == "parquet" else "duckdb" if fmt == "duckdb" else "json")
    path = write(tmp_path, demo(s1={"trial": 2**63}))
    out_dir = tmp_path / "out"
    code, _, err = cli(capsys, "export", "--tau2-data", tau2_data, "--format", fmt, "--out", out_dir, path)
    assert code == 2  # some input did not fit: said, and the rest written
    assert err.count("does not fit a 64-bit integer; left empty") == 1
    if fmt == "parquet":
        import pyarrow.parquet as pq

        trials = pq.read_table(out_dir / "simulations.parquet").column("trial").to_pylist()
    elif fmt == "duckdb":
        import duckdb

        con = duckdb.connect(str(out_dir / "tau.duckdb"), read_only=True)
        trials = [row[0] for row in con.execute("SELECT trial FROM simulations").fetchall()]
        con.close()
    elif fmt == "csv":
        with open(out_dir / "simulations.csv", newline="") as handle:
            trials = [int(r["trial"]) if r["trial"] else None for r in csv.DictReader(handle)]
    else:
        trials = [json.loads(line)["trial"] for line in (out_dir / "simulations.jsonl").read_text().splitlines()]
    assert len(trials) == 5 and None in trials and 2**63 not in trials


# --- flags -----------------------------------------------------------------------------------------------

BAD_FLAGS: list[list[str | Path]] = [
    ["export", "--out", "o", "--min-reward", "nan", DEMO],
    ["export", "--out", "o", "--min-reward", "inf", DEMO],
    ["export", "--out", "o", "--min-reward", "1.5", DEMO],
    ["export", "--out", "o", "--min-reward", "-0.1", DEMO],
    ["compare", "--resamples", "0", DEMO, DEMO],
    ["compare", "--seed", "²", DEMO, DEMO],
    ["eval", "--seed", "-1", DEMO],
    ["eval", "--workers", "0", DEMO],
    ["replay", "--workers", "²", DEMO],
    ["notes", "add", DEMO, "--sim", "x", "--step", "²", "--text", "t"],
    ["run", "--domain", "mock", "--concurrency", "-1"],
    ["run", "--domain", "mock", "--num-trials", "١"],
    ["run", "--domain", "mock", "--timeout", "nan"],
    ["run", "--domain", "mock", "--timeout", "-1"],
    ["run", "--domain", "mock", "--max-steps", "²"],
    ["calibrate", "--num-trials", "0", DEMO],
    ["serve", "--port", "²", DEMO],
]


@pytest.mark.parametrize("args", BAD_FLAGS, ids=lambda a: " ".join(map(str, a[:4])))
def test_every_numeric_flag_is_range_checked(capsys: pytest.CaptureFixture[str], args: list[str | Path]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*map(str, args)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "expected a " in err and "Traceback" not in err


def test_min_reward_accepts_a_number_in_range(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(
        capsys, "export", "--tau2-data", tau2_data, "--format", "sft", "--min-reward", "0.5", "--out", tmp_path, DEMO
    )
    assert code == 0 and "reward ≥ 0.5" in out


# --- claims ------------------------------------------------------------------------------------------------


def submission(tmp_path: Path, results: dict[str, float]) -> Path:
    folder = tmp_path / "sub"
    (folder / "trajectories").mkdir(parents=True)
    (folder / "trajectories" / "mock.json").write_text(DEMO.read_text())
    meta = {"model_name": "m", "trajectory_files": {"mock": "mock.json"}, "results": {"mock": results}}
    (folder / "submission.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("command", ["audit", "eval"])
def test_a_claim_outside_0_100_is_warned_about_in_audit_as_in_eval(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    folder = submission(tmp_path, {"pass_1": 150, "pass_2": -5, "pass_3": 40.0, "pass_²": 10})
    code, out, err = cli(capsys, command, "--tau2-data", tau2_data, folder)
    assert code in (0, 1)
    assert "results.mock.pass_1 is not a percentage (0-100): ignored" in err
    assert "results.mock.pass_2 is not a percentage (0-100): ignored" in err
    shown = out.replace(str(tmp_path), "TMP")  # the path holds pytest's run number (pytest-150)
    assert "150" not in shown and "-5.0" not in shown


def test_audit_json_keeps_only_valid_claims(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = submission(tmp_path, {"pass_1": 150, "pass_3": 40.0, "pass_²": 10})
    _, out, _ = cli(capsys, "audit", "--tau2-data", tau2_data, "--json", folder)
    record = json.loads(out.splitlines()[-1])
    assert record["domains"]["mock"]["claimed"] == {"3": 40.0}
    assert any("pass_1 is not a percentage" in w for w in record["warnings"])
