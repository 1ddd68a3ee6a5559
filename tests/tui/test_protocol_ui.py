"""The forms' protocol field: it starts at the settings' choice and says what that choice gives; a play session
under protocol tau2 shows the person the prompt a model in their place would get."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from textual.widgets import Select

from tau_tui.tau2_adapter import tau2_available
from tau_tui.tui.screens.play import PlayScreen
from tau_tui.tui.widgets.protocol_choice import ProtocolChoice
from tau_tui.tui.widgets.rich_pane import RichPane

from .conftest import SIZE, open_rollout_form, set_input, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


def _line(choice: ProtocolChoice) -> str:
    return choice.line


async def test_the_rollout_form_names_the_protocol_its_choice_gives(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_rollout_form(pilot)
        choice = form.query_one(ProtocolChoice)
        assert choice.value == form.workspace.settings.protocol  # the settings' choice to start with
        await wait_until(pilot, lambda: _line(choice).startswith("protocol "), "the line of the settings' choice")
        form.query_one("#r-protocol", Select).value = "own"
        await wait_until(pilot, lambda: _line(choice) == "protocol own (tau-tui's prompts)", "the own line")
        form.query_one("#r-protocol", Select).value = "tau2"
        await wait_until(pilot, lambda: _line(choice).startswith("protocol tau2"), "the tau2 line")
        assert "tau2's user guidelines" in _line(choice)


@pytest.mark.tau2
@pytest.mark.skipif(not tau2_available(), reason="needs the optional tau2 extra (pip install -e '.[tau2]')")
async def test_the_rollout_form_runs_protocol_tau2_by_default_where_tau2s_data_is_found(
    make_app: MakeApp, tmp_path: Path
) -> None:
    app = make_app(runs_dir=tmp_path, protocol="auto")  # the settings' default
    async with app.run_test(size=SIZE) as pilot:
        form = await open_rollout_form(pilot)
        choice = form.query_one(ProtocolChoice)
        assert choice.value == "auto"
        await wait_until(pilot, lambda: _line(choice).startswith("protocol tau2"), "the tau2 line")
        assert "agent prompt from installed tau2" in _line(choice)


async def test_playing_the_user_under_tau2_shows_tau2s_user_prompt(
    make_app: MakeApp, tmp_path: Path, tau2_data: Path
) -> None:
    from tau_tui.tui.screens.play_setup import PlaySetupScreen

    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        form = app.screen
        assert isinstance(form, PlaySetupScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        form.query_one("#p-side", Select).value = "user"
        form.query_one("#p-protocol", Select).value = "tau2"
        await pilot.pause()
        await set_input(pilot, "#p-filter", "update_task_1")
        await set_input(pilot, "#p-out", str(tmp_path / "play.json"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), "the play screen")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        conversation = screen.query_one("#play-conversation")
        # the screen is current before its on_mount has run (a loaded machine shows it): wait for it to be filled
        await wait_until(pilot, lambda: conversation.border_subtitle is not None, "the play screen filled in")
        assert screen.session.protocol.name == "tau2"
        assert "protocol tau2" in str(screen.query_one("#play-conversation").border_subtitle)
        console = Console(width=300, record=True, file=io.StringIO())
        console.print(screen.query_one("#play-prompt", RichPane).content)
        shown = console.export_text()
        prompt = screen.session.person_prompt()
        guidelines = (tau2_data / "user_simulator" / "simulation_guidelines.md").read_text()
        with_tools = (tau2_data / "user_simulator" / "simulation_guidelines_tools.md").read_text()
        # tau2's guidelines for a user without tools (tau2's schemas) or with them (no tau2 installed: the mock
        # domain's own schemas give the user tools)
        schemas = screen.session.protocol.tools
        expected = with_tools if schemas is None or schemas.missing else guidelines
        assert prompt.startswith(expected.rstrip("\n")) and prompt.endswith("</scenario>")
        assert "protocol tau2" in shown and guidelines.splitlines()[0] in shown and "</scenario>" in shown
