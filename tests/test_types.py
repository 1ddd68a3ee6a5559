"""The type checker's configuration (``pyproject.toml`` ``[tool.mypy]``): strict over the whole package and the
tests, and it really is."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What an override may set: the optional extras are skipped whether installed or not, nothing more.
THIRD_PARTY_SETTINGS = {"module", "ignore_missing_imports", "follow_imports"}


def mypy_config() -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    return config


def overrides() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = mypy_config().get("overrides", [])
    return found


def modules(override: dict[str, Any]) -> list[str]:
    named = override["module"]
    return [named] if isinstance(named, str) else list(named)


def test_the_whole_package_is_strict() -> None:
    config = mypy_config()
    assert config.get("strict") is True
    assert config.get("files") == ["tau_tui", "tests"]
    relaxed = {key: value for key, value in config.items() if value is False or key == "disable_error_code"}
    assert not relaxed, f"[tool.mypy] relaxes strict: {relaxed}"


def test_no_override_relaxes_a_module_of_ours() -> None:
    ours = [m for o in overrides() for m in modules(o) if m.split(".")[0] in ("tau_tui", "tests")]
    assert not ours, f"overrides name our modules (tau_tui, tests): {ours}"
    extra = {key for o in overrides() for key in o} - THIRD_PARTY_SETTINGS
    assert not extra, f"an override sets more than the optional extras need: {sorted(extra)}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the configuration with two packages of ``tau_tui`` (a headless one and the TUI's) and ``tests``."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("tau_tui", "tau_tui/model", "tau_tui/tui", "tests"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    return tmp_path


def mypy(project: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "pyproject.toml",
            "--cache-dir",
            str(project / ".mypy_cache"),
            *paths,
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("def half(x):\n    return x / 2\n", "no-untyped-def"),
        ("def first(items: list) -> object:\n    return items[0]\n", "type-arg"),
        ("import json\n\n\ndef load(text: str) -> dict[str, int]:\n    return json.loads(text)\n", "no-any-return"),
    ],
    ids=["untyped def", "bare generic", "Any returned"],
)
@pytest.mark.parametrize("package", ["tau_tui/model", "tau_tui/tui", "tests"])
def test_every_package_is_checked_strictly(project: Path, package: str, source: str, code: str) -> None:
    """A sloppy module in a headless package, the TUI or the tests fails ``mypy`` as ``make test`` runs it: with
    no paths, the configuration's ``files``."""
    (project / package / "sloppy.py").write_text(source)
    checked = mypy(project)
    assert checked.returncode == 1 and f"{package}/sloppy.py" in checked.stdout, checked.stdout + checked.stderr
    assert f"[{code}]" in checked.stdout, checked.stdout + checked.stderr
