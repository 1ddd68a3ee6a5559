"""Human-in-the-loop sessions driven programmatically, their recordings, and forks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.evaluate import evaluate
from tau_tui.model.io import open_run
from tau_tui.model.messages import AssistantMessage, ToolMessage, UserMessage
from tau_tui.model.results import SimulationRun
from tau_tui.rollout import EpisodeOptions, PlaySession, continue_episode, fork_history
from tests.conftest import ROOT

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.tui.play import PlayApp


def _saved(app: PlayApp) -> Path | None:
    """Where the play screen of ``app`` saved its recording (None: not yet)."""
    from tau_tui.tui.screens.play import PlayScreen

    screen = app.screen
    assert isinstance(screen, PlayScreen)
    return screen.saved


async def _play_user(
    registry: DomainRegistry, path: Path, on_event: Callable[[Any], None] | None = None
) -> tuple[PlaySession, SimulationRun, Path]:
    session = PlaySession(
        registry, "mock", "create_task_1", "user", "scripted/gold", EpisodeOptions(seed=7), on_event=on_event
    )
    session.start()
    first = await session.wait_turn()
    assert first is not None and first.side == "user"
    assert first.incoming[0].content == "Hi! How can I help you today?"
    assert [t["function"]["name"] for t in session.tools] == ["check_notifications", "dismiss_notification"]
    with pytest.raises(ValueError, match="no tool named"):
        session.call_tool("create_task", {"user_id": "user_1", "title": "x"})  # an agent tool: not the user's
    with pytest.raises(ValueError, match="empty turn"):
        session.say("   ")
    session.call_tool("check_notifications", {})
    after_tool = await session.wait_turn()
    assert after_tool is not None
    result = after_tool.incoming[0]
    assert result.role == "tool" and isinstance(result, ToolMessage) and result.requestor == "user"
    session.say("Please create a task called 'Important Meeting' for user_1.")
    closing = await session.wait_turn()
    assert closing is not None
    assert "anything else" in closing.incoming[-1].content.lower()
    agent_tools = session.env.agent
    assert agent_tools is not None and agent_tools.db is not None
    assert "task_2" in agent_tools.db.tasks  # the live DB, as a DB pane would show it
    session.end()
    assert await session.wait_turn() is None
    sim = await session.wait()
    return session, sim, session.save(path)


def test_human_as_user_session_is_saved_replayed_and_evaluated(registry: DomainRegistry, tmp_path: Path) -> None:
    events: list[Any] = []
    session, sim, path = asyncio.run(_play_user(registry, tmp_path / "play.json", events.append))
    assert sim.messages is not None and sim.reward_info is not None
    assert sim.termination_reason == "user_stop" and sim.messages[-1].content == "###STOP###"
    assert session.reward == 1.0 and sim.reward_info.reward == 1.0
    assert len([e for e in events if hasattr(e, "message")]) == len(sim.messages) == len(session.messages)

    run = open_run(path)
    assert run.domain == "mock" and run.user_implementation == "human_user" and run.agent_model == "scripted/gold"
    assert run.tasks()["create_task_1"].id == "create_task_1"
    analysis = Analyzer(registry).analyze(run, 0)
    assert analysis.timeline.strict_ok and analysis.db_match and not analysis.findings
    assert evaluate(analysis).reward == 1.0
    recorded = run.simulation(0).messages
    assert recorded is not None
    user_call = recorded[1]
    assert user_call.role == "user" and isinstance(user_call, UserMessage) and user_call.tool_calls is not None
    assert user_call.tool_calls[0].requestor == "user"
    assert json.loads(path.read_text())["info"]["tau_tui"]["play_as"] == "user"


async def _play_agent(registry: DomainRegistry) -> tuple[PlaySession, SimulationRun]:
    session = PlaySession(registry, "mock", "update_task_1", "agent", "scripted/user")
    session.start()
    turn = await session.wait_turn()
    assert turn is not None
    assert turn.side == "agent" and turn.incoming[0].role == "user"
    assert "update_task_status" in turn.tool_names and "check_notifications" not in turn.tool_names
    schema = turn.schema("update_task_status")
    assert schema is not None
    assert schema["function"]["parameters"]["required"] == ["task_id", "status"]
    session.call_tool("update_task_status", {"task_id": "task_1", "status": "completed"})
    turn = await session.wait_turn()
    assert turn is not None
    assert '"status": "completed"' in turn.incoming[0].content
    session.say("Done: task_1 is completed. Anything else?")
    assert await session.wait_turn() is None
    return session, await session.wait()


def test_human_as_agent_calls_tools_through_structured_requests(registry: DomainRegistry) -> None:
    session, sim = asyncio.run(_play_agent(registry))
    assert sim.termination_reason == "user_stop"
    assert sim.reward_info is not None and sim.messages is not None
    assert sim.reward_info.reward == 1.0
    agent_call = sim.messages[2]
    assert isinstance(agent_call, AssistantMessage) and agent_call.tool_calls is not None
    assert agent_call.tool_calls[0].name == "update_task_status"


def test_human_agent_ends_with_stop(registry: DomainRegistry) -> None:
    async def main() -> SimulationRun:
        session = PlaySession(registry, "mock", "update_task_1", "agent", "scripted/user")
        await session.wait_turn()
        session.end()
        return await session.wait()

    sim = asyncio.run(main())
    assert sim.termination_reason == "agent_stop"


def test_abort_leaves_no_result(registry: DomainRegistry) -> None:
    async def main() -> PlaySession:
        session = PlaySession(registry, "mock", "update_task_1", "agent", "scripted/user")
        await session.wait_turn()
        session.abort()
        with pytest.raises(asyncio.CancelledError):
            await session.wait()
        return session

    session = asyncio.run(main())
    assert session.result is None and not session.done


def test_bad_session_arguments(registry: DomainRegistry) -> None:
    with pytest.raises(KeyError, match="no task"):
        PlaySession(registry, "mock", "nope", "user", "scripted/gold")
    with pytest.raises(ValueError, match="play as"):
        PlaySession(registry, "mock", "update_task_1", "both", "scripted/gold")


def test_fork_continues_a_recorded_prefix_with_new_participants(registry: DomainRegistry, tmp_path: Path) -> None:
    _, sim, _ = asyncio.run(_play_user(registry, tmp_path / "play.json"))
    assert sim.messages is not None
    prefix = fork_history(sim.messages, 3)  # greeting, check, result, the user's request
    assert prefix[-1].role == "user"
    episode = asyncio.run(continue_episode(registry, "mock", "create_task_1", prefix, "scripted/gold", "scripted/user"))
    forked = episode.result
    assert forked is not None and forked.messages is not None and episode.scored is not None
    assert [m.content for m in forked.messages[:4]] == [m.content for m in sim.messages[:4]]
    agent_call = forked.messages[4]
    assert isinstance(agent_call, AssistantMessage) and agent_call.tool_calls is not None
    assert agent_call.tool_calls[0].name == "create_task"
    assert forked.termination_reason == "user_stop" and episode.scored.reward == 1.0
    saved = episode.save(tmp_path / "fork.json")
    assert Analyzer(registry).analyze(open_run(saved), 0).timeline.strict_ok
    with pytest.raises(IndexError):
        fork_history(sim.messages, 99)


def test_plain_terminal_play(tau2_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain.json"
    lines = (
        "\n".join(
            [
                "/help",
                "/tools",
                "/call nope {}",
                "/call check_notifications {bad",
                "",
                "Please create a task called 'Important Meeting' for user_1.",
                "/stop",
            ]
        )
        + "\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "play",
            "--plain",
            "--as",
            "user",
            "--domain",
            "mock",
            "--task",
            "create_task_1",
            "--llm",
            "scripted/gold",
            "--tau2-data",
            str(tau2_data),
            "--protocol",  # every user tool (under tau2 this task's user has none: it lists none)
            "own",
            "--out",
            str(out),
        ],
        input=lines,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "check_notifications()" in proc.stdout  # /tools
    assert "! no tool named 'nope'" in proc.stdout
    assert "! arguments are not valid JSON" in proc.stdout
    assert "[agent calls] create_task" in proc.stdout
    assert "termination: user_stop; reward: 1" in proc.stdout
    reward_info = open_run(out).simulation(0).reward_info
    assert reward_info is not None and reward_info.reward == 1.0


def test_plain_play_quit_saves_nothing(tau2_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "quit.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "play",
            "--plain",
            "--as",
            "agent",
            "--domain",
            "mock",
            "--task",
            "update_task_1",
            "--llm",
            "scripted/user",
            "--tau2-data",
            str(tau2_data),
            "--out",
            str(out),
        ],
        input="/quit\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 130 and "left without saving" in proc.stdout
    assert not out.exists()


def test_tui_play_prints_how_it_ended_and_where_it_saved(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tau-tui play`` in the TUI: leaving with esc after the end prints the outcome and the saved path."""
    from tau_tui import cli
    from tau_tui.commands import play as play_command
    from tau_tui.tui.play import PlayApp, PlayOutcome

    async def play_in_test_app(
        session: PlaySession, out: Path | str, keymap: dict[str, str] | None = None
    ) -> PlayOutcome:
        app = PlayApp(session, out, keymap)
        async with app.run_test() as pilot:
            while session.pending is None:
                await pilot.pause(0.01)
            await pilot.press("ctrl+s")  # the person playing the agent ends the conversation
            while _saved(app) is None:
                await pilot.pause(0.01)
            await pilot.press("escape")
        assert app.return_value is not None
        return PlayOutcome(app.return_value, app.open_saved)

    monkeypatch.setattr(play_command, "_play_screen", lambda: play_in_test_app)
    out = tmp_path / "tui-play.json"
    code = cli.main(
        [
            "play",
            "--as",
            "agent",
            "--domain",
            "mock",
            "--task",
            "update_task_1",
            "--llm",
            "scripted/user",
            "--tau2-data",
            str(tau2_data),
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0 and out.is_file()
    assert printed.splitlines()[-2:] == ["termination: agent_stop; reward: 0", f"saved to {out}"]


def test_ctrl_o_in_tui_play_opens_the_saved_recording_in_the_inspector(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tau-tui play``: ctrl+o after the end closes the play app, and the inspector opens at the saved simulation."""
    import asyncio

    from textual.app import App

    from tau_tui import cli
    from tau_tui.commands import play as play_command
    from tau_tui.commands.play import Inspector
    from tau_tui.model.io import open_run
    from tau_tui.tui.play import PlayApp, PlayOutcome
    from tau_tui.tui.screens.trajectory import TrajectoryScreen

    async def play_then_ctrl_o(
        session: PlaySession, out: Path | str, keymap: dict[str, str] | None = None
    ) -> PlayOutcome:
        app = PlayApp(session, out, keymap)
        async with app.run_test() as pilot:
            while session.pending is None:
                await pilot.pause(0.01)
            await pilot.press("ctrl+o")  # nothing saved yet: the play goes on
            assert app.is_running and app.open_saved is None
            await pilot.press("ctrl+s")
            while _saved(app) is None:
                await pilot.pause(0.01)
            await pilot.press("ctrl+o")
            await pilot.pause()
        assert app.return_value is not None
        return PlayOutcome(app.return_value, app.open_saved)

    shown: list[tuple[object, ...]] = []

    class HeadlessInspector:
        def __init__(self, app: Inspector) -> None:
            self.app = app

        def run(self) -> None:
            async def look() -> None:
                app = self.app
                assert isinstance(app, App)
                async with app.run_test(size=(120, 40)) as pilot:
                    for _ in range(1000):
                        if isinstance(app.screen, TrajectoryScreen) and app.screen.doc is not None:
                            break
                        await pilot.pause(0.01)
                    screen = app.screen
                    if isinstance(screen, TrajectoryScreen):
                        assert screen.run is not None
                        shown.append((type(screen), screen.run.path, screen.sim_id))
                    else:
                        shown.append((type(screen),))

            asyncio.run(look())

    inspector = play_command._inspector()
    monkeypatch.setattr(play_command, "_play_screen", lambda: play_then_ctrl_o)
    monkeypatch.setattr(
        play_command, "_inspector", lambda: lambda path, settings: HeadlessInspector(inspector(path, settings))
    )
    out = tmp_path / "tui-play-open.json"
    code = cli.main(
        [
            "play",
            "--as",
            "agent",
            "--domain",
            "mock",
            "--task",
            "update_task_1",
            "--llm",
            "scripted/user",
            "--tau2-data",
            str(tau2_data),
            "--out",
            str(out),
        ]
    )
    assert code == 0 and f"saved to {out}" in capsys.readouterr().out
    assert shown == [(TrajectoryScreen, out, open_run(out).entries[0].id)]


def test_an_unknown_task_is_named_with_both_quotes(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tau_tui import cli

    code = cli.main(
        [
            "play",
            "--plain",
            "--as",
            "user",
            "--domain",
            "mock",
            "--task",
            "99999",
            "--llm",
            "scripted/gold",
            "--tau2-data",
            str(tau2_data),
        ]
    )
    assert code == 2 and capsys.readouterr().err.strip() == "tau-tui: no task '99999' in domain 'mock'"
