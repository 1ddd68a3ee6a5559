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
