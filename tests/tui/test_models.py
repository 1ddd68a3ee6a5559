"""The TUI's pure adapters (no textual): catalog, trajectory document, renderers, state labels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console, RenderableType

from tau_tui.catalog import Catalog, ReplaySummary, RunFilter, RunRow, SortSpec, query_terms
from tau_tui.model.io import RunFile, open_run
from tau_tui.views.panels import render_changes, render_mismatch, side_by_side
from tau_tui.views.render import RENDERERS, RenderContext, render_step, role_of
from tau_tui.views.state_nodes import MISSING, label, marks_for, value_at
from tau_tui.views.trajectory_doc import TrajectoryDoc

from .conftest import MOCK_DEMO

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer


def text_of(renderable: RenderableType, width: int = 160) -> str:
    console = Console(width=width, record=True)
    console.print(renderable)
    return console.export_text()


@pytest.fixture(scope="module")
def run() -> RunFile:
    return open_run(MOCK_DEMO)


def index_of(run: RunFile, sim_id: str) -> int:
    index = run.find(sim_id)
    assert index is not None
    return index


def doc_for(run: RunFile, analyzer: Analyzer, sim_id: str) -> TrajectoryDoc:
    index = index_of(run, sim_id)
    analysis = analyzer.analyze(run, index)
    return TrajectoryDoc(analysis.sim.trajectory, analysis.timeline)


# --- catalog ------------------------------------------------------------------------------------


def test_catalog_filters_sorts_and_searches(run: RunFile, analyzer: Analyzer) -> None:
    catalog = Catalog()
    catalog.add_run(run)
    for row in catalog.rows:
        row.replay = ReplaySummary.of(analyzer.analyze(run, row.index))

    def ids(rows: list[RunRow]) -> list[str]:
        return [r.sim_id for r in rows]

    assert [r.status for r in catalog.rows] == ["pass", "pass", "pass", "fail", "fail"]
    assert ids(catalog.view(RunFilter(failed_only=True), SortSpec())) == ["demo-structural-findings", "demo-user-tools"]
    assert ids(catalog.view(RunFilter(text="dismiss"), SortSpec())) == ["demo-user-tools"]
    assert ids(catalog.view(RunFilter(text='"mark task_1"'), SortSpec())) == ["demo-clean-pass", "demo-mismatch"]
    assert ids(catalog.view(RunFilter(has_finding=True), SortSpec())) == ["demo-structural-findings"]
    assert ids(catalog.view(RunFilter(), SortSpec("task"))) == [
        "demo-structural-findings",
        "demo-hallucinated-tool",
        "demo-clean-pass",
        "demo-mismatch",
        "demo-user-tools",
    ]
    by_mismatch = catalog.view(RunFilter(), SortSpec("mismatches", reverse=True))
    assert by_mismatch[0].sim_id == "demo-mismatch"


def test_replay_filters_hide_rows_not_yet_replayed(run: RunFile) -> None:
    catalog = Catalog()
    catalog.add_run(run)
    assert catalog.view(RunFilter(has_mismatch=True), SortSpec()) == []
    assert len(catalog.view(RunFilter(), SortSpec())) == 5


def test_reloading_a_file_replaces_its_rows_in_place(run: RunFile) -> None:
    catalog = Catalog()
    catalog.add_run(run)
    again = open_run(MOCK_DEMO)
    catalog.add_run(again)
    assert len(catalog.rows) == 5
    assert all(r.run is again for r in catalog.rows)
    found = catalog.find(MOCK_DEMO, "demo-user-tools")
    assert found is not None and found.index == 4


def test_unscored_and_infra_runs_are_never_failed(tmp_path: Path) -> None:
    from tests.helpers import greet, results_file, user

    path = results_file(
        tmp_path / "r.json",
        [greet(), user("hi")],
        extra_sims=[
            {
                "id": "infra",
                "task_id": "t_update",
                "termination_reason": "infrastructure_error",
                "messages": [],
                "start_time": "x",
                "end_time": "y",
                "duration": 1.0,
                "info": {"error": "rate limited"},
            },
        ],
    )
    catalog = Catalog()
    catalog.add_run(open_run(path))
    assert [r.status for r in catalog.rows] == ["unscored", "infra"]
    assert catalog.view(RunFilter(failed_only=True), SortSpec()) == []


def test_query_terms() -> None:
    assert query_terms("  Refund  ORDER ") == ["refund", "order"]
    assert query_terms('"exact phrase"') == ["exact phrase"]


# --- trajectory document ---------------------------------------------------------------------------


def test_jump_targets(run: RunFile, analyzer: Analyzer) -> None:
    doc = doc_for(run, analyzer, "demo-clean-pass")
    assert doc.targets["call"] == [2, 4]
    assert doc.targets["write"] == [5]
    assert doc.next("write", 0) == 5 and doc.next("write", 5) is None
    assert doc.previous("call", 4) == 2
    doc = doc_for(run, analyzer, "demo-hallucinated-tool")
    assert doc.targets["hallucinated"] == [2]
    assert doc.targets["error"] == [3]
    doc = doc_for(run, analyzer, "demo-structural-findings")
    assert doc.targets["finding"] == [2, 7]
    doc = doc_for(run, analyzer, "demo-mismatch")
    assert doc.targets["mismatch"] == [3]


def test_doc_without_replay_still_pairs_calls(run: RunFile) -> None:
    sim = run.simulation(index_of(run, "demo-hallucinated-tool"))
    doc = TrajectoryDoc(sim.trajectory, None)
    assert [c.pill for c in doc.calls] == ["error", "not replayed"]
    assert doc.targets["write"] == [] and doc.targets["error"] == [3]


# --- renderers ------------------------------------------------------------------------------------------


def test_every_event_kind_has_a_renderer(run: RunFile, analyzer: Analyzer) -> None:
    kinds: set[str] = set()
    for sim_id in (
        "demo-clean-pass",
        "demo-mismatch",
        "demo-hallucinated-tool",
        "demo-structural-findings",
        "demo-user-tools",
    ):
        doc = doc_for(run, analyzer, sim_id)
        for step in doc.steps:
            kinds.update(e.kind for e in step.events)
            assert render_step(step, RenderContext(80)).plain
            assert render_step(step, RenderContext(80, expanded=True)).plain
    assert kinds <= set(RENDERERS)
    assert {"write", "mismatch", "hallucinated", "tool_call", "tool_result", "tool_error", "finding"} <= kinds


def test_call_line_fits_the_width_with_its_pill(run: RunFile, analyzer: Analyzer) -> None:
    doc = doc_for(run, analyzer, "demo-mismatch")
    text = render_step(doc.steps[2], RenderContext(50))
    assert text.cell_len == 50 and text.plain.endswith(" mismatch ")
    assert text.plain.startswith("≠ update_task_status(")
    expanded = render_step(doc.steps[2], RenderContext(50, expanded=True)).plain
    assert '"status": "completed"' in expanded


def test_user_side_tool_calls_are_labelled(run: RunFile, analyzer: Analyzer) -> None:
    doc = doc_for(run, analyzer, "demo-user-tools")
    assert role_of(doc.steps[1])[0] == "user ⚒"
    assert role_of(doc.steps[2])[0] == "user tool"
    assert role_of(doc.steps[3])[0] == "user"


def test_mismatch_panel_marks_the_differing_lines(run: RunFile, analyzer: Analyzer) -> None:
    doc = doc_for(run, analyzer, "demo-mismatch")
    call = doc.calls[0]
    text = text_of(render_mismatch(call))
    assert '−   "status": "done"' in text and '+   "status": "completed"' in text
    table = text_of(side_by_side(["a", "b"], ["a", "c"], ("left", "right")), 40)
    assert "− b" in table and "+ c" in table


def test_changes_panel(run: RunFile, analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(run, index_of(run, "demo-clean-pass"))
    agent, user = analysis.timeline.changes_at(5)
    text = text_of(render_changes((("agent DB", agent), ("user DB", user)), "none"))
    assert "agent DB · 1 change" in text and '"pending" → "completed"' in text
    assert "none" in text_of(render_changes((("agent DB", []),), "none"))


# --- state labels -------------------------------------------------------------------------------------------


def test_state_labels_and_marks(run: RunFile, analyzer: Analyzer) -> None:
    analysis = analyzer.analyze(run, index_of(run, "demo-clean-pass"))
    state = analysis.timeline.state_at(5).agent
    assert value_at(state, ("tasks", "task_1", "status")) == "completed"
    assert value_at(state, ("tasks", "nope")) is MISSING
    assert label("status", "completed", "changed").plain == '✎ status: "completed"'
    assert label("tasks", state["tasks"]).plain == "tasks {1}"
    marks = marks_for([(("tasks", "task_1", "status"), "changed")])
    assert marks == {("tasks",): "within", ("tasks", "task_1"): "within", ("tasks", "task_1", "status"): "changed"}


def test_comparison_stacks_when_narrow() -> None:
    from tau_tui.views.panels import OutputLines

    comparison = OutputLines(["{", '  "a": 1', "}"], ["{", '  "a": 2', "}"], ("recorded", "replayed"))
    wide = text_of(comparison, 100)
    assert "recorded" in wide.splitlines()[0] and "replayed" in wide.splitlines()[0]
    assert '−   "a": 1' in wide and '+   "a": 2' in wide
    narrow = text_of(comparison, 40).splitlines()
    assert narrow[0].startswith("− recorded")
    assert '−   "a": 1' in narrow and '+   "a": 2' in narrow
