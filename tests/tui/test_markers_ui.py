"""Injected faults, cassette refusals and discovered tools, as the bundled recordings show them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.analysis import Analyzer
from tau_tui.catalog import EvalSummary, RunFilter, RunRow
from tau_tui.domains import DomainRegistry
from tau_tui.model.io import open_run
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.render import RenderContext, render_step
from tau_tui.views.trajectory_doc import TrajectoryDoc

from .conftest import ROOT, open_sim, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

BIG = (160, 45)
OUR_RECORDINGS = ROOT / "recordings"


def doc_of(name: str, sim_id: str) -> TrajectoryDoc:
    run = open_run(OUR_RECORDINGS / name)
    index = run.find(sim_id)
    assert index is not None
    analysis = Analyzer(DomainRegistry(None)).analyze(run, index)
    return TrajectoryDoc(run.simulation(index).trajectory, analysis.timeline)


def evaluation_of(row: RunRow) -> EvalSummary:
    assert row.evaluation is not None
    return row.evaluation


def replay_counts(row: RunRow) -> tuple[int, int, int]:
    """A row's injected faults, cassette refusals and discovered tools."""
    assert row.replay is not None
    return row.replay.faults, row.replay.refused, row.replay.discovered


def step_text(doc: TrajectoryDoc, step: int, expanded: bool = False) -> str:
    return render_step(doc.steps[step], RenderContext(120, expanded=expanded)).plain


def test_injected_faults_have_their_pill_and_say_kind_and_attempt() -> None:
    doc = doc_of("warehouse.json", "wh-gold-split")
    assert doc.targets["fault"] == [7, 9, 13]
    assert [c.pill for c in doc.calls] == ["read", "read", "fault", "slow", "read", "fault", "ok", "ok"]
    assert "↯ lookup_stock(sku=TRV-15-WH, warehouse=south)" in step_text(doc, 6)
    expanded = step_text(doc, 7, expanded=True)
    assert "injected fault: timeout (30 s) · attempt 1 · plan rule 0 (not carried out)" in expanded
    assert "slow response (6 s) · attempt 2 · plan rule 2 (carried out, answered late)" in step_text(doc, 9, True)
    assert doc.calls[5].kind == "fault" and not doc.calls[5].is_write  # a faulted write changed nothing


def test_a_cassette_refusal_ends_the_episode_where_it_is_marked() -> None:
    doc = doc_of("warehouse_cassette.json", "cas-greedy-refused")
    assert doc.targets["refusal"] == [9] and doc.calls[-1].pill == "refused"
    text = step_text(doc, 9)
    assert "⊘ refused by the cassette: different arguments" in text and "the episode ended here" in text
    assert len(doc.call_views_at(9)) == 1  # the refused call once, though two events carry it


def test_results_served_by_a_cassette_say_where_they_were_recorded() -> None:
    from tau_tui.views.panels import render_call

    doc = doc_of("warehouse_cassette.json", "cas-greedy-refused")
    served = "⏵ served by the cassette: the result recorded at wh-gold-split step 3"
    assert served in render_call(doc.call_views_at(3)[0]).plain  # the side panel at the cursor
    assert served in step_text(doc, 3, expanded=True) and served not in step_text(doc, 3)
    assert "served by the cassette" not in render_call(doc.call_views_at(9)[0]).plain  # refused: never served


def test_a_discovered_tool_is_marked_where_it_was_found_and_on_its_calls() -> None:
    doc = doc_of("aftersales.json", "as-gold-goodwill")
    assert doc.targets["discovery"] == [7]
    assert "✦ discovered issue_goodwill_credit" in step_text(doc, 7)
    credit = next(c for c in doc.calls if c.name == "issue_goodwill_credit")
    assert credit.discoverable and credit.discovered_at == 7
    assert "✦" in step_text(doc, 10) and "discoverable tool, discovered at step 7" in step_text(doc, 10, True)


async def test_trajectory_screen_jumps_to_faults_and_refusals(make_app: MakeApp) -> None:
    app = make_app([OUR_RECORDINGS])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, "wh-gold-timeouts")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("i")
        assert screen.cursor == 7
        assert "injected fault 1/3" in screen.query_one("#traj-status", InfoLine).plain
        pane = " ".join(screen.query_one("#change-view", RichPane).plain.split())
        assert "fault lookup_stock" in pane and "injected fault: timeout (30 s) · attempt 1" in pane
        await pilot.press("i")
        assert screen.cursor == 9 and "attempt 2" in screen.query_one("#change-view", RichPane).plain
        assert "3 injected faults" in screen.query_one("#traj-header", InfoLine).plain
        assert screen.view.border_subtitle is not None and "↯ 3" in screen.view.border_subtitle
        await pilot.press("u")  # no refusal in this run: the cursor stays
        assert screen.cursor == 9
        await pilot.press("escape")
        await open_sim(pilot, "cas-greedy-refused")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("u")
        assert screen.cursor == 9 and "refused 1/1" in screen.query_one("#traj-status", InfoLine).plain
        assert "1 refused" in screen.query_one("#traj-header", InfoLine).plain
        assert "refused by the cassette: different arguments (never run)" in " ".join(
            screen.query_one("#change-view", RichPane).plain.split()
        )
        await pilot.press("escape")
        await open_sim(pilot, "as-gold-goodwill")
        assert "1 discovered" in app.screen.query_one("#traj-header", InfoLine).plain


