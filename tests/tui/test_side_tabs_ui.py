"""Pilot tests of the trajectory screen's side tabs when the screen is reused for another simulation:
every tab shows the simulation on screen, including the panes filled while their tab was hidden."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from textual.widget import Widget
from textual.widgets import Static, TabbedContent

from tau_tui.model.notes import NoteBook
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.rich_pane import RichPane

from .conftest import ROOT, open_sim, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

TABS = ("state", "task", "reward", "eval", "notes")


def shown(screen: Widget, tab: str) -> str:
    """The text the tab shows, as drawn (RichPanes keep their drawn lines; Statics are rendered here)."""
    if tab in ("state", "eval", "notes"):
        selector = {"state": "#change-view", "eval": "#eval-view", "notes": "#notes-view"}[tab]
        return screen.query_one(selector, RichPane).plain
    console = Console(file=io.StringIO(), width=200, record=True)
    for selector in {"task": ("#task-view",), "reward": ("#recorded-view", "#derived-view")}[tab]:
        console.print(screen.query_one(selector, Static).content)
    return console.export_text()


# What each tab shows for one simulation and never for the other.
EXPECTED = {
    "as-gold-goodwill": {
        "state": "step 10",
        "task": "goodwill_for_late_delivery",
        "reward": "reward: 1",
        "eval": "KB-205",
        "notes": "note on the goodwill run",
    },
    "as-hasty-refund": {
        "state": "step 10",
        "task": "large_refund_needs_approval",
        "reward": "reward: 0",
        "eval": "APR-3001",
        "notes": "note on the hasty run",
    },
}


async def test_every_tab_shows_the_second_simulation_after_switching(make_app: MakeApp, tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(ROOT / "recordings" / "aftersales.json", folder)
    book = NoteBook(folder / "aftersales.json")
    book.add("as-gold-goodwill", "agent", "other", "note on the goodwill run")
    book.add("as-hasty-refund", "agent", "other", "note on the hasty run")
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        for sim_id, other in (
            ("as-gold-goodwill", "as-hasty-refund"),
            ("as-hasty-refund", "as-gold-goodwill"),
            ("as-gold-goodwill", "as-hasty-refund"),
        ):
            await open_sim(pilot, sim_id)
            screen = app.screen
            assert isinstance(screen, TrajectoryScreen)
            screen.go(10)
            for number, tab in enumerate(TABS, start=1):
                await pilot.press(str(number))
                assert screen.query_one("#side", TabbedContent).active == f"tab-{tab}"
                want, unwanted = EXPECTED[sim_id][tab], EXPECTED[other][tab]

                def tab_shows(s: TrajectoryScreen = screen, t: str = tab, w: str = want) -> bool:
                    return w in shown(s, t)

                await wait_until(pilot, tab_shows, f"{sim_id}'s {tab} tab")
                if unwanted != want:
                    assert unwanted not in shown(screen, tab), (sim_id, tab)
            await pilot.press("escape")
