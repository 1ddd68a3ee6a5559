"""The TUI's background replay on worker processes fills the runs table exactly as in-process replay does."""

from __future__ import annotations

from typing import Any

import pytest

from tau_tui.workers.pool import Executor
from tests.tui.conftest import build_app

from ..conftest import CORPUS, corpus_required

pytestmark = pytest.mark.corpus
FILE = CORPUS / "sierra-research__tau2-bench__airline.json"
GOLD = CORPUS / "generated" / "tau2-gold_airline.json"  # together, batches big enough for the pool


async def _derived(workers: int) -> tuple[dict[str, Any], bool]:
    app = build_app([FILE, GOLD], tau2_data=CORPUS, workers=workers)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.busy or not app.session.catalog.rows:
            await pilot.pause(0.05)
        executor = app.session.replay._executor
        assert executor is None or isinstance(executor, Executor)  # worker processes here, not Ray actors
        used_pool = executor is not None and executor._pool is not None
        rows = {
            r.key: (r.replay, r.evaluation, r.replay_error, r.eval_error, r.haystack())
            for r in app.session.catalog.rows
        }
    return rows, used_pool


async def test_two_worker_processes_give_the_same_rows_as_one() -> None:
    corpus_required()
    one, pooled_one = await _derived(1)
    two, pooled_two = await _derived(2)
    assert not pooled_one and pooled_two  # the second really went to worker processes
    assert len(one) >= 100 and all(v[0] is not None for v in one.values())
    assert one == two
