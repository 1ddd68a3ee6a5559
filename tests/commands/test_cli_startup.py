"""``tau-tui --help`` (and each sub-command's) and ``--version`` stay fast: no heavy module is imported; a sub-command's
unknown flag gets its own usage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("litellm", "textual", "deepdiff", "tau2")

PROBE = """
import json, sys
from tau_tui.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = None
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.stdin.read())))
print(json.dumps({"code": code, "heavy": heavy}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["replay", "--help"],
        ["eval", "--help"],
        ["run", "--help"],
        ["play", "--help"],
        ["calibrate", "--help"],
        ["notes", "--help"],
        ["notes", "add", "--help"],
        ["serve", "--help"],
        ["show", "--help"],
        ["report", "--help"],
    ],
)
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        input=json.dumps(HEAVY),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "heavy": []}


def test_every_command_is_one_module_in_one_list() -> None:
    """``main`` loops over ``COMMANDS``: the sub-commands in --help order, then the TUI (no name)."""
    from tau_tui.commands import COMMANDS, SUBCOMMANDS

    assert SUBCOMMANDS == (
        "replay",
        "eval",
        "show",
        "run",
        "play",
        "fork",
        "calibrate",
        "notes",
        "compare",
        "report",
        "audit",
        "doctor",
        "export",
        "serve",
    )
    assert [c.NAME for c in COMMANDS] == [*SUBCOMMANDS, None]
    for command in COMMANDS:
        assert isinstance(command, ModuleType), command  # one module each
        assert callable(command.register) and callable(command.run), command.__name__


def test_version_prints_the_package_version_and_imports_nothing_heavy() -> None:
    from importlib.metadata import version

    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--version"],
        input=json.dumps(HEAVY),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.stdout.splitlines()[0] == f"tau-tui {version('tau-tui')}"
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"code": 0, "heavy": []}


@pytest.mark.parametrize(
    "argv, usage",
    [
        (["replay", "--foo", "recordings/"], "usage: tau-tui replay "),
        (["eval", "recordings/", "--nosuch", "1"], "usage: tau-tui eval "),
        (
            ["notes", "add", "x", "--sim", "s", "--source", "agent", "--type", "other", "--foo"],
            "usage: tau-tui notes add ",
        ),
    ],
)
def test_an_unknown_flag_of_a_sub_command_prints_that_sub_command_usage(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tau_tui.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(usage), err
    assert "unrecognized arguments: --" in err.splitlines()[-1]
