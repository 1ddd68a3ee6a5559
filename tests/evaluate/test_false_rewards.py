"""Never a wrong reward: each shape of file seen in the wild where a recomputed reward would be false gets no
number from us, says why, and keeps its recorded reward (issue 36). Every file is built here from one real tau2
recording (the corpus's e2e airline baseline: recorded 1.0, which we recompute as 1.0)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.domains import DomainError, DomainRegistry
from tau_tui.model.io import open_run, scan_paths
from tests.conftest import CORPUS

BASELINE = CORPUS / "sierra-research__tau2-bench__e2e_airline_baseline.json"


@pytest.fixture
def baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BASELINE.read_text())
    return data


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[dict[str, Any]], str]:
    code = main([*map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.startswith("{")], err


def cli_text(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([*map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def sims(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("kind") == "simulation"]


def the_file(records: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = [r for r in records if r.get("kind") == "file"]
    return record


def test_the_baseline_is_recomputed_as_recorded(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the shapes below start from: a simulation we grade, and grade as tau2 does."""
    code, records, err = cli(capsys, "eval", "--json", write(tmp_path / "run.json.d" / "a.json", baseline))
    assert code == 0, err
    assert [(s["reward"], s["recorded_reward"]) for s in sims(records)] == [(1.0, 1.0)]


# --- a false pass: a fork's domain variant and its task fields ----------------------------------------------


def fork_run(baseline: dict[str, Any], domain: str = "airline-relaxed") -> dict[str, Any]:
    """A fork's run: its domain a changed-policy variant of airline, its task with other acceptable outcomes,
    the recording's own verdict 0.0 (the outcome fails the fork's stricter check)."""
    run = copy.deepcopy(baseline)
    run["info"]["environment_info"]["domain_name"] = domain
    criteria = run["tasks"][0]["evaluation_criteria"]
    criteria["acceptable_outcomes"] = [{"actions": [], "reward_basis": ["DB"]}]
    run["simulations"][0]["reward_info"]["reward"] = 0.0
    return run


def test_a_variant_of_a_domain_is_never_graded_as_that_domain(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "fork.json", fork_run(baseline))
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 2
    assert "unknown domain 'airline-relaxed'" in err and "not graded as airline" in err
    assert sims(records) == []  # no simulation given a reward of ours
    record = the_file(records)
    assert record["recomputed"] is False and record["metrics"] is None
    assert record["recorded_metrics"]["avg_reward"] == 0.0  # the recording's own verdict, said to be so
    assert "unknown domain 'airline-relaxed'" in record["note"]
    assert "Traceback" not in err

    code, out, err = cli_text(capsys, "eval", path, "--tau2-data", tau2_data)
    assert code == 2 and "metrics over the recorded rewards, not recomputed" in out and "avg reward 0.000" in out

    code, out, err = cli_text(capsys, "replay", path, "--tau2-data", tau2_data)
    assert code == 2 and "unknown domain 'airline-relaxed'" in err

    code, out, err = cli_text(capsys, "compare", path, BASELINE, "--tau2-data", tau2_data)
    assert code == 2 and "not graded as airline" in err and "--recorded compares its recorded rewards" in err
    code, out, err = cli_text(capsys, "compare", path, BASELINE, "--recorded", "--tau2-data", tau2_data)
    assert code == 0 and "rewards: recorded" in out


def test_the_registry_knows_a_variant_only_where_the_domain_declares_it(registry: DomainRegistry) -> None:
    with pytest.raises(DomainError, match="airline has no variants"):
        registry.resolve("airline-relaxed")
    with pytest.raises(DomainError, match="unknown domain 'telecom-relaxed'"):
        registry.resolve("telecom-relaxed")
    domain, variant = registry.resolve("telecom-workflow")  # tau2's own variant of telecom
    assert (domain.name, variant) == ("telecom", "workflow")
    assert registry.resolve("airline") == (registry.get("airline"), None)


FORK_PACKAGE = """
from tau_tui.domains import _import_domain_package, bundled_domain_dirs

_airline = _import_domain_package(next(d / "airline" for d in bundled_domain_dirs() if (d / "airline").is_dir()))


class RelaxedDomain(_airline.AirlineDomain):
    name = "airline-relaxed"

    def new_environment(self, solo=False, variant=None):
        env = super().new_environment(solo, variant)
        env.domain_name = self.name
        return env


DOMAIN = RelaxedDomain


def create(data_dir):
    return RelaxedDomain(data_dir)
"""


