"""``tau-tui export PATH... --out DIR``: replayed runs as joinable tables (CSV, JSONL, Parquet, DuckDB) or SFT JSONL."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, Subparsers, add_judge_flags, err, number, open_all, say

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = "export"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    exp = sub.add_parser(
        NAME,
        help="export replayed runs as tables for notebooks (csv, jsonl, parquet, duckdb) or SFT chat JSONL",
        description="Replay and assess every simulation and write the tables runs, simulations, messages, "
        "tool_calls (replay verdict, DB paths changed, matched gold action), checks (every DB / action / env "
        "assertion / communicate / NL check with pass and closest call), grid (per task: passes, Wilson interval, "
        "band) and notes, keyed by run_id, sim_id, step and call_index so they join. csv and jsonl: one file per "
        "table (CSV cells a spreadsheet would run as formulas get a leading '); parquet: one file per table; "
        "duckdb: one tau.duckdb (both need the 'export' extra: pyarrow, duckdb). sft: sft.jsonl, OpenAI chat "
        "records with tool schemas, filtered by reward, flags and notes. Exit 0: written; 2: some input "
        "unreadable or the output cannot be written.",
    )
    exp.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    exp.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created if missing)")
    exp.add_argument(
        "--format",
        default="csv",
        choices=("csv", "jsonl", "parquet", "duckdb", "sft"),
        help="output format (default csv)",
    )
    exp.add_argument(
        "--min-reward",
        type=number(0, 1),
        default=1.0,
        metavar="R",
        help="sft: only simulations whose recomputed reward is at least R (default 1.0)",
    )
    exp.add_argument(
        "--exclude-flag",
        action="append",
        default=[],
        metavar="KIND",
        help="sft: leave out simulations with a process flag of this kind (repeatable; 'any': any flag)",
    )
    exp.add_argument("--exclude-noted", action="store_true", help="sft: leave out simulations that have a note")
    add_judge_flags(exp, "litellm model that judges NL assertions (without one, rewards that need them are unscored)")
    return exp


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from pathlib import Path

    from tau_tui.evaluate import FLAG_KINDS
    from tau_tui.trust.export import ExportError, SftFilter, build_export, write_export

    unknown = [k for k in args.exclude_flag if k != "any" and k not in FLAG_KINDS]
    if unknown:
        err(f"--exclude-flag: unknown flag kind {unknown[0]!r} (one of any, {', '.join(FLAG_KINDS)})")
        return EXIT_INPUT
    status = EXIT_OK
    runs = []
    for path, loaded, error in open_all(args.paths, prepare=workspace.analyzer.prepare):
        if loaded is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
        else:
            runs.append((path, loaded))
    export = build_export(runs, workspace.analyzer, judge=workspace.judge(), sft=args.format == "sft")
    for problem in export.errors:
        err(problem)
        status = EXIT_INPUT
    keep = SftFilter(args.min_reward, frozenset(args.exclude_flag), args.exclude_noted)
    try:
        written = write_export(export, Path(args.out), args.format, keep)
    except ExportError as exc:
        err(str(exc))
        return EXIT_INPUT
    counts = export.counts()
    if args.format == "sft":
        kept = sum(keep.keeps(e) for e in export.sft)
        say(
            f"{written[0]}: {kept} of {len(export.sft)} simulations (reward ≥ {args.min_reward:g}"
            + (f", without flags {', '.join(args.exclude_flag)}" if args.exclude_flag else "")
            + (", without notes" if args.exclude_noted else "")
            + ")"
        )
    else:
        say(f"{args.out}: " + ", ".join(f"{table} {n}" for table, n in counts.items()))
        for path in written:
            say(f"  {path}")
    return status
