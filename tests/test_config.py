"""Settings: file, environment overrides, one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tau_tui.config import ConfigError, load_settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("TAU2_DATA_DIR", "TAU_TUI_DOMAINS", "TAU_TUI_RUNS_DIR", "TAU_TUI_JUDGE", "TAU_TUI_JUDGE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("TAU_TUI_CONFIG", str(path))
    return path


def test_defaults_without_a_file(clean_env: Path) -> None:
    settings = load_settings()
    assert settings.tau2_data is None and settings.runs_dir == Path("runs") and settings.judge_model is None


def test_file_then_environment(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env.write_text('tau2_data = "/data/tau2"\njudge_model = "gpt-4.1"\ndomain_paths = ["/d1"]\n')
    assert load_settings().tau2_data == Path("/data/tau2")
    monkeypatch.setenv("TAU2_DATA_DIR", "/elsewhere")
    monkeypatch.setenv("TAU_TUI_DOMAINS", "/d0")
    settings = load_settings()
    assert settings.tau2_data == Path("/elsewhere") and settings.domain_paths == [Path("/d0"), Path("/d1")]
    assert settings.judge_model == "gpt-4.1"


@pytest.mark.parametrize(
    "text, expected",
    [("not = [toml", "unreadable settings"), ('colour = "blue"', "colour"), ("runs_dir = 5", "runs_dir")],
)
def test_bad_files_are_one_line(clean_env: Path, text: str, expected: str) -> None:
    clean_env.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert expected in str(info.value) and str(clean_env) in str(info.value) and "\n" not in str(info.value)


# --- the CLI takes its defaults from the settings (flags win) ---------------------------------------------------


def test_cli_uses_the_settings_file_for_data_and_runs_folder(
    clean_env: Path,
    tau2_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tau_tui.cli import main

    runs = tmp_path / "my-runs"
    clean_env.write_text(f'tau2_data = "{tau2_data.as_posix()}"\nruns_dir = "{runs.as_posix()}"\n')
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "run",
            "--domain",
            "mock",
            "--task",
            "create_task_1",
            "--agent-llm",
            "scripted/gold",
            "--user-llm",
            "scripted/user",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    written = list(runs.glob("*_mock_scripted-gold_scripted-user.json"))
    assert len(written) == 1 and not (tmp_path / "runs").exists()
    # an explicit --out wins over the settings' folder
    out = tmp_path / "explicit.json"
    assert (
        main(
            [
                "run",
                "--domain",
                "mock",
                "--task",
                "create_task_1",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert out.is_file() and len(list(runs.iterdir())) == 1


def test_cli_reports_a_broken_settings_file_on_one_line(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tau_tui.cli import main

    clean_env.write_text("runs_dir = [1, 2]")
    code = main(["replay", str(clean_env)])
    err = capsys.readouterr().err
    assert code == 2 and str(clean_env) in err and "runs_dir" in err and len(err.strip().splitlines()) == 1


# --- resolved once: flags over the environment over the file --------------------------------------------------


def test_every_setting_resolves_flags_over_environment_over_file(clean_env: Path, tmp_path: Path) -> None:
    import argparse

    from tau_tui.config import resolve

    clean_env.write_text(
        'tau2_data = "/file"\njudge_model = "file-judge"\nworkers = 3\nstream_bytes = 10\n'
        'domain_paths = ["/file-domains"]\n'
    )
    env = {
        "TAU_TUI_CONFIG": str(clean_env),
        "TAU2_DATA_DIR": "/env",
        "TAU_TUI_WORKERS": "5",
        "TAU_TUI_INDEX_WORKERS": "0",
        "TAU_TUI_MAX_READ_BYTES": "1000",
        "TAU_TUI_DOMAINS": "/env-domains",
        "VISUAL": "nano -w",
        "EDITOR": "vi",
        "PAGER": "less -R",
        "XDG_DATA_HOME": str(tmp_path),
    }
    flags = argparse.Namespace(
        tau2_data="/flag", domains=["/flag-domains"], judge=None, judge_api_base=None, workers=None
    )
    settings = resolve(flags, env)
    assert settings.tau2_data == Path("/flag") and settings.origin("tau2_data") == "--tau2-data"
    assert settings.workers == 5 and settings.origin("workers") == "TAU_TUI_WORKERS"
    assert settings.index_workers == 0 and settings.max_read_bytes == 1000 and settings.stream_bytes == 10
    assert settings.judge_model == "file-judge" and settings.origin("judge_model") == "settings file"
    assert settings.domain_paths == [Path("/flag-domains"), Path("/env-domains"), Path("/file-domains")]
    assert (settings.editor, settings.origin("editor"), settings.pager) == ("nano -w", "VISUAL", "less -R")
    assert settings.notes_dir == tmp_path / "tau-tui" / "notes"
    bare = resolve(None, {"TAU_TUI_CONFIG": str(tmp_path / "none.toml")})
    assert bare.tau2_data is None and bare.origin("tau2_data") == "default" and bare.workers is None


@pytest.mark.parametrize(
    "variable, value",
    [
        ("TAU_TUI_WORKERS", "²"),
        ("TAU_TUI_INDEX_WORKERS", "-1"),
        ("TAU_TUI_MAX_READ_BYTES", "0"),
        ("TAU_TUI_STREAM_BYTES", "4MB"),
    ],
)
def test_a_bad_number_in_the_environment_is_one_line_naming_the_variable(
    clean_env: Path, variable: str, value: str
) -> None:
    from tau_tui.config import resolve

    with pytest.raises(ConfigError) as info:
        resolve(None, {"TAU_TUI_CONFIG": str(clean_env), variable: value})
    assert str(info.value).startswith(f"{variable}={value!r}: expected a whole number") and "\n" not in str(info.value)


def test_whole_numbers_are_ascii_digits_only() -> None:
    from tau_tui.config import whole_number

    assert whole_number("12") == 12 and whole_number(" 7 ") == 7
    assert whole_number("²") is None and whole_number("١٢") is None and whole_number("-3") is None
    assert whole_number("0", minimum=1) is None


def test_nothing_below_the_config_module_reads_the_environment() -> None:
    """Settings are resolved once (``config.resolve``); the one other reader is the secret scrubber, which must
    see the live values of API keys (the settings never hold secrets)."""
    import re

    root = Path(__file__).resolve().parents[1] / "tau_tui"
    readers = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if re.search(r"os\.environ(?!\.setdefault)|os\.getenv", p.read_text()) and p.name != "config.py"
    )
    assert readers == ["model/secrets.py"]


def test_tau2_data_in_the_environment_reaches_the_workers(clean_env: Path, tau2_data: Path) -> None:
    """What a worker process or a Ray actor is built from is the resolved settings, whatever set them."""
    from tau_tui.config import resolve
    from tau_tui.workers.pool import Executor, Job
    from tau_tui.workspace import Workspace

    settings = resolve(None, {"TAU_TUI_CONFIG": str(clean_env), "TAU2_DATA_DIR": str(tau2_data)})
    executor = Workspace(settings).executor(Job("replay"), 1)
    assert isinstance(executor, Executor)  # processes here: the local kind
    job = executor.job
    assert job.settings is not None and job.factory is not None  # both set by Workspace.executor
    assert job.settings.tau2_data == tau2_data and job.factory is Workspace
    worker_workspace = job.factory(job.settings)  # as a worker process builds it, with no environment
    assert worker_workspace.registry.get("mock").name == "mock"


def test_settings_for_another_machine_have_absolute_folders(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative TAU2_DATA_DIR (or domain folder) names this process's folder; a Ray actor works elsewhere."""
    from tau_tui.config import resolve

    monkeypatch.chdir(tmp_path)
    settings = resolve(None, {"TAU_TUI_CONFIG": str(clean_env), "TAU2_DATA_DIR": "data", "TAU_TUI_DOMAINS": "extra"})
    assert settings.tau2_data == Path("data")  # this process's messages name what the user gave
    portable = settings.portable()
    assert portable.tau2_data == tmp_path / "data" and portable.domain_paths == [tmp_path / "extra"]
    assert portable.sources == settings.sources and portable.portable() == portable


