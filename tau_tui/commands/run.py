"""``tau-tui run``: roll out tasks × k trials and save every simulation, evaluated."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    say,
    whole,
)

if TYPE_CHECKING:
    from tau_tui.rollout import ParticipantSpec
    from tau_tui.rollout.cassette import CassetteOutcome
    from tau_tui.workspace import RunRequest, Workspace

NAME = "run"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        NAME,
        help="roll out tasks × k trials with a model or scripted agent and user",
        description="Roll out tasks × k trials and save every simulation, evaluated, in a tau2 results file "
        "as soon as it ends. MODEL is any litellm model string, or scripted/gold (agent) / scripted/user (user). "
        "With --cassette RECORDING the agent runs over the recorded simulations' tool results instead of a live "
        "environment: a request gets the next result recorded for the same tool and arguments; any other request "
        "(different arguments, a tool the recording never calls, past the end of what was recorded) is refused "
        "with 'no recorded result' and the simulation ends as no_recorded_result.",
    )
    parser.add_argument(
        "--domain",
        metavar="D",
        help="domain name (e.g. mock, airline, telecom-workflow); "
        "required unless --cassette (then it is the recording's)",
    )
    parser.add_argument(
        "--task",
        dest="tasks",
        action="extend",
        nargs="+",
        default=[],
        metavar="ID",
        help="only these tasks (repeatable; default: every task of the domain)",
    )
    parser.add_argument("--agent-llm", required=True, metavar="MODEL", help="agent model, or scripted/gold")
    parser.add_argument("--user-llm", metavar="MODEL", help="user model, or scripted/user (not needed with --solo)")
    parser.add_argument(
        "--agent-llm-args",
        metavar="JSON",
        help="extra litellm arguments for the agent, "
        'e.g. \'{"temperature": 0, "api_base": "http://..."}\' (default {"temperature": 0.0})',
    )
    parser.add_argument("--user-llm-args", metavar="JSON", help="extra litellm arguments for the user")
    parser.add_argument("-k", "--num-trials", type=whole(0), default=1, metavar="N", help="trials per task (default 1)")
    parser.add_argument("--concurrency", type=whole(0), default=3, metavar="C", help="simulations at once (default 3)")
    parser.add_argument("--out", metavar="PATH", help="results file (default runs/<time>_<domain>_<agent>_<user>.json)")
    parser.add_argument(
        "--format",
        choices=("json", "dir"),
        default="json",
        help="json: one results file (default); dir: results.json + simulations/<id>.json",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted run in --out (skips finished (trial, task, seed); infrastructure errors run again)",
    )
    parser.add_argument(
        "--max-steps", type=whole(0), default=200, metavar="N", help="step limit per simulation (default 200)"
    )
    parser.add_argument("--max-errors", type=whole(0), default=10, metavar="N", help="tool-error limit (default 10)")
    parser.add_argument(
        "--seed",
        type=whole(0),
        metavar="S",
        help="run seed; one seed per trial derives from it "
        "as in tau2 (default 300; with --cassette: the sampling seed of every simulation, default each "
        "recorded simulation's own)",
    )
    parser.add_argument(
        "--timeout", type=number(0, above=True), metavar="SECONDS", help="wall-clock limit per simulation"
    )
    parser.add_argument("--solo", action="store_true", help="solo mode: the agent works the task's ticket alone")
    add_judge_flags(
        parser, "litellm model that judges NL assertions (without one, tasks whose reward needs them stay unscored)"
    )
    parser.add_argument(
        "--llm-retries",
        type=whole(0),
        default=5,
        metavar="N",
        help="retries of a model call on rate limits and transient errors (default 5)",
    )
    parser.add_argument(
        "--task-retries",
        type=whole(0),
        metavar="N",
        help="protocol tau2: runs again of an episode whose model call failed for good or whose evaluation raised, "
        "then tau2's infrastructure_error placeholder, as tau2's --max-retries (default 3; never under own)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    parser.add_argument(
        "--cassette",
        metavar="RECORDING",
        help="run over the tool results of this recorded run "
        "(one new simulation per recorded one) instead of a live environment",
    )
    parser.add_argument(
        "--cassette-sim",
        action="append",
        default=[],
        metavar="ID",
        help="with --cassette: only this recorded simulation (id or prefix; repeatable)",
    )
    add_rollout_executor_flags(parser)
    add_protocol_flags(parser)
    return parser


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    import asyncio
    import contextlib

    from tau_tui import formats
    from tau_tui.domains import DomainError
    from tau_tui.rollout import ParticipantSpecError, RunError
    from tau_tui.workspace import RequestError

    ws = workspace
    request = run_request(args, domain=args.domain or "-")  # the domain is checked below (or the cassette's)
    try:
        request.validate()
    except RequestError as exc:
        err(str(exc))
        return EXIT_INPUT
    if args.cassette and (args.executor != "local" or args.workers is not None):
        err("--cassette runs in this process (--executor and --workers do not apply)")
        return EXIT_INPUT
    if args.cassette:
        return run_cassette(
            args,
            ws,
            ws.participant(args.agent_llm, request.json_object("agent_args"), args.llm_retries),
            ws.participant(args.user_llm or "scripted/user", request.json_object("user_args"), args.llm_retries),
        )
    if args.cassette_sim:
        err("--cassette-sim needs --cassette RECORDING")
        return EXIT_INPUT
    if not args.domain:
        err("--domain is required (or --cassette RECORDING)")
        return EXIT_INPUT
    from tau_tui.config import ConfigError
    from tau_tui.workers.pool import RayUnavailable

    with contextlib.ExitStack() as stack:
        try:
            progress = None
            if not args.quiet:
                from tau_tui.rollout.console import RunProgress

                progress = RunProgress()  # drawn once the run is ready: a refused request prints only its line
            plan = ws.run_plan(run_request(args))
            runner = ws.prepared_runner(plan, progress)
            if runner.remote is not None:
                stack.callback(runner.remote.close)
            if progress is not None:
                stack.enter_context(progress)
            summary = asyncio.run(runner.run())
        except RayUnavailable as exc:
            raise ConfigError(str(exc)) from None
        except (DomainError, RunError, ParticipantSpecError, ValueError) as exc:
            stack.close()
            err(str(exc))
            return EXIT_INPUT
    avg = summary.average_reward
    terms = ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items())) or "none"
    say(
        f"{summary.path}: {summary.already_done + summary.completed}/{summary.total} simulations "
        f"({summary.completed} this run); average reward {formats.average(avg, '-')}"
        f"{f'; {summary.unscored} unscored' if summary.unscored else ''}; terminations: {terms}; "
        f"protocol {plan.config.protocol.name}"
    )
    return EXIT_FINDINGS if summary.terminations.get("infrastructure_error") else EXIT_OK


def run_request(args: argparse.Namespace, **fields: Any) -> RunRequest:
    """The run flags as a ``RunRequest`` (run and calibrate)."""
    from tau_tui.workspace import RunRequest

    values: dict[str, Any] = dict(
        domain=args.domain,
        agent=args.agent_llm,
        user=args.user_llm,
        agent_args=args.agent_llm_args,
        user_args=args.user_llm_args,
        tasks=list(args.tasks) or None,
        num_trials=args.num_trials,
        concurrency=args.concurrency,
        max_steps=args.max_steps,
        max_errors=args.max_errors,
        seed=args.seed,
        timeout=args.timeout,
        solo=getattr(args, "solo", False),
        llm_retries=args.llm_retries,
        task_retries=getattr(args, "task_retries", None),
        layout=getattr(args, "format", "json"),
        out=args.out,
        resume=getattr(args, "resume", False),
        allow_existing=True,
        executor=getattr(args, "executor", "local"),
        workers=getattr(args, "workers", None),
    )
    values.update(fields)
    return RunRequest(**values)


def run_cassette(args: argparse.Namespace, ws: Workspace, agent: ParticipantSpec, user: ParticipantSpec) -> int:
    """``tau-tui run --cassette``: one new simulation per recorded one, over its recorded tool results."""
    import asyncio

    from tau_tui import formats
    from tau_tui.domains import DomainError
    from tau_tui.rollout import EpisodeOptions, ParticipantSpecError
    from tau_tui.rollout.cassette import CassetteError, run_cassettes

    if args.num_trials != 1 or args.resume or args.solo or args.format != "json":
        err(
            "--cassette runs one trial per recorded simulation, in the recording's mode, to a new json file "
            "(-k, --resume, --solo and --format do not apply)"
        )
        return EXIT_INPUT
    out = Path(args.out) if args.out else ws.new_output_path("cassette", Path(args.cassette).stem)

    def report(outcome: CassetteOutcome) -> None:
        sim = outcome.simulation
        reward = formats.reward(outcome.reward, "-")
        refusal = ((sim.info or {}).get("cassette") or {}).get("refusal")
        tail = f"; refused {refusal['tool']} ({refusal['reason']})" if refusal else ""
        if not args.quiet:
            say(f"{outcome.source} -> {sim.id}: {sim.termination_reason}, reward {reward}{tail}")

    try:
        options = EpisodeOptions(
            seed=args.seed, max_steps=args.max_steps, max_errors=args.max_errors, timeout=args.timeout
        )
        summary = asyncio.run(
            run_cassettes(
                args.cassette,
                ws.registry,
                agent,
                user,
                out,
                options,
                sim_ids=list(args.cassette_sim) or None,
                task_ids=list(args.tasks) or None,
                domain=args.domain,
                judge=ws.judge(),
                listener=report,
            )
        )
    except (CassetteError, DomainError, ParticipantSpecError, ValueError) as exc:
        err(str(exc))
        return EXIT_INPUT
    refused = sum(o.simulation.termination_reason == "no_recorded_result" for o in summary.outcomes)
    say(
        f"{summary.path}: {len(summary.outcomes)} simulations over {args.cassette}; {refused} stopped at a "
        f"request with no recorded result"
    )
    return EXIT_OK
