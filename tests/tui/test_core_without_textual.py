"""The headless core never needs textual: only ``tau_tui.tui`` may import it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BLOCK_TEXTUAL = """
import importlib.abc, sys

class NoTextual(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "textual" or name.startswith("textual."):
            raise ImportError(f"textual is blocked in this test ({name})")
        return None

sys.meta_path.insert(0, NoTextual())
import tau_tui, tau_tui.model, tau_tui.env, tau_tui.replay, tau_tui.analysis, tau_tui.cli, tau_tui.domains, tau_tui.textsafe
import tau_tui.evaluate, tau_tui.rollout, tau_tui.calibrate, tau_tui.config, tau_tui.tau2_adapter, tau_tui.env.domain, tau_tui.workspace
import tau_tui.session, tau_tui.session.simulation, tau_tui.views.panels, tau_tui.views.legend, tau_tui.workers.pool
assert not any(m == "textual" or m.startswith("textual.") for m in sys.modules), "textual was imported"
try:
    import tau_tui.tui.app
except ImportError as exc:
    assert "textual is blocked" in str(exc)
else:
    raise AssertionError("the blocker did not work: tau_tui.tui.app imported")
print("ok")
"""


def test_core_imports_without_textual() -> None:
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_TEXTUAL], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_cli_says_textual_is_missing_instead_of_crashing(tmp_path: Path) -> None:
    code = BLOCK_TEXTUAL.split("import tau_tui, ")[0] + (
        f"from tau_tui.cli import main\nraise SystemExit(main([{str(ROOT / 'recordings')!r}]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "the TUI needs textual" in result.stderr
