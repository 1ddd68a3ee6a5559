"""``open_all(ahead=1)`` (replay/eval on worker processes) gives the same files, runs, notes and errors in order."""

from __future__ import annotations

import pytest

from tau_tui.commands.common import _in_order, open_all
from tests.conftest import CORPUS, corpus_required


def _listing(paths, ahead: int, capsys) -> tuple[list, str]:
    got = []
    for path, run, error in open_all(paths, ahead=ahead):
        got.append((str(path), None if run is None else (run.layout, run.entries, run.warnings), error))
    return got, capsys.readouterr().err


def test_indexing_ahead_gives_what_indexing_when_reached_gives(tmp_path, capsys):
    corpus_required()
    (tmp_path / "broken.json").write_bytes(b'{"simulations": [')
    (tmp_path / "empty_run.json").write_bytes(b'{"simulations": []}')
    paths = [CORPUS, tmp_path]
    here, notes_here = _listing(paths, 0, capsys)
    ahead, notes_ahead = _listing(paths, 1, capsys)
    assert ahead == here and notes_ahead == notes_here
    assert any(error for _, _, error in here) and "empty run" in notes_here


def test_work_ahead_keeps_order_and_bounds_what_is_in_flight():
    started: list[int] = []
    seen: list[int] = []

    def work(item: int) -> int:
        started.append(item)
        return item * 10

    for item, result in _in_order(list(range(8)), work, 1):
        assert result == item * 10
        seen.append(item)
        assert len(started) <= item + 2  # this one and at most one more
    assert seen == list(range(8))


def test_an_error_in_the_work_reaches_the_caller_in_its_place():
    def work(item: int) -> int:
        if item == 2:
            raise ValueError("boom")
        return item

    got = []
    with pytest.raises(ValueError):
        for item, _ in _in_order([0, 1, 2, 3], work, 1):
            got.append(item)
    assert got == [0, 1]
