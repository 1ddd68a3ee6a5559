"""A new kind costs one registry entry: a process detector shows up in the letters, legend, filter and CLI."""

from __future__ import annotations

import json

import pytest

from tau_tui.cli import main
from tau_tui.evaluate import (
    FLAG_KINDS,
    FLAG_LETTERS,
    Detector,
    Flag,
    register_detector,
    unregister_detector,
)
from tau_tui.tui.app import TauTuiApp
from tau_tui.tui.catalog import RunFilter, flag_options, flags_cell

from .conftest import RECORDINGS, SIZE, settle


def _greeting(timeline, start, policy=None):
    """Flags the first message of the agent's own doing (every trajectory has one)."""
    return [Flag("greeting", step.index, "the agent spoke first") for step in timeline.steps[start:start + 1]]


@pytest.fixture
def greeting():
    detector = register_detector(Detector("greeting", "G", "the first agent message (a test detector)", _greeting))
    yield detector
    unregister_detector("greeting")
    assert "greeting" not in FLAG_KINDS and "greeting" not in FLAG_LETTERS


def test_letters_must_be_unique_and_kinds_new(greeting):
    with pytest.raises(ValueError, match="letter 'G'"):
        register_detector(Detector("other", "G", "", _greeting))
    with pytest.raises(ValueError, match="already registered"):
        register_detector(greeting)


async def test_one_registration_reaches_letters_legend_filter_and_cli(greeting, make_app, tau2_data, capsys):
    assert list(FLAG_KINDS)[-1] == "greeting" and FLAG_LETTERS["greeting"] == "G"
    legend = TauTuiApp._legend().plain
    assert "G  greeting  the first agent message (a test detector)" in legend
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = app.catalog.rows
        assert rows and all(r.evaluation is not None and r.evaluation.flags.get("greeting") == 1 for r in rows)
        structural = next(r for r in rows if r.sim_id == "demo-structural-findings")
        assert flags_cell(structural).plain == "3 WG"
        counts = dict(app.runs_screen._flag_values())
        assert ("greeting", f"G  greeting  ·  {len(rows)} runs") in flag_options(counts)
        app.runs_screen.set_filter(RunFilter(flag="greeting"))
        await pilot.pause()
        assert len(app.runs_screen.query_one("RunTable").rows) == len(rows)

    path = next(RECORDINGS.glob("*.json"))
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) in (0, 1)
    out = capsys.readouterr().out
    assert "greeting ×1 (step" in out
    assert main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)]) in (0, 1)
    sims = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    flagged = [s for s in sims if "diagnostics" in s]
    assert flagged and all(any(f["kind"] == "greeting" for f in s["diagnostics"]["flags"]) for s in flagged)
