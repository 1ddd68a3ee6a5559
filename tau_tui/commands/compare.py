"""``tau-tui compare A B [C …]``: runs over a task set, the pass/fail matrix and paired statistics.

Two runs give the two-way report; three or more (or ``--baseline``) pair every run with the baseline the same
way, and add a summary per run and the task × runs matrix, regressions first.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    add_judge_flags,
    err,
    open_all,
    print_json,
    say,
    whole,
)

if TYPE_CHECKING:
    from pathlib import Path

    from tau_tui.model.io import RunFile
    from tau_tui.trust import ManyComparison, PairRow
    from tau_tui.workspace import Workspace

NAME = "compare"
SHARED_FLAGS = True
TASK_WIDTH = 90  # the task column of the text report: longer ids are shortened, keeping what tells them apart


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    cmp = sub.add_parser(
        NAME,
        help="compare runs task by task: pass/fail matrix, McNemar test, paired bootstrap",
        description="Pair the simulations of A and B by task and trial index and count the matrix: both pass, "
        "A only, B only, both fail, and not comparable (missing on one side, unscored, or a different version of "
        "the task by its fingerprint). Then McNemar's exact test on the A-only/B-only pairs and a paired bootstrap "
        "interval (over tasks, seeded) for the difference in mean reward, and each side's intervals, flip rate and "
        "noise floor. Rewards are recomputed by replay unless --recorded. With three or more runs (or --baseline) "
        "every run is paired with the baseline the same way, McNemar p-values are adjusted for the number of "
        "comparisons (Holm), and the tasks × runs matrix lists regressions first. Runs made with different "
        "protocols (tau2's prompts or tau-tui's, or other prompt texts, as each file records) get a warning: their "
        "scores measure different benchmarks. Exit 0: no difference is "
        "significant at 5% (Holm-adjusted with several runs); 1: some is; 2: some input unreadable.",
    )
    cmp.add_argument("a", metavar="A", help="run file or folder (side A, the baseline unless --baseline)")
    cmp.add_argument("b", nargs="+", metavar="B", help="run files or folders to compare with the baseline")
    cmp.add_argument(
        "--baseline",
        metavar="RUN",
        help="the run every other is compared with: one of the paths given (default: the first)",
    )
    cmp.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per pair (kind: pair, naming its two runs), then one with the matrix and statistics; "
        "with several runs the pairs of each comparison, one object per task (kind: task) and a summary per run "
        "(kind: comparisons)",
    )
    cmp.add_argument(
        "--recorded", action="store_true", help="compare the rewards recorded in the files instead of recomputing them"
    )
    cmp.add_argument("--seed", type=whole(0), default=0, metavar="S", help="bootstrap seed (default 0)")
    cmp.add_argument("--resamples", type=whole(1), default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    cmp.add_argument("--no-rows", action="store_true", help="the matrix and statistics only (text output)")
    add_judge_flags(cmp, "litellm model that judges NL assertions (without one, rewards that need them are unscored)")
    return cmp


def _shown_tasks(tasks: set[str], width: int) -> dict[str, str]:
    """Each task id shortened to ``width`` characters keeping where it differs from the others (wider if two
    would read the same)."""
    from tau_tui.textsafe import one_line
    from tau_tui.views.layout import distinct_starts, elide, width_apart

    lines = {task: one_line(task) for task in tasks}
    starts = distinct_starts(lines.values())
    width = width_apart(lines.values(), width)
    return {task: elide(line, width, starts[line]) for task, line in lines.items()}


def _pair_line(row: PairRow, a_source: str, b_source: str) -> str:
    """One pair's ``--json`` object, naming the two runs (as given) it pairs."""
    from tau_tui.textsafe import json_line

    return json_line({"kind": "pair", "a_run": a_source, "b_run": b_source, **row.to_json()})


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui.textsafe import visible
    from tau_tui.trust import Sides, comparison_lines

    if args.resamples < 1:
        err("--resamples must be at least 1")
        return EXIT_INPUT
    paths = [args.a, *args.b]
    if args.baseline is not None and args.baseline not in paths:
        err(f"--baseline {args.baseline}: not one of the runs given ({', '.join(paths)})")
        return EXIT_INPUT
    status = EXIT_OK
    sides = Sides(workspace.analyzer, recorded=args.recorded, judge=None if args.recorded else workspace.judge())
    for path in paths:
        runs: list[tuple[Path, RunFile]] = []
        for file, loaded, error in open_all([path], prepare=workspace.analyzer.prepare):
            if loaded is None:
                err(error or f"{file}: unreadable")
                status = EXIT_INPUT
            else:
                runs.append((file, loaded))
        if not runs:
            err(f"{path}: no run file to compare")
            return EXIT_INPUT
        side, problems = sides.add(path, runs)
        for problem in problems:
            err(problem)
            status = EXIT_INPUT
        if not side.outcomes:  # nothing of this side could be scored (no tau2 data, say): no half-empty summary
            err(f"{path}: no simulation could be compared; nothing printed")
            return EXIT_INPUT
    if len(paths) > 2 or args.baseline is not None:
        baseline = paths.index(args.baseline) if args.baseline is not None else 0
        return _many(args, paths, sides.against(baseline, seed=args.seed, resamples=args.resamples), status)
    result = sides.two_way(seed=args.seed, resamples=args.resamples)
    if result.domain_warning:
        err(f"warning: {result.domain_warning}")
    protocol = result.protocol_warning()
    if args.json and protocol:  # the text report says it beside the difference
        err(f"warning: {protocol}")
    if args.json:
        import sys

        for row in result.rows:
            sys.stdout.write(_pair_line(row, args.a, args.b[0]) + "\n")
        print_json(result.to_json())
    else:
        tasks = _shown_tasks({row.task for row in result.rows}, TASK_WIDTH)
        for line in comparison_lines(result, rows=not args.no_rows, tasks=tasks):
            say(visible(line))
    if status == EXIT_OK and result.mcnemar_p is not None and result.mcnemar_p < 0.05:
        status = EXIT_FINDINGS
    return status


def _many(args: argparse.Namespace, paths: list[str], result: ManyComparison, status: int) -> int:
    """Every run against the baseline: each comparison's pairs, the task matrix and the summary per run."""
    from tau_tui.textsafe import json_line, visible
    from tau_tui.trust import many_lines

    baseline = result.baseline
    for cmp in result.comparisons:
        if cmp.domain_warning:
            err(f"warning: {cmp.b_label}: {cmp.domain_warning}")
    if args.json:
        for line in result.warnings:  # the text report says them below its summary table
            err(f"warning: {line}")
        import sys

        for i, summary in enumerate(result.runs):
            if summary.comparison is not None:
                for row in summary.comparison.rows:
                    sys.stdout.write(_pair_line(row, paths[baseline], paths[i]) + "\n")
        for task in result.tasks:
            sys.stdout.write(json_line(task.to_json(result.labels)) + "\n")
        print_json(result.to_json())
    else:
        tasks = _shown_tasks({row.task for row in result.tasks}, TASK_WIDTH)
        for line in many_lines(result, rows=not args.no_rows, tasks=tasks):
            say(visible(line))
    significant = any(s.holm_p is not None and s.holm_p < 0.05 for s in result.runs)
    return EXIT_FINDINGS if status == EXIT_OK and significant else status
