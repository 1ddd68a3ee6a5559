"""`tau-tui notes list` names each simulation by its whole id (ids that differ late stay apart)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tau_tui.cli import main
from tau_tui.model.notes import NoteBook

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"


def test_notes_list_prints_whole_simulation_ids(tmp_path, capsys):
    recording = tmp_path / "warehouse_cassette.json"
    shutil.copy(RECORDINGS / "warehouse_cassette.json", recording)
    book = NoteBook(recording)
    book.add("cas-reordered-mismatch", "agent", "wrong_action", "reordered")
    book.add("cas-greedy-refused", "agent", "wrong_action", "greedy")
    assert main(["notes", "list", str(recording)]) == 0
    out = capsys.readouterr().out
    assert "sim cas-reordered-mismatch " in out and "sim cas-greedy-refused " in out


def test_a_note_on_a_voice_run_may_name_any_step_of_its_flattened_trajectory(tmp_path, capsys):
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
