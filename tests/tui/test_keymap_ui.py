"""Pilot tests of the keymap: binding id → keys from the settings file, applied at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.cli import main
from tau_tui.config import ConfigError, load_settings
from tau_tui.tui.keys import known_binding_ids
from tau_tui.tui.screens.help import HelpScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen

from .conftest import SIZE, open_sim, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


@pytest.fixture
def settings_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("TAU2_DATA_DIR", "TAU_TUI_DOMAINS", "TAU_TUI_RUNS_DIR", "TAU_TUI_JUDGE", "TAU_TUI_JUDGE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("TAU_TUI_CONFIG", str(path))
    return path


async def test_a_remapped_binding_runs_on_its_new_key_only_and_help_and_palette_show_it(
    make_app: MakeApp, settings_file: Path
) -> None:
    settings_file.write_text('[keymap]\n"traj.next_write" = "ctrl+n"\n')
    app = make_app(keymap=load_settings().keymap)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("w")
        assert screen.cursor == 0  # the old key no longer jumps
        await pilot.press("ctrl+n")
        assert screen.cursor == 5  # the result of update_task_status: the first write
        commands = {c.title: c.help for c in app.get_system_commands(screen)}
        assert commands["Next write"] == "key ctrl+n · traj.next_write"
        assert commands["Previous write"] == "key W · traj.prev_write"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        listed = {entry.description: entry.keys for _, entries in app.screen.sections for entry in entries}
        assert listed["Next write"] == "ctrl+n"


async def test_a_remapped_app_binding_works_on_every_screen(make_app: MakeApp) -> None:
    app = make_app(keymap={"app.help": "f2"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.screen
        await pilot.press("question_mark")
        assert app.screen is runs
        await pilot.press("f2")
        assert isinstance(app.screen, HelpScreen)
        listed = {entry.description: entry.keys for _, entries in app.screen.sections for entry in entries}
        assert listed["Help"] == "f2"


def test_an_unknown_binding_id_is_one_line_naming_it(make_app: MakeApp) -> None:
    with pytest.raises(ConfigError) as info:
        make_app(keymap={"traj.next_wirte": "ctrl+n"})
    message = str(info.value)
    assert "\n" not in message and "unknown binding id 'traj.next_wirte'" in message
    assert "traj.next_write" in message and "app.help" in message  # the known ids


def test_the_cli_reports_an_unknown_binding_id_without_a_traceback(
    settings_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.write_text('[keymap]\n"nope.nothing" = "x"\n')
    (tmp_path / "runs").mkdir()
    code = main([str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "keymap: unknown binding id 'nope.nothing'" in err and str(settings_file) in err


def test_keymap_values_must_be_keys(settings_file: Path) -> None:
    settings_file.write_text('[keymap]\n"traj.next_write" = "ctrl+n,"\n')
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "keymap" in str(info.value) and "\n" not in str(info.value)
    settings_file.write_text('[keymap]\n"traj.next_write" = " ctrl+n , N "\n')
    assert load_settings().keymap == {"traj.next_write": "ctrl+n,N"}


def test_the_known_ids_cover_both_apps_and_their_screens() -> None:
    ids = known_binding_ids()
    assert {"traj.next_write", "app.help", "play_app.help", "help.close"} <= set(ids)
