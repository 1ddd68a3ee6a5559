"""The ``tau-tui`` commands, one module each: its ``NAME``, ``register`` (its argparse parser) and
``run(args, workspace) -> int``.

``COMMANDS`` is the one list ``tau_tui.cli.main`` loops over: the sub-commands in the order
``--help`` lists them, then the TUI (``NAME = None``), which runs when no sub-command is named.
Every module imports only the standard library at module level; what a command needs is imported
inside its ``run``, so ``tau-tui --help`` stays fast.
"""

from __future__ import annotations

from tau_tui.commands import audit, calibrate, compare, export, fork, notes, play, replay, run, serve, show, tui
from tau_tui.commands import eval as evaluate

COMMANDS = (replay, evaluate, show, run, play, fork, calibrate, notes, compare, audit, export, serve, tui)
SUBCOMMANDS = tuple(command.NAME for command in COMMANDS if command.NAME)

__all__ = ["COMMANDS", "SUBCOMMANDS"]
