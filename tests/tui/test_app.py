"""Pilot tests of the inspector on the bundled mock recordings: they assert app state, never sleep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TextArea
from textual.widgets.tree import TreeNode

from tau_tui.tui.app import TauTuiApp
from tau_tui.tui.screens.filters import FilterScreen
from tau_tui.tui.screens.help import HelpScreen
from tau_tui.tui.screens.runs import RunsScreen
from tau_tui.tui.screens.text_view import TextViewScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.tui.widgets.state_tree import NodeRef, StateTree

from .conftest import (
    RECORDINGS,
    SIZE,
    TELECOM_IDS,
    current_screen,
    notified,
    open_sim,
    opened_files,
    settle,
    wait_until,
)

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


def shown_ids(app: TauTuiApp) -> list[str]:
    return [row.sim_id for row in app.runs_screen.query_one(RunTable).rows]


def plain(screen: Widget, selector: str, width: int = 200) -> str:
    """The plain text of a Static's rich content."""
    console = Console(width=width, record=True)
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


def change_text(screen: TrajectoryScreen) -> str:
    """The plain text of the state pane's change view."""
    return screen.query_one("#change-view", RichPane).plain


def label(node: TreeNode[NodeRef] | None) -> str:
    """The plain text of a state-tree node's label (Tree makes every label a Text)."""
    assert node is not None
    text = node.label
    assert isinstance(text, Text)
    return text.plain


def kind(node: TreeNode[NodeRef]) -> str:
    """What a state-tree node lists: "side", "entry" or "more"."""
    assert node.data is not None
    return node.data.kind


# --- runs screen ------------------------------------------------------------------------------


