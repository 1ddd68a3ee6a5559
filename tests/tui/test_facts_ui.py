"""One source of display facts: the CLI prints ``SimAnalysis.facts()``, the inspector styles the same list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.text import Text

from tau_tui.cli import main
from tau_tui.model.io import open_run
from tau_tui.tui.screens.trajectory import header_fact
from tau_tui.views.panels import render_derived
from tests.conftest import ROOT
from tests.helpers import call, greet, result, results_file

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


def troubled_run(path: Path, analyzer: Analyzer) -> tuple[Path, bool]:
    """One simulation with a mismatch, a finding, and a recorded DB check that disagrees with ours."""
    results_file(
        path,
        [
            greet(),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(dict(TASK_1, title="Other")),
            result("x", "nope"),
        ],
    )
    derived = analyzer.analyze(open_run(path), 0).db_match
    assert derived is not None
    data = json.loads(path.read_text())
    data["simulations"][0]["reward_info"] = {"reward": 1.0, "db_check": {"db_match": not derived, "db_reward": 1.0}}
    path.write_text(json.dumps(data))
    return path, derived


def test_the_cli_and_the_inspector_show_the_same_facts(
    tmp_path: Path, tau2_data: Path, analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    path, derived = troubled_run(tmp_path / "troubled.json", analyzer)
    analysis = analyzer.analyze(open_run(path), 0)
    facts = analysis.facts()
    kinds = {f.kind for f in facts}
    assert {"first_mismatch", "finding", "recorded_db_match"} <= kinds
    assert main(["replay", str(path), "--tau2-data", str(tau2_data)]) == 1
    cli = capsys.readouterr().out
    derived_panel = render_derived(analysis, None)
    assert isinstance(derived_panel, Text)
    panel = derived_panel.plain
    for fact in facts:
        if fact.cli:
            assert fact.text in cli
        if fact.panel:
            assert fact.short_text in panel
    # the same rules, worded once: the disagreement, the first mismatch, the finding
    disagreement = f"the recording says db_match={not derived}; our replay says {derived}"
    assert disagreement in cli and disagreement in panel
    assert (
        "first mismatch at step 2: update_task_status" in cli
        and "first mismatch at step 2: update_task_status" in panel
    )
    assert "result_without_call" in cli and "result_without_call" in panel
    header = "".join(header_fact(f, " · ").plain for f in analysis.summary())
    assert " · 1 mismatch" in header and " · 1 finding · " in header
    # the inspector's facts need no field-by-field detail (no deepdiff); the CLI's have it
    (lazy,) = [f for f in analysis.facts(detail=False) if f.kind == "first_mismatch"]
    (full,) = [f for f in facts if f.kind == "first_mismatch"]
    assert lazy.short_text == full.short_text and len(lazy.detail) == 3 and len(full.detail) > 3


OPEN_RECORDINGS = """
import asyncio, sys
from tests.tui.conftest import build_app
from tests.tui.conftest import RECORDINGS, open_sim, settle
from tests.conftest import ROOT, CORPUS

async def main():
    app = build_app([ROOT / "recordings"], tau2_data=CORPUS, viewer=lambda p: None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_sim(pilot, "cas-reordered-mismatch")
        assert "deepdiff" not in sys.modules, "deepdiff imported before a mismatch is shown"
        await pilot.press("m", "space")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "deepdiff" in sys.modules, "the mismatch view did not detail the mismatch"

asyncio.run(main())
"""


def test_opening_the_recordings_imports_deepdiff_only_for_a_mismatch_view(tau2_data: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_RECORDINGS],
        cwd=ROOT,
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
