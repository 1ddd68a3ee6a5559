"""The TUI on the shapes that must never get a false reward (issue 36; the CLI's: tests/evaluate/test_false_rewards.py): a
row without messages opens (an empty trajectory) and says it is not re-graded; a lone submission.json is a note
with its claims, not a failure."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.tui.screens.trajectory import TrajectoryScreen

from ..conftest import CORPUS
from .conftest import SIZE, open_sim, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

BASELINE = CORPUS / "sierra-research__tau2-bench__e2e_airline_baseline.json"


async def test_a_row_without_messages_opens_and_is_not_regraded(make_app: MakeApp, tmp_path: Path) -> None:
    run = json.loads(BASELINE.read_text())
    bare = copy.deepcopy(run["simulations"][0])
    bare.update(id="bare-row", messages=[])
    run["simulations"] = [bare]
    path = tmp_path / "half_written.json"
    path.write_text(json.dumps(run))
    app = make_app([path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "bare-row")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await wait_until(pilot, lambda: screen.report is not None, "the report")
        assert screen.report is not None
        assert screen.report.evaluation.status == "no_trajectory"
        await pilot.press("3")  # the reward tab, and back: nothing to step through, nothing breaks
        await pilot.press("j", "k", "escape")
        await settle(pilot)


async def test_a_lone_submission_is_a_note_with_its_claims(make_app: MakeApp, tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "submission.json").write_text(
        json.dumps({"model_name": "M", "model_organization": "Org", "results": {"airline": {"pass_1": 55.0}}})
    )
    app = make_app([folder / "submission.json", BASELINE])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = " ".join(n.text for n in app.session.catalog.all_notices())
        assert "submission M · Org claims airline pass^1 0.550; trajectories not here" in notes
