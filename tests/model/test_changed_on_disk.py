"""Files that change while we hold them (issue 23, class 5): every read of a streamed simulation goes through
``RunFile.raw_simulation``, so a file changed on disk since it was indexed (a new size, or rewritten at the
same size with its mtime put back) is the documented one-line notice, never ``FileChanged`` or a
``JSONDecodeError`` escaping."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from tau_tui.cli import main
from tau_tui.model import RunFileError, open_run, runtime
from tau_tui.model.stream import SpanSims
from tests.review_fixtures import full_review, review_error

if TYPE_CHECKING:
    from tau_tui.model.io import RunFile

NOTICE = "changed on disk since it was read; reload it"
NOT_JSON = "is no longer valid JSON"


def streamed_file(
    tmp_path: Path, n: int = 40
) -> Path:  # more than stay parsed (stream.KEEP_PARSED): the first are read again
    sims = [
        {
            "id": f"s{i}",
            "task_id": "create_task_1",
            "messages": [{"role": "user", "content": f"hello {i}"}, {"role": "assistant", "content": "hi"}],
            "termination_reason": "user_stop",
            "reward_info": {"reward": 1.0},
            "review": full_review([review_error("agent", 1, ["other"], "minor", f"Reason {i}.")]),
        }
        for i in range(n)
    ]
    data = {"timestamp": "t", "info": {"environment_info": {"domain_name": "mock"}}, "tasks": [], "simulations": sims}
    path = tmp_path / "big.json"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    return path


def grow(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"hello", b"hello again"))


def same_size(path: Path) -> None:
    """Rewritten in place at the same size, its mtime put back: the spans now cut through other values."""
    info = os.stat(path)
    raw = path.read_bytes()
    shifted = b" " * 7 + raw[: len(raw) - 7]
    assert len(shifted) == len(raw)
    path.write_bytes(shifted)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


CHANGES = {"grown": (grow, NOTICE), "same size, same mtime": (same_size, NOT_JSON)}


@pytest.fixture
def streamed(tmp_path: Path) -> Iterator[Path]:
    runtime.configure(stream_bytes=0)
    yield streamed_file(tmp_path)
    runtime.configure(stream_bytes=runtime.DEFAULT_STREAM_BYTES)


@pytest.mark.parametrize("change", CHANGES, ids=str)
def test_every_span_read_is_one_line_naming_the_file(streamed: Path, change: str) -> None:
    run = open_run(streamed)
    assert isinstance(run.raw_sims, SpanSims)
    damage, said = CHANGES[change]
    damage(streamed)
    for read in (run.raw_simulation, run.simulation):
        with pytest.raises(RunFileError) as exc:
            read(1)
        assert str(exc.value).startswith(f"{streamed}: simulation #1") and said in str(exc.value)
        assert "\n" not in str(exc.value)


@pytest.mark.parametrize("change", CHANGES, ids=str)
def test_catalog_rows_review_and_search_do_not_raise(streamed: Path, change: str) -> None:
    from tau_tui.catalog.rows import RunRow

    run = open_run(streamed)
    CHANGES[change][0](streamed)
    row = RunRow(str(streamed), run, run.entries[1], (0, 1))
    assert row.haystack() == ""
    assert not row.review.errors


@pytest.mark.parametrize("change", CHANGES, ids=str)
def test_notes_from_review_on_a_changed_file_is_a_line(
    streamed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    import tau_tui.model.io as io

    def open_then_change(
        path: Path, *args: Any, **kwargs: Any
    ) -> RunFile:  # indexed, then changed before its reviews are read
        run = open_run(path, *args, **kwargs)
        CHANGES[change][0](streamed)
        return run

    monkeypatch.setattr(io, "open_run", open_then_change)
    monkeypatch.setenv("TAU_TUI_STREAM_BYTES", "0")  # the command resolves its settings again
    code = main(["notes", "from-review", str(streamed)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line]
    assert lines and all(line.startswith(f"tau-tui: {streamed}: simulation #") for line in lines)
    assert CHANGES[change][1] in lines[0]


@pytest.mark.parametrize("change", CHANGES, ids=str)
async def test_the_runs_preview_and_open_json_give_the_notice(streamed: Path, tau2_data: Path, change: str) -> None:
    from tau_tui.tui.widgets.info_line import InfoLine
    from tau_tui.tui.widgets.run_table import RunTable
    from tests.tui.conftest import build_app, settle

    opened: list[Path] = []
    app = build_app([streamed], tau2_data=tau2_data, viewer=opened.append, background_replay=False, stream_bytes=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        assert table.row_count == 40
        CHANGES[change][0](streamed)
        for row in (3, 2, 1):
            table.move_cursor(row)
            await pilot.pause()
        preview = str(app.runs_screen.query_one("#row-preview", InfoLine).render())
        assert "simulation #1" in preview and CHANGES[change][1] in preview
        app.runs_screen.action_open_json()
        await pilot.pause()
        assert opened == []
        await settle(pilot)
    assert app.return_code in (None, 0)
