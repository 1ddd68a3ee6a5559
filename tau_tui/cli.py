"""The ``tau-tui`` command: the TUI by default, and headless sub-commands.

Start-up stays fast: textual is imported only to open the TUI, litellm only
by commands that talk to a model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
SUBCOMMANDS = ("replay", "eval", "run", "play", "calibrate")


def default_paths() -> list[Path]:
    """The bundled recordings (the repo's ``recordings/`` or the copy inside the wheel)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "recordings", here / "_bundled" / "recordings"):
        if candidate.is_dir():
            return [candidate]
    return []


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tau2-data", metavar="DIR", help="tau2 data folder (holding domains/<name>/); "
                        "default: $TAU2_DATA_DIR, then an installed tau2 package")
    parser.add_argument("--domains", metavar="DIR", action="append", default=[],
                        help="extra folder of domain packages (repeatable; also $TAU_TUI_DOMAINS)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Inspect, replay, evaluate and run tau2-bench style agent evaluations.",
        epilog="Sub-commands: " + ", ".join(SUBCOMMANDS) + ". Run 'tau-tui <sub-command> --help' for each.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    replay = sub.add_parser("replay", help="replay recorded runs against the environment and check them",
                            description="Replay every simulation: a verdict per tool call, findings, DB hashes.")
    replay.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    replay.add_argument("--sim", action="append", default=[], metavar="ID", help="only this simulation (id or prefix; repeatable)")
    replay.add_argument("--json", action="store_true", help="one JSON object per simulation, one per line")
    _add_common(replay)
    return parser


def tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Open the TUI on run files or folders (default: the bundled recordings). "
        "Sub-commands: " + ", ".join(SUBCOMMANDS) + " ('tau-tui <sub-command> --help').",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders")
    _add_common(parser)
    return parser


def err(message: str) -> None:
    print(f"tau-tui: {message}", file=sys.stderr)


# --- replay ----------------------------------------------------------------------


def _registry(args: argparse.Namespace):
    from tau_tui.domains import DomainRegistry

    return DomainRegistry(args.tau2_data, [Path(p) for p in args.domains])


def _open_all(paths: Sequence[Path | str]) -> Iterator[tuple[Path, Any, str | None]]:
    """(path, run or None, error line or None) for every run file under ``paths``."""
    from tau_tui.model.io import RunFileError, describe_empty, expand_paths, open_run

    for path in expand_paths(paths):
        try:
            run = open_run(path)
        except RunFileError as exc:
            yield path, None, str(exc)
            continue
        note = describe_empty(run)
        if note:
            err(f"note: {note}")
        for warning in run.warnings:
            err(f"note: {path}: {warning}")
        yield path, run, None


def _fmt_args(arguments: Any) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return repr(arguments)


def _clip(text: str | None, limit: int = 400) -> str:
    text = "" if text is None else text
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def human_block(analysis) -> str:
    """One readable block per simulation for ``tau-tui replay``."""
    data = analysis.to_json()
    v = data["verdicts"]
    lines = [
        f"{data['sim']}  task {data['task']}"
        + (f" trial {data['trial']}" if data["trial"] is not None else "")
        + f"  [{data['domain']}, {data['termination']}]",
        f"  calls: {v['replayed']} replayed, {v['mismatch']} mismatch, {v['skipped_read']} read (not re-run), "
        f"{v['skipped_unknown']} hallucinated; {v['recorded_error']} recorded errors",
    ]

    def short(h: str | None) -> str:
        return "none" if h is None else h[:12]

    if data["gold_db"] is None and data["pred_db"] is not None and analysis.gold is None:
        lines.append(f"  DB: predicted {short(data['pred_db'])}; no gold state (task not found)")
    else:
        verdict = "match" if data["db_match"] else "DIFFER"
        lines.append(
            f"  DB: {verdict}  agent {short(data['pred_db'])} vs gold {short(data['gold_db'])}"
            f"; user {short(data['pred_user_db'])} vs gold {short(data['gold_user_db'])}"
        )
    recorded = data["recorded_db_match"]
    if recorded is not None and data["db_match"] is not None and recorded != data["db_match"]:
        lines.append(f"  note: the recording says db_match={recorded}")
    mismatch = data["first_mismatch"]
    if mismatch:
        lines.append(f"  first mismatch at step {mismatch['step']}: {mismatch['tool']}({_fmt_args(mismatch['arguments'])})")
        lines.append(f"    recorded: {_clip(mismatch['recorded'])}")
        lines.append(f"    replayed: {_clip(mismatch['replayed'])}")
    for finding in data["findings"]:
        where = f"step {finding['step']}: " if finding["step"] is not None else ""
        lines.append(f"  finding [{finding['kind']}] {where}{finding['message']}")
    if not mismatch and not data["findings"]:
        lines.append("  strict replay ok")
    return "\n".join(lines)


def cmd_replay(args: argparse.Namespace) -> int:
    import orjson

    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainError
    from tau_tui.model.io import RunFileError

    analyzer = Analyzer(_registry(args))
    status = EXIT_OK
    wanted = list(args.sim)
    found_wanted: set[str] = set()
    out = sys.stdout
    for path, run, error in _open_all(args.paths):
        if run is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
            continue
        indices = range(len(run.entries))
        if wanted:
            picked = []
            for sim_id in wanted:
                index = run.find(sim_id)
                if index is not None:
                    picked.append(index)
                    found_wanted.add(sim_id)
            indices = picked
        for index in indices:
            try:
                analysis = analyzer.analyze(run, index)
            except (DomainError, RunFileError) as exc:
                err(str(exc))
                status = EXIT_INPUT
                if isinstance(exc, DomainError):
                    break
                continue
            record = analysis.to_json()
            if args.json:
                out.write(orjson.dumps(record).decode() + "\n")
            else:
                out.write(f"{path}\n{human_block(analysis)}\n\n")
            if status == EXIT_OK and (record["first_mismatch"] or record["findings"]):
                status = EXIT_FINDINGS
    for sim_id in wanted:
        if sim_id not in found_wanted:
            err(f"no simulation {sim_id!r} in the given files")
            status = EXIT_INPUT
    out.flush()
    return status


# --- TUI -----------------------------------------------------------------------


def cmd_tui(args: argparse.Namespace) -> int:
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
    app = TauTuiApp(paths, tau2_data=args.tau2_data, domain_paths=[Path(p) for p in args.domains])
    app.run()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = build_parser().parse_args(argv)
            handler = {"replay": cmd_replay}.get(args.command)
            if handler is None:
                err(f"'{args.command}' is not available yet")
                return EXIT_INPUT
            return handler(args)
        return cmd_tui(tui_parser().parse_args(argv))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
