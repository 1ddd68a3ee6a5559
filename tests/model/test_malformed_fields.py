"""Malformed tau2 fields (issue 23, class 9): a tick, review or submission field of the wrong type is a problem
line or a finding in every command that reads it, never an exception; a recorded tool result repeated is
exported once into SFT data."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tests.hostile import DEMO
from tests.review_fixtures import reviewed_run, voice_mock_run, voice_simulation, voice_ticks

WRONG = [5, "x", [5], {"x": 1}, [None], True]
COMMANDS = [["replay"], ["eval"], ["notes", "from-review"], ["export", "--format", "sft", "--out", "{out}"]]


def run_all(capsys: pytest.CaptureFixture[str], tmp_path: Path, target: Path) -> list[int | str | None]:
    """Every command that reads the field, on ``target``: exit statuses, and no traceback anywhere."""
    codes: list[int | str | None] = []
    for command in COMMANDS:
        args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
        try:
            codes.append(main([*args, str(target)]))
        except SystemExit as exc:  # argparse only
            codes.append(exc.code)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
    return codes


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize(
    "field", ["user_tool_results", "agent_tool_results", "user_tool_calls", "agent_tool_calls", "agent_chunk"]
)
def test_a_tick_field_of_the_wrong_type_never_crashes(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any
) -> None:
    ticks = voice_ticks()
    for tick in ticks:
        tick[field] = copy.deepcopy(value)
    sim = voice_simulation()
    sim["ticks"] = ticks
    folder = voice_mock_run(tmp_path, [sim])
    assert all(code in (0, 1, 2) for code in run_all(capsys, tmp_path, folder))


def test_user_tool_results_5_is_a_finding_in_replay(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ticks = voice_ticks()
    ticks[0]["user_tool_results"] = 5
    sim = voice_simulation()
    sim["ticks"] = ticks
    folder = voice_mock_run(tmp_path, [sim])
    main(["replay", str(folder)])
    assert "message is a int, not an object" in capsys.readouterr().out


REVIEW_FIELDS = [
    ("review",),
    ("review", "errors"),
    ("review", "errors", 0),
    ("review", "errors", 0, "turn_idx"),
    ("review", "errors", 0, "severity"),
    ("review", "errors", 0, "error_tags"),
    ("review", "errors", 0, "reasoning"),
    ("auth_classification",),
    ("auth_classification", "status"),
]


@pytest.mark.parametrize("value", [5, [5], {"x": 1}, 2**70], ids=repr)
@pytest.mark.parametrize("where", REVIEW_FIELDS, ids=lambda w: ".".join(map(str, w)))
def test_a_review_field_of_the_wrong_type_never_crashes(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], where: tuple[str | int, ...], value: Any
) -> None:
    base = reviewed_run(tmp_path, name="base", keep=4)
    data = json.loads((base / "results_reviewed.json").read_text())
    holder: Any = data["simulations"][0]
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = value
    target = tmp_path / "broken" / "results.json"
    target.parent.mkdir()
    target.write_text(json.dumps(data))
    assert all(code in (0, 1, 2) for code in run_all(capsys, tmp_path, target))


@pytest.mark.parametrize("value", [5, [5], {"x": 1}, None], ids=repr)
@pytest.mark.parametrize("key", ["model_name", "results", "trajectory_files", "methodology", "voice_config"])
def test_a_submission_field_of_the_wrong_type_is_a_line(
    tmp_path: Path,
    tau2_data: Path,
    capsys: pytest.CaptureFixture[str],
    key: str,
    value: int | list[int] | dict[str, Any] | None,
) -> None:
    folder = tmp_path / "sub"
    (folder / "trajectories").mkdir(parents=True)
    shutil.copyfile(DEMO, folder / "trajectories" / "mock.json")
    meta: dict[str, Any] = {
        "model_name": "m",
        "trajectory_files": {"mock": "mock.json"},
        "results": {"mock": {"pass_1": 50}},
    }
    meta[key] = value
    (folder / "submission.json").write_text(json.dumps(meta))
    for command in (["eval"], ["audit"], ["replay"]):
        assert main([*command, str(folder)]) in (0, 1, 2)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        assert all(line.startswith("tau-tui: ") for line in err.splitlines() if line)


def test_a_repeated_tool_result_is_exported_once_into_sft(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(DEMO.read_text())
    messages = data["simulations"][0]["messages"]
    first = next(i for i, m in enumerate(messages) if m["role"] == "tool" and m.get("requestor") == "assistant")
    messages.insert(first + 1, copy.deepcopy(messages[first]))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    main(
        [
            "export",
            "--tau2-data",
            str(tau2_data),
            "--format",
            "sft",
            "--min-reward",
            "0",
            "--out",
            str(tmp_path),
            str(path),
        ]
    )
    capsys.readouterr()
    records = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    for record in records:
        answered = [m["tool_call_id"] for m in record["messages"] if m["role"] == "tool"]
        assert len(answered) == len(set(answered))
        called = [c["id"] for m in record["messages"] for c in m.get("tool_calls", [])]
        assert set(answered) <= set(called)
    assert any(m["role"] == "tool" and m["tool_call_id"] == messages[first]["id"] for m in records[0]["messages"])
