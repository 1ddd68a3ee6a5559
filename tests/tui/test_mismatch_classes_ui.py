"""Mismatch classes in the runs table, its filters, and the trajectory's pills and mismatch panel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console, RenderableType
from textual.widgets import Checkbox

from tau_tui.analysis import Analyzer
from tau_tui.catalog import Catalog, ReplaySummary, RunFilter, RunRow, SortSpec
from tau_tui.model.io import open_run
from tau_tui.tui.screens.filters import FilterScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import COLUMN_BY_KEY
from tau_tui.views.panels import render_mismatch
from tau_tui.views.render import RenderContext, render_step
from tau_tui.views.trajectory_doc import TrajectoryDoc
from tests.replay.test_mismatch_classes import AS_FIXED, library_text_recording, retail_recording
from tests.tui.conftest import SIZE, MakeApp, settle

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry


def replay_of(row: RunRow) -> ReplaySummary:
    assert row.replay is not None
    return row.replay


def text_of(renderable: RenderableType, width: int = 160) -> str:
    console = Console(width=width, record=True)
    console.print(renderable)
    return console.export_text()


@pytest.fixture
def recordings(tmp_path: Path) -> dict[str, Path]:
    """(path, sim id) of: library text only, upstream fix only, library text then a divergence."""
    return {
        "library": library_text_recording(tmp_path / "library.json", then_diverge=False, sim_id="lib-only"),
        "upstream": retail_recording(tmp_path / "upstream.json", AS_FIXED),
        "both": library_text_recording(tmp_path / "both.json", sim_id="lib-then-diverge"),
    }


@pytest.fixture
def catalog(recordings: dict[str, Path], registry: DomainRegistry) -> Catalog:
    analyzer = Analyzer(registry)
    catalog = Catalog()
    for path in recordings.values():
        catalog.add_run(open_run(path))
    for row in catalog.rows:
        row.replay = ReplaySummary.of(analyzer.analyze(row.run, row.index))
    return catalog


def test_the_runs_table_counts_divergences_and_marks_explained_mismatches(catalog: Catalog) -> None:
    rows = {row.path.stem: row for row in catalog.rows}
    replays = {name: replay_of(r) for name, r in rows.items()}
    summaries = {
        name: (s.mismatches, s.divergences, s.library_text, s.upstream_fix, s.first_mismatch_class)
        for name, s in replays.items()
    }
    assert summaries == {
        "library": (1, 0, 1, 0, "library_text"),
        "upstream": (1, 0, 0, 1, "upstream_fix"),
        "both": (2, 1, 1, 0, "library_text"),
    }
    cell = COLUMN_BY_KEY["mismatches"].cell
    assert [(cell(rows[n]).plain, cell(rows[n]).style) for n in ("library", "upstream", "both")] == [
        ("≈", "dim"),
        ("≈", "dim"),
        ("1", "bold red"),
    ]
    by_divergence = catalog.view(RunFilter(), SortSpec("mismatches", reverse=True))
    assert by_divergence[0].path.stem == "both"


def test_has_mismatch_keeps_its_meaning_and_has_divergence_selects_divergences(catalog: Catalog) -> None:

    def stems(rows: list[RunRow]) -> list[str]:
        return sorted(r.path.stem for r in rows)

    assert stems(catalog.view(RunFilter(has_mismatch=True), SortSpec())) == ["both", "library", "upstream"]
    assert stems(catalog.view(RunFilter(has_divergence=True), SortSpec())) == ["both"]
    assert RunFilter(has_divergence=True).chips() == ["has divergence"]
    assert RunFilter(has_divergence=True).needs_replay


def test_the_trajectory_pills_and_the_mismatch_panel_name_the_class(
    recordings: dict[str, Path], registry: DomainRegistry
) -> None:
    analyzer = Analyzer(registry)
    views = {}
    for name, path in recordings.items():
        analysis = analyzer.analyze(open_run(path), 0)
        doc = TrajectoryDoc(analysis.sim.trajectory, analysis.timeline)
        views[name] = (doc, [c for c in doc.calls if c.is_mismatch])
    assert [[c.pill for c in calls] for _, calls in views.values()] == [
        ["lib text"],
        ["upstream fix"],
        ["lib text", "mismatch"],
    ]
    assert all(c.kind == "mismatch" for _, calls in views.values() for c in calls)
    doc, calls = views["both"]
    assert doc.targets["mismatch"] == [c.result_step for c in calls]  # `m` still stops at every mismatch
    library, divergence = (text_of(render_mismatch(c)) for c in calls)
    assert library.startswith("≈ mismatch (library text only) update_task_status(")
    assert 'differs only in pydantic\'s "For further information visit …" lines (1 recorded, 0 replayed)' in library
    assert divergence.startswith("≠ mismatch (divergence) update_task_status(")
    upstream = text_of(render_mismatch(views["upstream"][1][0]))
    assert upstream.startswith("≈ mismatch (upstream fix, tau2-bench#317) modify_pending_order_items(")
    step = render_step(doc.steps[calls[0].call_step], RenderContext(width=120, expanded=True))
    assert "≈ differs only in pydantic's" in text_of(step)


async def test_the_filter_form_offers_divergences_only(recordings: dict[str, Path], make_app: MakeApp) -> None:
    app = make_app(list(recordings.values()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        assert len(table.rows) == 3
        previews = []
        for index in range(3):
            table.move_cursor(index)
            await pilot.pause()
            previews.append(app.runs_screen.query_one("#row-preview", InfoLine).plain.splitlines()[1])
        assert sorted(previews) == [
            " first mismatch at step 2 (library text)",
            " first mismatch at step 2 (library text)",
            " first mismatch at step 3 (upstream fix)",
        ]
        await pilot.press("F")
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#f-has_divergence", Checkbox).value = True
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert [row.sim_id for row in app.runs_screen.query_one(RunTable).rows] == ["lib-then-diverge"]


def test_the_trajectory_header_shows_explained_mismatches_apart(
    recordings: dict[str, Path], registry: DomainRegistry
) -> None:
    from tau_tui.tui.screens.trajectory import header_fact

    analyzer = Analyzer(registry)
    styles = {}
    for name, path in recordings.items():
        (mismatch,) = [f for f in analyzer.analyze(open_run(path), 0).summary() if f.kind == "mismatch"]
        styles[name] = (header_fact(mismatch).plain, str(header_fact(mismatch).style))
    assert styles == {
        "library": ("1 mismatch (1 library text)", "yellow"),
        "upstream": ("1 mismatch (1 upstream fix)", "yellow"),
        "both": ("2 mismatch (1 divergence, 1 library text)", "red"),
    }