def test_a_data_folder_in_or_above_the_paths_is_found(tmp_path: Path, tau2_data: Path) -> None:
    from tau_tui.domains import data_root_near

    assert data_root_near([tau2_data]) == tau2_data
    assert data_root_near([tau2_data / "generated" / "tau2-gold_mock.json"]) == tau2_data
    checkout = tmp_path / "tau2-bench"
    (checkout / "data" / "simulations").mkdir(parents=True)
    (checkout / "data" / "tau2" / "domains" / "mock").mkdir(parents=True)
    for name in ("db.json", "tasks.json"):
        (checkout / "data" / "tau2" / "domains" / "mock" / name).write_text("{}")
    run = checkout / "data" / "simulations" / "run.json"
    run.write_text("{}")
    assert data_root_near([run]) == checkout / "data"
    assert data_root_near([checkout]) == checkout / "data"
    assert data_root_near([tmp_path / "elsewhere.json"]) is None


def test_ray_address_comes_from_the_environment_and_reaches_ray_init(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RAY_ADDRESS`` is read with the other settings; ``connect_ray`` hands it to ``ray.init`` (Ray itself is
    not asked to read the variable)."""
    import sys
    import types

    from tau_tui.config import resolve
    from tau_tui.workers.pool import connect_ray

    clean_env.write_text('ray_address = "ray://file:10001"\n')
    assert resolve(None, {"TAU_TUI_CONFIG": str(clean_env)}).ray_address == "ray://file:10001"
    settings = resolve(None, {"TAU_TUI_CONFIG": str(clean_env), "RAY_ADDRESS": "127.0.0.1:6379"})
    assert settings.ray_address == "127.0.0.1:6379" and settings.origin("ray_address") == "RAY_ADDRESS"
    calls: list[dict[str, Any]] = []
    fake = types.SimpleNamespace(is_initialized=lambda: False, init=lambda **kwargs: calls.append(kwargs))
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert connect_ray(settings.ray_address) == (fake, True)
    assert calls[0]["address"] == "127.0.0.1:6379"
