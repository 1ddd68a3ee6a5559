"""``tau-tui show FILE --sim ID``: one simulation printed whole, to paste into an issue.

Every message with its tool calls, their arguments and the replay's verdict, and the tool results; then
the replay facts (as ``tau-tui replay`` prints them) and the reward explained (as ``tau-tui eval --sim``
does, with each component recorded beside recomputed). ``--markdown`` writes GitHub Markdown
(``views.printout``: recorded text fenced or escaped, never markup of its own).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tau_tui.commands.common import (
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    add_domain_flag,
    add_judge_flags,
    err,
    no_simulation,
    sim_candidates,
)

NAME = "show"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        NAME,
        help="print one simulation whole (messages, replay, reward), as text or GitHub Markdown",
        description="Print one recorded simulation for an issue or a review: every message (role, text, tool calls "
        "with their arguments and the replay's verdict: replayed, mismatch, skipped read, hallucinated; tool "
        "results), the replay facts (first mismatch, findings, DB check) and the reward explained (recomputed "
        "beside recorded, each component, why it failed). Long texts are clipped unless --full.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the recorded results file (or run folder)")
    parser.add_argument("--sim", required=True, metavar="ID", help="the simulation (its id, or a unique prefix)")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="GitHub Markdown: headings, a table of the reward components, fenced code for JSON",
    )
    parser.add_argument("--full", action="store_true", help="every text whole (default: long ones are clipped)")
    add_judge_flags(parser, "litellm model that judges NL assertions (without one they are not evaluated)")
    add_domain_flag(parser)
    return parser


def run(args: argparse.Namespace, workspace: Any) -> int:
    from tau_tui.domains import DomainError
    from tau_tui.evaluate import ScorerConfig, ScorerConfigError
    from tau_tui.evaluate.judge import judge_credentials_problem
    from tau_tui.model.io import RecordedOnly, RunFileError, open_run
    from tau_tui.views.printout import markdown_printout, text_printout

    judge = workspace.judge()
    problem = judge_credentials_problem(judge)
    if problem:
        err(problem)
        return EXIT_INPUT
    try:
        recording = open_run(args.file)
        for notice in workspace.analyzer.prepare(recording):
            err(f"note: {notice}")
        index = recording.find(str(args.sim).strip())
        if index is None:
            err(
                f"{args.file}: "
                + no_simulation(str(args.sim), "this file", sim_candidates(recording, str(args.sim).strip()))
            )
            return EXIT_INPUT
        sim = recording.simulation(index)
    except RunFileError as exc:
        err(str(exc))
        return EXIT_INPUT
    analyzer = workspace.analyzer
    analysis = report = None
    not_replayed = None
    recorded_only = recording.recorded_only is not None
    try:
        analysis = analyzer.analyze(recording, index)
    except (DomainError, RecordedOnly) as exc:  # the messages are still worth printing
        not_replayed = str(exc)
    if analysis is not None:
        try:
            report = analyzer.assess(analysis, judge=judge)
        except ScorerConfigError as exc:
            err(f"{exc} (tool-call scores skipped)")
            report = analyzer.assess(analysis, judge=judge, scorer=ScorerConfig(None, None, {}))
    render = markdown_printout if args.markdown else text_printout
    sys.stdout.write(render(recording, sim, analysis, report, full=args.full, problem=not_replayed).rstrip("\n") + "\n")
    if not_replayed is not None:
        err(f"{'note: ' if recorded_only else ''}not replayed: {not_replayed}")
        return EXIT_OK if recorded_only else EXIT_INPUT
    return EXIT_OK
