"""``tau-tui compare``: the matrix counted by hand on corpus files and on a hand-edited pair, the statistics."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.evaluate.stats import mcnemar_exact
from tests.conftest import CORPUS

RETAIL_A = "sierra-research__tau2-bench__gpt-4.1_retail_defautl_gpt-4.1_1trials.json"
RETAIL_B = "sierra-research__tau2-bench__ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_retail_default_gpt-4.1_1trials.json"
TELECOM_A = "sierra-research__tau2-bench__gpt-4.1_telecom_default_gpt-4.1_1trials.json"
TELECOM_B = "sierra-research__tau2-bench__ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_telecom_default_gpt-4.1_1trials.json"
SOLO_4 = "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"


def compare_cli(capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object) -> tuple[int, str, str]:
    code = main(["compare", "--tau2-data", str(tau2_data), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def hand_count(a_path: Path, b_path: Path) -> tuple[dict[str, int], int]:
    """The matrix counted straight from the raw JSON (recorded rewards, one trial per task)."""

    def rewards(path: Path) -> dict[str, float | None]:
        data = json.loads(path.read_text())
        return {s["task_id"]: s["reward_info"]["reward"] for s in data["simulations"]}

    a, b = rewards(a_path), rewards(b_path)
    counts = {"both_pass": 0, "a_only": 0, "b_only": 0, "both_fail": 0}
    for task in set(a) & set(b):
        pa, pb = a[task] == 1.0, b[task] == 1.0
        counts["both_pass" if pa and pb else "a_only" if pa else "b_only" if pb else "both_fail"] += 1
    return counts, len(set(a) ^ set(b))


@pytest.mark.corpus
@pytest.mark.parametrize(
    "pair, recorded", [((RETAIL_A, RETAIL_B), True), ((TELECOM_A, TELECOM_B), True), ((TELECOM_A, TELECOM_B), False)]
)
def test_matrix_of_two_corpus_files_equals_the_hand_count(
    pair: tuple[str, str], recorded: bool, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CORPUS / pair[0], CORPUS / pair[1]
    flags = ["--recorded"] if recorded else []
    code, out, err = compare_cli(capsys, tau2_data, a, b, "--json", *flags)
    lines = [json.loads(line) for line in out.splitlines()]
    summary = lines[-1]
    expected, unmatched = hand_count(a, b)
    assert {k: summary["matrix"][k] for k in expected} == expected
    assert summary["matrix"]["not_comparable"] == unmatched == 0
    assert summary["rewards"] == ("recorded" if recorded else "ours")
    assert summary["mcnemar"]["p_value"] == pytest.approx(mcnemar_exact(expected["a_only"], expected["b_only"]))
    assert summary["difference_b_minus_a"]["seed"] == 0
    assert len([line for line in lines if line["kind"] == "pair"]) == sum(expected.values())
    # exit 1 exactly when McNemar says the difference is significant at 5%
    assert code == (1 if summary["mcnemar"]["p_value"] < 0.05 else 0), err


@pytest.mark.corpus
def test_telecom_pair_text_report(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = compare_cli(capsys, tau2_data, CORPUS / TELECOM_A, CORPUS / TELECOM_B)
    # hand count: gpt-4.1 passes 18 of 40, the fine-tuned model 30; every task gpt-4.1 passes, the other does too
    assert "A pass            18       0" in out
    assert "A fail            12      10" in out
    assert "p = 0.0004883" in out  # 2 / 2**12
    assert "mean reward B − A: +30.0 points" in out and "seed 0" in out
    assert code == 1


@pytest.mark.corpus
def test_telecom_report_shows_every_task_id_apart(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Telecom ids share long prefixes: the rows shorten them keeping the part that tells them apart."""
    code, out, err = compare_cli(capsys, tau2_data, CORPUS / TELECOM_A, CORPUS / TELECOM_B, "--recorded")
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("task "))
    width = lines[head].index("#") - 4  # the task column, a space, then "#" right-aligned in 3
    shown = [line[:width].rstrip() for line in lines[head + 1 :]]
    ids = {s["task_id"] for s in json.loads((CORPUS / TELECOM_A).read_text())["simulations"]}
    assert len(shown) == len(ids) == 40
    assert len(set(shown)) == 40, [s for s in shown if shown.count(s) > 1]
    assert width <= 90 and max(len(task) for task in ids) > 90  # shortened, not widened
    for task in shown:  # each is one of the ids: its start, then (after "…") a part of it
        head_part, _, rest = task.partition("…")
        assert any(t.startswith(head_part) and all(piece in t for piece in rest.split("…")) for t in ids), task


