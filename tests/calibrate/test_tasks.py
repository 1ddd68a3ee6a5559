"""The task editing loop: find where a task is defined, edit it, read it back, re-run under a new fingerprint."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tau_tui.calibrate import Calibrator, Cell, SimRef, TaskSource, TaskSourceError, find_task_source, read_task
from tau_tui.domains import DomainRegistry
from tau_tui.model.io import open_run
from tau_tui.rollout import ParticipantSpec, RunConfig
from tests.calibrate.test_workbench import TELECOM_4_TRIALS


def ref(cell: Cell) -> SimRef:
    """The cell's saved trajectory, which a finished cell has."""
    assert cell.ref is not None
    return cell.ref


@pytest.fixture
def own_data(tau2_data: Path, tmp_path: Path) -> Path:
    """A writable copy of the mock domain's data, so its task file can be edited."""
    target = tmp_path / "data" / "domains" / "mock"
    target.mkdir(parents=True)
    for src in (tau2_data / "domains" / "mock").iterdir():
        shutil.copy(src.resolve(), target / src.name)
    return tmp_path / "data"


def lines_at(source: TaskSource, first: int, last: int) -> str:
    return "\n".join(source.path.read_text().splitlines()[first - 1 : last])


def test_a_domain_task_is_found_in_the_task_file(registry: DomainRegistry) -> None:
    domain = registry.get("mock")
    source = find_task_source("update_task_1", domain=domain)
    assert source.path == domain.task_file() and source.kind == "domain"
    text = source.path.read_text().splitlines()
    assert text[source.line - 1].strip() == "{"
    assert '"update_task_1"' in text[source.id_line - 1] and '"id"' in text[source.id_line - 1]
    assert json.loads(lines_at(source, source.line, source.end_line).rstrip().rstrip(","))["id"] == "update_task_1"
    assert read_task(source) == domain.tasks()["update_task_1"]
    assert source.editor_command("nano -w") == ["nano", "-w", f"+{source.id_line}", str(source.path)]
    with pytest.raises(TaskSourceError, match="no task 'nope'"):
        find_task_source("nope", domain=domain)


def test_telecom_tasks_are_found_fast_among_thousands(registry: DomainRegistry) -> None:
    domain = registry.get("telecom")
    last = list(domain.tasks())[-1]
    source = find_task_source(last, domain=domain)
    assert read_task(source) == domain.tasks()[last]


def test_a_task_embedded_in_a_run_file_is_found_there(registry: DomainRegistry) -> None:
    run = open_run(TELECOM_4_TRIALS)
    task_id = next(iter(run.tasks()))
    source = find_task_source(task_id, run=run, domain=registry.get("telecom"))
    assert source.path == TELECOM_4_TRIALS and source.kind == "run"
    assert read_task(source) == run.tasks()[task_id]
    assert source.line > 1  # after the run's info block
    # not in the run: the domain's file
    other = next(t for t in registry.get("telecom").tasks() if t not in run.tasks())
    assert find_task_source(other, run=run, domain=registry.get("telecom")).kind == "domain"
    with pytest.raises(TaskSourceError):
        find_task_source(other, run=run)


def test_edit_reload_and_rerun_gives_a_new_row(own_data: Path, tmp_path: Path) -> None:
    registry = DomainRegistry(own_data)
    calibrator = Calibrator(registry, "mock")
    config = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        task_ids=["update_task_1"],
        num_trials=2,
    )
    asyncio.run(calibrator.run(config, tmp_path / "before.json"))
    (old,) = calibrator.grid.rows()

    source = find_task_source("update_task_1", domain=calibrator.domain)
    text = source.path.read_text()
    data = json.loads(text)
    next(t for t in data if t["id"] == "update_task_1")["ticket"] = "An edited ticket."
    source.path.write_text(json.dumps(data, indent=2))  # what the user did in $EDITOR
    assert read_task(source).ticket == "An edited ticket."

    calibrator.reload_tasks()
    current = calibrator.current_task("update_task_1")
    assert current is not None and current.ticket == "An edited ticket."
    assert old.current is False and old.changed == ["task"]
    asyncio.run(calibrator.rerun([old.key], config, tmp_path / "after.json"))
    rows = calibrator.grid.rows_of("update_task_1")
    assert len(rows) == 2
    new = next(r for r in rows if r is not old)
    assert new.current is True and new.versions == old.versions == 2
    assert len(old.cells) == 2 and len(new.cells) == 2
    assert {ref(c).path.name for c in new.cells} == {"after.json"}


def test_a_broken_edit_is_reported_on_one_line(own_data: Path) -> None:
    registry = DomainRegistry(own_data)
    source = find_task_source("update_task_1", domain=registry.get("mock"))
    source.path.write_text(source.path.read_text().replace('"update_task_1",', '"update_task_1" oops', 1))
    with pytest.raises(TaskSourceError, match="not valid JSON"):
        read_task(source)
