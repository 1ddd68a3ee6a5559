"""Submissions as published: the old schema, best-of-K claims over several trajectory files, PR 443's cost and
time metrics, PR 444's user-simulator version, a byte-order mark (issue 375).

The old schema is the one of early leaderboard uploads (``claude-sonnet-4-5_aide-platform_2025-10-31``,
``gemini-3-pro_BIGAI_2026-01-15``): ``organization`` for the model's maker and no ``trajectory_files``. The
best-of-K methodology is IronShell-IronForge-v3's (``ironshell-ironforge_ironshell-ui_2026-03-09``: seven airline
files, "each task is attempted by multiple models and passes if any model succeeds").
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.model.submission import Submission, best_of_k, open_submission, read_submission
from tests.conftest import CORPUS
from tests.helpers import call, greet, result, results_file, say, user

IRONFORGE_NOTES = (
    "Multi-model ensemble with self-correcting prompt engineering (IronForge protocol). Best-of-K fusion: each "
    "task is attempted by multiple models and passes if any model succeeds. Models used: Claude Opus 4.6, GPT-5.4."
)
TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}
PASSES = [
    greet(),
    user("finish task_1"),
    call("update_task_status", {"task_id": "task_1", "status": "completed"}),
    result(TASK_1),
    say("Done."),
]
FAILS = [greet(), user("finish task_1"), say("Sorry, I cannot.")]


def old_schema_meta(**changes: Any) -> dict[str, Any]:
    meta = {
        "model_name": "IronShell-IronForge-v3",
        "organization": "IronShell",  # the old key for model_organization
        "submission_date": "2026-03-09",
        "submission_type": "custom",
        "results": {"mock": {"pass_1": 100.0, "cost": 0.1785}, "retail": {"pass_1": 80.0}},
        "methodology": {
            "tau2_bench_version": "0.3.0",
            "user_simulator": "gpt-4.1-2025-04-14",
            "notes": IRONFORGE_NOTES,
            "verification": {"details": "All tasks evaluated with 1 trial per model, best result per task used."},
        },
    }
    meta.update(changes)
    return meta


def best_of_k_folder(root: Path, meta: dict[str, Any] | None = None, bom: bool = False) -> Path:
    """Two mock trajectory files of one task: one model fails it, the other passes it."""
    folder = root / "ironforge_ironshell_2026-03-09"
    trajectories = folder / "trajectories"
    trajectories.mkdir(parents=True)
    results_file(trajectories / "ironforge_model_a.json", FAILS, sim_id="a-1")
    results_file(trajectories / "ironforge_model_b.json", PASSES, sim_id="b-1")
    payload = json.dumps(meta or old_schema_meta(), indent=2).encode()
    (folder / "submission.json").write_bytes((b"\xef\xbb\xbf" if bom else b"") + payload)
    return folder


def test_the_old_schema_reads_organization_and_files_runs_by_their_domains(tmp_path: Path) -> None:
    folder = best_of_k_folder(tmp_path, bom=True)  # with a BOM, as a hand-edited submission.json (issue 375)
    unit = open_submission(folder)
    sub = unit.submission
    assert sub.model_organization == "IronShell" and sub.label == "IronShell-IronForge-v3 · IronShell · custom"
    assert sub.trajectory_files == {} and list(unit.runs) == ["mock"] and unit.unclaimed == []
    assert sorted(r.path.name for r in unit.domain_runs["mock"]) == ["ironforge_model_a.json", "ironforge_model_b.json"]
    assert unit.problems == [f"{sub.path}: results.retail has no trajectory file"]  # still reported
    recorded = unit.best_of_k("mock")  # over the recorded rewards: these runs record none
    assert (recorded.files, recorded.tasks, recorded.unscored, recorded.score) == (2, 1, 1, None)
    assert sub.best_of_k and sub.best_of_k.startswith("Best-of-K fusion: each task is attempted")


def test_best_of_k_is_read_from_the_methodology_and_nothing_else() -> None:
    assert read_submission_of(old_schema_meta()).best_of_k is not None
    details_only = old_schema_meta(methodology={"verification": {"details": "best result per task used"}})
    assert read_submission_of(details_only).best_of_k == "best result per task"
    for plain in (
        "Complete evaluation with all standard tasks",
        "Retail had 3 infra-errored tasks re-run and merged (standard infra-retry); pass^1 computed over all 114.",
        "The best of our models, evaluated once.",
    ):
        assert read_submission_of(old_schema_meta(methodology={"notes": plain})).best_of_k is None, plain


def read_submission_of(meta: dict[str, Any], root: list[Path] = []) -> Submission:  # noqa: B006 - one scratch folder per process
    import tempfile

    if not root:
        root.append(Path(tempfile.mkdtemp()))
    folder = root[0] / str(len(list(root[0].iterdir())))
    folder.mkdir()
    (folder / "submission.json").write_text(json.dumps(meta))
    return read_submission(folder)


def test_the_best_of_k_score_is_the_union_of_attempts() -> None:
    attempts = [
        ("a", "1", 0.0),
        ("b", "1", 1.0),  # task 1: one attempt passes → passes
        ("a", "2", 0.0),
        ("b", "2", 0.0),  # task 2: fails everywhere
        ("a", "3", None),
        ("b", "3", 0.0),  # task 3: one unscored, none passes → unscored
        ("a", "4", None),
        ("b", "4", 1.0),  # task 4: passes anyway
    ]
    union = best_of_k("airline", attempts)
    assert (union.files, union.tasks, union.passed, union.unscored) == (2, 4, 2, 1)
    assert union.score == 2 / 3 and union.text() == "0.667 (2/3 tasks, 1 unscored)"


def test_eval_compares_a_best_of_k_claim_with_the_union_not_each_file(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = best_of_k_folder(tmp_path)
    assert main(["eval", "--json", "--tau2-data", str(tau2_data), str(folder)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    files = [r for r in records if r["kind"] == "file"]
    assert [r["metrics"]["pass_hat_k"]["1"] for r in files] == [0.0, 1.0]  # per file: 0 and 1
    assert all(r["submission"]["claim_basis"] == "best_of_k" for r in files)
    (claim,) = [r for r in records if r["kind"] == "submission"]
    assert claim["domain"] == "mock" and claim["claimed_pass_hat_1"] == 1.0
    assert claim["best_of_k"]["ours"] == {"files": 2, "tasks": 1, "passed": 1, "unscored": 0, "pass_hat_1": 1.0}
    assert main(["eval", "--tau2-data", str(tau2_data), str(folder)]) == 0
    out = capsys.readouterr().out
    assert "its claims are best-of-K over several trajectory files" in out
    assert "claimed 1.000 / ours 0.000" not in out  # no per-file mismatch
    assert "best-of-K over 2 files" in out and "pass^1 claimed 1.000 · best-of-K ours 1.000 (1/1 tasks)" in out
    assert "claimed cost $0.178" in out and "user simulator gpt-4.1-2025-04-14" in out


def test_audit_shows_the_best_of_k_score_beside_the_claim(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = best_of_k_folder(tmp_path)
    main(["audit", "--json", "--tau2-data", str(tau2_data), str(folder)])
    record = [json.loads(line) for line in capsys.readouterr().out.splitlines()][-1]
    assert record["kind"] == "submission" and record["claim_basis"] == "best_of_k"
    assert record["domains"]["mock"]["ours"] == {"1": 100.0} and record["domains"]["mock"]["claimed"] == {"1": 100.0}
    assert record["domains"]["mock"]["best_of_k"]["ours"]["passed"] == 1
    main(["audit", "--tau2-data", str(tau2_data), str(folder)])
    out = capsys.readouterr().out
    assert "mock best-of-K over 2 file(s): claimed pass^1 100.0, recorded n/a (0/0 tasks, 1 unscored)" not in out
    assert "mock best-of-K over 2 file(s): claimed pass^1 100.0" in out and "ours 100.0 (1/1 tasks) (+0.0)" in out


def test_cost_and_time_metrics_are_read_and_a_bad_one_is_a_warning(tmp_path: Path) -> None:
    results = {
        "airline": {
            "pass_1": 62.5,
            "cost": 0.11893,
            "user_cost": 0.01379,
            "total_cost": 0.13272,
            "duration_seconds": 131.43,
            "agent_time_seconds": 117.88,
            "user_time_seconds": 13.53,
            "tool_time_seconds": "fast",
        }
    }
    notes = "Costs estimated from trajectory token usage at list prices."
    sub = read_submission_of(old_schema_meta(results=results, methodology={"notes": notes, "user_simulator": "v2.0"}))
    claim = sub.claims["airline"]
    assert claim.cost_time == {
        "user_cost": 0.01379,
        "total_cost": 0.13272,
        "duration_seconds": 131.43,
        "agent_time_seconds": 117.88,
        "user_time_seconds": 13.53,
    }
    assert sub.warnings == ["results.airline.tool_time_seconds is not a non-negative number: ignored"]
    assert claim.cost_time_text() == "cost $0.119 (user $0.014, total $0.133) · 131.43 s (agent 117.88 s, user 13.53 s)"
    assert sub.cost_estimated and sub.user_simulator == "v2.0"


async def test_the_metrics_screen_shows_the_union_beside_a_best_of_k_claim(tmp_path: Path, tau2_data: Path) -> None:
    from rich.console import Console
    from textual.widgets import Static

    from tau_tui.tui.screens.metrics import MetricsScreen
    from tests.tui.conftest import build_app, settle

    folder = best_of_k_folder(tmp_path)
    app = build_app([folder], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, MetricsScreen)
        console = Console(width=150, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#metrics-summary", Static).content)
        text = console.export_text().replace("\n", " ")
        assert "pass^1 1.000 best-of-K over 2 loaded files: ours 1.000 (1/1 tasks)" in text
        assert "Best-of-K fusion" in text and "claimed cost $0.178" in text


def test_the_corpus_ironforge_file_in_a_best_of_k_submission(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real IronForge trajectory file beside a second airline file: the claim is checked over both."""
    folder = tmp_path / "ironshell-ironforge_ironshell-ui_2026-03-09"
    (folder / "trajectories").mkdir(parents=True)
    for name in ("ironshell_ironforge_o3_wave2.json", "e2e_airline_baseline.json"):
        shutil.copyfile(CORPUS / f"sierra-research__tau2-bench__{name}", folder / "trajectories" / name)
    meta = old_schema_meta(results={"airline": {"pass_1": 94.0}})
    (folder / "submission.json").write_text(json.dumps(meta))
    main(["eval", "--json", "--tau2-data", str(tau2_data), str(folder)])
    (claim,) = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["kind"] == "submission"]
    assert claim["best_of_k"]["recorded"] == {"files": 2, "tasks": 10, "passed": 4, "unscored": 0, "pass_hat_1": 0.4}
    assert claim["best_of_k"]["ours"]["passed"] == 4 and claim["claimed_pass_hat_1"] == 0.94
