"""The detail of a return-value mismatch, field by field (deepdiff): the bundled cassette, the CLI, the TUI panel."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from tau_tui.analysis import Analyzer
from tau_tui.cli import main
from tau_tui.domains import DomainRegistry
from tau_tui.model import open_run
from tau_tui.replay.mismatch import detail_lines, mismatch_detail
from tests.conftest import ROOT

if TYPE_CHECKING:
    from tau_tui.views.trajectory_doc import CallView

CASSETTE = ROOT / "recordings" / "warehouse_cassette.json"
EXPECTED = [
    {"path": "status", "change": "changed", "recorded": "allocated", "replayed": "part_allocated"},
    {"path": "lines[0].allocations[1]", "change": "removed", "recorded": {"warehouse": "south", "quantity": 40}},
]


def test_every_kind_of_change_in_reading_order() -> None:
    recorded = json.dumps({"id": 1, "n": 1, "tags": ["a"], "gone": {"k": 1}, "s": "x"})
    replayed = json.dumps({"id": 1, "n": "1", "tags": ["a", "b"], "s": "y", "new": None})
    changes = [c.to_json() for c in mismatch_detail(recorded, replayed)]
    assert changes == [
        {"path": "n", "change": "type_changed", "recorded": 1, "replayed": "1", "types": ["int", "str"]},
        {"path": "tags[1]", "change": "added", "replayed": "b"},
        {"path": "gone", "change": "removed", "recorded": {"k": 1}},
        {"path": "s", "change": "changed", "recorded": "x", "replayed": "y"},
        {"path": "new", "change": "added", "replayed": None},
    ]
    assert detail_lines(changes, limit=2) == ['n: 1 → "1" (type int → str)', 'tags[1]: added "b"', "… 3 more field(s)"]
    assert [c.to_json() for c in mismatch_detail("plain text", "other text")] == [
        {"path": "(root)", "change": "changed", "recorded": "plain text", "replayed": "other text"}
    ]
    assert mismatch_detail(None, "x") == [] and mismatch_detail("{}", "{}") == []


def test_replay_json_and_human_output_of_the_cassette(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(CASSETTE), "--json"]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    mismatch = next(r["first_mismatch"] for r in records if r["first_mismatch"])
    assert mismatch["step"] == 13 and mismatch["tool"] == "allocate_line"
    assert mismatch["detail"] == EXPECTED
    assert {"step", "call_id", "tool", "arguments", "recorded", "replayed"} <= set(mismatch)  # additive
    assert main(["replay", str(CASSETTE)]) == 1
    out = capsys.readouterr().out
    assert (
        "    field by field (recorded → replayed):\n"
        '      status: "allocated" → "part_allocated"\n'
        '      lines[0].allocations[1]: removed (recorded {"quantity": 40, "warehouse": "south"})\n'
    ) in out


@pytest.fixture(scope="module")
def cassette_call(tmp_path_factory: pytest.TempPathFactory) -> CallView:
    from tau_tui.views.trajectory_doc import TrajectoryDoc

    analyzer = Analyzer(DomainRegistry(tmp_path_factory.mktemp("no-tau2-data"), use_tau2=False))
    run = open_run(CASSETTE)
    for index in range(len(run.entries)):
        analysis = analyzer.analyze(run, index)
        if analysis.timeline.mismatches:
            doc = TrajectoryDoc(analysis.sim.trajectory, analysis.timeline)
            return next(c for c in doc.calls if c.record is analysis.timeline.mismatches[0])
    raise AssertionError("no mismatch in the cassette")


def test_tui_mismatch_view_lists_the_fields(cassette_call: CallView) -> None:
    pytest.importorskip("textual")
    from tau_tui.views.panels import render_mismatch

    console = Console(width=160, record=True)
    console.print(render_mismatch(cassette_call))
    text = console.export_text()
    assert "field by field (recorded → replayed)" in text
    assert '  status: "allocated" → "part_allocated"' in text
    assert '  lines[0].allocations[1]: removed {"quantity": 40, "warehouse": "south"}' in text


def test_deepdiff_is_imported_only_when_a_mismatch_is_detailed() -> None:
    code = (
        "import sys, tau_tui.cli, tau_tui.analysis, tau_tui.replay.mismatch, tau_tui.views.panels;"
        "sys.exit(1 if 'deepdiff' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, check=False).returncode == 0


def test_long_texts_are_shown_from_where_they_differ() -> None:
    recorded, replayed = "Error: " + "x" * 100 + " version 2.12", "Error: " + "x" * 100 + " version 2.14"
    (line,) = detail_lines([c.to_json() for c in mismatch_detail(recorded, replayed)])
    assert line.startswith("(root): …") and "2.12" in line and "2.14" in line
