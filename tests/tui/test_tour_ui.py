"""The Tour (docs/tour.md), key by key, on the bundled recordings: the steps it names are where the keys land."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.rich_pane import RichPane

from .conftest import ROOT, open_sim, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

# (simulation, keys pressed from step 0, the step the cursor is on after each key), as docs/tour.md says.
TOUR = [
    ("as-gold-goodwill", "w", [11]),
    ("as-hasty-refund", "hD", [4, 8]),
    ("wh-gold-timeouts", "xxx", [7, 9, 13]),
    ("wh-gives-up", "x", [7]),
    ("cas-greedy-refused", "tttt", [2, 4, 6, 8]),  # the fourth request, the refused allocation, is step 8
    ("cas-greedy-refused", "u", [9]),
    ("cas-reordered-mismatch", "m", [13]),
]


async def test_the_tour_lands_where_it_says(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app([ROOT / "recordings"], runs_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        for sim_id, keys, steps in TOUR:
            await open_sim(pilot, sim_id)
            screen = app.screen
            assert isinstance(screen, TrajectoryScreen)
            landed = []
            for key in keys:
                await pilot.press(key)
                landed.append(screen.cursor)
            assert landed == steps, sim_id
            if sim_id == "cas-greedy-refused":  # the served results say so in the side panel
                screen.go(3)
                await pilot.pause()
                pane = " ".join(screen.query_one("#change-view", RichPane).plain.split())
                assert "served by the cassette: the result recorded at wh-gold-split step 3" in pane
            await pilot.press("escape")
