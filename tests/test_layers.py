"""The layer contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold, and would catch a bad import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the ``tau_tui`` package and ``pyproject.toml`` in ``root``."""
    script = Path(sys.executable).with_name("lint-imports")
    if not script.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
        script = Path(found)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [str(script), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_contracts_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.fixture
def copy_of_project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tau_tui", tmp_path / "tau_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # the domain base reaching back into the registry: the old domains <-> tau2_adapter cycle
        ("env/domain.py", "from tau_tui.domains import DomainRegistry", "tau_tui layers"),
        ("model/tasks.py", "from tau_tui.replay import Timeline", "tau_tui layers"),
        ("evaluate/reward.py", "import textual.widget", "the core is headless"),
        ("replay/diff.py", "from tau_tui.views.render import one_line", "tau_tui layers"),
        ("llm/client.py", "from tau_tui.tui.app import TauTuiApp", "the core is headless"),
        ("rollout/agents.py", "import litellm", "one door to litellm"),
        ("evaluate/judge.py", "from litellm import completion", "one door to litellm"),
        # rollout and analysis are independent siblings: both score through evaluate
        ("rollout/evaluation.py", "from tau_tui.analysis import Analyzer", "tau_tui layers"),
        ("workbench_new.py", "from tau_tui.model import Task", "tau_tui layers"),  # no layer given
        ("tui/widgets/info_line.py", "from tau_tui.tui.app import TauTuiApp", "no import cycles"),
        # the session is headless and plain: no textual, no rich; the views draw with rich but never textual
        ("session/library.py", "import textual.widget", "the core is headless"),
        ("session/rollouts.py", "from rich.text import Text", "the TUI session is plain data"),
        ("views/panels.py", "from textual.widgets import Static", "the core is headless"),
        # the pool sits below the composition root: its workers get the workspace class, never import it
        ("workers/pool.py", "from tau_tui.workspace import Workspace", "tau_tui layers"),
        # inside workers/, the parcel the pool ships sits below it and stays below evaluate's layer
        ("workers/parcel.py", "from tau_tui.workers.pool import Job", "tau_tui.workers layers"),
        ("workers/parcel.py", "from tau_tui.evaluate import Judge", "the parcel stays low"),
        ("views/render.py", "from tau_tui.session import Session", "tau_tui layers"),
    ],
)
def test_a_bad_import_breaks_a_contract(copy_of_project: Path, module: str, line: str, broken: str) -> None:
    path = copy_of_project / "tau_tui" / module
    path.write_text((path.read_text() if path.exists() else "") + f"\n{line}\n")
    result = lint_imports(copy_of_project)
    assert result.returncode != 0, result.stdout
    assert f"{broken}" in result.stdout.split("Broken contracts")[-1], result.stdout
