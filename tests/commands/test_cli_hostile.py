"""A hostile recording through every CLI command: control characters are shown, never sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau_tui.cli import main
from tests.hostile import EVIL, MARKUP, VISIBLE_MARKS, hostile_data, raw_controls, write_hostile


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_hostile(tmp_path / "runs")


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean(out: str, err: str) -> None:
    assert raw_controls(out) == [], out[:2000]
    assert raw_controls(err) == [], err[:2000]


def test_the_fixture_is_hostile() -> None:
    data = hostile_data()
    assert data["simulations"][0]["id"].endswith(EVIL) and raw_controls(EVIL)


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_human_output_shows_controls(
    command: str, hostile: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, command, hostile.parent, "--tau2-data", tau2_data)
    assert code in (0, 1, 2)
    assert_clean(out, err)
    assert all(mark in out for mark in VISIBLE_MARKS), out[:3000]
    assert "␛[2J" in err  # the unknown hostile domain and task are named on stderr, visibly


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_json_output_escapes_controls_and_parses(
    command: str, hostile: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, command, hostile.parent, "--json", "--tau2-data", tau2_data)
    assert_clean(out, err)
    records = [json.loads(line) for line in out.splitlines()]
    sims = [r.get("sim") or r.get("sim_id") for r in records if r.get("kind") != "file"]
    assert sims and all(EVIL in s for s in sims)  # escaped, not altered: the value reads back the same
    assert "\\u001b" in out and "\\u009b" in out and "\\u202e" in out


def test_notes_list_add_export(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "notes", "list", hostile)
    assert code == 0
    assert_clean(out, err)
    assert "the note␛[2J" in out and "\\u202e" in out and MARKUP in out
    code, out, err = run(capsys, "notes", "list", hostile, "--json")
    assert_clean(out, err)
    rows = [json.loads(line) for line in out.splitlines()]
    assert any(row["text"] == f"the note{EVIL}" for row in rows)
    code, out, err = run(
        capsys,
        "notes",
        "add",
        hostile,
        "--sim",
        "demo-mismatch",
        "--source",
        "agent",
        "--type",
        "other",
        "--text",
        f"added{EVIL}",
    )
    assert code == 0
    assert_clean(out, err)
    code, out, err = run(
        capsys, "notes", "add", hostile, "--sim", f"nope{EVIL}", "--source", "agent", "--type", "other"
    )
    assert code == 2 and "no simulation 'nope" in err
    assert_clean(out, err)
    for fmt in ("json", "csv"):
        code, out, err = run(capsys, "notes", "export", hostile, "--format", fmt)
        assert code == 0
        assert_clean(out, err)
        assert "added" in out
    code, out, err = run(capsys, "notes", "export", hostile, "--format", "json")
    assert any(row["text"] == f"added{EVIL}" for row in json.loads(out))


def test_unreadable_file_error_line_is_clean(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / f"bad{EVIL.replace('/', '_')}.json"
    bad.write_text("{\x1b[2J not json")
    code, out, err = run(capsys, "replay", bad, "--tau2-data", tau2_data)
    assert code == 2
    assert_clean(out, err)
    assert "bad␛[2J" in err


def test_calibrate_from_hostile_runs(hostile: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "calibrate", "--domain", "mock", "--from", hostile.parent, "--tau2-data", tau2_data)
    assert_clean(out, err)
    assert "task␛[2J" in out + err
    code, out, err = run(
        capsys, "calibrate", "--domain", "mock", "--from", hostile.parent, "--json", "--tau2-data", tau2_data
    )
    assert_clean(out, err)
    assert [json.loads(line) for line in out.splitlines()]