def test_a_variant_supplied_as_a_domain_of_its_own_is_graded_as_it(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fork's domain given with --domains (a package named as the variant, its data in a folder of that
    name) is what grades its runs, as the error line advises."""
    package = tmp_path / "domains" / "airline-relaxed"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FORK_PACKAGE)
    data = tmp_path / "data" / "domains"
    data.mkdir(parents=True)
    (data / "airline-relaxed").symlink_to(tau2_data / "domains" / "airline")
    run = copy.deepcopy(baseline)
    run["info"]["environment_info"]["domain_name"] = "airline-relaxed"
    path = write(tmp_path / "fork.json", run)
    code, records, err = cli(
        capsys, "eval", "--json", path, "--tau2-data", tmp_path / "data", "--domains", tmp_path / "domains"
    )
    assert code == 0, err
    assert [(s["domain"], s["reward"]) for s in sims(records)] == [("airline-relaxed", 1.0)]


def test_a_task_field_we_do_not_grade_makes_the_reward_not_computed(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy.deepcopy(baseline)
    run["tasks"][0]["evaluation_criteria"]["acceptable_outcomes"] = [{"actions": [], "reward_basis": ["DB"]}]
    run["simulations"][0]["reward_info"]["reward"] = 0.0
    path = write(tmp_path / "fork_tasks.json", run)
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    (sim,) = sims(records)
    assert sim["reward"] is None and sim["status"] == "ungraded_fields" and sim["recorded_reward"] == 0.0
    assert any("fields we do not grade: evaluation_criteria.acceptable_outcomes" in n for n in sim["notes"])
    validity = the_file(records)["validity"]
    assert validity["ungraded_fields"] == [sim["sim"]] and validity["unscored"] == []
    assert any("evaluation_criteria.acceptable_outcomes" in w for w in validity["warnings"])
    assert the_file(records)["metrics"]["avg_reward"] is None

    code, out, _ = cli_text(capsys, "eval", path, "--tau2-data", tau2_data)
    assert "not computed: the task has fields we do not grade: evaluation_criteria.acceptable_outcomes" in out
    assert "⚠ warning: 1 of 1 simulations ran tasks with fields we do not grade" in out


def test_which_task_fields_are_not_graded(baseline: dict[str, Any]) -> None:
    from tau_tui.model.tasks import Task, ungraded_fields

    task = baseline["tasks"][0]
    assert ungraded_fields(Task.model_validate(task)) == []
    bare = {**task, "acceptable_outcomes": [1], "annotations": {"x": 1}, "issues": ["typo"]}
    assert ungraded_fields(Task.model_validate(bare)) == ["acceptable_outcomes"]  # notes about a task grade nothing
    nested = copy.deepcopy(task)
    nested["evaluation_criteria"]["partial_credit"] = 0.5
    assert ungraded_fields(Task.model_validate(nested)) == ["evaluation_criteria.partial_credit"]


def test_tau2s_own_tasks_have_no_field_we_do_not_grade(tau2_data: Path) -> None:
    from tau_tui.model.tasks import Task, ungraded_fields

    for tasks_file in sorted((tau2_data / "domains").glob("*/tasks*.json")):
        for raw in json.loads(tasks_file.read_text()):
            assert ungraded_fields(Task.model_validate(raw)) == [], (tasks_file, raw.get("id"))


# --- a false fail: result rows without messages ---------------------------------------------------------------


def test_a_row_without_messages_keeps_its_recorded_reward(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy.deepcopy(baseline)
    run["simulations"][0]["messages"] = []
    summary = copy.deepcopy(baseline["simulations"][0])
    del summary["messages"]
    summary["id"] = "summary-row"
    run["simulations"].append(summary)
    path = write(tmp_path / "half_written.json", run)
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    rows = sims(records)
    assert [(s["reward"], s["recorded_reward"], s["status"]) for s in rows] == [(None, 1.0, "no_trajectory")] * 2
    record = the_file(records)
    assert record["validity"]["no_trajectory"] == [rows[0]["sim"], "summary-row"]
    assert record["metrics"]["avg_reward"] is None and record["recorded_metrics"]["avg_reward"] == 1.0
    code, out, _ = cli_text(capsys, "eval", path, "--tau2-data", tau2_data)
    assert "no trajectory: the recording holds no messages; its recorded reward is shown, not re-graded" in out
    assert "2 of 2 simulations have no trajectory" in out


def test_tau2s_failed_units_are_still_infrastructure_errors(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tau2 writes no messages for an episode that never ran: that stays an infrastructure error."""
    run = copy.deepcopy(baseline)
    sim = run["simulations"][0]
    sim.update(messages=[], termination_reason="infrastructure_error", reward_info=None)
    code, records, err = cli(capsys, "eval", "--json", write(tmp_path / "infra.json", run), "--tau2-data", tau2_data)
    assert code == 0, err
    validity = the_file(records)["validity"]
    assert validity["infrastructure_errors"] == [sim["id"]] and validity["no_trajectory"] == []


