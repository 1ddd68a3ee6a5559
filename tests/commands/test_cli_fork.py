"""``tau-tui fork``: a recorded simulation continued after message N, with one-line errors for bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.model.io import open_run
from tests.conftest import CORPUS

pytestmark = pytest.mark.corpus

MOCK = CORPUS / "sierra-research__tau2-bench__e2e_mock_baseline.json"


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    copy = tmp_path / "mock.json"
    shutil.copyfile(MOCK, copy)
    return copy


def fork(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["fork", *argv, "--tau2-data", str(CORPUS)])
    out, err = capsys.readouterr()
    return code, out, err


def test_gold_continues_a_recorded_prefix_and_saves_a_replayable_file(
    recording: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = open_run(recording).entries[0]
    before = recording.read_bytes()
    out = tmp_path / "fork.json"
    code, text, err = fork(
        capsys,
        str(recording),
        "--sim",
        first.id[:8],
        "--after",
        "2",
        "--agent-llm",
        "scripted/gold",
        "--out",
        str(out),
        "--json",
    )
    assert code == 0, err
    record = json.loads(text)
    assert record["simulation"] == first.id and record["after_message"] == 2
    assert record["reward"] == 1.0 and record["db_match"] is True and record["saved_to"] == str(out)
    assert record["original_reward"] == first.reward
    saved = open_run(out)
    sim = saved.simulation(0)
    recorded = open_run(recording).simulation(0)
    # the first three messages are the recorded ones, the rest were produced by the new sides
    assert [m.role for m in sim.trajectory[:3]] == [m.role for m in recorded.trajectory[:3]]
    assert [m.text for m in sim.trajectory[:3]] == [m.text for m in recorded.trajectory[:3]]
    assert saved.raw_info.get("forked_from", {}).get("after_message") == 2 or "forked_from" in json.dumps(
        json.loads(out.read_text())
    )
    assert recording.read_bytes() == before  # the input is never modified

    code, text, err = fork(
        capsys, str(recording), "--sim", first.id, "--after", "2", "--agent-llm", "scripted/gold", "--out", str(out)
    )
    assert code == 2 and err.count("\n") == 1 and "already exists" in err
    assert open_run(out).simulation(0).id == sim.id  # the first fork is kept


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["--sim", "no-such-sim", "--after", "1", "--agent-llm", "scripted/gold"],
            "--sim: no simulation 'no-such-sim'",
        ),
        (["--after", "999", "--agent-llm", "scripted/gold"], "--after: the simulation has"),
        (["--after", "-1", "--agent-llm", "scripted/gold"], "--after must be at least 0"),
        (["--after", "1", "--agent-llm", "human"], "--agent-llm: a fork runs without a person"),
        (
            ["--after", "1", "--agent-llm", "scripted/gold", "--agent-llm-args", "[1]"],
            "--agent-llm-args: expected a JSON",
        ),
    ],
)
def test_bad_requests_are_one_line_naming_the_flag(
    recording: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    sim = open_run(recording).entries[0].id
    if "--sim" not in argv:
        argv = ["--sim", sim, *argv]
    code, out, err = fork(capsys, str(recording), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err, err


def test_a_file_that_is_not_a_recording_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = fork(capsys, str(bad), "--sim", "x", "--after", "1", "--agent-llm", "scripted/gold")
    assert code == 2 and err.count("\n") == 1 and "bad.json" in err and "Traceback" not in err
