"""What the commands share: exit statuses, the output lines, reading run files, ``--sim`` selection.

Imports only the standard library at module level (start-up stays fast).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence, TypeVar

if TYPE_CHECKING:
    from tau_tui.model.io import RunFile
    from tau_tui.workers.pool import Job, RayRollout, UnitExecutor
    from tau_tui.workers.process_rollout import ProcessRollout
    from tau_tui.workspace import Workspace

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
T = TypeVar("T")


class Subparsers(Protocol):
    """Where a sub-command adds its parser: ``ArgumentParser.add_subparsers()``, with the keywords we pass."""

    def add_parser(
        self, name: str, *, help: str | None = ..., description: str | None = ...
    ) -> argparse.ArgumentParser: ...


def err(message: str) -> None:
    """An error or note line on stderr; ``message`` may echo recorded text or file names: shown visibly."""
    say(f"tau-tui: {message}", file=sys.stderr)


def say(text: object, file: IO[str] | None = None) -> None:
    """Print a line of human output; recorded control characters in it are shown, never sent."""
    from tau_tui.textsafe import shown

    print(shown(text), file=file or sys.stdout)


def print_json(record: dict[str, Any]) -> None:
    from tau_tui.textsafe import json_line

    sys.stdout.write(json_line(record) + "\n")


def open_all(
    paths: Sequence[Path | str],
    keep: Callable[[Path], bool] | None = None,
    prepare: Callable[[RunFile], list[str]] | None = None,
) -> Iterator[tuple[Path, RunFile | None, str | None]]:
    """(path, run or None, error line or None) for every run file under ``paths`` that ``keep`` accepts;
    ``prepare(run)`` (the analyzer's) works out what a run leaves out, and its notices are printed."""
    from tau_tui.model.io import RunFileError, describe_empty, open_run, scan_paths

    scan = scan_paths(paths)
    notice = scan.data_folder_notice()
    if notice:
        err(f"note: {notice}")
    for link in scan.link_notices():
        err(f"note: {link}")
    for path in scan.files:
        if keep is not None and not keep(path):
            continue
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
        for notice in prepare(run) if prepare is not None else []:
            err(f"note: {notice}")
        yield path, run, None


def selected(
    run: RunFile, wanted: list[str], found: set[str], ambiguous: dict[str, list[str]] | None = None
) -> list[int]:
    """Indices of the simulations ``--sim`` asks for (all when none is asked for); a prefix that several ids
    start with picks none and keeps them in ``ambiguous`` (for ``no_simulation``)."""
    if not wanted:
        return list(range(len(run.entries)))
    picked: list[int] = []
    for sim_id in wanted:
        matches = run.matches(sim_id)
        if len(matches) == 1:
            picked.append(matches[0].index)
            found.add(sim_id)
        elif matches and ambiguous is not None:
            ambiguous.setdefault(sim_id, []).extend(f"{e.id} (task {e.task_id})" for e in matches)
    return picked


SHOWN_CANDIDATES = 8


def sim_candidates(run: RunFile, sim_id: str) -> list[str]:
    """The simulations of ``run`` whose ids start with ``sim_id``, as ``no_simulation`` lists them."""
    return [f"{e.id} (task {e.task_id})" for e in run.matches(sim_id)]


def no_simulation(sim_id: str, where: str, candidates: list[str] | None = None) -> str:
    """The line for a ``--sim`` that names no one simulation: none, or several (the first of them listed)."""
    if not candidates:
        return f"no simulation {sim_id!r} in {where}"
    shown = ", ".join(candidates[:SHOWN_CANDIDATES])
    more = f" and {len(candidates) - SHOWN_CANDIDATES} more" if len(candidates) > SHOWN_CANDIDATES else ""
    return f"--sim {sim_id!r} is ambiguous in {where}: {len(candidates)} simulations start with it: {shown}{more}"


def add_protocol_flags(parser: argparse.ArgumentParser) -> None:
    """``--protocol tau2|own|auto`` and ``--agent-prompt FILE``: every command that prompts a model to play a side.

    Both land in the settings (``protocol``, ``agent_prompt``); ``auto`` (the default) is ``tau2`` wherever
    tau2's user-simulator guidelines are found in the tau2 data.
    """
    parser.add_argument(
        "--protocol",
        choices=("auto", "tau2", "own"),
        help="whose prompts the LLM sides get: tau2's (read from the tau2 data and an installed tau2, or "
        "--agent-prompt) or tau-tui's own; default: the protocol setting, else auto (tau2 where tau2's data is found)",
    )
    parser.add_argument(
        "--agent-prompt",
        metavar="FILE",
        help="tau2's agent prompt for --protocol tau2: tau2's src/tau2/agent/llm_agent.py (read, never run), or a "
        "template with {domain_policy}; default: the agent_prompt setting, else an installed tau2's",
    )
    parser.add_argument(
        "--tau2-python",
        metavar="PYTHON",
        help="a Python with tau2 installed (e.g. tau2 1.0.1 on Python 3.12) whose prompts and tool schemas "
        "--protocol tau2 uses; default: the tau2_python setting, else the tau2 installed beside tau-tui",
    )


def add_judge_flags(parser: argparse.ArgumentParser, model_help: str) -> None:
    """``--judge MODEL`` (``--judge-llm`` is the same flag) and ``--judge-api-base URL``: every command that judges.

    Both land on ``args.judge`` and ``args.judge_api_base``; what the command line leaves open comes from the
    settings (``judge_model``, ``judge_api_base``).
    """
    parser.add_argument(
        "--judge",
        "--judge-llm",
        dest="judge",
        metavar="MODEL",
        help=f"{model_help}; default: judge_model from the settings",
    )
    parser.add_argument(
        "--judge-api-base",
        metavar="URL",
        help="API base URL for the judge model; default: judge_api_base from the settings",
    )


def add_domain_flag(parser: argparse.ArgumentParser) -> None:
    """``--domain NAME``: the domain of recordings that name none (the settings' ``recording_domain``); a file that
    names its domain keeps it. Without it the domain comes from a results.json/run.json beside the file, or the
    tools the recording calls."""
    parser.add_argument(
        "--domain",
        dest="recording_domain",
        metavar="NAME",
        help="the domain of recordings that name none (default: a results.json or run.json beside the file, "
        "else the tools it calls; $TAU_TUI_DOMAIN)",
    )


def add_workers_flag(parser: argparse.ArgumentParser, executor: bool = True) -> None:
    """``--workers N``: replay/evaluate on N worker processes (default: every core; 1: in this process);
    ``executor``: and ``--executor local|ray``."""
    parser.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="worker processes (default: every core; 1: in this process); the output is the same, in the same order",
    )
    if not executor:
        return
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the workers run: processes on this machine (default), or Ray actors on the "
        "cluster ray.init() finds (RAY_ADDRESS; needs the optional extra 'ray')",
    )
    add_ship_data_flag(parser)


