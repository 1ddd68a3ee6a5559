"""``tau-tui compare A B``: two runs over a task set, the pass/fail matrix and paired statistics."""

from __future__ import annotations

import argparse
from typing import Any

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    add_judge_flags,
    err,
    open_all,
    print_json,
    say,
    whole,
)

NAME = "compare"
SHARED_FLAGS = True
TASK_WIDTH = 90  # the task column of the text report: longer ids are shortened, keeping what tells them apart


def register(sub: Any, running: bool = False) -> argparse.ArgumentParser:
    cmp = sub.add_parser(
        NAME,
        help="compare two runs task by task: pass/fail matrix, McNemar test, paired bootstrap",
        description="Pair the simulations of A and B by task and trial index and count the matrix: both pass, "
        "A only, B only, both fail, and not comparable (missing on one side, unscored, or a different version of "
        "the task by its fingerprint). Then McNemar's exact test on the A-only/B-only pairs and a paired bootstrap "
        "interval (over tasks, seeded) for the difference in mean reward, and each side's intervals, flip rate and "
        "noise floor. Rewards are recomputed by replay unless --recorded. Exit 0: the difference is not "
        "significant at 5%; 1: it is; 2: some input unreadable.",
    )
    cmp.add_argument("a", metavar="A", help="run file or folder (side A)")
    cmp.add_argument("b", metavar="B", help="run file or folder (side B)")
    cmp.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per pair (kind: pair), then one with the matrix and statistics",
    )
    cmp.add_argument(
        "--recorded", action="store_true", help="compare the rewards recorded in the files instead of recomputing them"
    )
    cmp.add_argument("--seed", type=whole(0), default=0, metavar="S", help="bootstrap seed (default 0)")
    cmp.add_argument("--resamples", type=whole(1), default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    cmp.add_argument("--no-rows", action="store_true", help="the matrix and statistics only (text output)")
    add_judge_flags(cmp, "litellm model that judges NL assertions (without one, rewards that need them are unscored)")
    return cmp


def _label(runs) -> str:
    models = sorted({run.agent_model or run.agent_implementation or "?" for _, run in runs})
    names = [path.name for path, _ in runs]
    head = names[0] if len(names) == 1 else f"{len(names)} files"
    return f"{', '.join(models)} ({head})"


def _shown_tasks(tasks: set[str], width: int) -> dict[str, str]:
    """Each task id shortened to ``width`` characters keeping where it differs from the others (wider if two
    would read the same)."""
    from tau_tui.textsafe import one_line
    from tau_tui.views.layout import distinct_starts, elide, width_apart

    lines = {task: one_line(task) for task in tasks}
    starts = distinct_starts(lines.values())
    width = width_apart(lines.values(), width)
    return {task: elide(line, width, starts[line]) for task, line in lines.items()}


def run(args: argparse.Namespace, workspace) -> int:
    from tau_tui.textsafe import json_line, visible
    from tau_tui.trust import compare_runs, comparison_lines, load_side

    if args.resamples < 1:
        err("--resamples must be at least 1")
        return EXIT_INPUT
    status = EXIT_OK
    judge = None if args.recorded else workspace.judge()
    sides, labels, errors = [], [], []
    for path in (args.a, args.b):
        runs = []
        for file, loaded, error in open_all([path], prepare=workspace.analyzer.prepare):
            if loaded is None:
                err(error or f"{file}: unreadable")
                status = EXIT_INPUT
            else:
                runs.append((file, loaded))
        if not runs:
            err(f"{path}: no run file to compare")
            return EXIT_INPUT
        outcomes, problems = load_side(runs, workspace.analyzer, recorded=args.recorded, judge=judge)
        for problem in problems:
            err(problem)
            status = EXIT_INPUT
        errors += problems
        sides.append(outcomes)
        labels.append(_label(runs))
    result = compare_runs(
        sides[0],
        sides[1],
        a_label=labels[0],
        b_label=labels[1],
        rewards="recorded" if args.recorded else "ours",
        seed=args.seed,
        resamples=args.resamples,
        errors=errors,
    )
    if result.domain_warning:
        err(f"warning: {result.domain_warning}")
    if args.json:
        import sys

        for row in result.rows:
            sys.stdout.write(json_line({"kind": "pair", **row.to_json()}) + "\n")
        print_json(result.to_json())
    else:
        tasks = _shown_tasks({row.task for row in result.rows}, TASK_WIDTH)
        for line in comparison_lines(result, rows=not args.no_rows, tasks=tasks):
            say(visible(line))
    if status == EXIT_OK and result.mcnemar_p is not None and result.mcnemar_p < 0.05:
        status = EXIT_FINDINGS
    return status
