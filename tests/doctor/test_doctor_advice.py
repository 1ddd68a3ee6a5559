"""Doctor says what to do: every rule's effect on scores and advice, ``--markdown``, ``--fail-on`` and the exit
status, and why the failure clusters are empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.doctor.clusters import MINIMUM, why_no_clusters
from tau_tui.doctor.report import known_rules
from tau_tui.doctor.rules import RULES, SIMULATION, TASK, Reach, Remedy
from tau_tui.doctor.sim_rules import SIM_RULES
from tau_tui.doctor.task_rules import TASK_RULES

from ..conftest import CORPUS, ROOT

pytestmark = pytest.mark.corpus

IRONSHELL = CORPUS / "sierra-research__tau2-bench__ironshell_ironforge_o3_wave2.json"  # 10 airline sims
MOCK_DEMO = ROOT / "tests" / "fixtures" / "mock_recordings" / "mock_demo.json"


def test_one_registry_holds_every_rule_and_the_views_split_it_by_target() -> None:
    assert known_rules() == [*TASK_RULES, *SIM_RULES] and set(known_rules()) == set(RULES)
    assert {RULES[n].target for n in TASK_RULES} == {TASK} and {RULES[n].target for n in SIM_RULES} == {SIMULATION}
    assert set(TASK_RULES) >= {"unreachable", "gold_action_error"} and set(SIM_RULES) >= {"whose_fault"}


@pytest.mark.parametrize("name", list(RULES))
def test_every_rule_says_its_effect_what_to_do_and_what_to_file(name: str) -> None:
    advice = RULES[name].advice
    assert isinstance(advice.reach, Reach) and isinstance(advice.remedy, Remedy)
    # the effect says whose reward changes, and "no reward changes" exactly when it changes none
    assert advice.effect.startswith("no reward changes") == (advice.reach is Reach.NONE), advice.effect
    if advice.reach is Reach.EVERY_RUN:
        assert "every run of this task" in advice.effect
    if advice.reach is Reach.THIS_RUN:
        assert "this run" in advice.effect
    assert advice.todo.endswith(".") and len(advice.todo.split()) >= 8
    assert advice.todo_line.startswith(advice.remedy.label + ": ")
    # a paragraph to paste upstream: several sentences, no line breaks to mangle
    assert advice.upstream.count(". ") >= 1 and "\n" not in advice.upstream and len(advice.upstream) > 150


def test_json_lines_carry_the_rules_advice(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--domain", "mock", "--json", "--tau2-data", str(tau2_data)]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records
    for record in records:
        advice = RULES[record["rule"]].advice
        assert record["effect"] == advice.effect and record["advice"] == advice.todo
        assert record["action"] == advice.remedy.value and record["reward_changes"] == advice.reach.value


def test_text_output_says_effect_and_what_to_do_under_each_rule(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--domain", "mock", "--tau2-data", str(tau2_data)]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("unreachable (error, 2)"))
    assert lines[at + 1] == f"  effect: {RULES['unreachable'].advice.effect}"
    assert lines[at + 2] == "  what to do: fix the task: " + RULES["unreachable"].advice.todo


def test_markdown_on_a_corpus_file_is_ready_to_paste(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["doctor", "--markdown", "--tau2-data", str(tau2_data), str(IRONSHELL)])
    out = capsys.readouterr().out
    assert status == 1
    lines = out.splitlines()
    assert lines[0] == "## tau-tui doctor: recordings"
    headings = [line for line in lines if line.startswith("### ")]
    assert headings[0].startswith("### `user_simulator` (1 finding(s)): ")
    assert headings[1].startswith("### `whose_fault` (6 finding(s)): ")
    assert headings[-1] == "### Failure clusters"
    user = out[out.index("### `user_simulator`") : out.index("### `whose_fault`")]
    assert RULES["user_simulator"].advice.upstream in user  # the paragraph to file
    assert "- **Effect on scores:** can change the reward of this run" in user
    assert "- **What to do:** file it upstream: " in user
    # the finding: its file, simulation, task id and step, its detail and its evidence
    assert f"- in `{IRONSHELL}`:" in user
    assert "  - sim `c687108b-3a84-4c7f-8fe9-4ef5dbc29226` (task `35`, step 23): user_asked_beyond_task: " in user
    assert '    - evidence: `{"flag": "user_asked_beyond_task"}`' in user
    assert "None: 6 failed simulations of 9, but no 2 of them failed the same task the same way" in out
    assert "\x1b" not in out


def test_markdown_of_task_findings_names_tasks_and_evidence(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--domain", "mock", "--markdown", "--tau2-data", str(tau2_data)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("## tau-tui doctor: the task definitions of domain `mock`\n")
    assert "### `unreachable` (error, 2 finding(s)): the reference solution scores < 1" in out
    assert "- task `update_task_with_user_tools`: the reference solution scores 0: " in out
    assert '  - evidence: `{"gold_reward": 0.0, ' in out
    assert "mock: 10 task(s) checked;" in out  # the summary is part of the document, not an extra line after it


@pytest.mark.parametrize(
    ("fail_on", "status"),
    [([], 1), (["unreachable"], 1), (["gold_action_error"], 0), (["gold_action_error", "empty_component"], 1)],
)
def test_fail_on_counts_only_the_named_rules(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], fail_on: list[str], status: int
) -> None:
    args = ["doctor", "--domain", "mock", "--tau2-data", str(tau2_data)]
    assert main([*args, *(["--fail-on", *fail_on] if fail_on else [])]) == status


def test_fail_on_over_recordings(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["doctor", "--tau2-data", str(tau2_data), str(IRONSHELL)]
    assert main([*args, "--fail-on", "invariant_violated", "premature_end"]) == 0
    assert main([*args, "--fail-on", "whose_fault"]) == 1


def test_fail_on_an_unknown_rule_is_one_line_naming_the_known_rules(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--domain", "mock", "--fail-on", "unreachable", "bogus", "--tau2-data", str(tau2_data)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("tau-tui: --fail-on: no rule 'bogus'; known rules: unreachable, ")
    assert all(name in line for name in RULES) and captured.out == ""


def test_fail_on_swallowing_the_paths_says_where_they_go(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--tau2-data", str(tau2_data), "--fail-on", "whose_fault", str(IRONSHELL)]) == 2
    assert "a path? give PATH... before --fail-on" in capsys.readouterr().err


def test_help_documents_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 when nothing is found; 1 when there are findings" in text
    assert "--fail-on" in text and "2 when some input is unreadable or an argument is wrong" in text


def test_a_task_no_recording_has_is_bad_input(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As ``--domain D --task nope`` is: exit 2 and one line, not 0 for "nothing found"."""
    assert main(["doctor", "--tau2-data", str(tau2_data), "--task", "nope", str(IRONSHELL)]) == 2
    assert "no simulation of task 'nope' in the given files" in capsys.readouterr().err
    assert main(["doctor", "--tau2-data", str(tau2_data), "--task", "35", str(IRONSHELL)]) == 1


def test_why_the_clusters_are_empty() -> None:
    assert why_no_clusters(0, 0) == "no simulation was replayed, so there is nothing to cluster"
    assert why_no_clusters(5, 0) == "no failed simulations to cluster (5 checked, none failed)"
    assert why_no_clusters(5, 1) == f"only 1 failed simulation(s) of 5: a cluster needs {MINIMUM} or more failures"
    assert "but no 2 of them failed the same task the same way" in why_no_clusters(9, 4)


def test_the_text_output_says_why_there_is_no_cluster(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--tau2-data", str(tau2_data), str(MOCK_DEMO)]) == 1
    out = capsys.readouterr().out
    assert "failure clusters: none, only 1 failed simulation(s) of 5: a cluster needs 2 or more failures" in out
