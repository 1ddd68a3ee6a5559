"""``tau-tui [PATH...]`` (no sub-command): open the TUI on run files or folders.

textual is imported only here, inside ``run``, which turns a missing textual
into one line: the headless sub-commands work without it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, add_domain_flag, add_judge_flags, add_workers_flag, err
from tau_tui.commands.replay import add_upstream_fixes_flag

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = None  # the command a first argument that names no sub-command runs
SHARED_FLAGS = True


def default_paths() -> list[Path]:
    """The bundled recordings (the repo's ``recordings/`` or the copy inside the wheel)."""
    from tau_tui.model.notes import bundled_recordings

    return bundled_recordings()[:1]


def register(parser: argparse.ArgumentParser, running: bool = False) -> argparse.ArgumentParser:
    """The TUI's flags, on the top-level ``tau-tui`` parser itself (it has no sub-command of its own)."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders")
    parser.add_argument(
        "--calibrate",
        metavar="DOMAIN",
        help="open on the calibrate screen of DOMAIN (its loaded recordings in a grid; n runs k trials)",
    )
    add_judge_flags(
        parser, "litellm model that judges a trajectory's NL assertions when asked (J on the trajectory screen)"
    )
    add_upstream_fixes_flag(parser)
    add_domain_flag(parser)
    add_workers_flag(parser, executor=False)
    return parser


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    paths = [Path(p) for p in args.paths] or default_paths()
    missing = [p for p in paths if not p.exists()]
    if missing:
        err(f"{missing[0]}: does not exist")
        return EXIT_INPUT
    try:
        from tau_tui.tui.app import TauTuiApp
    except ImportError as exc:  # textual missing in a headless install
        err(f"the TUI needs textual ({exc}); headless sub-commands still work")
        return EXIT_INPUT
    from tau_tui.session import Session

    TauTuiApp(Session.from_settings(workspace.settings, paths), calibrate=args.calibrate).run()
    return EXIT_OK