# --- a recorded reward its file calls a placeholder ----------------------------------------------------------


def test_a_placeholder_reward_is_flagged(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy.deepcopy(baseline)
    run["simulations"][0]["info"] = {"note": "reward_info is a placeholder; the grader did not run"}
    path = write(tmp_path / "placeholder.json", run)
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    validity = the_file(records)["validity"]
    assert validity["placeholder"] == [run["simulations"][0]["id"]]
    assert any("placeholders by the file's own info" in w and "grader did not run" in w for w in validity["warnings"])
    code, out, _ = cli_text(capsys, "compare", path, BASELINE, "--recorded", "--tau2-data", tau2_data)
    assert "placeholders by the file's own info" in out + _
    assert open_run(BASELINE).placeholder(0) is None


# --- shapes that open ---------------------------------------------------------------------------------------


def test_task_results_wrappers_open(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = copy.deepcopy(baseline["simulations"][0])
    task_id = sim.pop("task_id")
    del sim["reward_info"]
    wrapper = {
        "info": baseline["info"],
        "tasks": baseline["tasks"],
        "task_results": [
            {"task_id": task_id, "reward": 1.0, "trajectory": sim},
            {"task_id": task_id, "reward": 1.0, "trajectory": sim["messages"]},  # the messages alone
            {"task_id": task_id, "reward": 1.0},  # a summary row
        ],
    }
    path = write(tmp_path / "harness.json", wrapper)
    run = open_run(path)
    assert run.layout == "task_results" and [e.reward for e in run.entries] == [1.0, 1.0, 1.0]
    assert {e.task_id for e in run.entries} == {task_id}
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    got = [(s["reward"], s["recorded_reward"], s["status"]) for s in sims(records)]
    assert got == [(1.0, 1.0, "scored"), (1.0, 1.0, "scored"), (None, 1.0, "no_trajectory")]


def test_a_lone_submission_file_shows_its_claims(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "sub" / "submission.json",
        {
            "model_name": "M",
            "model_organization": "Org",
            "results": {"airline": {"pass_1": 55.0, "pass_2": 40.0, "cost": 0.12}, "retail": {"pass_1": 70.0}},
        },
    )
    code, records, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    (record,) = records
    assert record["kind"] == "submission" and record["trajectories"] is None and record["recomputed"] is False
    assert record["claims"]["airline"]["claimed_pass_hat_k"] == {"1": 0.55, "2": 0.4}
    assert "trajectories not here" in record["note"]
    code, out, err = cli_text(capsys, "eval", tmp_path / "sub", "--tau2-data", tau2_data)
    assert code == 0, err
    assert "submission M · Org, claims only" in out and "airline: claimed pass^k 1: 0.550, 2: 0.400" in out
    assert "trajectories not here" in out


def test_a_folder_with_an_index_beside_its_runs(
    tmp_path: Path, baseline: dict[str, Any], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "runs"
    write(folder / "run_a.json", baseline)
    write(folder / "index.json", {"runs": [{"file": "run_a.json", "agent": "gpt-4.1-mini"}]})
    write(folder / "manifest.json", ["run_a.json"])
    assert scan_paths([folder]).files == [folder / "run_a.json"]
    code, records, err = cli(capsys, "eval", "--json", folder, "--tau2-data", tau2_data)
    assert code == 0, err
    assert [s["reward"] for s in sims(records)] == [1.0]
    code, _, err = cli_text(capsys, "eval", folder / "index.json", "--tau2-data", tau2_data)
    assert code == 2 and "index.json: not a tau2 run" in err  # named alone, it says what it is not
