"""``tau-tui doctor``: what is wrong with the benchmark — a domain's tasks (``--domain``) or recordings (PATH...)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    add_judge_flags,
    err,
    print_json,
    say,
)

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = "doctor"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    doc = sub.add_parser(
        NAME,
        help="benchmark doctor: broken tasks, tool bugs the gold replay hides, whose fault a failure is",
        description="With --domain: check the domain's task definitions (unreachable, passes_on_inaction, "
        "empty_component, gold_action_error, unknown_tool, invalid_arguments, duplicate_task, and heuristics). "
        "With PATH...: check recordings (domain invariants after every write, premature ends with what each "
        "component would have scored, the user simulator's part in a failure, whose fault each failure is), "
        "group failures across files into clusters (suspect tasks first), and split the noise of k >= 2 trials. "
        "Every rule says its effect on scores (whose reward a finding changes) and what to do (fix the task, "
        "file it upstream, or ignore); --markdown prints it all ready to paste into an upstream issue. "
        "Exit status: 0 when nothing is found; 1 when there are findings, as replay's mismatches are (with "
        "--fail-on, only findings of the named rules count); 2 when some input is unreadable or an argument is "
        "wrong (an unknown rule, a --task no recording has), whatever was found. Clusters and the noise split "
        "never change the status.",
    )
    doc.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders (recordings)")
    doc.add_argument("--domain", metavar="D", help="check the task definitions of domain D (tau2 data or a package)")
    doc.add_argument(
        "--task", dest="tasks", action="append", default=[], metavar="ID", help="only this task (repeatable)"
    )
    output = doc.add_mutually_exclusive_group()
    output.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a line (task_finding, sim_finding with effect and advice fields, cluster, noise)",
    )
    output.add_argument(
        "--markdown",
        action="store_true",
        help="the findings as Markdown to paste into an upstream issue: a heading per rule with its effect on "
        "scores and what to do, then the findings with their task ids and evidence",
    )
    doc.add_argument(
        "--fail-on",
        nargs="+",
        action="extend",
        default=[],
        metavar="RULE",
        help="exit 1 only when a finding of one of these rules is present (names as in the output; "
        "give PATH... before it, or end the rules with --)",
    )
    doc.add_argument(
        "--judge-repeats",
        type=_repeats,
        default=1,
        metavar="N",
        help="recordings: ask the judge N times on each trajectory with NL assertions, to split the judge's own "
        "variance from the trials' (needs --judge)",
    )
    add_judge_flags(doc, "litellm model that judges NL assertions for the noise split")
    return doc


def _repeats(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    problem = _unknown_fail_on(args.fail_on)
    if problem:
        err(problem)
        return EXIT_INPUT
    if bool(args.domain) == bool(args.paths):
        err("give either --domain D (check its tasks) or PATH... (check recordings)")
        return EXIT_INPUT
    if args.domain:
        return _tasks(args, workspace)
    return _recordings(args, workspace)


def _unknown_fail_on(names: list[str]) -> str | None:
    """The one-line error for ``--fail-on`` names that are no rule (None: all are rules)."""
    from pathlib import Path

    from tau_tui.doctor.report import known_rules

    known = known_rules()
    unknown = [name for name in names if name not in known]
    if not unknown:
        return None
    hint = " (a path? give PATH... before --fail-on)" if any(Path(name).exists() for name in unknown) else ""
    shown = ", ".join(repr(name) for name in unknown)
    return f"--fail-on: no rule {shown}{hint}; known rules: {', '.join(known)}"


def _status(rules: list[str], fail_on: list[str]) -> int:
    """Findings (of the rules ``--fail-on`` names, when it names some) are exit 1, none exit 0."""
    counted = [rule for rule in rules if not fail_on or rule in fail_on]
    return EXIT_FINDINGS if counted else EXIT_OK


def _tasks(args: argparse.Namespace, ws: Workspace) -> int:
    from tau_tui.doctor.report import markdown_tasks, task_lines
    from tau_tui.doctor.task_rules import check_tasks, counts
    from tau_tui.domains import DomainError
    from tau_tui.rollout.runner import RunError, select_tasks
    from tau_tui.textsafe import visible
    from tau_tui.workspace import GoldCheckRequest

    try:
        checker = ws.gold_checker(GoldCheckRequest(args.domain, list(args.tasks) or None))
        every = checker.domain.tasks()
        tasks = select_tasks(checker.domain, list(args.tasks) or None)
    except (DomainError, RunError) as exc:
        err(str(exc))
        return EXIT_INPUT
    findings = []
    for finding in check_tasks(checker, args.domain, tasks, every):
        findings.append(finding)
        if args.json:
            print_json(finding.to_json())
    tally = ", ".join(f"{rule} {n}" for rule, n in counts(findings).items())
    summary = f"{args.domain}: {len(tasks)} task(s) checked; {tally}"
    if args.markdown:
        for line in markdown_tasks(args.domain, summary, findings):
            say(visible(line))
    elif not args.json:
        for line in task_lines(findings):
            say(visible(line))
    if not args.markdown:
        say(summary, file=sys.stderr if args.json else sys.stdout)
    return _status([f.rule for f in findings], args.fail_on)


def _recordings(args: argparse.Namespace, ws: Workspace) -> int:
    from tau_tui.commands.common import open_all
    from tau_tui.doctor.noise import NoiseSplit
    from tau_tui.doctor.recordings import examine
    from tau_tui.doctor.report import cluster_lines, markdown_recordings, sim_lines
    from tau_tui.textsafe import visible

    judge = ws.judge()
    if args.judge_repeats > 1 and judge is None:
        err("--judge-repeats needs a judge: give --judge MODEL (or judge_model in the settings)")
        return EXIT_INPUT
    noise = NoiseSplit(judge, args.judge_repeats)
    status = EXIT_OK
    runs = []
    for path, loaded, error in open_all(args.paths):
        if loaded is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
        else:
            runs.append(loaded)
    wanted = set(args.tasks)
    seen: set[str] = set()

    def keep(sim: Any) -> bool:
        seen.add(sim.task_id)
        return sim.task_id in wanted

    exam = examine(ws.analyzer, runs, keep=keep if wanted else None, on_probe=noise.add)
    for problem in [*exam.problems, *noise.problems]:
        err(problem)
        status = EXIT_INPUT
    if runs:
        for task in sorted(wanted - seen):
            err(f"no simulation of task {task!r} in the given files")
            status = EXIT_INPUT
    if args.json:
        for record in [*exam.records(), *noise.records()]:
            print_json(record)
    elif args.markdown:
        for line in markdown_recordings(exam, noise.lines()):
            say(visible(line))
    else:
        for line in [*sim_lines(exam), *cluster_lines(exam), *noise.lines()]:
            say(visible(line))
    if not args.markdown:
        say(exam.summary(), file=sys.stderr if args.json else sys.stdout)
    return status if status != EXIT_OK else _status([f.rule for f in exam.findings], args.fail_on)
