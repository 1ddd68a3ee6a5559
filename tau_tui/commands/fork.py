"""``tau-tui fork``: continue a recorded simulation after one of its messages with a new agent and user.

The same headless fork as the trajectory screen's ``b`` (``Workspace.fork_simulation``): the recorded
prefix is replayed (strictly, as tau2 does, unless ``--lenient``), the new sides take over, the result is
evaluated (with the judge when one is set) and saved; the line printed compares it with the original.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.commands.common import (
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    add_judge_flags,
    add_protocol_flags,
    err,
    print_json,
    say,
    whole,
)

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = "fork"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        NAME,
        help="continue a recorded simulation after message N with a new agent and user",
        description="Keep messages 0…N of a recorded simulation, let a new agent and user continue from there, "
        "evaluate the result and save it as a tau2 results file (default runs/<time>_fork_<file>_<sim>_m<N>.json). "
        "The recorded prefix is replayed strictly (tau2's rule: a tool output that replays differently is an "
        "error) unless --lenient. MODEL is any litellm model string, or scripted/gold (agent) / scripted/user.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the recorded results file (or run folder)")
    parser.add_argument("--sim", required=True, metavar="ID", help="the simulation to fork (its id)")
    parser.add_argument("--after", required=True, type=int, metavar="N", help="keep messages 0…N (0-based)")
    parser.add_argument("--agent-llm", required=True, metavar="MODEL", help="the new agent, or scripted/gold")
    parser.add_argument(
        "--user-llm", default="scripted/user", metavar="MODEL", help="the new user, or scripted/user (default)"
    )
    parser.add_argument("--agent-llm-args", metavar="JSON", help="extra litellm arguments for the agent")
    parser.add_argument("--user-llm-args", metavar="JSON", help="extra litellm arguments for the user")
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="continue even when the recorded prefix replays differently (other tool versions)",
    )
    parser.add_argument(
        "--llm-retries",
        type=whole(0),
        default=5,
        metavar="N",
        help="retries of a model call on rate limits and transient errors (default 5)",
    )
    parser.add_argument("--out", metavar="PATH", help="results file for the fork (never an existing file)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the line")
    add_judge_flags(parser, "litellm model that judges NL assertions")
    add_protocol_flags(parser)
    return parser


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    import asyncio

    from tau_tui.config import ConfigError
    from tau_tui.domains import DomainError
    from tau_tui.model.io import RunFileError, error_text, open_run
    from tau_tui.rollout import ParticipantSpecError
    from tau_tui.workspace import ForkRequest, RequestError

    request = ForkRequest(
        args.sim,
        args.after,
        args.agent_llm,
        args.user_llm,
        args.agent_llm_args,
        args.user_llm_args,
        strict=not args.lenient,
        llm_retries=args.llm_retries,
        out=args.out,
    )
    try:
        request.validate()
        run_file = open_run(args.file)
        index = run_file.find(str(args.sim).strip())
        original = run_file.entries[index] if index is not None else None
        result = asyncio.run(workspace.fork_simulation(run_file, request))
    except (RequestError, RunFileError, DomainError, ParticipantSpecError, ConfigError) as exc:
        err(str(exc))  # ConfigError: a model's API key is missing (llm.credentials)
        return EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - a prefix that does not replay, a model error: one line
        err(f"fork failed: {error_text(exc) or type(exc).__name__}")
        return EXIT_INPUT
    print_json(summary(result, original)) if args.json else say(line(result, original))
    return EXIT_OK


def summary(result: Any, original: Any) -> dict[str, Any]:
    """The fork next to what it continued (JSON keys are stable)."""
    episode = result.episode
    scored = episode.scored
    info = episode.result.reward_info if episode.result is not None else None
    db_check = info.db_check if info is not None else None
    return {
        "simulation": result.sim_id,
        "after_message": result.after,
        "saved_to": str(result.path),
        "agent": episode.agent_spec.model,
        "user": episode.user_spec.model,
        "reward": scored.reward if scored is not None else None,
        "db_match": db_check.db_match if db_check is not None else None,
        "termination_reason": _value(episode.result.termination_reason) if episode.result is not None else None,
        "messages": len(episode.result.messages or []) if episode.result is not None else None,
        "original_reward": original.reward if original is not None else None,
    }


def line(result: Any, original: Any) -> str:
    record = summary(result, original)
    reward = "unscored" if record["reward"] is None else f"reward {record['reward']:g}"
    was = "" if record["original_reward"] is None else f" (recorded {record['original_reward']:g})"
    db = {True: "; DB matches gold", False: "; DB differs from gold", None: ""}[record["db_match"]]
    return (
        f"fork of {record['simulation']} after message {record['after_message']} "
        f"({record['agent']} / {record['user']}): {reward}{was}{db}, {record['termination_reason']}, "
        f"{record['messages']} messages; saved to {record['saved_to']}"
    )


def _value(reason: Any) -> Any:
    return getattr(reason, "value", reason)