async def test_runs_table_lists_every_simulation_with_replay_columns(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert shown_ids(app) == [
            "demo-clean-pass",
            "demo-mismatch",
            "demo-hallucinated-tool",
            "demo-structural-findings",
            "demo-user-tools",
        ]
        rows = {r.sim_id: r for r in app.session.catalog.rows}
        assert rows["demo-mismatch"].replay is not None
        assert rows["demo-mismatch"].replay.mismatches == 1
        assert rows["demo-hallucinated-tool"].replay is not None
        assert rows["demo-hallucinated-tool"].replay.hallucinated == 1
        assert rows["demo-structural-findings"].replay is not None
        assert rows["demo-structural-findings"].replay.findings == 2
        assert rows["demo-user-tools"].replay is not None
        assert rows["demo-user-tools"].replay.db_match is False
        assert rows["demo-clean-pass"].replay is not None
        assert rows["demo-clean-pass"].replay.db_match is True


async def test_runs_screen_is_not_loading_to_textual(make_app: MakeApp) -> None:
    """The indexing bar is our own: Textual's ``loading`` reactive (the spinner, disabled input, the
    wait pointer) stays False on the runs screen, during and after the load."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.loading is False
        await settle(pilot)
        assert app.runs_screen.loading is False
        assert not app.runs_screen._check_disabled()


async def test_failed_only_and_replay_filters(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        assert shown_ids(app) == ["demo-structural-findings", "demo-user-tools"]
        await pilot.press("c")
        assert len(shown_ids(app)) == 5
        screen = app.runs_screen
        screen.set_filter(screen.filter.with_(has_mismatch=True))
        assert shown_ids(app) == ["demo-mismatch"]
        screen.set_filter(screen.filter.with_(has_mismatch=False, has_hallucination=True))
        assert shown_ids(app) == ["demo-hallucinated-tool"]
        screen.set_filter(screen.filter.with_(has_hallucination=False, has_tool_error=True))
        assert shown_ids(app) == ["demo-hallucinated-tool"]
        screen.set_filter(screen.filter.with_(has_tool_error=False, task="create"))
        assert shown_ids(app) == ["demo-structural-findings"]


async def test_filter_form_applies_as_you_change_it(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("F")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press("space")  # the first box: failed only
        assert app.runs_screen.filter.failed_only
        assert shown_ids(app) == ["demo-structural-findings", "demo-user-tools"]
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        assert "failed" in app.runs_screen.query_one("#filter-bar", InfoLine).plain


def _many_telecom_rows(folder: Path, copies: int = 6) -> Path:
    """The telecom-ids fixture with its simulations repeated under new ids: more rows than 80x24 shows."""
    data = json.loads(TELECOM_IDS.read_text())
    data["simulations"] = [{**sim, "id": f"{sim['id']}-{n}"} for n in range(copies) for sim in data["simulations"]]
    path = folder / TELECOM_IDS.name
    path.write_text(json.dumps(data))
    return path


async def test_clearing_a_filter_that_matched_nothing_shows_the_cursor_row(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app([_many_telecom_rows(tmp_path)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.runs_screen
        table = screen.query_one(RunTable)
        table.focus()
        await pilot.press("G", "k", "k")  # a row far down, off the first page
        target = table.current_key
        assert target is not None
        assert table.cursor_row > table._body_height and table.scroll_offset.y > 0
        await pilot.press("slash", *"zzzqqq", "enter")
        assert table.row_count == 0
        await pilot.press("c")
        await pilot.pause()
        assert table.row_count == 48 and table.current_key == target
        top = table.scroll_offset.y
        assert top <= table.cursor_row < top + table._body_height  # the cursor row is on screen
        row = app.session.catalog.by_key[target]
        assert row.sim_id in screen.query_one("#row-preview", InfoLine).plain  # the row the detail pane describes
        line = table.render_line(table.cursor_row - top + 1)
        cursor_style = table.get_component_rich_style("line-table--cursor")
        assert line.text.strip() and all(
            seg.style and seg.style.bgcolor == cursor_style.bgcolor for seg in line if seg.text.strip()
        )  # and highlighted
        await pilot.press("j")
        assert table.cursor_row == table.row_index[target] + 1


async def test_search_message_contents(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"delete task_1")
        await pilot.press("enter")
        assert app.runs_screen.filter.text == "delete task_1"
        assert shown_ids(app) == ["demo-hallucinated-tool"]
        # tool names and arguments are searched too
        await pilot.press("slash", "ctrl+u", *"dismiss_notification", "enter")
        assert shown_ids(app) == ["demo-user-tools"]
        await pilot.press("escape")
        assert len(shown_ids(app)) == 5


async def test_sort_by_column_and_reverse(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.runs_screen
        screen._sort_by("turns")
        assert [r.entry.n_messages for r in screen.shown] == [6, 8, 8, 9, 10]
        await pilot.press("S")
        assert [r.entry.n_messages for r in screen.shown] == [10, 9, 8, 8, 6]


async def test_unreadable_file_is_a_one_line_notice(make_app: MakeApp, tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"simulations": [')
    app = make_app([tmp_path, RECORDINGS])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notices = app.session.catalog.all_notices()
        assert [n.path.name for n in notices] == ["broken.json"]
        assert "truncated JSON" in notices[0].text
        assert len(shown_ids(app)) == 5
        assert "broken.json" in plain(app.runs_screen, "#notices")
        await pilot.press("exclamation_mark")
        assert isinstance(app.screen, TextViewScreen) and "broken.json" in app.screen.text


async def test_load_notices_without_any_say_so_instead_of_an_empty_list(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.catalog.all_notices() == []
        await pilot.press("exclamation_mark")
        assert isinstance(app.screen, RunsScreen)
        await wait_until(pilot, lambda: notified(app, "no load notices"), "the toast")


# --- trajectory screen -----------------------------------------------------------------------


async def test_open_run_shows_messages_and_recorded_vs_derived(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        assert screen.sim_id == "demo-clean-pass"
        assert screen.doc is not None
        assert len(screen.doc) == 8
        assert screen.cursor == 0
        header = screen.query_one("#traj-header", InfoLine).plain
        assert "recorded" in header and "derived" in header
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_step_to_next_write_shows_changed_path_in_db_pane(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("w")
        assert screen.cursor == 5  # the result of update_task_status: where the state changes
        tree = screen.query_one(StateTree)
        path = ("tasks", "task_1", "status")
        assert tree.marked_paths("agent")[path] == "changed"
        node = tree.node_at("agent", path)
        assert node is not None and "completed" in label(node)
        assert node.parent is not None
        assert node.parent.parent is not None
        assert node.parent.is_expanded and node.parent.parent.is_expanded
        assert tree.cursor_node is node
        assert "tasks.task_1.status" in change_text(screen)
        # stepping back to before the write shows the old value, unmarked
        await pilot.press("k")
        assert screen.cursor == 4
        assert "pending" in label(tree.node_at("agent", path))
        assert tree.marked_paths("agent") == {}


async def test_user_side_tool_write_changes_the_user_db(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("w", "w")
        assert screen.cursor == 8
        tree = screen.query_one(StateTree)
        assert tree.marked_paths("user")[("notifications", "notif_1", "status")] == "changed"
        assert "read" in label(tree.node_at("user", ("notifications", "notif_1", "status")))
        assert screen.doc is not None
        assert screen.doc.steps[7].user_side_tool
        await pilot.press("W")
        assert screen.cursor == 5


async def test_next_mismatch_shows_recorded_vs_replayed(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("m")
        assert screen.cursor == 3
        text = change_text(screen)
        assert "recorded" in text and "replayed (ours)" in text
        assert '−   "status": "done"' in text
        assert '+   "status": "completed"' in text
        assert "differs at: status" in text


async def test_next_hallucinated_call_and_error(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-hallucinated-tool")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("h")
        assert screen.cursor == 2
        assert "hallucinated" in change_text(screen)
        await pilot.press("g", "x")
        assert screen.cursor == 3  # the error result of the unknown tool
        await pilot.press("G")
        assert screen.cursor == 7
        await pilot.press("t")  # no tool call after the last message: the cursor stays
        assert screen.cursor == 7


async def test_findings_and_gold_diff(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-structural-findings")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("f")
        assert screen.cursor == 2
        await pilot.press("f")
        assert screen.cursor == 7
        await pilot.press("escape")
        await open_sim(pilot, "demo-user-tools")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("G", "d")
        assert screen.gold_mode
        assert "notifications" in change_text(screen)
        tree = screen.query_one(StateTree)
        assert tree.marked_paths("user")[("notifications", "notif_1", "status")] == "gold"


async def test_gold_diff_title_says_same_or_differs_at_each_step(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        tree = screen.query_one(StateTree)
        await pilot.press("G", "d")
        assert "same as the gold final state" in change_text(screen)
        assert tree.border_title is not None
        assert tree.border_title.startswith("= same as the gold final state")
        await pilot.press("g")
        assert "same as the gold final state" not in change_text(screen)
        assert tree.border_title.startswith("≠ differs from the gold final state")


async def test_trajectory_header_names_the_domain_once_and_the_file_by_name(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        header = app.screen.query_one("#traj-header", InfoLine).plain.splitlines()[0]
        assert header.count("mock") == 1 + header.count("mock_demo")
        assert header.endswith("sim demo-clean-pass · mock_demo.json")


async def test_search_inside_trajectory(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("slash", *"completed", "enter")
        assert screen.doc is not None
        assert screen.doc.targets["match"] == [1, 4, 5, 6]
        assert screen.cursor == 1
        await pilot.press("n")
        assert screen.cursor == 4


async def test_expand_a_tool_call(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        view = screen.view
        await pilot.press("t", "t")
        assert screen.cursor == 4
        before = view._heights[4]
        await pilot.press("space")
        assert view.is_expanded(4)
        assert view._heights[4] > before


async def test_reload_keeps_file_simulation_and_step(make_app: MakeApp, demo_copy: Path) -> None:
    app = make_app([demo_copy.parent])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("w")
        assert screen.cursor == 5
        data = json.loads(demo_copy.read_text())
        sim = next(s for s in data["simulations"] if s["id"] == "demo-user-tools")
        sim["messages"][6]["content"] = "task_1 is completed (edited on disk)."
        data["simulations"].reverse()  # the simulation moves in the file
        demo_copy.write_text(json.dumps(data))
        await pilot.press("r")
        await settle(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert current_screen(app) is screen
        assert screen.sim_id == "demo-user-tools"
        assert screen.index == 0
        assert screen.cursor == 5
        assert screen.doc is not None
        assert screen.doc.steps[6].message.text == "task_1 is completed (edited on disk)."
        await pilot.press("escape")
        key = app.runs_screen.query_one(RunTable).current_key
        assert key is not None and key.endswith("#0")


async def test_open_json_writes_a_temp_copy_and_never_touches_the_input(make_app: MakeApp, demo_copy: Path) -> None:
    before = demo_copy.read_bytes()
    app = make_app([demo_copy])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        await pilot.press("m", "e")
        await pilot.press("E")
        message_file, sim_file = opened_files(app)
        assert json.loads(message_file.read_text())["id"] == "call_update"
        assert json.loads(sim_file.read_text())["id"] == "demo-mismatch"
        assert message_file.parent != demo_copy.parent
    assert demo_copy.read_bytes() == before


async def test_help_and_palette_list_every_action(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        commands = {c.title for c in app.get_system_commands(screen)}
        for title in (
            "Next write",
            "Previous mismatch",
            "Next hallucinated call",
            "Diff vs gold",
            "Message JSON in $EDITOR",
            "Reload files",
            "Back",
        ):
            assert title in commands
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        listed = {key.description for _, keys in app.screen.sections for key in keys}
        assert {"Next write", "Next finding", "First message", "Help", "Quit"} <= listed
        await pilot.press("escape")
        assert app.screen is screen


async def test_task_and_reward_tabs(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        screen = app.screen
        await pilot.press("2")
        assert screen.query_one("#side", TabbedContent).active == "tab-task"
        assert "update_task_1" in plain(screen, "#task-view")
        await pilot.press("3")
        assert screen.query_one("#side", TabbedContent).active == "tab-reward"
        recorded, derived = plain(screen, "#recorded-view"), plain(screen, "#derived-view")
        assert "AS RECORDED" in recorded and "mismatches" not in recorded
        assert "DERIVED" in derived and "mismatches 1" in derived


async def test_view_all_shows_the_whole_tool_output(make_app: MakeApp) -> None:
    from tau_tui.tui.screens.text_view import TextViewScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        await pilot.press("w", "v")
        assert isinstance(app.screen, TextViewScreen)
        text = app.screen.query_one("TextArea", TextArea).text
        assert '"status": "completed"' in text and text.startswith("{")
        await pilot.press("escape")
        assert isinstance(app.screen, TrajectoryScreen)


async def test_reopening_reuses_the_trajectory_screen_and_resets_it(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        first = app.screen
        assert isinstance(first, TrajectoryScreen)
        await pilot.press("G", "d", "3")
        await pilot.press("escape")
        await open_sim(pilot, "demo-clean-pass")
        assert current_screen(app) is first
        assert first.sim_id == "demo-clean-pass" and first.cursor == 0
        assert not first.gold_mode
        assert first.query_one("#side", TabbedContent).active == "tab-state"
        tree = first.query_one(StateTree)
        assert tree.node_at("user", ("notifications", "notif_1", "status")) is None or "unread" in label(
            tree.node_at("user", ("notifications", "notif_1", "status"))
        )


async def test_a_run_that_cannot_be_replayed_still_opens(make_app: MakeApp, tmp_path: Path) -> None:
    from tests.helpers import call, greet, result, results_file, say, user

    path = results_file(
        tmp_path / "unknown.json",
        [
            greet(),
            user("hi"),
            call("frobnicate", {"x": 1}),
            result("done"),
            say("ok"),
        ],
        domain="no_such_domain",
    )
    app = make_app([path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        row = app.session.catalog.rows[0]
        assert row.replay is None and row.replay_error is not None and "no_such_domain" in row.replay_error
        await open_sim(pilot, "sim-1")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        assert screen.analysis is None and screen.replay_error is not None and "no_such_domain" in screen.replay_error
        assert not screen.query_one(StateTree).display
        assert "No replayed state" in change_text(screen)
        assert screen.doc is not None
        assert [c.pill for c in screen.doc.calls] == ["not replayed"]
        await pilot.press("t")
        assert screen.cursor == 2
        await pilot.press("w")  # no replay, no writes: the cursor stays
        assert screen.cursor == 2


def test_state_tree_overrides_no_textual_method() -> None:
    """A method of ours named like one of Tree's (``reset``, ``_add_child``) would replace it for Textual too."""
    from textual.widgets import Tree

    ours = {name for name, value in vars(StateTree).items() if callable(value) and not name.startswith("on_")}
    inherited = {name for klass in Tree.__mro__ for name in vars(klass)}
    assert ours & inherited == {"__init__"}


async def test_state_tree_lists_big_collections_a_page_at_a_time() -> None:
    from textual.app import App

    from tau_tui.env.environment import EnvState
    from tau_tui.env.store import Collection

    orders = Collection({f"#W{i:03}": {"status": "pending", "items": [i]} for i in range(120)})
    before = EnvState({"orders": orders}, None)
    changed = orders.copy()
    changed["#W117"] = {"status": "cancelled", "items": [117]}
    after = EnvState({"orders": changed}, None)

    class TreeApp(App[None]):
        def compose(self) -> ComposeResult:
            yield StateTree()

    app = TreeApp()
    async with app.run_test(size=(80, 30)) as pilot:
        tree = app.query_one(StateTree)
        tree.show(before, {})
        orders_node = tree.node_at("agent", ("orders",))
        assert orders_node is not None
        tree._expand(orders_node)
        entries = [c for c in orders_node.children if kind(c) == "entry"]
        assert len(entries) == StateTree.PAGE
        more = orders_node.children[-1]
        assert more.data is not None
        assert more.data.kind == "more" and "70 more" in label(more)
        tree.select_node(more)
        await pilot.pause()
        assert sum(1 for c in orders_node.children if kind(c) == "entry") == 100
        # a change beyond the listed page is pinned at the top and revealed
        tree.show(
            after,
            {"agent": {("orders",): "within", ("orders", "#W117"): "within", ("orders", "#W117", "status"): "changed"}},
        )
        assert orders_node.children[0].data is not None
        assert orders_node.children[0].data.path == ("orders", "#W117")
        status = tree.node_at("agent", ("orders", "#W117", "status"))
        assert status is not None
        assert '"cancelled"' in label(status) and tree.cursor_node is status
        # and back: the value is restored, the mark is gone
        tree.show(before, {})
        assert '"pending"' in label(tree.node_at("agent", ("orders", "#W117", "status")))
        assert "✎" not in label(tree.node_at("agent", ("orders", "#W117", "status")))
