"""``tau-tui compare A B C``: every run paired with the baseline exactly as the two-way compare pairs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.cli import main
from tau_tui.evaluate.stats import holm

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

AGENTS = (("gold", "scripted/gold"), ("flaky5", "scripted/flaky:0.5"), ("flaky3", "scripted/flaky:0.3"))


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory, tau2_data: Path) -> list[Path]:
    """Three k=2 runs of the mock tasks: the scripted gold agent and two flaky ones."""
    folder = tmp_path_factory.mktemp("many")
    paths = []
    for name, agent in AGENTS:
        out = folder / f"{name}.json"
        args = ["run", "--domain", "mock", "--agent-llm", agent, "--user-llm", "scripted/user", "-k", "2"]
        assert main([*args, "--out", str(out), "--tau2-data", str(tau2_data), "--quiet"]) == 0
        paths.append(out)
    return paths


def compare_json(
    capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object
) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["compare", "--tau2-data", str(tau2_data), *map(str, args), "--json"])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_many_way_pairs_are_the_two_way_pairs(
    three_runs: list[Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = three_runs
    code, lines, err = compare_json(capsys, tau2_data, a, b, c)
    pairs = [line for line in lines if line["kind"] == "pair"]
    for other in (b, c):
        _, two_way, _ = compare_json(capsys, tau2_data, a, other)
        expected = [line for line in two_way if line["kind"] == "pair"]
        assert expected and all(p["a_run"] == str(a) and p["b_run"] == str(other) for p in expected)
        assert [p for p in pairs if p["b_run"] == str(other)] == expected
        summary = next(r for r in lines[-1]["runs"] if r["source"] == str(other))
        assert summary["matrix"] == two_way[-1]["matrix"]
        assert summary["difference_vs_baseline"] == two_way[-1]["difference_b_minus_a"]
        assert summary["mcnemar_p"] == two_way[-1]["mcnemar"]["p_value"]
        assert summary["confidence"] == two_way[-1]["b_confidence"]
    assert len(pairs) == sum(1 for line in lines if line["kind"] == "pair")
    runs = lines[-1]["runs"]
    assert [r["baseline"] for r in runs] == [True, False, False] and lines[-1]["baseline"] == runs[0]["label"]
    assert [r["holm_p"] for r in runs] == holm([None, runs[1]["mcnemar_p"], runs[2]["mcnemar_p"]])
    assert runs[0]["matrix"] is None and runs[0]["holm_p"] is None
    significant = any(r["holm_p"] is not None and r["holm_p"] < 0.05 for r in runs)
    assert code == (1 if significant else 0), err


def test_task_matrix_lists_regressions_first(
    three_runs: list[Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = three_runs
    _, lines, _ = compare_json(capsys, tau2_data, a, b, c)
    tasks = [line for line in lines if line["kind"] == "task"]
    pairs = [line for line in lines if line["kind"] == "pair"]
    for task in tasks:  # each cell's regressions and improvements are its pairs' a_only and b_only
        for cell, source in zip(task["runs"][1:], (b, c), strict=True):
            mine = [p for p in pairs if p["task"] == task["task"] and p["b_run"] == str(source)]
            assert cell["regressions"] == sum(p["category"] == "a_only" for p in mine)
            assert cell["improvements"] == sum(p["category"] == "b_only" for p in mine)
        assert task["runs"][0]["attempts"] == 2  # k=2 in the baseline
    keys = [(-t["regressions"], -t["improvements"]) for t in tasks]
    assert keys == sorted(keys) and tasks[0]["regressions"] > 0  # the flaky agents drop what gold does


def test_baseline_flag_and_text_report(
    three_runs: list[Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = three_runs
    code, lines, _ = compare_json(capsys, tau2_data, a, b, c, "--baseline", b)
    runs = lines[-1]["runs"]
    assert [r["baseline"] for r in runs] == [False, True, False]
    assert {p["a_run"] for p in lines if p["kind"] == "pair"} == {str(b)}
    _, two_way, _ = compare_json(capsys, tau2_data, b, a)
    assert runs[0]["matrix"] == two_way[-1]["matrix"]
    main(["compare", "--tau2-data", str(tau2_data), str(a), str(b), str(c), "--recorded"])
    text = capsys.readouterr().out
    assert "baseline: [1]" in text and "Holm p" in text and "regressions" in text
    assert text.count("recorded cost") == 3
    code = main(["compare", "--tau2-data", str(tau2_data), str(a), str(b), "--baseline", "nope.json"])
    err = capsys.readouterr().err
    assert code == 2 and "--baseline nope.json: not one of the runs given" in err and "Traceback" not in err


def test_holm_adjustment() -> None:
    assert holm([0.01, None, 0.04, 0.03]) == [pytest.approx(0.03), None, pytest.approx(0.06), pytest.approx(0.06)]
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []


def test_load_runs_gives_one_labelled_side_per_file_and_opens_what_is_not_given(
    three_runs: list[Path], analyzer: Analyzer, tmp_path: Path
) -> None:
    from tau_tui.model.io import RunFileError, open_run
    from tau_tui.trust import load_runs, load_side

    a, b, _ = three_runs
    run_a = open_run(a)
    sides, errors = load_runs([(a, run_a), (b, None)], analyzer, recorded=True)
    assert errors == []
    assert [side.source for side in sides] == [str(a), str(b)]
    assert [side.label for side in sides] == [
        f"{run_a.agent_model or run_a.agent_implementation} (gold.json)",
        f"{open_run(b).agent_model or open_run(b).agent_implementation} (flaky5.json)",
    ]
    assert list(sides[1].outcomes) == load_side([(b, open_run(b))], analyzer, recorded=True)[0]
    with pytest.raises(RunFileError):
        load_runs([(tmp_path / "absent.json", None)], analyzer)
