"""``tau-tui --help`` (and each sub-command's) stays fast: no heavy module is imported to print it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize("argv", [["--help"], ["replay", "--help"], ["eval", "--help"], ["run", "--help"],
                                  ["play", "--help"], ["calibrate", "--help"], ["notes", "--help"],
                                  ["notes", "add", "--help"], ["serve", "--help"]])
def test_help_imports_no_heavy_module(argv):
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], input=json.dumps(HEAVY), capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "heavy": []}


def test_every_command_is_one_module_in_one_list():
    """``main`` loops over ``COMMANDS``: the sub-commands in --help order, then the TUI (no name)."""
    from tau_tui.commands import COMMANDS, SUBCOMMANDS

    assert SUBCOMMANDS == ("replay", "eval", "run", "play", "fork", "calibrate", "notes", "compare", "audit", "export",
                           "serve")
    assert [c.NAME for c in COMMANDS] == [*SUBCOMMANDS, None]
    for command in COMMANDS:
        assert callable(command.register) and callable(command.run), command.__name__
