"""``tau-tui eval``: recompute and explain rewards, with per-file metrics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    Lost,
    Subparsers,
    add_domain_flag,
    add_judge_flags,
    add_workers_flag,
    err,
    executor_for,
    no_simulation,
    open_all,
    selected,
    whole,
)
from tau_tui.commands.replay import add_upstream_fixes_flag

if TYPE_CHECKING:
    from tau_tui.evaluate import FileMetrics, RunMetrics
    from tau_tui.evaluate.cost_time import CostTime
    from tau_tui.evaluate.validity import SimValidity, Validity
    from tau_tui.model.io import RunFile
    from tau_tui.model.submission import DomainClaim, Submission
    from tau_tui.workers.pool import ReportDigest
    from tau_tui.workspace import Workspace

NAME = "eval"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    evaluate = sub.add_parser(
        NAME,
        help="recompute and explain rewards, with per-file metrics",
        description="Recompute every simulation's reward with tau2's rules (EvaluationType.ALL), say what failed "
        "and why, check the recording against its task, score tool calls, flag process issues, and print "
        "per-file metrics (avg reward, pass^k, pass@k, terminations). A file shown as recorded only (tau-bench v1 "
        "results) gets the metrics of its recorded rewards, marked as not recomputed. Exit 0: no recomputed "
        "reward differs from the recorded one; 1: some differ; 2: some input unreadable.",
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
        type=whole(0),
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


def _cost_time(reports: list[ReportDigest]) -> CostTime:
    """The recorded cost and time of the simulations evaluated, with their successes by our rewards."""
    from tau_tui.evaluate.cost_time import CostTime, SimCostTime
    from tau_tui.evaluate.reward import is_success

    scored = [r.reward for r in reports if r.reward is not None]
    solved = sum(is_success(reward) for reward in scored) if scored else None
    return CostTime.of((r.spend or SimCostTime() for r in reports), solved)


def _validity(reports: list[ReportDigest], unreplayed: Sequence[SimValidity] = ()) -> Validity:
    from tau_tui.evaluate.validity import Validity

    return Validity.of([*(r.validity for r in reports), *unreplayed])


def with_warnings(block: str, warnings: list[str]) -> str:
    """A metrics block with its warning lines right under its title, beside the score they qualify."""
    if not warnings:
        return block
    title, _, rest = block.partition("\n")
    lines = "".join(f"\n  ⚠ warning: {line}" for line in warnings)
    return title + lines + ("\n" + rest if rest else "")


def _file_record(
    path: Path, run: RunFile, both: FileMetrics, reports: list[ReportDigest], unreplayed: Sequence[SimValidity] = ()
) -> dict[str, Any]:
    """The per-file ``tau-tui eval --json`` object: metrics over recomputed and recorded rewards, the recorded
    costs (unpriced ones apart, never $0), durations and tokens, and the judge the run records."""
    from tau_tui.evaluate import FLAG_KINDS
    from tau_tui.model.provenance import CostSummary, recorded_judge

    spend = _cost_time(reports)
    validity = _validity(reports, unreplayed)
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
        "validity": validity.to_json(),
        "warnings": validity.warnings() + validity.cost_warnings() + [f"costs: {why}" for why in spend.not_dollars],
        "agreement": {
            "compared": len(compared),
            "agree": sum(compared),
            "differ": len(compared) - sum(compared),
            "not_computable": sum(r.reward is None for r in reports),
        },
        "flags": {kind: sum(r.flags.get(kind, 0) for r in reports) for kind in FLAG_KINDS},
        "confidence": confidence.to_json() if confidence is not None else None,
        "recorded_confidence": recorded_confidence.to_json() if recorded_confidence is not None else None,
        "recorded_costs": CostSummary.of([r.cost for r in reports]).to_json(),
        "cost": spend.cost_json(),
        "duration": spend.duration_json(),
        "tokens": spend.tokens_json(),
        "judge_llm": recorded_judge(run.raw_info),
    }


def _recorded_lines(run: RunFile, reports: list[ReportDigest]) -> list[str]:
    """The recorded agent costs and judge of a file, as ``eval`` prints them under its metrics."""
    from tau_tui.model.provenance import CostSummary, recorded_judge

    text = CostSummary.of([r.cost for r in reports]).text()
    judge = recorded_judge(run.raw_info)
    lines = [f"  recorded {text}"] if text else []
    lines.append(f"  recorded {_cost_time(reports).text()}")
    return lines + ([f"  recorded judge: {judge}"] if judge else [])


def _recorded_only_file(
    path: Path, run: RunFile, indices: list[int], seed: int, note: str | None = None
) -> tuple[dict[str, Any], str]:
    """The file record and text block of a run shown as recorded only: metrics over its recorded rewards, its
    recorded cost and time (``note``: why nothing is recomputed, when not ``run.recorded_only``'s reason)."""
    note = note or run.recorded_only
    from tau_tui.evaluate import FileMetrics, MetricOutcome
    from tau_tui.evaluate.cost_time import CostTime, SimCostTime
    from tau_tui.evaluate.render import metrics_block
    from tau_tui.evaluate.reward import is_success
    from tau_tui.evaluate.validity import SimValidity, Validity

    outcomes = [MetricOutcome(e.task_id, e.reward, e.termination) for e in (run.entries[i] for i in indices)]
    both = FileMetrics.of(outcomes, outcomes, run.raw_info, seed=seed)
    scored = [o.reward for o in outcomes if o.reward is not None]
    spends = [SimCostTime.of_raw(run.raw_simulation(i)) for i in indices]
    spend = CostTime.of(spends, sum(map(is_success, scored)) if scored else None)
    validity = Validity.of(
        SimValidity.of(
            e.id,
            e.task_id,
            termination=e.termination,
            reward=e.reward,
            agent_cost=cost.agent_usd,
            duration=cost.duration_s,
            placeholder=run.placeholder(e.index),
        )
        for e, cost in zip((run.entries[i] for i in indices), spends, strict=True)
    )
    warnings = validity.warnings(recorded=True) + validity.cost_warnings()
    warnings += [f"costs: {why}" for why in spend.not_dollars]
    record = {
        "kind": "file",
        "file": str(path),
        "domain": run.domain,
        "agent_model": run.agent_model,
        "format": run.layout,
        "recomputed": False,
        "note": note,
        "metrics": None,
        "recorded_metrics": both.recorded.to_json(),
        "agreement": {"compared": 0, "agree": 0, "differ": 0, "not_computable": 0},
        "confidence": None,
        "recorded_confidence": both.recorded_confidence.to_json() if both.recorded_confidence is not None else None,
        "validity": validity.to_json(recorded=True),
        "warnings": warnings,
        "cost": spend.cost_json(),
        "duration": spend.duration_json(),
        "tokens": spend.tokens_json(),
    }
    title = f"{path}: metrics over the recorded rewards, not recomputed\n  note: {note}"
    block = metrics_block(str(path), both.recorded, confidence=both.recorded_confidence, title=title)
    block = with_warnings(block, validity.warnings(recorded=True) + [f"costs: {why}" for why in spend.not_dollars])
    return record, block + f"\n  recorded {spend.text()}"


def _after_path(path: Path, error: str) -> str:
    """``error`` without the ``PATH: `` it starts with (the block names the file already)."""
    head = f"{path}: "
    return error[len(head) :] if error.startswith(head) else error


def _claim_record(sub: Submission, run: RunFile) -> dict[str, Any]:
    """The submission a file belongs to and what it claims for the file's domain (``tau-tui eval --json``)."""
    claim = sub.claim_for(run)
    return {
        **sub.to_json(),
        "label": sub.label,
        "domain": sub.run_domain(run),
        "claimed_pass_hat_k": None if claim is None else {str(k): v for k, v in claim.pass_hat_k.items()},
        "claimed_cost": None if claim is None else claim.cost,
        "retrieval_config": None if claim is None else claim.retrieval_config,
        "claimed_cost_time": None if claim is None else claim.cost_time or None,
        "claim_basis": "best_of_k" if sub.best_of_k else "file",
    }


def _claim_lines(record: dict[str, Any], metrics: RunMetrics, claim: DomainClaim | None = None) -> str:
    """Claimed pass^k beside ours, one k per column: what the submission says against what we recompute.

    A best-of-K claim is not compared file by file: the best-of-K score of all its files follows the files."""
    claimed = record["claimed_pass_hat_k"]
    head = f"  submission {record['label']} ({record['domain'] or '?'})"
    details = []
    costs = claim.cost_time_text() if claim is not None else None
    if costs:
        details.append(f"claimed {costs}" + (" (estimated from token usage)" if record["cost_estimated"] else ""))
    if record["user_simulator"]:
        details.append(f"user simulator {record['user_simulator']}")
    tail = f"\n    {' · '.join(details)}" if details else ""
    if record["claim_basis"] == "best_of_k":
        return (
            f"{head}: its claims are best-of-K over several trajectory files (methodology: "
            f'"{record["best_of_k"]}"): compared with the best-of-K score of its files, after the last one{tail}'
        )
    if not claimed:
        return f"{head}: claims no pass^k for this domain{tail}"
    ks = sorted({int(k) for k in claimed} | set(metrics.pass_hat_k))
    cells = []
    for k in ks:
        ours = metrics.pass_hat_k.get(k)
        theirs = claimed.get(str(k))
        cells.append(
            f"{k}: claimed {'n/a' if theirs is None else f'{theirs:.3f}'}"
            f" / ours {'n/a' if ours is None else f'{ours:.3f}'}"
        )
    return f"{head}: pass^k " + ", ".join(cells) + tail


def _lone_submission(path: Path, note: str) -> tuple[dict[str, Any], str]:
    """A ``submission.json`` opened without its trajectories: what it claims per domain, and that nothing can be
    recomputed here (its ``eval --json`` record and text block). Raises ``SubmissionError`` for an unusable one."""
    from tau_tui.model.submission import read_submission

    sub = read_submission(path)
    claims = {
        domain: {
            "claimed_pass_hat_k": {str(k): v for k, v in claim.pass_hat_k.items()},
            "claimed_cost": claim.cost,
            "claimed_cost_time": claim.cost_time or None,
            "retrieval_config": claim.retrieval_config,
        }
        for domain, claim in sub.claims.items()
    }
    record = {
        "path": str(path),
        "kind": "submission",
        **sub.to_json(),
        "label": sub.label,
        "recomputed": False,
        "trajectories": None,
        "note": note,
        "claims": claims,
        "claim_basis": "best_of_k" if sub.best_of_k else "file",
        "warnings": sub.warnings,
    }
    lines = [f"{path}: submission {sub.label}, claims only", f"  note: {note}"]
    for domain, claim in sub.claims.items():
        cells = ", ".join(f"{k}: {v:.3f}" for k, v in sorted(claim.pass_hat_k.items())) or "no pass^k"
        costs = claim.cost_time_text()
        lines.append(f"  {domain}: claimed pass^k {cells}" + (f" · {costs}" if costs else ""))
    if not sub.claims:
        lines.append("  claims no pass^k for any domain")
    if sub.best_of_k:
        lines.append(f'  its claims are best-of-K over several trajectory files (methodology: "{sub.best_of_k}")')
    lines.extend(f"  warning: {w}" for w in sub.warnings)
    return record, "\n".join(lines)


def _best_of_k_claim(
    sub: Submission, domain: str, attempts: list[tuple[str, str, float | None, float | None]]
) -> tuple[dict[str, Any], str]:
    """A best-of-K claim beside the best-of-K score of the submission's files evaluated (ours and recorded):
    its ``eval --json`` record and its text block."""
    from tau_tui import formats
    from tau_tui.model.submission import best_of_k

    claim = sub.claims.get(domain)
    claimed = None if claim is None else claim.pass_hat_k.get(1)
    ours = best_of_k(domain, [(f, t, r) for f, t, r, _ in attempts])
    recorded = best_of_k(domain, [(f, t, r) for f, t, _, r in attempts])
    record = {
        "kind": "submission",
        "folder": str(sub.folder),
        "label": sub.label,
        "domain": domain,
        "claim_basis": "best_of_k",
        "methodology": sub.best_of_k,
        "claimed_pass_hat_1": claimed,
        "best_of_k": {"ours": ours.to_json(), "recorded": recorded.to_json()},
    }
    text = (
        f"submission {sub.label} ({domain}): best-of-K over {formats.count(ours.files, 'file')} "
        f'(methodology: "{sub.best_of_k}")\n  pass^1 claimed {"n/a" if claimed is None else f"{claimed:.3f}"}'
        f" · best-of-K ours {ours.text()} · recorded {recorded.text()}"
    )
    return record, text


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui.evaluate import FileMetrics, MetricOutcome, ScorerConfigError
    from tau_tui.evaluate.cost_time import SimCostTime
    from tau_tui.evaluate.judge import judge_credentials_problem
    from tau_tui.evaluate.render import metrics_block
    from tau_tui.evaluate.scorer import is_sidecar, load_scorer_config
    from tau_tui.evaluate.validity import SimValidity
    from tau_tui.model.io import SUBMISSION_LAYOUT, RunFileError
    from tau_tui.model.submission import SubmissionError, submission_for, submission_notes
    from tau_tui.textsafe import json_line, visible
    from tau_tui.workers.pool import Job, Unit

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
    ambiguous: dict[str, list[str]] = {}
    files: list[dict[str, Any]] = []
    out = sys.stdout
    bad_submissions: set[str] = set()
    pooled: dict[tuple[str, str], tuple[Submission, list[tuple[str, str, float | None, float | None]]]] = {}
    job = Job("eval", ws.settings, text=not args.json, scorer=args.scorer)
    lost = Lost()
    with executor_for(args, job, ws) as executor:
        for path, run, error in open_all(args.paths, keep=lambda p: not is_sidecar(p), prepare=analyzer.prepare):
            if run is None:
                err(error or f"{path}: unreadable")
                status = EXIT_INPUT
                continue
            if run.layout == SUBMISSION_LAYOUT:  # a lone submission.json: its claims, trajectories not here
                try:
                    record, block = _lone_submission(path, run.recorded_only or "")
                except SubmissionError as exc:
                    err(str(exc))
                    status = EXIT_INPUT
                    continue
                files.append(record)
                if not args.json:
                    out.write(visible(block + "\n\n"))
                continue
            if run.recorded_only:  # tau-bench v1: its recorded rewards' metrics, nothing recomputed
                indices = selected(run, args.sim, found, ambiguous)
                if indices or not args.sim:
                    record, block = _recorded_only_file(path, run, indices, args.seed)
                    files.append(record)
                    if not args.json:
                        out.write(visible(block + "\n\n"))
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
            indices = selected(run, args.sim, found, ambiguous)
            if args.sim and not indices:  # none of the asked simulations is here: no metrics of nothing
                continue
            outcomes, recorded, reports = [], [], []
            unreplayed: list[SimValidity] = []  # simulations whose unit failed: in the validity, not the score
            domain_missing: str | None = None  # why no simulation of the file can be replayed (its domain)
            units = (Unit(str(path), index, sidecar) for index in indices)
            for done in lost.until_lost(executor.map(units)):
                if done.error is not None:
                    err(done.error)
                    status = EXIT_INPUT
                    if done.domain_error:
                        domain_missing = done.error
                        break
                    entry = run.entries[done.unit.index]
                    try:
                        spent = SimCostTime.of_raw(run.raw_simulation(entry.index))
                    except RunFileError:
                        spent = SimCostTime()
                    unreplayed.append(
                        SimValidity.of(
                            entry.id,
                            entry.task_id,
                            replayed=False,
                            agent_cost=spent.agent_usd,
                            duration=spent.duration_s,
                        )
                    )
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
            if lost.happened:
                status = EXIT_INPUT
                break
            if domain_missing:  # never graded as another domain: its recorded rewards, said to be so
                record, block = _recorded_only_file(path, run, indices, args.seed, _after_path(path, domain_missing))
                files.append(record)
                if not args.json:
                    out.write(visible(block + "\n\n"))
                continue
            both = FileMetrics.of(outcomes, recorded, run.raw_info, seed=args.seed)
            metrics, confidence = both.ours, both.confidence
            record = _file_record(path, run, both, reports, unreplayed)
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
                domain = sub.run_domain(run)
                if sub.best_of_k and domain is not None:
                    attempts = pooled.setdefault((str(sub.folder), domain), (sub, []))[1]
                    attempts += [(str(path), r.task_id, r.reward, r.recorded_reward) for r in reports]
            files.append(record)
            if not args.json:
                block = with_warnings(
                    metrics_block(str(path), metrics, both.recorded, confidence), record["validity"]["warnings"]
                )
                block += "".join(f"\n{line}" for line in _recorded_lines(run, reports))
                if "submission" in record:
                    claim = sub.claim_for(run) if sub is not None and not isinstance(sub, SubmissionError) else None
                    block += "\n" + _claim_lines(record["submission"], metrics, claim)
                out.write(visible(block + "\n\n"))
    claims = [_best_of_k_claim(sub, domain, attempts) for (_, domain), (sub, attempts) in pooled.items()]
    if not args.json:
        for _, text in claims:
            out.write(visible(text + "\n\n"))
    if args.json:
        for record in files + [claim for claim, _ in claims]:
            out.write(json_line(record) + "\n")
    for sim_id in args.sim:
        if sim_id not in found:
            err(no_simulation(sim_id, "the given files", ambiguous.get(sim_id)))
            status = EXIT_INPUT
    out.flush()
    return status