AIRLINE_A = "sierra-research__tau2-bench__gpt-4.1_airline_default_gpt-4.1_1trials.json"


@pytest.mark.corpus
def test_compare_across_domains_says_so_once_and_never_calls_tasks_changed(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CORPUS / AIRLINE_A, CORPUS / RETAIL_A
    shared = {s["task_id"] for s in json.loads(a.read_text())["simulations"]} & {
        s["task_id"] for s in json.loads(b.read_text())["simulations"]
    }
    assert shared  # airline and retail both number their tasks from 0
    code, out, err = compare_cli(capsys, tau2_data, a, b, "--recorded", "--json")
    assert err.count("A is domain airline and B is domain retail") == 1, err
    lines = [json.loads(line) for line in out.splitlines()]
    summary = lines[-1]
    assert summary["domains"] == {"a": ["airline"], "b": ["retail"]}
    assert summary["not_comparable"]["different domain"] == len(shared)
    assert "task changed" not in summary["not_comparable"]
    assert {p["task"] for p in lines if p.get("reason") == "different domain"} == shared
    code, out, err = compare_cli(capsys, tau2_data, a, b, "--recorded")
    assert "task changed" not in out and f"{len(shared)} different domain" in out
    assert err.count("warning: A is domain airline and B is domain retail") == 1


@pytest.mark.corpus
def test_same_domain_gives_no_domain_warning(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = compare_cli(capsys, tau2_data, CORPUS / RETAIL_A, CORPUS / RETAIL_B, "--recorded", "--json")
    assert "domain" not in err
    assert json.loads(out.splitlines()[-1])["domains"] == {"a": ["retail"], "b": ["retail"]}


@pytest.fixture()
def edited_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A: the 4-trial solo file as recorded; B: the same, hand-edited (see the test for what changed)."""
    source = json.loads((CORPUS / SOLO_4).read_text())
    edited = copy.deepcopy(source)
    sims = edited["simulations"]

    def sim(task_part: str, trial: int) -> dict[str, Any]:
        return next(s for s in sims if task_part in s["task_id"] and s["trial"] == trial)

    for trial in (0, 1):  # data_saver task: all fail in A; B passes trials 0 and 1 -> b_only 2
        sim("data_saver_mode_on", trial)["reward_info"]["reward"] = 1.0
    sim("airplane_mode_on|data_mode_off", 3)["reward_info"]["reward"] = 0.0  # -> a_only 1
    sims.remove(sim("data_mode_off|data_usage_exceeded", 2))  # -> missing in B 1
    sim("data_usage_exceeded|user_abroad", 1)["reward_info"]["reward"] = None  # -> unscored in B 1
    task = next(t for t in edited["tasks"] if "airplane_mode_on|user_abroad" in t["id"])
    task["description"] = {"purpose": "changed for the test", "relevant_policies": None, "notes": None}  # 4 changed
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(source))
    b.write_text(json.dumps(edited))
    return a, b


@pytest.mark.corpus
def test_hand_edited_pair_every_cell(
    edited_pair: tuple[Path, Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = compare_cli(capsys, tau2_data, *edited_pair, "--json", "--recorded")
    lines = [json.loads(line) for line in out.splitlines()]
    summary = lines[-1]
    # data_saver: 2 b_only + 2 both_fail; airplane|data_mode: 3 both_pass + 1 a_only;
    # data_mode|usage: 3 both_pass + 1 missing; usage|roaming: 3 both_pass + 1 unscored; airplane|roaming: 4 changed
    assert summary["matrix"] == {"both_pass": 9, "a_only": 1, "b_only": 2, "both_fail": 2, "not_comparable": 6}
    assert summary["not_comparable"] == {"missing in B": 1, "task changed": 4, "unscored in B": 1}
    assert summary["mcnemar"]["p_value"] == pytest.approx(1.0)  # 1 vs 2 discordant
    # 14 comparable pairs: B gains 2, loses 1 -> mean +1/14
    assert summary["difference_b_minus_a"]["estimate"] == pytest.approx(1 / 14)
    pairs = [line for line in lines if line["kind"] == "pair"]
    assert len(pairs) == 20
    missing = next(p for p in pairs if p["reason"] == "missing in B")
    assert missing["trial_index"] == 2 and missing["b"] is None
    # A's own confidence: 4 trials of 5 tasks, so the flip rate and noise floor are defined
    a_conf = summary["a_confidence"]
    assert a_conf["flip_rate"]["tasks_with_trials"] == 5 and a_conf["flip_rate"]["tasks_flipping"] == 0
    assert a_conf["noise_floor"]["points"] == pytest.approx(0.0)  # every task all-pass or all-fail in A
    assert code == 0


@pytest.mark.corpus
def test_seed_is_printed_and_reproduces_the_report(
    edited_pair: tuple[Path, Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out1, _ = compare_cli(capsys, tau2_data, *edited_pair, "--recorded", "--no-rows", "--seed", "1")
    _, out2, _ = compare_cli(capsys, tau2_data, *edited_pair, "--recorded", "--no-rows", "--seed", "1")
    assert out1 == out2 and "seed 1," in out1
    assert " cell" not in out1  # --no-rows: no per-pair table
    _, rows, _ = compare_cli(capsys, tau2_data, *edited_pair, "--recorded")
    assert " cell" in rows and "(task changed)" in rows


def test_unreadable_side_is_one_line(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = compare_cli(capsys, tau2_data, bad, bad)
    assert code == 2
    assert "Traceback" not in err and str(bad) in err


def test_gold_against_flaky_scripted_runs(tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two scripted runs of the mock domain: the gold agent passes everything, the flaky one drops actions."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for name, agent in (("gold", "scripted/gold"), ("flaky", "scripted/flaky:0.5")):
        saved = tmp_path / f"{name}.json"
        code = main(
            [
                "run",
                "--domain",
                "mock",
                "--agent-llm",
                agent,
                "--user-llm",
                "scripted/user",
                "-k",
                "2",
                "--out",
                str(saved),
                "--tau2-data",
                str(tau2_data),
                "--quiet",
            ]
        )
        capsys.readouterr()
        assert code == 0 and saved.is_file()
        runs[name] = json.loads(saved.read_text())["simulations"]

    # counted by hand from the two files (the gold agent cannot pass two of the mock tasks); a trial without a
    # reward is not comparable
    def reward(s: dict[str, Any]) -> float | None:
        return s["reward_info"]["reward"] if s.get("reward_info") else None

    gold = {(s["task_id"], s["trial"]): reward(s) for s in runs["gold"]}
    flaky = {(s["task_id"], s["trial"]): reward(s) for s in runs["flaky"]}
    assert set(gold) == set(flaky)
    expected = {"both_pass": 0, "a_only": 0, "b_only": 0, "both_fail": 0, "not_comparable": 0}
    for key in gold:
        a, b = gold[key], flaky[key]
        if a is None or b is None:
            expected["not_comparable"] += 1
        else:
            expected[
                "both_pass" if a == b == 1.0 else "a_only" if a == 1.0 else "b_only" if b == 1.0 else "both_fail"
            ] += 1
    assert expected["a_only"] > 0 and expected["both_pass"] > 0  # flaky drops actions gold performs
    code, out, err = compare_cli(
        capsys, tau2_data, tmp_path / "gold.json", tmp_path / "flaky.json", "--json", "--recorded"
    )
    summary = json.loads(out.splitlines()[-1])
    assert summary["matrix"] == expected, err
    assert summary["mcnemar"]["p_value"] == pytest.approx(mcnemar_exact(expected["a_only"], expected["b_only"]))
    comparable = [(a, b) for a, b in ((gold[k], flaky[k]) for k in gold) if a is not None and b is not None]
    assert summary["difference_b_minus_a"]["estimate"] == pytest.approx(
        sum(b - a for a, b in comparable) / len(comparable)
    )
    # the same matrix from our recomputed rewards
    code, out, err = compare_cli(capsys, tau2_data, tmp_path / "gold.json", tmp_path / "flaky.json", "--json")
    assert json.loads(out.splitlines()[-1])["matrix"] == expected, err
    # two trials per task: the gold agent is deterministic, it never flips
    assert summary["a_confidence"]["flip_rate"]["tasks_flipping"] == 0
