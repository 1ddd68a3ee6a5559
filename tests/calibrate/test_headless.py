"""The calibration core is headless: importing it pulls in neither textual nor litellm."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_calibrate_and_notes_import_without_textual_or_litellm() -> None:
    code = (
        "import sys, tau_tui.calibrate, tau_tui.calibrate.render, tau_tui.model.notes; "
        "print([m for m in ('textual', 'litellm') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
