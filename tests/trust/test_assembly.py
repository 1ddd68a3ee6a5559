"""``trust.Sides``, the one assembly of a comparison: runs of the bundled recordings and of the tau2 corpus loaded
into labelled sides, compared two-way or against a baseline exactly as ``tau-tui compare`` and the report do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.cli import main
from tau_tui.model.io import RunFile, RunFileError, open_run
from tau_tui.report import build_report
from tau_tui.trust import Sides, compare_runs, labels_apart, load_side
from tests.conftest import CORPUS, ROOT

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

WAREHOUSE = ROOT / "recordings" / "warehouse.json"  # 3 simulations: gold, gold, gives up
AFTERSALES = ROOT / "recordings" / "aftersales.json"  # 3 simulations of another domain
TELECOM_A = CORPUS / "sierra-research__tau2-bench__gpt-4.1_telecom_default_gpt-4.1_1trials.json"
TELECOM_B = (
    CORPUS
    / "sierra-research__tau2-bench__ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_telecom_default_gpt-4.1_1trials.json"
)
WAREHOUSE_LABEL = "scripted/gold, scripted/gives-up (warehouse.json)"


def cli_json(capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object) -> list[dict[str, Any]]:
    """The ``--json`` objects of ``tau-tui compare``."""
    main(["compare", "--tau2-data", str(tau2_data), "--json", *map(str, args)])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def plain(data: dict[str, Any]) -> Any:
    """``data`` as its JSON line reads back."""
    return json.loads(json.dumps(data))


def given(*paths: Path) -> list[tuple[str, list[tuple[Path, RunFile]]]]:
    """Each path a run of its one opened file, named by the path."""
    return [(str(path), [(path, open_run(path))]) for path in paths]


@pytest.mark.corpus
def test_two_way_is_compare_runs_of_the_loaded_sides_and_the_clis(
    analyzer: Analyzer, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sides = Sides(analyzer, recorded=True)
    for source, files in given(TELECOM_A, TELECOM_B):
        side, problems = sides.add(source, files)
        assert problems == [] and side.source == source and len(side.outcomes) == 40
    assert sides.rewards == "recorded"
    a, b = (load_side([(path, open_run(path))], analyzer, recorded=True)[0] for path in (TELECOM_A, TELECOM_B))
    assert [list(side.outcomes) for side in sides.runs] == [a, b]
    result = sides.two_way(seed=3, resamples=200)
    expected = compare_runs(
        a,
        b,
        a_label="gpt-4.1 (" + TELECOM_A.name + ")",
        b_label=sides.runs[1].label,
        rewards="recorded",
        seed=3,
        resamples=200,
    )
    assert result.to_json() == expected.to_json() and result.rows == expected.rows
    assert result.matrix["both_pass"] + result.matrix["a_only"] == 18  # gpt-4.1 passes 18 of the 40 tasks
    assert result.difference is not None and result.difference.resamples == 200
    cli = cli_json(capsys, tau2_data, TELECOM_A, TELECOM_B, "--recorded", "--seed", 3, "--resamples", 200)
    assert cli[-1] == plain(result.to_json())  # the summary `tau-tui compare` prints is this comparison


def test_against_numbers_labels_apart_as_the_cli_and_the_report_do(
    analyzer: Analyzer, tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = given(WAREHOUSE, WAREHOUSE, AFTERSALES)
    sides = Sides(analyzer)
    for source, files in runs:
        sides.add(source, files)
    assert sides.rewards == "ours" and sides.errors == []
    assert [side.label for side in sides.runs] == [WAREHOUSE_LABEL, WAREHOUSE_LABEL, sides.runs[2].label]
    many = sides.against(0)
    assert many.labels == [f"{WAREHOUSE_LABEL} #1", f"{WAREHOUSE_LABEL} #2", sides.runs[2].label]
    assert many.labels == labels_apart([files for _, files in runs])
    assert many.runs[1].comparison is not None and many.runs[2].comparison is not None
    assert many.runs[1].comparison.matrix == {  # the same file twice: every attempt the same
        "both_pass": 2,
        "a_only": 0,
        "b_only": 0,
        "both_fail": 1,
        "not_comparable": 0,
    }
    assert many.runs[2].comparison.not_comparable == {"missing in A": 3, "missing in B": 3}  # other tasks
    assert many.rewards == "ours" and many.baseline == 0
    assert cli_json(capsys, tau2_data, WAREHOUSE, WAREHOUSE, AFTERSALES)[-1] == plain(many.to_json())
    report = build_report(runs, tmp_path / "report", analyzer)
    assert report.comparison is not None and report.comparison.to_json() == many.to_json()


def test_baseline_seed_and_resamples_reach_the_comparison(analyzer: Analyzer) -> None:
    sides = Sides(analyzer, recorded=True)
    for source, files in given(WAREHOUSE, AFTERSALES, WAREHOUSE):
        sides.add(source, files)
    many = sides.against(2, seed=5, resamples=50)
    assert many.baseline == 2 and many.seed == 5 and many.rewards == "recorded"
    assert [run.baseline for run in many.runs] == [False, False, True]
    assert all(cmp.a_label == many.labels[2] and cmp.seed == 5 for cmp in many.comparisons)
    same = many.runs[0].comparison
    assert same is not None and same.difference is not None and same.difference.resamples == 50
    with pytest.raises(ValueError, match="two runs, not 3"):
        sides.two_way()


def test_a_file_not_given_is_opened_and_a_missing_one_adds_nothing(analyzer: Analyzer, tmp_path: Path) -> None:
    sides = Sides(analyzer, recorded=True)
    side, problems = sides.add("warehouse", [(WAREHOUSE, None)])
    opened = load_side([(WAREHOUSE, open_run(WAREHOUSE))], analyzer, recorded=True)[0]
    assert problems == [] and list(side.outcomes) == opened and side.label == WAREHOUSE_LABEL
    with pytest.raises(RunFileError):
        sides.add("absent", [(tmp_path / "absent.json", None)])
    assert sides.runs == [side]


def test_a_run_of_several_files_is_one_side(analyzer: Analyzer) -> None:
    sides = Sides(analyzer, recorded=True)
    side, _ = sides.add("recordings", [(WAREHOUSE, None), (AFTERSALES, None)])
    models = "scripted/gold, scripted/gives-up, scripted/gold, scripted/hasty"  # each file's, in name order
    assert side.label == f"{models} (2 files)"
    assert len(side.outcomes) == 6 and {o.file for o in side.outcomes} == {WAREHOUSE, AFTERSALES}
    assert labels_apart([[(WAREHOUSE, open_run(WAREHOUSE)), (AFTERSALES, open_run(AFTERSALES))]]) == [side.label]


def test_what_cannot_be_scored_is_each_runs_error_lines_and_the_two_ways(analyzer: Analyzer, tmp_path: Path) -> None:
    data = json.loads(WAREHOUSE.read_text())
    data["info"]["environment_info"]["domain_name"] = "nosuchdomain"  # no domain to replay it in
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps(data))
    sides = Sides(analyzer)
    nothing, problems = sides.add(str(unknown), [(unknown, None)])
    assert nothing.outcomes == [] and len(problems) == 1 and "--recorded compares its recorded rewards" in problems[0]
    warehouse, none = sides.add(str(WAREHOUSE), [(WAREHOUSE, None)])
    assert none == [] and len(warehouse.outcomes) == 3
    assert sides.errors == problems
    result = sides.two_way()
    assert result.errors == problems and result.not_comparable == {"missing in A": 3}
    recorded = Sides(analyzer, recorded=True)  # nothing replayed: its recorded rewards are compared
    assert recorded.add(str(unknown), [(unknown, None)])[1] == [] and len(recorded.runs[0].outcomes) == 3
