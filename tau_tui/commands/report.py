"""``tau-tui report RUN… --out DIR``: a static HTML report of several runs, to open offline or send on."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tau_tui.commands.common import EXIT_INPUT, EXIT_OK, Subparsers, add_judge_flags, err, open_all, say

NAME = "report"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    report = sub.add_parser(
        NAME,
        help="write a static HTML report of several runs (summary, charts, task matrix, every simulation)",
        description="Compare every run with the baseline as `tau-tui compare` does and write a self-contained HTML "
        "report into DIR: the summary per run, charts drawn as inline SVG (pass^k against k, the reward heatmap of "
        "task by run, cost against score with its Pareto front, termination reasons), the tasks × runs matrix and "
        "one page per simulation (messages, the replay, the final DB against gold, the reward explained, findings, "
        "notes), linked. No page loads anything from the network; open DIR/index.html from disk. DIR must be new, "
        "empty or a previous report (which is replaced whole); any other folder is refused. Exit 0: written; "
        "2: nothing written (unreadable input, or DIR refused).",
    )
    report.add_argument("paths", nargs="+", metavar="RUN", help="run files or folders, one run each")
    report.add_argument("--out", required=True, metavar="DIR", help="the report's folder")
    report.add_argument(
        "--baseline",
        metavar="RUN",
        help="the run every other is compared with: one of the RUNs given (default: the first)",
    )
    report.add_argument(
        "--recorded", action="store_true", help="report the rewards recorded in the files instead of recomputing them"
    )
    report.add_argument("--seed", type=int, default=0, metavar="S", help="bootstrap seed (default 0)")
    add_judge_flags(
        report, "litellm model that judges NL assertions (without one, rewards that need them are unscored)"
    )
    return report


def run(args: argparse.Namespace, workspace: Any) -> int:
    from tau_tui import formats
    from tau_tui.report import ReportError, build_report, check_target

    if args.baseline is not None and args.baseline not in args.paths:
        err(f"--baseline {args.baseline}: not one of the runs given ({', '.join(args.paths)})")
        return EXIT_INPUT
    out = Path(args.out)
    try:
        check_target(out)
    except ReportError as exc:
        err(str(exc))
        return EXIT_INPUT
    sources = []
    for path in args.paths:
        runs = []
        for file, loaded, error in open_all([path]):
            if loaded is None:
                err(error or f"{file}: unreadable")
                return EXIT_INPUT
            runs.append((file, loaded))
        if not runs:
            err(f"{path}: no run file to report")
            return EXIT_INPUT
        sources.append((path, runs))
    baseline = args.paths.index(args.baseline) if args.baseline is not None else 0
    judge = None if args.recorded else workspace.judge()
    try:
        result = build_report(
            sources, out, workspace.analyzer, baseline=baseline, recorded=args.recorded, judge=judge, seed=args.seed
        )
    except ReportError as exc:
        err(str(exc))
        return EXIT_INPUT
    for problem in result.errors:
        err(problem)
    say(
        f"{out / 'index.html'}: {formats.count(len(sources), 'run')}, "
        f"{formats.count(result.simulations, 'simulation')}, {formats.count(result.files, 'page')}, "
        f"{result.bytes / 1e6:.1f} MB in {result.seconds:.1f} s"
    )
    return EXIT_OK
