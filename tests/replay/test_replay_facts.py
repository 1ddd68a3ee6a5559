"""The headless facts of a replayed simulation: what the CLI prints and a view styles, in one place."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tau_tui.analysis import Analyzer
from tau_tui.model.io import open_run
from tau_tui.replay.facts import Fact, plain_text
from tests.helpers import call, greet, result, results_file, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


def facts_of(path: Path, registry: DomainRegistry) -> list[Fact]:
    return Analyzer(registry).analyze(open_run(path), 0).facts()


def test_a_clean_run_is_ok_in_order(tmp_path: Path, registry: DomainRegistry) -> None:
    path = results_file(
        tmp_path / "ok.json",
        [
            greet(),
            user("done?"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(TASK_1),
            say("Done."),
        ],
    )
    facts = facts_of(path, registry)
    assert [f.kind for f in facts if f.cli] == ["simulation", "calls", "db", "strict_ok"]
    assert [f.severity for f in facts if f.cli][2:] == ["ok", "ok"]
    assert [f.kind for f in facts if f.panel] == ["calls", "strict", "db"]
    text = plain_text(facts).splitlines()
    assert text[1].startswith("  calls: 1 replayed, 0 mismatch") and text[-1] == "  strict replay ok"
    assert not text[0].startswith(" ")


def test_a_mismatch_is_bad_with_both_outputs_as_detail(tmp_path: Path, registry: DomainRegistry) -> None:
    path = results_file(
        tmp_path / "bad.json",
        [
            greet(),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(dict(TASK_1, title="Other")),
        ],
    )
    (mismatch,) = [f for f in facts_of(path, registry) if f.kind == "first_mismatch"]
    assert mismatch.severity == "bad" and mismatch.label == "first mismatch at step 2"
    assert mismatch.value is not None
    assert mismatch.value.startswith("update_task_status(")
    assert mismatch.detail[0] == "class: divergence"
    assert mismatch.detail[1].startswith("recorded: ") and mismatch.detail[2].startswith("replayed: ")
    assert "\n    recorded: " in plain_text([mismatch])


def test_a_finding_is_a_warning(tmp_path: Path, registry: DomainRegistry) -> None:
    path = results_file(tmp_path / "orphan.json", [greet(), result("x", "nope")])
    (finding,) = [f for f in facts_of(path, registry) if f.kind == "finding"]
    assert finding.severity == "warn" and finding.text.startswith("finding [result_without_call] step 1: ")
