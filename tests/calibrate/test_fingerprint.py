"""Task fingerprints: recorded with each simulation, derived for other recordings, and never pooled across."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.calibrate import Calibrator, Cell, Fingerprinter, SimRef, changed_parts
from tau_tui.calibrate.render import render_grid
from tau_tui.env.tools import Toolkit, ToolType, tool
from tau_tui.model.io import open_run
from tau_tui.model.tasks import Task, task_content_digest
from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
from tau_tui.rollout.records import FINGERPRINT_PARTS, toolkit_description
from tests.conftest import CORPUS

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry


def ref(cell: Cell) -> SimRef:
    """The cell's saved trajectory, which a loaded cell has."""
    assert cell.ref is not None
    return cell.ref


def gold_config(**kwargs: Any) -> RunConfig:
    return RunConfig(
        domain="mock", agent=ParticipantSpec("scripted/gold"), user=ParticipantSpec("scripted/user"), **kwargs
    )


def test_runner_records_the_fingerprint_with_each_simulation(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    asyncio.run(Runner(gold_config(task_ids=["create_task_1", "update_task_1"], num_trials=2), path, registry).run())
    fingerprints = Fingerprinter(registry.get("mock"))
    tasks = registry.get("mock").tasks()
    for sim in json.loads(path.read_text())["simulations"]:
        expected = fingerprints.of_task(tasks[sim["task_id"]])
        assert sim["info"]["task_fingerprint"] == expected.value
        assert sim["info"]["task_fingerprint_parts"] == expected.parts
        assert expected.parts is not None
        assert set(expected.parts) == set(FINGERPRINT_PARTS)
    run = open_run(path)
    recorded = fingerprints.of_simulation(run, run.raw_sims[0])
    assert recorded.source == "recorded"


def test_an_edited_task_never_pools_with_the_old_one(registry: DomainRegistry, tmp_path: Path) -> None:
    task = registry.get("mock").tasks()["update_task_1"]
    edited = task.model_copy(update={"ticket": "Please mark task_1 as done (edited)."})
    asyncio.run(Runner(gold_config(task_ids=[task.id], num_trials=2), tmp_path / "old.json", registry).run())
    asyncio.run(
        Runner(gold_config(task_ids=[task.id], num_trials=3, tasks=[edited]), tmp_path / "new.json", registry).run()
    )
    assert json.loads((tmp_path / "new.json").read_text())["tasks"][0]["ticket"].endswith("(edited).")

    calibrator = Calibrator(registry, "mock")
    calibrator.load_paths([tmp_path])
    rows = calibrator.grid.rows_of(task.id)
    assert len(rows) == 2
    by_file = {ref(row.cells[0]).path.name: row for row in rows}
    old, new = by_file["old.json"], by_file["new.json"]
    assert old.fingerprint != new.fingerprint
    assert {ref(c).path.name for c in old.cells} == {"old.json"} and len(old.cells) == 2
    assert {ref(c).path.name for c in new.cells} == {"new.json"} and len(new.cells) == 3
    assert old.versions == new.versions == 2
    # the domain still defines the old version; the edited one differs in the task part only
    assert old.current is True and new.current is False and new.changed == ["task"]
    text = render_grid(calibrator.grid)
    marked = [line for line in text.splitlines() if line.startswith("update_task_1")]
    assert len(marked) == 2 and all("*" in line for line in marked)
    assert sum("(not current: task)" in line for line in marked) == 1
    assert "never pooled" in text
    calibrator.use_task(edited)  # from now on the edited definition is the one to run
    assert old.current is False and old.changed == ["task"] and new.current is True


def test_tools_db_and_policy_are_parts_of_the_fingerprint(registry: DomainRegistry) -> None:
    fingerprints = Fingerprinter(registry.get("mock"))
    task = registry.get("mock").tasks()["create_task_1"]
    base = fingerprints.of_task(task)
    other_policy = fingerprints.of_task(task, policy="a different policy text")
    assert other_policy.value != base.value and changed_parts(base.parts, other_policy.parts) == ["policy"]
    solo = fingerprints.of_task(task, solo=True)  # solo mode runs under another policy text
    assert changed_parts(base.parts, solo.parts) == ["policy"]
    other_task = fingerprints.of_task(registry.get("mock").tasks()["update_task_1"])
    assert other_task.parts is not None and base.parts is not None
    assert other_task.parts["tools"] == base.parts["tools"]
    telecom = Fingerprinter(registry.get("telecom"))
    telecom_task = next(iter(registry.get("telecom").tasks().values()))
    assert changed_parts(base.parts, telecom.of_task(telecom_task).parts) == ["task", "tools", "db", "policy"]


def test_tool_descriptions_see_types_flags_signatures_and_docstrings() -> None:
    class Kit(Toolkit):
        @tool(ToolType.WRITE)
        def act(self, item_id: str) -> str:
            """Do it."""
            raise NotImplementedError  # described, never called

    class Renamed(Toolkit):
        @tool(ToolType.WRITE)
        def act(self, item: str) -> str:
            """Do it."""
            raise NotImplementedError  # described, never called

    class Redocumented(Toolkit):
        @tool(ToolType.WRITE)
        def act(self, item_id: str) -> str:
            """Do it, carefully."""
            raise NotImplementedError  # described, never called

    class ReadOnly(Toolkit):
        @tool(ToolType.READ)
        def act(self, item_id: str) -> str:
            """Do it."""
            raise NotImplementedError  # described, never called

    described = [toolkit_description(k()) for k in (Kit, Renamed, Redocumented, ReadOnly)]
    assert len({json.dumps(d, sort_keys=True) for d in described}) == 4
    assert described[0] is not None
    assert described[0]["tools"] is not None
    assert described[0]["tools"][0] == {
        "name": "act",
        "signature": "(item_id: 'str') -> 'str'",
        "doc": "Do it.",
        "type": "write",
        "mutates": True,
        "discoverable": False,
    }


def test_a_task_saved_by_tau2_hashes_like_the_hand_written_one(registry: DomainRegistry) -> None:
    """tau2 writes every optional field (null) into the tasks of a results file; that is not an edit."""
    generated = json.loads((CORPUS / "generated" / "tau2-gold_telecom.json").read_text())
    saved = generated["tasks"][0]
    assert "issues" in saved and saved["issues"] is None
    current = registry.get("telecom").tasks()[saved["id"]]
    assert task_content_digest(Task.model_validate(saved)) == task_content_digest(current)
    changed = dict(saved, ticket="something else")
    assert task_content_digest(Task.model_validate(changed)) != task_content_digest(current)
    # null inside tool arguments is kept: passing None and not passing an argument differ
    with_null = Task.model_validate(
        {
            "id": "x",
            "evaluation_criteria": {
                "actions": [
                    {"action_id": "a", "name": "create_task", "arguments": {"user_id": "u", "description": None}}
                ]
            },
        }
    )
    without = Task.model_validate(
        {
            "id": "x",
            "evaluation_criteria": {
                "actions": [{"action_id": "a", "name": "create_task", "arguments": {"user_id": "u"}}]
            },
        }
    )
    assert task_content_digest(with_null) != task_content_digest(without)
