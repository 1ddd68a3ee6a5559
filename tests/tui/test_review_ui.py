"""Pilot tests of the Review and Ticks tabs: a reviewed run and a full-duplex run on the trajectory screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widget import Widget
from textual.widgets import TabbedContent

from tau_tui.model.notes import NoteBook
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tests.review_fixtures import full_duplex_run, reviewed_run

from .conftest import notified, open_sim, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus
BIG = (160, 45)


def pane_text(screen: Widget, selector: str) -> str:
    return screen.query_one(selector, RichPane).plain


async def test_a_reviewed_simulation_shows_its_review_jumps_to_errors_and_keeps_them_as_notes(
    make_app: MakeApp, tmp_path: Path
) -> None:
    folder = reviewed_run(tmp_path, keep=5)
    path = folder / "results_reviewed.json"
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        row = app.session.catalog.rows[0]
        assert row.path == path and row.review.reviewed
        table = app.runs_screen.query_one(RunTable)
        assert {"review", "auth"} <= {c.key for c in table.scrolling}
        assert "submission" not in {c.key for c in table.scrolling}
        await open_sim(pilot, row.sim_id)
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        tabs = screen.query_one("#side", TabbedContent)
        assert tabs.get_tab("tab-review").display and not tabs.get_tab("tab-ticks").display
        await pilot.press("6")
        assert tabs.active == "tab-review"
        panel = pane_text(screen, "#review-view")
        assert "review (agent + user)" in panel and "authentication succeeded" in panel
        assert "errors that name no step" in panel and "The conversation ended abruptly." in panel
        await pilot.press("y")
        assert screen.cursor == 3
        await pilot.press("y")
        assert screen.cursor == 6
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await pilot.pause()
        notes = NoteBook(path).notes
        assert sorted((n.step, n.source, n.error_type) for n in notes if n.step is not None) == [
            (3, "user", "hallucination"),
            (6, "agent", "wrong_arguments"),
        ]
        assert len(notes) == 3
        await pilot.press("R")  # again: nothing noted twice
        await app.workers.wait_for_complete()
        assert len(NoteBook(path).notes) == 3
        await pilot.press("7")  # no ticks: the tab stays hidden
        assert tabs.active == "tab-review"


async def test_a_full_duplex_simulation_has_a_tick_timeline(make_app: MakeApp, tmp_path: Path) -> None:
    full_duplex_run(tmp_path)
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        # a run folder found inside the folder given stays loaded (it used to vanish once loading finished)
        assert [r.sim_id for r in app.session.catalog.rows] == ["fd-sim-1"]
        await open_sim(pilot, "fd-sim-1")
        screen = app.screen
        tabs = screen.query_one("#side", TabbedContent)
        assert tabs.get_tab("tab-ticks").display
        await pilot.press("7")
        await pilot.press("y")  # the review error at ticks 30-38
        await pilot.pause()
        text = pane_text(screen, "#ticks-view")
        assert "51 ticks of 0.2 s" in text and "agent interrupts user: the user kept talking" in text
        assert "tick 30 at 6.0 s: agent and user speaking" in text
        assert "around tick 30" in text


def shown_rows(pane: RichPane) -> list[str]:
    """The pane's rows as the screen last drew them (the widget's line cache, not its content)."""
    from textual.geometry import Region

    strips = pane.render_lines(Region(0, 0, pane.size.width, pane.size.height))
    return [strip.text.rstrip() for strip in strips]


async def test_the_review_tab_shows_only_the_second_simulation_after_a_switch(
    make_app: MakeApp, tmp_path: Path
) -> None:
    folder = reviewed_run(tmp_path, keep=6)
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        first, second = (r.sim_id for r in app.session.catalog.rows[:2])
        assert all(r.path == folder / "results_reviewed.json" for r in app.session.catalog.rows[:2])
        await open_sim(pilot, first)
        await pilot.press("6")
        await pilot.pause()
        assert "errors that name no step" in "\n".join(shown_rows(app.screen.query_one("#review-view", RichPane)))
        await pilot.press("escape")
        await pilot.pause()
        await open_sim(pilot, second)
        await pilot.press("6")
        await pilot.pause()
        pane = app.screen.query_one("#review-view", RichPane)
        shown = "\n".join(shown_rows(pane))
        assert "User drifted." in shown
        assert "errors that name no step" not in shown and "The conversation ended abruptly." not in shown
        assert shown.count("y / Y") == 1


async def test_a_voice_run_folds_its_silent_chunks_until_z_shows_them(make_app: MakeApp, tmp_path: Path) -> None:
    from tau_tui.model.results import is_silent

    full_duplex_run(tmp_path)
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, "fd-sim-1")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        doc, view = screen.doc, screen.view
        assert doc is not None
        folded = [i for i in range(len(doc)) if doc.folds(i)]
        assert folded == [s.index for s in doc.steps if is_silent(s.message) and not s.events]
        assert folded[0] == 0 and 1 not in folded
        shown = len(doc) - len(folded)
        assert app.session.catalog.rows[0].entry.n_messages == shown  # the runs table's msgs: what the trajectory shows
        assert view.border_title is not None and f"{len(folded)} silent chunks folded (z shows)" in view.border_title
        visited = [screen.cursor]
        for _ in range(shown + 2):
            await pilot.press("j")
            visited.append(screen.cursor)
        assert len(set(visited)) == shown and not set(visited) & set(folded)
        await pilot.press("G", "g")
        assert screen.cursor == 1
        await pilot.press("z")
        await pilot.pause()
        assert view.border_title is not None and "silent chunks shown (z folds)" in view.border_title
        await pilot.press("g")
        assert screen.cursor == 0
        await pilot.press("z")
        await pilot.pause()
        assert view.border_title is not None
        assert screen.cursor == 1 and f"{len(folded)} silent chunks folded" in view.border_title


def test_a_silent_chunk_with_a_note_is_not_folded(tmp_path: Path) -> None:
    from types import SimpleNamespace
    from typing import cast

    from tau_tui.model.io import open_run
    from tau_tui.model.notes import Note
    from tau_tui.model.ticks import read_ticks
    from tau_tui.views.trajectory_doc import TrajectoryDoc

    run = open_run(full_duplex_run(tmp_path))
    doc = TrajectoryDoc(run.simulation(0).trajectory)
    assert not doc.folds(0)  # not known as a voice run yet: nothing folds
    doc.add_reviews(None, read_ticks(run.raw_sims[0]["ticks"]))
    assert doc.folds(0)
    doc.set_notes([cast(Note, SimpleNamespace(step=0, text="silence here"))])  # only what set_notes reads
    assert not doc.folds(0)


async def test_a_voice_run_is_graded_from_ticks_and_shows_its_consolidated_list_on_c(
    make_app: MakeApp, tmp_path: Path
) -> None:
    from tau_tui.tui.screens.consolidated import ConsolidatedScreen
    from tau_tui.tui.widgets.info_line import InfoLine
    from tau_tui.tui.widgets.trajectory_view import TrajectoryView
    from tests.review_fixtures import voice_mock_run

    voice_mock_run(tmp_path)
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        row = app.session.catalog.rows[0]
        assert row.cost is None and row.partly_unpriced  # agent_cost null: the total is unknown, not the user's
        await open_sim(pilot, "voice-sim-1")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        header = screen.query_one("#traj-header", InfoLine)
        assert "voice: graded from ticks" in header.plain and "unpriced" in header.plain
        assert screen.doc is not None and screen.report is not None
        assert len(screen.doc) == 66 and screen.report.evaluation.reward == 1.0
        assert screen.query_one("#side", TabbedContent).get_tab("tab-ticks").display
        await pilot.press("4")
        eval_text = " ".join(pane_text(screen, "#eval-view").split())  # as one line, however the pane wraps it
        assert "graded from ticks (full-duplex, as tau2 grades it)" in eval_text
        assert "agent usage: 6,042 tokens (4,730 audio), 5.8 s audio in, unpriced" in eval_text
        assert "agent cost: unpriced (recorded null, not 0)" in eval_text
        await pilot.press("c")
        await pilot.pause()
        consolidated = app.screen
        assert isinstance(consolidated, ConsolidatedScreen)
        consolidated_doc = consolidated.query_one(TrajectoryView).doc
        assert consolidated_doc is not None
        assert len(consolidated_doc) == 63
        assert "3 tool results before their calls here" in consolidated.query_one(InfoLine).plain
        view = consolidated.query_one(TrajectoryView)
        await pilot.press("G")  # the trajectory screen's keys move through the list
        await pilot.pause()
        last = view.cursor
        assert last > 0
        await pilot.press("g")
        await pilot.pause()
        assert view.cursor == 0
        await pilot.press("j")
        await pilot.pause()
        assert 0 < view.cursor <= last
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_c_on_a_text_run_says_there_is_no_consolidated_list(make_app: MakeApp, tmp_path: Path) -> None:
    reviewed_run(tmp_path, keep=4)
    app = make_app([tmp_path], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, app.session.catalog.rows[0].sim_id)
        screen = app.screen
        await pilot.press("c")
        await pilot.pause()
        assert app.screen is screen
        await wait_until(pilot, lambda: notified(app, "graded from its messages"), "the toast")
