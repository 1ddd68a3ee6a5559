"""Settings: file, environment overrides, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau_tui.config import ConfigError, load_settings


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("TAU2_DATA_DIR", "TAU_TUI_DOMAINS", "TAU_TUI_RUNS_DIR", "TAU_TUI_JUDGE", "TAU_TUI_JUDGE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("TAU_TUI_CONFIG", str(path))
    return path


def test_defaults_without_a_file(clean_env):
    settings = load_settings()
    assert settings.tau2_data is None and settings.runs_dir == Path("runs") and settings.judge_model is None


def test_file_then_environment(clean_env, monkeypatch):
    clean_env.write_text('tau2_data = "/data/tau2"\njudge_model = "gpt-4.1"\ndomain_paths = ["/d1"]\n')
    assert load_settings().tau2_data == Path("/data/tau2")
    monkeypatch.setenv("TAU2_DATA_DIR", "/elsewhere")
    monkeypatch.setenv("TAU_TUI_DOMAINS", "/d0")
    settings = load_settings()
    assert settings.tau2_data == Path("/elsewhere") and settings.domain_paths == [Path("/d0"), Path("/d1")]
    assert settings.judge_model == "gpt-4.1"


@pytest.mark.parametrize("text, expected", [("not = [toml", "unreadable settings"),
                                            ('colour = "blue"', "colour"),
                                            ("runs_dir = 5", "runs_dir")])
def test_bad_files_are_one_line(clean_env, text, expected):
    clean_env.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert expected in str(info.value) and str(clean_env) in str(info.value) and "\n" not in str(info.value)


# --- the CLI takes its defaults from the settings (flags win) ---------------------------------------------------

def test_cli_uses_the_settings_file_for_data_and_runs_folder(clean_env, tau2_data, tmp_path, monkeypatch, capsys):
    from tau_tui.cli import main

    runs = tmp_path / "my-runs"
    clean_env.write_text(f'tau2_data = "{tau2_data.as_posix()}"\nruns_dir = "{runs.as_posix()}"\n')
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--domain", "mock", "--task", "create_task_1", "--agent-llm", "scripted/gold",
                 "--user-llm", "scripted/user", "--quiet"])
    assert code == 0, capsys.readouterr().err
    written = list(runs.glob("*_mock_scripted-gold_scripted-user.json"))
    assert len(written) == 1 and not (tmp_path / "runs").exists()
    # an explicit --out wins over the settings' folder
    out = tmp_path / "explicit.json"
    assert main(["run", "--domain", "mock", "--task", "create_task_1", "--agent-llm", "scripted/gold",
                 "--user-llm", "scripted/user", "--quiet", "--out", str(out)]) == 0
    assert out.is_file() and len(list(runs.iterdir())) == 1


def test_cli_reports_a_broken_settings_file_on_one_line(clean_env, capsys):
    from tau_tui.cli import main

    clean_env.write_text("runs_dir = [1, 2]")
    code = main(["replay", str(clean_env)])
    err = capsys.readouterr().err
    assert code == 2 and str(clean_env) in err and "runs_dir" in err and len(err.strip().splitlines()) == 1
