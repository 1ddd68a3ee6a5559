"""`tau-tui notes`: whole simulation ids in `list`; one sidecar for every name of a reviewed run folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.model.notes import NoteBook

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def test_notes_list_prints_whole_simulation_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recording = tmp_path / "warehouse_cassette.json"
    shutil.copy(RECORDINGS / "warehouse_cassette.json", recording)
    book = NoteBook(recording)
    book.add("cas-reordered-mismatch", "agent", "wrong_action", "reordered")
    book.add("cas-greedy-refused", "agent", "wrong_action", "greedy")
    assert main(["notes", "list", str(recording)]) == 0
    out = capsys.readouterr().out
    assert "sim cas-reordered-mismatch " in out and "sim cas-greedy-refused " in out


def test_a_note_on_a_voice_run_may_name_any_step_of_its_flattened_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tau_tui.model.io import open_run
    from tests.review_fixtures import full_duplex_run

    folder = full_duplex_run(tmp_path)
    run = open_run(folder)
    entry = run.entries[0]
    last = len(run.simulation(0).trajectory) - 1
    assert entry.n_messages <= last  # silent chunks are not counted as messages, yet they are steps
    add = ["notes", "add", str(folder), "--sim", entry.id, "--source", "agent", "--type", "other", "--text", "x"]
    assert main([*add, "--step", str(last)]) == 0
    assert main([*add, "--step", str(last + 1)]) == 2
    assert f"has {last + 1} steps; no step {last + 1}" in capsys.readouterr().err


def _reviewed_folder(tmp_path: Path) -> Path:
    from tests.review_fixtures import reviewed_run

    return reviewed_run(tmp_path, keep=4)


def _sim_id(folder: Path) -> str:
    import json

    sim_id: str = json.loads((folder / "results.json").read_text())["simulations"][0]["id"]
    return sim_id


def test_a_note_added_by_any_name_of_a_reviewed_run_is_listed_by_every_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _reviewed_folder(tmp_path)
    sim = _sim_id(folder)
    names = [folder, folder / "results.json", folder / "results_reviewed.json"]
    for i, name in enumerate(names):
        assert (
            main(
                ["notes", "add", str(name), "--sim", sim, "--source", "agent", "--type", "other", "--text", f"note {i}"]
            )
            == 0
        )
    capsys.readouterr()
    for name in names:
        assert main(["notes", "list", str(name), "--json"]) == 0
        texts = sorted(line.split('"text":"')[1].split('"')[0] for line in capsys.readouterr().out.splitlines())
        assert texts == ["note 0", "note 1", "note 2"], name
    assert len(NoteBook(folder / "results_reviewed.json").notes) == 3  # what the TUI reads
    assert {p.name for p in folder.glob("*.notes.json")} == {"results_reviewed.notes.json"}


def test_notes_already_in_either_sidecar_of_a_reviewed_run_stay_readable_and_removable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    folder = _reviewed_folder(tmp_path)
    sim = _sim_id(folder)
    for sidecar, note_id in (("results.notes.json", "aaaa00000001"), ("results_reviewed.notes.json", "bbbb00000002")):
        note = {"id": note_id, "sim_id": sim, "source": "agent", "error_type": "other", "text": sidecar}
        (folder / sidecar).write_text(json.dumps({"version": 1, "recording": "x", "notes": [note]}))
    for name in (folder, folder / "results.json", folder / "results_reviewed.json"):
        assert {n.id for n in NoteBook(name).notes} == {"aaaa00000001", "bbbb00000002"}
    assert main(["notes", "export", str(folder), "--format", "csv"]) == 0
    assert "aaaa00000001" in capsys.readouterr().out
    assert main(["notes", "remove", str(folder), "aaaa"]) == 0
    assert {n.id for n in NoteBook(folder / "results_reviewed.json").notes} == {"bbbb00000002"}
    assert "aaaa00000001" not in (folder / "results.notes.json").read_text()
