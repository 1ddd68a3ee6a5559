"""The runs table fills in while several files are indexed on worker processes, in the order of the files."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import tau_tui.model.indexing as indexing
from tau_tui.model.indexing import Growing
from tau_tui.model.io import open_run
from tau_tui.tui.widgets.run_table import RunTable
from tests.tui.conftest import build_app

from ..conftest import CORPUS, corpus_required
from .conftest import wait_until

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    corpus_required()
    from benchmarks.make_corpus import make

    folder = tmp_path_factory.mktemp("index-ui")
    large = make("airline", 300, folder / "large", files=1)
    make("airline", 120, folder / "small", files=4)
    (folder / "small" / "broken.json").write_bytes(b'{"simulations": [')
    return large + sorted((folder / "small").iterdir())


def _expected(paths: list[Path]) -> list[tuple[str, str]]:
    """The rows the sequential loader shows: each file's simulations, file after file (broken ones left out)."""
    rows: list[tuple[str, str]] = []
    for path in paths:
        try:
            run = open_run(path)
        except Exception:  # noqa: BLE001 - a broken file shows no rows
            continue
        rows.extend((str(run.path), e.id) for e in run.entries)
    return rows


async def test_rows_appear_before_every_file_is_indexed_and_keep_the_order_of_the_files(
    files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "PARALLEL_MIN_BYTES", 0)
    gate = threading.Event()
    planned: list[int] = []
    real = indexing.index_files

    def gated(
        paths: Sequence[Path | str],
        emit: Callable[[indexing.Event], None],
        workers: int,
        cancelled: Callable[[], bool],
        every: float = indexing.EVERY,
    ) -> bool:
        planned.append(workers)

        def held(event: indexing.Event) -> None:
            if event.pos == 0 and not isinstance(event, Growing):
                gate.wait(60)  # the large file stays "being indexed" until the test has looked
            emit(event)

        return real(paths, held, workers, cancelled=cancelled, every=0.01)

    monkeypatch.setattr(indexing, "index_files", gated)
    app = build_app(
        files, tau2_data=CORPUS, workers=1, index_workers=2, background_replay=False
    )  # the background replay is not what this test looks at
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            table = app.runs_screen.query_one(RunTable)
            await wait_until(pilot, lambda: table.row_count > 0, "the first rows")
            assert app.session.library.loading  # rows are shown while the files are still being indexed
            shown = [(str(r.path), r.sim_id) for r in table.rows]
            assert str(files[0]) in {p for p, _ in shown}  # the large file's rows came before it was indexed
            assert planned == [2]
            gate.set()
            await wait_until(
                pilot,
                lambda: not app.session.library.loading and not app.runs_screen.refresh_pending,
                "every file indexed",
            )
            await pilot.pause()
            assert [(str(r.path), r.sim_id) for r in table.rows] == _expected(files)
            notices = [n for n in app.session.catalog.all_notices() if n.severity == "error"]
            assert [n.path.name for n in notices] == ["broken.json"]
            assert "truncated JSON" in notices[0].text
            app.exit()
    finally:
        gate.set()
