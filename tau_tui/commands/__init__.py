"""The ``tau-tui`` commands, one module each: its ``NAME``, ``register`` (its argparse parser) and
``run(args, workspace) -> int``.

``COMMANDS`` is the one list ``tau_tui.cli.main`` loops over: the sub-commands in the order
``--help`` lists them, then the TUI (``NAME = None``), which runs when no sub-command is named.
Every module imports only the standard library at module level; what a command needs is imported
inside its ``run``, so ``tau-tui --help`` stays fast.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Protocol

from tau_tui.commands import (
    audit,
    calibrate,
    compare,
    doctor,
    export,
    fork,
    notes,
    play,
    replay,
    report,
    run,
    serve,
    show,
    tui,
)
from tau_tui.commands import eval as evaluate

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace


class Command(Protocol):
    """What a command module holds (each module of this package is one)."""

    @property
    def NAME(self) -> str | None: ...  # noqa: N802 - the module constant it stands for

    @property
    def SHARED_FLAGS(self) -> bool: ...  # noqa: N802

    # ``sub``: a sub-command's ``common.Subparsers``, or the top-level parser itself for the TUI
    # (``commands.tui``); left open here, since each module's parameter is the one of the two it takes
    def register(self, sub: Any, running: bool = False) -> argparse.ArgumentParser: ...

    def run(self, args: argparse.Namespace, workspace: Workspace) -> int: ...


COMMANDS: tuple[Command, ...] = (
    replay,
    evaluate,
    show,
    run,
    play,
    fork,
    calibrate,
    notes,
    compare,
    report,
    audit,
    doctor,
    export,
    serve,
    tui,
)
SUBCOMMANDS = tuple(command.NAME for command in COMMANDS if command.NAME)

__all__ = ["COMMANDS", "SUBCOMMANDS", "Command"]