async def test_runs_table_counts_faults_refusals_and_discoveries(make_app: MakeApp) -> None:
    app = make_app([OUR_RECORDINGS])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        rows = {r.sim_id: r for r in app.session.catalog.rows}
        assert {k: replay_counts(r) for k, r in rows.items()} == {
            "as-gold-goodwill": (0, 0, 1),
            "as-gold-two-returns": (0, 0, 1),
            "as-hasty-refund": (0, 0, 0),
            "wh-gold-split": (3, 0, 0),
            "wh-gold-timeouts": (3, 0, 0),
            "wh-gives-up": (1, 0, 0),
            "cas-greedy-refused": (1, 1, 0),
            "cas-reordered-mismatch": (3, 0, 0),
        }
        # a refused cassette run is a scored fail, not an infrastructure error
        assert rows["cas-greedy-refused"].status == "fail"
        screen = app.runs_screen
        screen.set_filter(RunFilter(has_refusal=True))
        assert [r.sim_id for r in screen.query_one(RunTable).rows] == ["cas-greedy-refused"]
        screen.set_filter(RunFilter(has_fault=True))
        assert len(screen.query_one(RunTable).rows) == 5


# --- live play marks them as the inspector does ----------------------------------------------------------


async def play_one_call(
    registry: DomainRegistry, tmp_path: Path, domain: str, task: str, tool: str, arguments: dict[str, Any]
) -> tuple[TrajectoryDoc | None, dict[int, str], int, int]:
    """Play the agent of ``task``, call ``tool`` once; returns the screen, the view's text of the result step."""
    from tau_tui.rollout import PlaySession
    from tau_tui.tui.play import PlayApp
    from tau_tui.tui.screens.play import PlayScreen
    from tau_tui.tui.widgets.trajectory_view import TrajectoryView

    from .conftest import wait_until

    session = PlaySession(registry, domain, task, "agent", "scripted/user")
    app = PlayApp(session, tmp_path / "play.json")
    async with app.run_test(size=BIG) as pilot:
        await wait_until(pilot, lambda: session.pending is not None, "the first turn")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        before = len(session.messages)
        session.call_tool(tool, arguments)
        await wait_until(
            pilot,
            lambda: screen.doc is not None and len(screen.doc) >= before + 2 and session.pending is not None,
            "the tool result",
        )
        await pilot.pause()
        view = screen.query_one(TrajectoryView)
        call_step, result_step = before, before + 1
        shown = {step: "\n".join(line.plain for line in view._wrap_block(step)) for step in (call_step, result_step)}
        return screen.doc, shown, call_step, result_step


async def test_live_play_marks_an_injected_fault_as_the_inspector_does(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    doc, shown, call_step, result_step = await play_one_call(
        registry,
        tmp_path,
        "warehouse",
        "south_times_out_twice",
        "lookup_stock",
        {"sku": "CP-22-3M", "warehouse": "south"},
    )
    assert doc is not None
    call = doc.calls[-1]
    assert call.fault is not None
    assert call.pill == "fault" and call.kind == "fault" and call.fault["kind"] == "timeout"
    assert doc.targets["fault"] == [result_step]
    assert "↯ lookup_stock" in shown[call_step] and "fault" in shown[call_step]
    assert "error" not in shown[call_step].split()  # the pill says fault, not error


async def test_live_play_shows_a_discovered_tool_as_the_inspector_does(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    doc, shown, _, result_step = await play_one_call(
        registry, tmp_path, "aftersales", "goodwill_for_late_delivery", "read_document", {"doc_id": "KB-205"}
    )
    assert doc is not None
    assert doc.targets["discovery"] == [result_step]
    assert "✦ discovered issue_goodwill_credit" in shown[result_step]


async def test_the_trajectory_footer_counts_flags_and_tool_errors_as_the_runs_table_does(make_app: MakeApp) -> None:
    from tests.conftest import CORPUS

    qwen = CORPUS / "sierra-research__tau2-bench__qwen2.5-7b_airline_default_gpt-4.1-2025-04-14_1trials.json"
    app = make_app([qwen])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        rows = {row.task: row for row in app.session.catalog.rows}
        # task 3: three flags on one step; task 11: one tool error and two errors recorded on agent messages
        checks: tuple[tuple[str, Callable[[TrajectoryDoc, RunRow], bool]], ...] = (
            ("3", lambda doc, row: len(doc.targets["flag"]) < evaluation_of(row).n_flags),
            ("11", lambda doc, row: len(doc.targets["error"]) > row.entry.n_tool_errors),
        )
        for task, steps_differ in checks:
            row = rows[task]
            await open_sim(pilot, row.sim_id)
            screen = app.screen
            assert isinstance(screen, TrajectoryScreen)
            assert screen.doc is not None
            assert steps_differ(screen.doc, row)
            subtitle = screen.view.border_subtitle
            assert subtitle is not None
            marks = {
                mark: count
                for mark, count in (part.split(" ", 1) for part in subtitle.split("  ") if part.count(" ") == 1)
            }
            assert marks["⚑"] == str(evaluation_of(row).n_flags)
            assert marks["✗"] == str(row.entry.n_tool_errors)
            await pilot.press("escape")
            await pilot.pause()
