"""The inspector on a recording nested as deep as the reader accepts: every view opens, nothing recurses too deep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from tau_tui.model.nesting import CUT_MARKER
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.state_tree import StateTree
from tests.helpers import deep_results_file

from .conftest import SIZE, open_sim, opened_files, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


async def test_deep_recording_opens_steps_expands_and_exports(make_app: MakeApp, tmp_path: Path) -> None:
    path = deep_results_file(tmp_path / "deep.json")
    app = make_app([path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.catalog.all_notices() == []
        await open_sim(pilot, "sim-1")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen) and screen.doc is not None and len(screen.doc) == 14
        for step in range(len(screen.doc)):  # every message, each tool call expanded
            await pilot.press("space")
            assert screen.cursor == step
            await pilot.press("j")
        await pilot.press("g")
        for _ in range(4):  # the writes: the two cut ones change nothing, the one nested 100 levels deep does
            await pilot.press("w")
        assert screen.cursor == 11
        tree = screen.query_one(StateTree)
        assert tree.marked_paths("agent")[("tasks", "task_1", "status")] == "changed"
        for tab in ("2", "3", "1"):
            await pilot.press(tab)
        await pilot.press("g", "j", "j", "e", "E")
        message_file, sim_file = opened_files(app)
        assert CUT_MARKER in message_file.read_text()
        assert json.loads(sim_file.read_text())["id"] == "sim-1"
