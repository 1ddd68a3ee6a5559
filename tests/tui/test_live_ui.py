"""Pilot tests of the live side: a rollout landing in the runs table, play sessions, forks.

Everything runs offline with the scripted participants; sessions and rollouts
write into the test's temporary folder (the app's ``runs_dir``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widgets import Select, TabbedContent

from tau_tui.analysis import Analyzer
from tau_tui.model.io import open_run
from tau_tui.model.messages import Message, ParticipantMessage, ToolCall
from tau_tui.tui.screens.compare import CompareScreen
from tau_tui.tui.screens.play import PlayScreen
from tau_tui.tui.screens.rollout import RolloutScreen
from tau_tui.tui.screens.tool_form import ToolFormScreen, parse_form
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.tui.widgets.state_tree import StateTree
from tests.rollout.fake_llm import FakeLLM, text

from .conftest import current_screen, open_play, open_rollout_form, open_sim, set_input, settle, wait_until

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tests.tui.conftest import MakeApp

BIG = (160, 45)


def first_call(message: Message) -> ToolCall:
    """The first tool call of an agent's or user's message."""
    assert isinstance(message, ParticipantMessage) and message.tool_calls is not None
    return message.tool_calls[0]


# --- rollout -------------------------------------------------------------------------------------------


async def test_new_rollout_lands_in_the_runs_table_as_it_runs(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        form = await open_rollout_form(pilot)
        assert len(form.tasks) == 10  # tau2 1.0.1's mock tasks, listed off the UI thread
        form.query_one("#r-filter").focus()
        await pilot.press(*"update_task_1")
        assert [t for t, _ in form._shown()] == ["update_task_1"]
        await pilot.press("enter", "space")  # enter: to the filtered list; space: select
        form.query_one("#r-filter").focus()
        await pilot.press(*(["backspace"] * 13), *"create_task_1_with", "enter", "space")
        assert form.selected == {"update_task_1", "create_task_1_with_env_assertions"}
        await set_input(pilot, "#r-k", "2")
        out = tmp_path / "rollout.json"
        await set_input(pilot, "#r-out", str(out))
        await pilot.press("ctrl+s")
        assert app.screen is app.runs_screen
        await wait_until(
            pilot,
            lambda: app.session.rollouts.progress is not None and app.session.rollouts.progress.finished,
            "the rollout",
        )
        await settle(pilot)
        rows = app.session.catalog.rows_of(out)
        assert len(rows) == 4 and {r.task for r in rows} == {"update_task_1", "create_task_1_with_env_assertions"}
        assert all(r.evaluation is not None and r.evaluation.reward == 1.0 for r in rows)
        assert all(r.entry.reward == 1.0 for r in rows)
        status = app.runs_screen.query_one("#rollout-status", InfoLine).plain
        assert "4/4 done" in status and "avg reward 1.000" in status and "finished" in status
        assert len(open_run(out).entries) == 4
        # every finished simulation is openable from the table
        table = app.runs_screen.query_one(RunTable)
        table.move_cursor(table.row_index[rows[0].key])
        table.focus()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TrajectoryScreen) and app.screen.run is not None and app.screen.run.path == out


async def test_rollout_form_refuses_bad_fields(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await set_input(pilot, "#r-k", "0")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, RolloutScreen)
        assert "trials (k): at least 1" in str(app.screen.query_one("#r-error").render())
        await set_input(pilot, "#r-k", "1")
        await set_input(pilot, "#r-agent-args", "{nope")
        await pilot.press("ctrl+s")
        assert "agent args: not valid JSON" in str(app.screen.query_one("#r-error").render())
        await pilot.press("escape")
        assert current_screen(app) is app.runs_screen and app.session.rollouts.progress is None


# --- play -----------------------------------------------------------------------------------------------


async def test_human_as_user_session_saves_a_recording_replay_and_evaluator_accept(
    make_app: MakeApp, registry: DomainRegistry, tmp_path: Path
) -> None:
    app = make_app(runs_dir=tmp_path)
    out = tmp_path / "play-user.json"
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_play(pilot, "user", "create_task_1", out)
        session = screen.session
        assert session.play_as == "user" and session.task.id == "create_task_1"
        field = screen.query_one("#play-input")
        assert not field.disabled and field.has_focus
        assert "scripted/gold" in screen.query_one("#play-header", InfoLine).plain
        # a refused reply is shown and nothing is sent
        await pilot.press("space", "enter")
        assert len(session.messages) == 1 and session.pending is not None
        # the user's own tool (a dual-control user tool) through the form
        await pilot.press("ctrl+t")
        tool_form = app.screen
        assert isinstance(tool_form, ToolFormScreen)
        assert set(tool_form.tools) == {"check_notifications", "dismiss_notification"}
        await pilot.press(*"check", "enter", "ctrl+s")
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) == 3, "the tool result")
        assert first_call(session.messages[1]).name == "check_notifications"
        assert screen.doc is not None
        assert screen.doc.calls[0].pill == "done"
        # ↓/↑ in the filter walk the tool list; Enter takes the highlighted tool
        await pilot.press("ctrl+t")
        form = app.screen
        assert isinstance(form, ToolFormScreen)
        await pilot.press("down", "up", "down")
        assert form.current == "dismiss_notification" and form.focused is form.query_one("#tool-filter")
        await pilot.press("escape")
        assert current_screen(app) is screen and len(session.messages) == 3
        await pilot.press("backspace")
        await pilot.press(*"Please create a task called 'Important Meeting' for user_1.", "enter")
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) > 4, "the agent")
        assert screen.query_one("#play-side", TabbedContent).active == "play-tab-brief"  # the user's scenario first
        await pilot.press("ctrl+b")
        assert screen.query_one("#play-side", TabbedContent).active == "play-tab-db"
        tree = screen.query_one("#play-tree", StateTree)
        assert tree.node_at("agent", ("tasks", "task_2")) is not None  # the live DB pane shows the new task
        assert "tasks.task_2" in screen.query_one("#play-change", RichPane).plain
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.saved is not None, "the saved recording")
        assert "reward 1" in screen.query_one("#play-status", InfoLine).plain
        await settle(pilot)
        await wait_until(pilot, lambda: bool(app.session.catalog.rows_of(out)), "the recording in the runs table")
        assert screen.saved == out
        await pilot.press("ctrl+o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TrajectoryScreen) and app.screen.run is not None and app.screen.run.path == out
    run = open_run(out)
    assert run.user_implementation == "human_user" and run.agent_model == "scripted/gold"
    analyzer = Analyzer(registry)
    analysis = analyzer.analyze(run, 0)
    assert analysis.timeline.strict_ok and analysis.db_match and not analysis.findings
    assert analyzer.evaluate(run, 0).evaluation.reward == 1.0
    assert json.loads(out.read_text())["info"]["tau_tui"]["play_as"] == "user"


async def test_human_as_agent_calls_a_tool_through_the_form(
    make_app: MakeApp, registry: DomainRegistry, tmp_path: Path
) -> None:
    app = make_app(runs_dir=tmp_path)
    out = tmp_path / "play-agent.json"
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_play(pilot, "agent", "update_task_1", out)
        session = screen.session
        assert session.messages[-1].role == "user"
        await pilot.press("ctrl+t")
        form = app.screen
        assert isinstance(form, ToolFormScreen)
        await pilot.press(*"update_task_status", "enter")  # the filter picks the tool, Enter goes to its fields
        await pilot.press(*"task_1", "ctrl+s")
        assert app.screen is form  # a missing required parameter keeps the form open
        assert "missing parameter 'status'" in str(form.query_one("#tool-error").render())
        await pilot.press("tab", *"completed", "enter")
        assert current_screen(app) is screen
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) == 4, "the result")
        call = first_call(session.messages[2])
        assert (call.name, call.arguments) == ("update_task_status", {"task_id": "task_1", "status": "completed"})
        assert (
            screen.query_one("#play-tree", StateTree).marked_paths("agent")[("tasks", "task_1", "status")] == "changed"
        )
        await pilot.press(*"Done: task_1 is completed. Anything else?", "enter")
        await wait_until(pilot, lambda: screen.saved is not None, "the saved recording")
    run = open_run(out)
    assert run.simulation(0).termination_reason == "user_stop"
    assert Analyzer(registry).evaluate(run, 0).evaluation.reward == 1.0


def test_tool_form_parses_json_fields_and_reports_problems() -> None:
    schema = {
        "type": "function",
        "function": {
            "name": "book",
            "description": "",
            "parameters": {
                "type": "object",
                "required": ["user_id", "passengers"],
                "properties": {
                    "user_id": {"type": "string"},
                    "passengers": {"type": "array"},
                    "count": {"type": "integer"},
                },
            },
        },
    }
    args, problems = parse_form(schema, {"user_id": "sara_1", "passengers": '[{"name": "A"}]', "count": "2"})
    assert args == {"user_id": "sara_1", "passengers": [{"name": "A"}], "count": 2} and not problems
    args, problems = parse_form(schema, {"user_id": "5", "passengers": "[oops", "count": ""})
    assert args == {"user_id": "5"}  # a string stays a string: "5" is not 5
    assert problems[0].startswith("passengers: not valid JSON") and "missing parameter 'passengers'" in problems


async def test_leaving_a_running_session_needs_a_second_escape_and_saves_nothing(
    make_app: MakeApp, tmp_path: Path
) -> None:
    app = make_app(runs_dir=tmp_path)
    out = tmp_path / "left.json"
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        screen = await open_play(pilot, "agent", "update_task_1", out)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("escape")
        assert current_screen(app) is app.runs_screen
        await pilot.pause()
        assert screen.session.result is None
    assert not out.exists()


# --- fork -------------------------------------------------------------------------------------------------


async def test_fork_from_a_step_runs_a_continuation_and_compares(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        original = app.screen
        assert isinstance(original, TrajectoryScreen)
        await pilot.press("j")  # message 1: the user's request
        await pilot.press("b")
        await pilot.press("ctrl+s")  # scripted/gold and scripted/user, the defaults
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        text = " ".join(compare.plain.split())
        assert "messages 0…1 are shared" in text
        assert compare.fork.reward == 1.0 and compare.fork.termination == "user_stop"
        assert compare.original.recorded_reward == 1.0
        assert "⚒ update_task_status" in text  # the fork's own calls, aligned with the original's
        forks = list(tmp_path.glob("*_fork_*.json"))
        assert len(forks) == 1 and app.session.catalog.rows_of(forks[0])
        fork_run = open_run(forks[0])
        fork_messages = fork_run.simulation(0).messages
        assert fork_messages is not None
        assert [m.content for m in fork_messages[:2]] == [
            "Hi! How can I help you today?",
            "Please mark task_1 as completed.",
        ]
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        fork_screen = app.screen
        assert isinstance(fork_screen, TrajectoryScreen) and fork_screen is not original
        assert fork_screen.run is not None
        assert fork_screen.run.path == forks[0] and fork_screen.cursor == 2
        await pilot.press("escape")
        assert app.screen is compare
        await pilot.press("escape")
        assert current_screen(app) is original and original.sim_id == "demo-clean-pass"


async def test_a_fork_whose_history_does_not_replay_says_why(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        screen = app.screen
        await pilot.press("G", "b", "ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is screen  # no comparison: the strict replay of the prefix refused it
        assert not list(tmp_path.glob("*_fork_*.json"))


# --- a model on the other side (litellm against a local fake server) -------------------------------------


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


async def test_play_as_agent_against_an_llm_user_over_http(
    make_app: MakeApp, registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("user-model", [text("Hi, please mark task_1 as completed."), text("That's all. ###STOP###")])
    app = make_app(runs_dir=tmp_path)
    out = tmp_path / "llm-user.json"
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one("#p-side", Select).value = "agent"
        await pilot.pause()
        await set_input(pilot, "#p-other", "openai/user-model")
        await set_input(pilot, "#p-other-args", json.dumps(fake_llm.args()))
        await set_input(pilot, "#p-filter", "update_task_1")
        await set_input(pilot, "#p-out", str(out))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), "the play screen")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session = screen.session
        await wait_until(pilot, lambda: session.pending is not None, "the model's first message")
        assert session.messages[1].content == "Hi, please mark task_1 as completed."
        assert "openai/user-model" in screen.query_one("#play-header", InfoLine).plain
        await pilot.press("ctrl+t", *"update_task_status", "enter", *"task_1", "tab", *"completed", "enter")
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) == 4, "the result")
        await pilot.press(*"Done. Anything else?", "enter")
        await wait_until(pilot, lambda: screen.saved is not None, "the saved recording")
    assert len(fake_llm.requests_for("user-model")) == 2
    saved = out.read_text()
    assert "sk-test-not-a-real-key" not in saved  # the model's API key never reaches the recording
    run = open_run(out)
    assert run.user_model == "openai/user-model" and run.agent_implementation == "human_agent"
    assert Analyzer(registry).evaluate(run, 0).evaluation.reward == 1.0


async def test_tau_tui_play_runs_the_session_in_its_own_app(registry: DomainRegistry, tmp_path: Path) -> None:
    from tau_tui.rollout import PlaySession
    from tau_tui.tui.play import PlayApp
    from tau_tui.tui.screens.help import HelpScreen

    session = PlaySession(registry, "mock", "update_task_1", "agent", "scripted/user")
    out = tmp_path / "cli-play.json"
    app = PlayApp(session, out)
    async with app.run_test(size=BIG) as pilot:
        await wait_until(pilot, lambda: session.pending is not None, "the first turn")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert "Call a tool…" in {k.description for _, keys in app.screen.sections for k in keys}
        await pilot.press("escape")
        assert {c.title for c in app.get_system_commands(screen)} >= {"Call a tool…", "Brief / live DB"}
        await pilot.press("ctrl+s")  # the person playing the agent ends it (agent_stop)
        await wait_until(pilot, lambda: screen.saved is not None, "the saved recording")
        await pilot.press("escape")
    assert app.return_value == 0
    assert open_run(out).simulation(0).termination_reason == "agent_stop"
