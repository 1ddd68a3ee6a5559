"""A model without its API key stops every command that would call it before anything runs: one line naming
the variable, exit status 2, nothing saved, no model call (so no retries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from tau_tui.cli import main

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
MISSING = "OPENAI_API_KEY is not set"


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No OpenAI key in the environment, runs saved under ``tmp_path/runs``, and any model call fails the test."""
    import litellm

    def never(**kwargs: Any) -> NoReturn:
        raise AssertionError(f"a model was called: {kwargs.get('model')}")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("TAU_TUI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(litellm, "acompletion", never)
    monkeypatch.setattr(litellm, "completion", never)
    return tmp_path


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    ours = [line for line in captured.err.splitlines() if line.startswith("tau-tui: ")]
    assert len(ours) == 1 and "Traceback" not in captured.err, captured.err
    return ours[0]


@pytest.mark.parametrize(
    "argv, who",
    [
        (
            [
                "run",
                "--domain",
                "mock",
                "--task",
                "update_task_1",
                "--agent-llm",
                "openai/gpt-4.1",
                "--user-llm",
                "scripted/user",
                "--quiet",
            ],
            "the agent model openai/gpt-4.1",
        ),
        (
            [
                "run",
                "--domain",
                "mock",
                "--task",
                "update_task_1",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "openai/gpt-4.1-mini",
                "--format",
                "dir",
                "--quiet",
            ],
            "the user model openai/gpt-4.1-mini",
        ),
        (
            [
                "run",
                "--domain",
                "mock",
                "--task",
                "update_task_1",
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--judge",
                "openai/gpt-4.1",
                "--quiet",
            ],
            "the judge model openai/gpt-4.1",
        ),
        (
            [
                "play",
                "--as",
                "user",
                "--domain",
                "mock",
                "--task",
                "update_task_1",
                "--llm",
                "openai/gpt-4.1",
                "--plain",
            ],
            "the agent model openai/gpt-4.1",
        ),
        (
            [
                "fork",
                str(RECORDINGS / "aftersales.json"),
                "--sim",
                "as-hasty-refund",
                "--after",
                "2",
                "--agent-llm",
                "openai/gpt-4.1",
            ],
            "the agent model openai/gpt-4.1",
        ),
        (
            [
                "calibrate",
                "--domain",
                "mock",
                "--task",
                "update_task_1",
                "--agent-llm",
                "openai/gpt-4.1",
                "--user-llm",
                "scripted/user",
                "-k",
                "2",
                "--quiet",
            ],
            "the agent model openai/gpt-4.1",
        ),
        (
            ["calibrate", "--gold-check", "--domain", "mock", "--judge", "openai/gpt-4.1"],
            "the judge model openai/gpt-4.1",
        ),
        (["eval", str(RECORDINGS / "aftersales.json"), "--judge", "openai/gpt-4.1"], "the judge model openai/gpt-4.1"),
    ],
)
def test_a_missing_key_is_one_line_exit_2_and_nothing_saved(
    no_key: Path, capsys: pytest.CaptureFixture[str], argv: list[str], who: str
) -> None:
    assert main(argv) == 2
    line = one_line(capsys)
    assert line == f"tau-tui: {MISSING} ({who} needs it)"
    assert not (no_key / "runs").exists() or not any((no_key / "runs").rglob("*"))
