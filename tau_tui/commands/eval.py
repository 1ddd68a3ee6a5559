"""``tau-tui eval``: recompute and explain rewards, with per-file metrics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    add_domain_flag,
    add_judge_flags,
    add_workers_flag,
    err,
    executor_for,
    open_all,
    selected,
)
from tau_tui.commands.replay import add_upstream_fixes_flag

if TYPE_CHECKING:
    from tau_tui.evaluate import FileMetrics
    from tau_tui.model.io import RunFile
    from tau_tui.pool import ReportDigest
    from tau_tui.workspace import Workspace

NAME = "eval"
SHARED_FLAGS = True


def register(sub: Any, running: bool = False) -> argparse.ArgumentParser:
    evaluate = sub.add_parser(
        NAME,
        help="recompute and explain rewards, with per-file metrics",
        description="Recompute every simulation's reward with tau2's rules (EvaluationType.ALL), say what failed "
        "and why, check the recording against its task, score tool calls, flag process issues, and print "
        "per-file metrics (avg reward, pass^k, pass@k, terminations). Exit 0: no recomputed reward differs "
        "from the recorded one; 1: some differ; 2: some input unreadable.",
    )
    evaluate.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    evaluate.add_argument(
        "--sim", action="append", default=[], metavar="ID", help="only this simulation (id or prefix; repeatable)"
    )
    evaluate.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per simulation, one per line, then one per file with its metrics",
    )
    evaluate.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the bootstrap intervals (over tasks) of the file metrics (default 0)",
    )
    evaluate.add_argument(
        "--only-problems",
        action="store_true",
        help="print only the simulations whose replay has a mismatch or a finding, or whose "
        "recomputed reward differs from the recorded one or cannot be computed (the file "
        "metrics and the exit status still count every one)",
    )
    add_judge_flags(evaluate, "litellm model that judges NL assertions (without one they are not evaluated)")
    evaluate.add_argument(
        "--scorer",
        metavar="FILE",
        help="tool-call scorer config for every file (default: <recording>.scorer.json beside it)",
    )
    add_upstream_fixes_flag(evaluate)
    add_domain_flag(evaluate)
    add_workers_flag(evaluate)
    return evaluate


def _file_record(path: Path, run: RunFile, both: FileMetrics, reports: list[ReportDigest]) -> dict[str, Any]:
    """The per-file ``tau-tui eval --json`` object: metrics over recomputed and recorded rewards."""
    from tau_tui.evaluate import FLAG_KINDS

    metrics, recorded_metrics = both.ours, both.recorded
    confidence, recorded_confidence = both.confidence, both.recorded_confidence
    compared = [r.agrees for r in reports if r.agrees is not None]
    return {
        "kind": "file",
        "file": str(path),
        "domain": run.domain,
        "agent_model": run.agent_model,
        "metrics": metrics.to_json(),
        "recorded_metrics": recorded_metrics.to_json(),
        "agreement": {
            "compared": len(compared),
            "agree": sum(compared),
            "differ": len(compared) - sum(compared),
            "not_computable": sum(r.reward is None for r in reports),
        },
        "flags": {kind: sum(r.flags.get(kind, 0) for r in reports) for kind in FLAG_KINDS},
        "confidence": confidence.to_json() if confidence is not None else None,
        "recorded_confidence": recorded_confidence.to_json() if recorded_confidence is not None else None,
    }


def _claim_record(sub, run) -> dict[str, Any]:
    """The submission a file belongs to and what it claims for the file's domain (``tau-tui eval --json``)."""
    claim = sub.claim_for(run)
    return {
        **sub.to_json(),
        "label": sub.label,
        "domain": sub.run_domain(run),
        "claimed_pass_hat_k": None if claim is None else {str(k): v for k, v in claim.pass_hat_k.items()},
        "claimed_cost": None if claim is None else claim.cost,
        "retrieval_config": None if claim is None else claim.retrieval_config,
    }


