"""``tau-tui audit PATH...``: why a re-grade changed the score, simulation by simulation, and by how much."""

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
)

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = "audit"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    aud = sub.add_parser(
        NAME,
        help="re-grade audit: for each simulation whose recorded reward differs from ours, the rule responsible",
        description="Recompute every reward and, where it differs from the recorded one, name the rule "
        "responsible: task definition changed (with the field-level task diff), recording inconsistent with its "
        "own task, NL judge needed, strict replay would raise, solo-mode detection, or tau2's evaluator gold path "
        "(no sync after the reference actions). Then the effect on the file's metrics (avg reward and pass^1, "
        "recorded vs ours, and the points each rule moves). A leaderboard submission folder (submission.json + "
        "trajectories) also gets its claimed pass^k per domain beside ours. Exit 0: no reward differs; 1: some differ; 2: some "
        "input unreadable.",
    )
    aud.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    aud.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per simulation that differs (or has a note), then one per file",
    )
    aud.add_argument(
        "--current-tasks",
        action="store_true",
        help="grade against the domain's current task definitions, not the ones the file embeds",
    )
    aud.add_argument("--all", action="store_true", help="also list simulations whose rewards agree but a rule applies")
    add_judge_flags(aud, "litellm model that judges NL assertions (without one, rewards that need them are unscored)")
    return aud


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from pathlib import Path

    from tau_tui.model.io import RunFileError
    from tau_tui.textsafe import visible
    from tau_tui.trust.audit import SUBMISSION_FILE, audit_lines, audit_runs, submission_claims

    status = EXIT_OK
    runs = []
    for path, loaded, error in open_all(
        args.paths, keep=lambda p: p.name != SUBMISSION_FILE, prepare=workspace.analyzer.prepare
    ):
        if loaded is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
        else:
            runs.append((path, loaded))
    audits, errors = audit_runs(runs, workspace.analyzer, judge=workspace.judge(), current_tasks=args.current_tasks)
    for problem in errors:
        err(problem)
        status = EXIT_INPUT
    for audit in audits:
        if args.json:
            for sim in audit.sims:
                if sim.differs or (args.all and sim.hits):
                    print_json(sim.to_json())
            print_json(audit.to_json())
        else:
            for line in audit_lines(audit, every=args.all):
                say(visible(line))
            say("")
        if status == EXIT_OK and any(s.differs for s in audit.sims):
            status = EXIT_FINDINGS
    for folder in (Path(p) for p in args.paths):
        if not (folder / SUBMISSION_FILE).is_file():
            continue
        try:
            claims = submission_claims(folder, audits)
        except RunFileError as exc:
            err(str(exc))
            status = EXIT_INPUT
            continue
        for warning in claims.warnings:
            err(f"note: {warning}")
        if args.json:
            print_json(claims.to_json())
        else:
            for line in claims.lines():
                say(visible(line))
    return status
