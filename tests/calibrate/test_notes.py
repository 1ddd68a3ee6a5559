"""Notes: a sidecar beside the recording, never the recording itself; add, reload, filter, export."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import typing
from pathlib import Path

import pytest

from tau_tui.model.io import expand_paths, open_run
from tau_tui.model.notes import (
    CSV_COLUMNS,
    ERROR_TYPES,
    SOURCES,
    ErrorType,
    NoteBook,
    NotesError,
    beside_path,
    export_csv,
    export_json,
    note_rows,
    notes_path,
    user_notes_path,
)
from tests.calibrate.test_workbench import TELECOM_4_TRIALS
from tests.conftest import ROOT


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    path = tmp_path / "telecom_4trials.json"
    shutil.copy(TELECOM_4_TRIALS, path)
    return path


def test_vocabulary_is_fixed() -> None:
    assert SOURCES == ("agent", "user", "environment", "task")
    assert set(typing.get_args(ErrorType)) == set(ERROR_TYPES)


def test_add_reload_and_export_leave_the_recording_untouched(recording: Path) -> None:
    before = digest(recording)
    mtime = recording.stat().st_mtime_ns
    run = open_run(recording)
    sim, other = run.entries[0], run.entries[5]
    book = NoteBook(recording)
    assert book.path == recording.with_name("telecom_4trials.notes.json") == notes_path(recording)
    assert book.notes == []
    whole = book.add(
        sim.id,
        "agent",
        "premature_end",
        "stopped before checking data",
        task_id=sim.task_id,
        trial=sim.trial,
        author="ana",
    )
    step = book.add(
        sim.id, "environment", "tool_bug", "speed test says excellent with data off", step=7, task_id=sim.task_id
    )
    book.add(other.id, "task", "task_defect", "persona unclear", task_id=other.task_id)

    reloaded = NoteBook(recording)
    assert [n.model_dump() for n in reloaded.notes] == [n.model_dump() for n in book.notes]
    assert [n.id for n in reloaded.filter(sim_id=sim.id)] == [whole.id, step.id]
    assert [n.id for n in reloaded.filter(sim_id=sim.id[:8], step=7)] == [step.id]
    assert [n.id for n in reloaded.filter(source="task")] == [reloaded.notes[2].id]
    assert [n.id for n in reloaded.filter(text="SPEED")] == [step.id]
    assert set(reloaded.by_simulation()) == {sim.id, other.id}

    rows = note_rows([reloaded])
    exported = json.loads(export_json(rows))
    assert [r["text"] for r in exported] == [
        "stopped before checking data",
        "speed test says excellent with data off",
        "persona unclear",
    ]
    assert exported[0]["recording"] == str(recording) and exported[0]["author"] == "ana"
    table = list(csv.DictReader(io.StringIO(export_csv(rows))))
    assert list(table[0]) == list(CSV_COLUMNS)
    assert table[1]["step"] == "7" and table[0]["step"] == "" and table[1]["error_type"] == "tool_bug"

    assert digest(recording) == before and recording.stat().st_mtime_ns == mtime
    assert json.loads(recording.read_text()) == json.loads(TELECOM_4_TRIALS.read_text())
    # the sidecar is never taken for a run
    assert expand_paths([recording.parent]) == [recording]


def test_update_and_remove(recording: Path) -> None:
    book = NoteBook(recording)
    note = book.add("sim-1", "user", "instruction_deviation", "asked for a refund it was not told to")
    changed = book.update(note.id[:6], error_type="other", text="fine after all")
    assert changed.id == note.id and changed.updated_at and changed.created_at == note.created_at
    assert NoteBook(recording).get(note.id).text == "fine after all"
    book.remove(note.id)
    assert NoteBook(recording).notes == []
    with pytest.raises(NotesError, match="no note"):
        book.get("nope")


def test_bad_notes_are_refused_on_one_line(recording: Path) -> None:
    book = NoteBook(recording)
    with pytest.raises(NotesError, match="source must be one of: agent, user, environment, task"):
        book.add("sim-1", "model", "other")
    with pytest.raises(NotesError, match="error type must be one of"):
        book.add("sim-1", "agent", "rude")
    with pytest.raises(NotesError, match="step"):
        book.add("sim-1", "agent", "other", step=-1)
    with pytest.raises(NotesError, match="cannot change sim_id"):
        book.update(book.add("sim-1", "agent", "other").id, sim_id="sim-2")
    book.path.write_text("{broken")
    with pytest.raises(NotesError, match="not a notes file"):
        NoteBook(recording)


def test_two_writers_do_not_lose_each_others_notes(recording: Path) -> None:
    first, second = NoteBook(recording), NoteBook(recording)
    a = first.add("sim-1", "agent", "wrong_action", "one")
    b = second.add("sim-1", "agent", "wrong_action", "two")  # second never loaded a
    assert {n.id for n in NoteBook(recording).notes} == {a.id, b.id}
    first.remove(a.id)
    assert {n.id for n in NoteBook(recording).notes} == {b.id}


def test_directory_runs_keep_their_notes_inside(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "simulations").mkdir(parents=True)
    (run_dir / "results.json").write_text("{}")
    assert notes_path(run_dir) == run_dir / "results.notes.json"
    assert notes_path(run_dir / "results.json") == run_dir / "results.notes.json"


def test_notes_on_a_bundled_recording_go_to_the_user_data_folder(user_data_home: Path) -> None:
    recording = ROOT / "recordings" / "aftersales.json"
    beside = beside_path(recording)
    had_beside = beside.exists()
    book = NoteBook(recording)
    assert book.path == user_notes_path(recording) and book.path.is_relative_to(user_data_home / "tau-tui" / "notes")
    assert book.path.name.endswith("-aftersales.notes.json")
    note = book.add("as-hasty-refund", "agent", "policy_violation", "no approval")
    assert book.path.is_file() and beside.exists() == had_beside
    assert note.id in {n.id for n in NoteBook(recording).notes}
    book.remove(note.id)
    assert note.id not in {n.id for n in NoteBook(recording).notes}


def test_same_named_recordings_in_the_user_data_folder_stay_apart(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "run.json", tmp_path / "b" / "run.json"
    assert user_notes_path(first) != user_notes_path(second)
    assert user_notes_path(first) == user_notes_path(tmp_path / "a" / ".." / "a" / "run.json")


def test_a_read_only_folder_keeps_its_notes_in_the_user_data_folder(
    recording: Path, user_data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = recording.parent
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != folder and writable(path, mode))
    book = NoteBook(recording)
    book.add("sim-1", "agent", "other", "read-only here")
    assert book.path.is_relative_to(user_data_home) and book.path == notes_path(recording)
    assert not beside_path(recording).exists()
    assert [n.text for n in NoteBook(recording).notes] == ["read-only here"]


def test_notes_beside_and_in_the_user_data_folder_are_read_together(recording: Path) -> None:
    beside = NoteBook(recording)
    kept = beside.add("sim-1", "agent", "other", "beside")
    user = user_notes_path(recording)
    user.parent.mkdir(parents=True)
    user.write_text(
        json.dumps(
            {
                "version": 1,
                "recording": recording.name,
                "notes": [
                    {
                        "id": "u1",
                        "sim_id": "sim-1",
                        "source": "user",
                        "error_type": "other",
                        "text": "in the data folder",
                    }
                ],
            }
        )
    )
    book = NoteBook(recording)
    assert book.path == beside_path(recording)
    assert {n.text for n in book.notes} == {"beside", "in the data folder"}
    book.remove("u1")  # taken out of the file that holds it
    assert [n.id for n in NoteBook(recording).notes] == [kept.id]
    assert json.loads(user.read_text())["notes"] == []