def _claim_lines(record: dict[str, Any], metrics) -> str:
    """Claimed pass^k beside ours, one k per column: what the submission says against what we recompute."""
    claimed = record["claimed_pass_hat_k"]
    head = f"  submission {record['label']} ({record['domain'] or '?'})"
    if not claimed:
        return f"{head}: claims no pass^k for this domain"
    ks = sorted({int(k) for k in claimed} | set(metrics.pass_hat_k))
    cells = []
    for k in ks:
        ours = metrics.pass_hat_k.get(k)
        theirs = claimed.get(str(k))
        cells.append(
            f"{k}: claimed {'n/a' if theirs is None else f'{theirs:.3f}'}"
            f" / ours {'n/a' if ours is None else f'{ours:.3f}'}"
        )
    return f"{head}: pass^k " + ", ".join(cells)


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui.evaluate import FileMetrics, MetricOutcome, ScorerConfigError
    from tau_tui.evaluate.judge import judge_credentials_problem
    from tau_tui.evaluate.render import metrics_block
    from tau_tui.evaluate.scorer import is_sidecar, load_scorer_config
    from tau_tui.model.submission import SubmissionError, submission_for, submission_notes
    from tau_tui.pool import Job, Unit
    from tau_tui.textsafe import json_line, visible

    ws = workspace
    problem = judge_credentials_problem(ws.judge())
    if problem:  # every judged simulation would fail the same way
        err(problem)
        return EXIT_INPUT
    analyzer = ws.analyzer
    if args.scorer:
        try:
            load_scorer_config(Path(args.scorer))
        except ScorerConfigError as exc:
            err(str(exc))
            return EXIT_INPUT
    status = EXIT_OK
    found: set[str] = set()
    files: list[dict[str, Any]] = []
    out = sys.stdout
    bad_submissions: set[str] = set()
    job = Job("eval", ws.settings, text=not args.json, scorer=args.scorer)
    with executor_for(args, job, ws) as executor:
        for path, run, error in open_all(args.paths, keep=lambda p: not is_sidecar(p), prepare=analyzer.prepare):
            if run is None:
                err(error or f"{path}: unreadable")
                status = EXIT_INPUT
                continue
            executor.adopt(path, run)
            sidecar = True
            if not args.scorer:
                try:
                    analyzer.scorer_config(run)
                except ScorerConfigError as exc:
                    err(f"{exc} (tool-call scores skipped)")
                    status = EXIT_INPUT
                    sidecar = False
            indices = selected(run, args.sim, found)
            if args.sim and not indices:  # none of the asked simulations is here: no metrics of nothing
                continue
            outcomes, recorded, reports = [], [], []
            domain_missing = False
            units = (Unit(str(path), index, sidecar) for index in indices)
            for done in executor.map(units):
                if done.error is not None:
                    err(done.error)
                    status = EXIT_INPUT
                    domain_missing = done.domain_error
                    if domain_missing:
                        break
                    continue
                report = done.report
                assert report is not None  # an eval unit that did not fail has its report
                reports.append(report)
                outcomes.append(MetricOutcome(report.task_id, report.reward, report.termination))
                recorded.append(MetricOutcome(report.task_id, report.recorded_reward, report.termination))
                shown = not args.only_problems or report.has_problems
                if shown and args.json:
                    out.write(report.line + "\n")
                elif shown:
                    out.write(visible(f"{path}\n{done.text}\n\n"))
                if status == EXIT_OK and report.agrees is False:
                    status = EXIT_FINDINGS
            if domain_missing:
                continue
            both = FileMetrics.of(outcomes, recorded, run.raw_info, seed=args.seed)
            metrics, confidence = both.ours, both.confidence
            record = _file_record(path, run, both, reports)
            sub = submission_for(run.path)
            if isinstance(sub, SubmissionError):
                if str(sub) not in bad_submissions:
                    bad_submissions.add(str(sub))
                    err(str(sub))
                status = EXIT_INPUT
            elif sub is not None:
                problems = submission_notes(run.path)
                if str(sub.folder) not in bad_submissions:
                    bad_submissions.add(str(sub.folder))
                    for problem in problems:
                        err(f"note: {problem}")
                record["submission"] = {**_claim_record(sub, run), "problems": problems}
            files.append(record)
            if not args.json:
                block = metrics_block(str(path), metrics, both.recorded, confidence)
                if "submission" in record:
                    block += "\n" + _claim_lines(record["submission"], metrics)
                out.write(visible(block + "\n\n"))
    if args.json:
        for record in files:
            out.write(json_line(record) + "\n")
    for sim_id in args.sim:
        if sim_id not in found:
            err(f"no simulation {sim_id!r} in the given files")
            status = EXIT_INPUT
    out.flush()
    return status