def add_ship_data_flag(parser: argparse.ArgumentParser) -> None:
    """``--ship-data`` / ``--no-ship-data``: Ray actors read the domain data this process sends them."""
    parser.add_argument(
        "--ship-data",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --executor ray: send the actors the domain data in play (its tau2 data folder, and its "
        "package when it comes from --domains) by content, for nodes that do not share this machine's files "
        "(default: off, or the settings' ship_data)",
    )


def whole(minimum: int = 0, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in ASCII digits (``config.whole_number``) from ``minimum`` to ``maximum``."""

    def parse(text: str) -> int:
        from tau_tui.config import whole_number

        value = whole_number(text, minimum)
        if value is None or (maximum is not None and value > maximum):
            upto = f" and at most {maximum}" if maximum is not None else ""
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {minimum}{upto}, got {text!r}")
        return value

    return parse


def number(minimum: float, maximum: float | None = None, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number (never ``nan`` or ``inf``) of at least ``minimum`` (more than it with
    ``above``) and at most ``maximum``."""

    def parse(text: str) -> float:
        import math

        try:
            value = float(text) if text.strip().isascii() else math.nan
        except ValueError:
            value = math.nan
        low_ok = value > minimum if above else value >= minimum
        if not math.isfinite(value) or not low_ok or (maximum is not None and value > maximum):
            bounds = f"more than {minimum:g}" if above else f"at least {minimum:g}"
            bounds += f" and at most {maximum:g}" if maximum is not None else ""
            raise argparse.ArgumentTypeError(f"expected a finite number {bounds}, got {text!r}")
        return value

    return parse


_workers = whole(1)


class Lost:
    """Whether the worker processes were lost (``pool.WorkersLost``) during ``until_lost``: said in one line."""

    def __init__(self) -> None:
        self.happened = False

    def until_lost(self, outcomes: Iterator[T]) -> Iterator[T]:
        """``outcomes`` until the workers are lost: then one error line, and the command stops after what it
        printed (exit 2)."""
        from tau_tui.workers.pool import WorkersLost

        try:
            yield from outcomes
        except WorkersLost as exc:
            err(str(exc))
            self.happened = True


def executor_for(args: argparse.Namespace, job: Job, workspace: Workspace) -> UnitExecutor:
    """The executor of ``--workers`` and ``--executor`` (``ConfigError`` in one line when Ray cannot start)."""
    from tau_tui.config import ConfigError
    from tau_tui.workers.pool import RayUnavailable

    try:
        return workspace.executor(job, args.workers, getattr(args, "executor", "local"))
    except RayUnavailable as exc:
        raise ConfigError(str(exc)) from None


def add_rollout_executor_flags(parser: argparse.ArgumentParser) -> None:
    """``--executor local|ray`` and ``--workers N`` for rollouts (``run``, ``calibrate``)."""
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the episodes run: in this process (default), or on Ray actors of the cluster "
        "ray.init() finds (RAY_ADDRESS; needs the optional extra 'ray'); each actor runs up to "
        "--concurrency simulations at once, this process saves them as they end; over Ray the "
        "progress display shows whole simulations (no per-message or retry lines)",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="with --executor ray: Ray actors (default: the cluster's CPUs); locally: worker processes "
        "that share the --concurrency episodes (default 1, this process; more use more cores when many "
        "model calls answer at once)",
    )
    add_ship_data_flag(parser)


def rollout_remote(args: argparse.Namespace, workspace: Workspace) -> RayRollout | ProcessRollout | None:
    """The ``Runner.remote`` of ``--executor`` and ``--workers`` (None: this process); ``ConfigError`` in one
    line when it cannot be."""
    from tau_tui.config import ConfigError
    from tau_tui.workers.pool import RayUnavailable

    kind = getattr(args, "executor", "local")
    try:
        return workspace.rollout_remote(kind, args.workers)
    except RayUnavailable as exc:
        raise ConfigError(str(exc)) from None
