"""``tau-tui calibrate``: k trials per task in a grid with bands, or a gold check."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    add_judge_flags,
    add_protocol_flags,
    add_rollout_executor_flags,
    err,
    number,
    print_json,
    rollout_remote,
    say,
    whole,
)

if TYPE_CHECKING:
    from tau_tui.calibrate.gold import GoldCheck
    from tau_tui.workspace import Workspace

NAME = "calibrate"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    cal = sub.add_parser(
        NAME,
        help="k trials per task in a grid with bands (saturated, zero, learning zone), or a gold check",
        description="Calibrate tasks: run k trials per task (and/or load recorded runs with --from) and show one "
        "row per task version and setup: a cell per trial (pass, scored fail, unscored), pass rate, pass^k and "
        "pass@k over scored attempts, and the band (saturated: all scored pass; zero: none; learning_zone: in "
        "between; unscored: nothing scored). Results of different task fingerprints (task definition, tools, DB, "
        "policy) are never pooled. With --gold-check: check each task's reference solution instead (the scripted "
        "gold agent reaches 1.0; the evaluator's gold state equals the live path). Models: any litellm model "
        "string, or scripted/gold, scripted/flaky[:P] (drops each reference action with probability P) for the "
        "agent, scripted/user for the user.",
    )
    cal.add_argument("--domain", required=True, metavar="D", help="domain name (e.g. mock, airline, telecom-workflow)")
    cal.add_argument(
        "--task",
        dest="tasks",
        action="extend",
        nargs="+",
        default=[],
        metavar="ID",
        help="only these tasks (repeatable; default: every task of the domain)",
    )
    cal.add_argument(
        "--gold-check", action="store_true", help="check the tasks' reference solutions instead of calibrating a model"
    )
    cal.add_argument("--agent-llm", metavar="MODEL", help="agent model to run (without it, only --from runs are shown)")
    cal.add_argument("--user-llm", metavar="MODEL", help="user model, or scripted/user (needed with --agent-llm)")
    cal.add_argument("--agent-llm-args", metavar="JSON", help="extra litellm arguments for the agent")
    cal.add_argument("--user-llm-args", metavar="JSON", help="extra litellm arguments for the user")
    cal.add_argument("-k", "--num-trials", type=whole(1), default=4, metavar="N", help="trials per task (default 4)")
    cal.add_argument("--concurrency", type=whole(1), default=3, metavar="C", help="simulations at once (default 3)")
    cal.add_argument(
        "--from",
        dest="sources",
        action="extend",
        nargs="+",
        default=[],
        metavar="PATH",
        help="recorded runs (files or folders) to include; runs of other domains are skipped",
    )
    cal.add_argument(
        "--recompute",
        action="store_true",
        help="score --from runs with our evaluator instead of their recorded rewards",
    )
    cal.add_argument(
        "--out",
        metavar="PATH",
        help="results file for the new trials (default "
        "runs/calibrate_<time>_<domain>.json); an existing one is resumed: only missing trials run",
    )
    cal.add_argument("--seed", type=whole(0), default=300, metavar="S", help="run seed (default 300)")
    cal.add_argument(
        "--max-steps", type=whole(1), default=200, metavar="N", help="step limit per simulation (default 200)"
    )
    cal.add_argument("--max-errors", type=whole(0), default=10, metavar="N", help="tool-error limit (default 10)")
    cal.add_argument("--timeout", type=number(0, above=True), metavar="SECONDS", help="wall-clock limit per simulation")
    add_judge_flags(
        cal,
        "litellm model that judges NL assertions (without one, rewards that need them are "
        "unscored; in --gold-check they are left out)",
    )
    cal.add_argument(
        "--llm-retries",
        type=whole(0),
        default=5,
        metavar="N",
        help="retries of a model call on rate limits and transient errors (default 5)",
    )
    cal.add_argument(
        "--band",
        dest="bands",
        action="extend",
        nargs="+",
        default=[],
        metavar="BAND",
        choices=("saturated", "zero", "learning_zone", "unscored"),
        help="only rows in these bands",
    )
    cal.add_argument(
        "--sort",
        choices=("task", "band", "pass_rate", "unscored"),
        default="task",
        help="row order (default task; band puts the learning zone first)",
    )
    cal.add_argument("--all", action="store_true", help="--gold-check: list passing tasks too (human output)")
    cal.add_argument(
        "--json", action="store_true", help="one JSON object per row (or per task with --gold-check), one per line"
    )
    cal.add_argument("--quiet", action="store_true", help="no progress display")
    add_rollout_executor_flags(cal)
    add_protocol_flags(cal)
    return cal


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui.calibrate.tasks import TaskSourceError
    from tau_tui.domains import DomainError
    from tau_tui.evaluate.judge import judge_credentials_problem
    from tau_tui.rollout import ParticipantSpecError, RunError

    problem = judge_credentials_problem(workspace.judge())
    if problem:  # before any trial runs or any recording is judged
        err(problem)
        return EXIT_INPUT
    try:
        if args.gold_check:
            return _gold_check(args, workspace)
        return _calibrate(args, workspace)
    except (DomainError, RunError, ParticipantSpecError, TaskSourceError, ValueError) as exc:
        err(str(exc))
        return EXIT_INPUT


def _gold_check(args: argparse.Namespace, ws: Workspace) -> int:
    from tau_tui.calibrate.render import gold_summary, render_gold_check
    from tau_tui.rollout.runner import select_tasks
    from tau_tui.workspace import GoldCheckRequest

    checker = ws.gold_checker(GoldCheckRequest(args.domain, list(args.tasks) or None))
    tasks = select_tasks(checker.domain, list(args.tasks) or None)

    def show(check: GoldCheck) -> None:
        if args.json:
            print_json(check.to_json())
        elif not check.ok:
            say(render_gold_check(check))
        elif args.all:
            say(f"ok   {check.task_id}")

    checks = checker.run(tasks, show)
    summary = gold_summary(args.domain, checks)
    say(summary, file=sys.stderr if args.json else sys.stdout)
    return EXIT_FINDINGS if any(not c.ok for c in checks) else EXIT_OK


def _calibrate(args: argparse.Namespace, ws: Workspace) -> int:
    import asyncio
    import contextlib

    from tau_tui.calibrate.render import render_grid
    from tau_tui.calibrate.workbench import forks_line
    from tau_tui.commands.run import run_request
    from tau_tui.workspace import CalibrateRequest

    if not args.agent_llm and not args.sources:
        err("give --agent-llm (and --user-llm) to run trials, or --from PATH to calibrate recorded runs")
        return EXIT_INPUT
    if (args.executor != "local" or args.workers is not None) and not args.agent_llm:
        err("--executor and --workers run trials: give --agent-llm (and --user-llm)")
        return EXIT_INPUT
    plan = ws.run_plan(run_request(args, kind="calibrate", solo=False, layout="json")) if args.agent_llm else None
    calibrator = ws.calibrator(CalibrateRequest(args.domain))
    status = EXIT_OK
    if args.sources:
        report = calibrator.load_paths(args.sources, recompute=args.recompute)
        for path, reason in report.skipped:
            err(f"note: skipped {reason}" if str(path) in reason else f"note: skipped {path}: {reason}")
        if calibrator.forks_left_out:
            err(
                f"note: {forks_line(calibrator.forks_left_out)} (a fork continues another run's recorded "
                "messages: not a trial of its agent and user)"
            )
        if not report.total and not args.agent_llm:
            err(f"no simulation of domain '{args.domain}' in the given runs")
            return EXIT_INPUT
    summary = None
    if plan is not None:
        out = plan.path
        with contextlib.ExitStack() as stack:
            remote = rollout_remote(args, ws)
            if remote is not None:
                stack.callback(remote.close)
            progress = None
            if not args.quiet:
                from tau_tui.rollout.console import RunProgress

                progress = stack.enter_context(RunProgress(per_simulation=False))
            summary = asyncio.run(
                calibrator.run(plan.config, out, resume=out.exists(), runner_listener=progress, remote=remote)
            )
        err(f"note: trials saved in {out} ({plan.config.protocol.describe()})")
        if summary.terminations.get("infrastructure_error"):
            status = EXIT_FINDINGS
    wanted = set(args.tasks)
    rows = [
        r for r in calibrator.grid.rows(sort=args.sort, bands=args.bands or None) if not wanted or r.task_id in wanted
    ]
    if args.json:
        for row in rows:
            print_json(row.to_json())
    else:
        say(render_grid(calibrator.grid, rows, k=args.num_trials if args.agent_llm else None))
    return status
