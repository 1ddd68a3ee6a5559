"""The second new user's defects on the CLI: ``show`` finds the tau2 data as ``replay`` and ``eval`` do, a lone
simulation that calls no tool takes its domain from the gold actions its checks name, an ambiguous ``--sim``
lists its candidates, and a flag a command does not have is named (before a missing positional is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau_tui.cli import main
from tests.conftest import CORPUS

pytestmark = pytest.mark.corpus

AIRLINE = CORPUS / "sierra-research__tau2-bench__airline.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_finds_the_tau2_data_in_or_above_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # nothing set, nothing here: only the file's own folder tells
    sim = json.loads(AIRLINE.read_text())["simulations"][0]["id"]
    code, out, err = _run(capsys, "show", AIRLINE, "--sim", sim[:8])
    assert code == 0, err
    assert f"tau2 data: {CORPUS}" in err and "no tau2 data" not in out + err
    assert "reward" in out and "not replayed" not in out


def test_a_lone_simulation_that_calls_no_tool_takes_its_domain_from_its_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sims = json.loads(AIRLINE.read_text())["simulations"]
    sim = next(s for s in sims if (s.get("reward_info") or {}).get("action_checks"))
    sim["messages"] = [m for m in sim["messages"] if m["role"] in ("user", "assistant") and not m.get("tool_calls")]
    path = tmp_path / "voice_note.json"
    path.write_text(json.dumps(sim))  # a lone simulation: no info, no domain named, no tool called
    code, out, err = _run(capsys, "eval", path, "--tau2-data", CORPUS)
    assert code in (0, 1), err
    assert "cannot tell the domain" not in err
    assert "domain airline (the file names none), from the tools its recorded action checks name" in err
    assert "[airline," in out


def test_an_ambiguous_sim_lists_the_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    ids = [s["id"] for s in json.loads(AIRLINE.read_text())["simulations"]]
    prefix = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) > 1)
    many = [i for i in ids if i.startswith(prefix)]
    for command in ("eval", "replay"):
        code, out, err = _run(capsys, command, AIRLINE, "--sim", prefix, "--tau2-data", CORPUS)
        assert code == 2 and out == ""
        assert f"--sim {prefix!r} is ambiguous in the given files: {len(many)} simulations start with it" in err
        assert all(i in err for i in many[:8])
    code, out, err = _run(capsys, "show", AIRLINE, "--sim", prefix, "--tau2-data", CORPUS)
    assert code == 2 and f"{len(many)} simulations start with it" in err and many[0] in err


def test_an_unknown_flag_is_named_before_a_missing_positional(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["compare", str(AIRLINE), "--bogus"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert "unrecognized arguments: --bogus" in err and "required: B" not in err
    assert err.startswith("usage: tau-tui compare")
    from tau_tui.cli import build_parser

    for fine in (["--json"], ["--jso"], ["--seed=3"], ["--", "-not-a-flag"]):  # known, abbreviated, a value, after --
        args = build_parser("compare").parse_args(["compare", str(AIRLINE), str(AIRLINE), *fine])
        assert args.a == str(AIRLINE)
