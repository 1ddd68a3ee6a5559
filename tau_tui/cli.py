"""The ``tau-tui`` command: the TUI by default, and headless sub-commands.

Each command is a module of ``tau_tui.commands`` (its parser and its
``run(args, workspace)``); ``main`` loops over ``COMMANDS``. Here: the flags
every command shares, the settings merge, the ``Workspace`` the command runs
in, and the errors every command turns into one line. The settings are resolved
once (``config.resolve``: flags over the environment over the settings file).

Start-up stays fast: textual is imported only to open the TUI, litellm only
by commands that talk to a model.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from tau_tui.commands import COMMANDS, SUBCOMMANDS, Command
from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, Subparsers, err

if TYPE_CHECKING:
    from tau_tui.config import Settings


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tau2-data",
        metavar="DIR",
        help="tau2 data folder (holding domains/<name>/); "
        "default: $TAU2_DATA_DIR, the settings file, a data folder in or above the paths opened, "
        "then an installed tau2 package",
    )
    parser.add_argument(
        "--domains",
        metavar="DIR",
        action="append",
        default=[],
        help="extra folder of domain packages (repeatable; also $TAU_TUI_DOMAINS)",
    )


class _SubcommandParser(argparse.ArgumentParser):
    """A sub-command's parser: a flag it does not know is reported with its own usage, not with tau-tui's."""

    def parse_known_args(  # type: ignore[override]  # one signature for argparse's overloads
        self, args: Any = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        unknown = self._unknown_flags(sys.argv[1:] if args is None else list(args))
        if unknown:  # before the positionals are counted: `compare A --bogus` names the flag, not a missing B
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra

    def _unknown_flags(self, args: list[str]) -> list[str]:
        """The options in ``args`` this parser has no flag for (nor a unique abbreviation of one)."""
        if any(isinstance(action, argparse._SubParsersAction) for action in self._actions):
            return []  # `notes add …`: the flags are the nested command's, which checks them itself
        known = self._option_string_actions
        out = []
        for token in args:
            if token == "--":
                break
            if not token.startswith("-") or token == "-" or _NUMBER.fullmatch(token):
                continue
            name = token.split("=", 1)[0]
            if name in known or (not name.startswith("--") and name[:2] in known):  # -k3: a short flag's value
                continue
            if name.startswith("--") and any(flag.startswith(name) for flag in known):
                continue  # an abbreviation argparse accepts (or names as ambiguous itself)
            out.append(token)
        return out


_NUMBER = re.compile(r"-\d+(\.\d*)?([eE][-+]?\d+)?")


class _VersionAction(argparse.Action):
    """``--version``: ``tau-tui <version>`` from the installed package's metadata, read only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print tau-tui's version and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("tau-tui")
        except PackageNotFoundError:  # run from a source tree that is not installed
            from tau_tui import __version__ as number
        sys.stdout.write(f"tau-tui {number}\n")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """All sub-commands; ``command`` (the one being run) lets the others skip costly set-up."""
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Inspect, replay, evaluate and run tau2-bench style agent evaluations.",
        epilog="Sub-commands: " + ", ".join(SUBCOMMANDS) + ". Run 'tau-tui <sub-command> --help' for each.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubcommandParser)
    for each in COMMANDS:
        if each.NAME is not None:
            _register(each, sub, running=command == each.NAME)
    return parser


def tui_parser() -> argparse.ArgumentParser:
    """``tau-tui [PATH...]``: the parser when no sub-command is named."""
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Open the TUI on run files or folders (default: the bundled recordings). "
        "Sub-commands: " + ", ".join(SUBCOMMANDS) + " ('tau-tui <sub-command> --help').",
    )
    parser.add_argument("--version", action=_VersionAction)
    return _register(_command(None), parser, running=True)


def _register(command: Command, where: Subparsers | argparse.ArgumentParser, running: bool) -> argparse.ArgumentParser:
    parser = command.register(where, running=running)
    if command.SHARED_FLAGS:
        _add_common(parser)
    return parser


def _command(name: str | None) -> Command:
    return next(command for command in COMMANDS if command.NAME == name)


def _settings(args: argparse.Namespace, announce: bool = True) -> Settings:
    """The resolved settings (``config.resolve``); with no tau2 data set anywhere, a data folder in or above
    the paths the command opens (the corpus, a tau2 checkout) is used, and said so on stderr (``announce``;
    the TUI says it in its notices instead)."""
    from tau_tui.config import resolve
    from tau_tui.domains import data_root_near

    settings = resolve(args)
    paths = [p for p in getattr(args, "paths", None) or [] if isinstance(p, str)]
    single = getattr(args, "file", None)  # show FILE: its data found as replay's and eval's is
    if isinstance(single, (str, Path)):
        paths.append(str(single))
    if settings.tau2_data is None and paths:
        found = data_root_near(paths)
        if found is not None:
            origin = f"found at {found}"
            settings = settings.model_copy(
                update={"tau2_data": found, "sources": {**settings.sources, "tau2_data": origin}}
            )
            if announce:
                err(f"note: tau2 data: {found} (found beside the files opened; --tau2-data DIR chooses another)")
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    """The ``tau-tui`` command (``argv`` None: this process's arguments, and the process ends after it)."""
    code = _main(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        import gc

        gc.freeze()  # the process ends now: its last collections would walk every object litellm or textual made
    return code


def _main(argv: list[str]) -> int:
    from tau_tui.config import ConfigError
    from tau_tui.model.io import WriteError

    try:
        name = argv[0] if argv and argv[0] in SUBCOMMANDS else None
        command = _command(name)
        args = (tui_parser() if name is None else build_parser(name)).parse_args(argv)
        from tau_tui.workspace import Workspace

        return command.run(args, Workspace(_settings(args, announce=name is not None)))
    except (ConfigError, WriteError) as exc:  # a file that cannot be written: named, nothing half-written
        err(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
