"""The ``tau-tui`` command: the TUI by default, and headless sub-commands.

Start-up stays fast: textual is imported only to open the TUI, litellm only
by commands that talk to a model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
SUBCOMMANDS = ("replay", "eval", "run", "play", "calibrate", "notes")


def default_paths() -> list[Path]:
    """The bundled recordings (the repo's ``recordings/`` or the copy inside the wheel)."""
    from tau_tui.model.notes import bundled_recordings

    return bundled_recordings()[:1]


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tau2-data", metavar="DIR", help="tau2 data folder (holding domains/<name>/); "
                        "default: $TAU2_DATA_DIR, then an installed tau2 package")
    parser.add_argument("--domains", metavar="DIR", action="append", default=[],
                        help="extra folder of domain packages (repeatable; also $TAU_TUI_DOMAINS)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """All sub-commands; ``command`` (the one being run) lets the others skip costly set-up."""
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Inspect, replay, evaluate and run tau2-bench style agent evaluations.",
        epilog="Sub-commands: " + ", ".join(SUBCOMMANDS) + ". Run 'tau-tui <sub-command> --help' for each.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    replay = sub.add_parser("replay", help="replay recorded runs against the environment and check them",
                            description="Replay every simulation: a verdict per tool call, findings, DB hashes.")
    replay.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    replay.add_argument("--sim", action="append", default=[], metavar="ID", help="only this simulation (id or prefix; repeatable)")
    replay.add_argument("--json", action="store_true", help="one JSON object per simulation, one per line")
    _add_common(replay)

    evaluate = sub.add_parser(
        "eval", help="recompute and explain rewards, with per-file metrics",
        description="Recompute every simulation's reward with tau2's rules (EvaluationType.ALL), say what failed "
        "and why, check the recording against its task, score tool calls, flag process issues, and print "
        "per-file metrics (avg reward, pass^k, pass@k, terminations). Exit 0: no recomputed reward differs "
        "from the recorded one; 1: some differ; 2: some input unreadable.")
    evaluate.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    evaluate.add_argument("--sim", action="append", default=[], metavar="ID",
                          help="only this simulation (id or prefix; repeatable)")
    evaluate.add_argument("--json", action="store_true",
                          help="one JSON object per simulation, one per line, then one per file with its metrics")
    evaluate.add_argument("--judge", metavar="MODEL",
                          help="litellm model that judges NL assertions (without one they are not evaluated)")
    evaluate.add_argument("--judge-api-base", metavar="URL", help="API base URL for the judge model")
    evaluate.add_argument("--scorer", metavar="FILE",
                          help="tool-call scorer config for every file (default: <recording>.scorer.json beside it)")
    _add_common(evaluate)
    _add_run(sub)
    _add_play(sub)
    _add_calibrate(sub)
    _add_notes(sub, full=command == "notes")
    return parser


def _add_run(sub: Any) -> None:
    run = sub.add_parser(
        "run", help="roll out tasks × k trials with a model or scripted agent and user",
        description="Roll out tasks × k trials and save every simulation, evaluated, in a tau2 results file "
        "as soon as it ends. MODEL is any litellm model string, or scripted/gold (agent) / scripted/user (user). "
        "With --cassette RECORDING the agent runs over the recorded simulations' tool results instead of a live "
        "environment: a request gets the next result recorded for the same tool and arguments; any other request "
        "(different arguments, a tool the recording never calls, past the end of what was recorded) is refused "
        "with 'no recorded result' and the simulation ends as no_recorded_result.")
    run.add_argument("--domain", metavar="D", help="domain name (e.g. mock, airline, telecom-workflow); "
                     "required unless --cassette (then it is the recording's)")
    run.add_argument("--task", dest="tasks", action="extend", nargs="+", default=[], metavar="ID",
                     help="only these tasks (repeatable; default: every task of the domain)")
    run.add_argument("--agent-llm", required=True, metavar="MODEL", help="agent model, or scripted/gold")
    run.add_argument("--user-llm", metavar="MODEL", help="user model, or scripted/user (not needed with --solo)")
    run.add_argument("--agent-llm-args", metavar="JSON", help='extra litellm arguments for the agent, '
                     'e.g. \'{"temperature": 0, "api_base": "http://..."}\' (default {"temperature": 0.0})')
    run.add_argument("--user-llm-args", metavar="JSON", help="extra litellm arguments for the user")
    run.add_argument("-k", "--num-trials", type=int, default=1, metavar="N", help="trials per task (default 1)")
    run.add_argument("--concurrency", type=int, default=3, metavar="C", help="simulations at once (default 3)")
    run.add_argument("--out", metavar="PATH", help="results file (default runs/<time>_<domain>_<agent>_<user>.json)")
    run.add_argument("--format", choices=("json", "dir"), default="json",
                     help="json: one results file (default); dir: results.json + simulations/<id>.json")
    run.add_argument("--resume", action="store_true", help="finish an interrupted run in --out "
                     "(skips finished (trial, task, seed); infrastructure errors run again)")
    run.add_argument("--max-steps", type=int, default=200, metavar="N", help="step limit per simulation (default 200)")
    run.add_argument("--max-errors", type=int, default=10, metavar="N", help="tool-error limit (default 10)")
    run.add_argument("--seed", type=int, metavar="S", help="run seed; one seed per trial derives from it "
                     "as in tau2 (default 300; with --cassette: the sampling seed of every simulation, default each "
                     "recorded simulation's own)")
    run.add_argument("--timeout", type=float, metavar="SECONDS", help="wall-clock limit per simulation")
    run.add_argument("--solo", action="store_true", help="solo mode: the agent works the task's ticket alone")
    run.add_argument("--judge-llm", metavar="MODEL", help="model judging NL assertions (without it, tasks whose "
                     "reward needs them stay unscored)")
    run.add_argument("--llm-retries", type=int, default=5, metavar="N",
                     help="retries of a model call on rate limits and transient errors (default 5)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--cassette", metavar="RECORDING", help="run over the tool results of this recorded run "
                     "(one new simulation per recorded one) instead of a live environment")
    run.add_argument("--cassette-sim", action="append", default=[], metavar="ID",
                     help="with --cassette: only this recorded simulation (id or prefix; repeatable)")
    _add_common(run)


def _add_play(sub: Any) -> None:
    play = sub.add_parser(
        "play", help="play the user or the agent of one task yourself",
        description="A human session: you play one side of a task, MODEL (a litellm model string or a scripted "
        "participant) plays the other. The result is evaluated and saved as a tau2 results file.")
    play.add_argument("--as", dest="play_as", required=True, choices=("user", "agent"), help="the side you play")
    play.add_argument("--domain", required=True, metavar="D", help="domain name")
    play.add_argument("--task", required=True, metavar="ID", help="task id")
    play.add_argument("--llm", required=True, metavar="MODEL",
                      help="the other side: a litellm model, or scripted/gold (agent) / scripted/user (user)")
    play.add_argument("--llm-args", metavar="JSON", help="extra litellm arguments for MODEL")
    play.add_argument("--out", metavar="PATH", help="results file (default runs/<time>_play_<domain>_<task>.json)")
    play.add_argument("--solo", action="store_true", help="solo mode (play the agent on the task's ticket)")
    play.add_argument("--max-steps", type=int, default=200, metavar="N", help="step limit (default 200)")
    play.add_argument("--seed", type=int, metavar="S", help="seed passed to MODEL")
    play.add_argument("--judge-llm", metavar="MODEL", help="model judging NL assertions")
    play.add_argument("--plain", action="store_true", help="line-based play on this terminal instead of the TUI")
    _add_common(play)


def _add_calibrate(sub: Any) -> None:
    cal = sub.add_parser(
        "calibrate", help="k trials per task in a grid with bands (saturated, zero, learning zone), or a gold check",
        description="Calibrate tasks: run k trials per task (and/or load recorded runs with --from) and show one "
        "row per task version and setup: a cell per trial (pass, scored fail, unscored), pass rate, pass^k and "
        "pass@k over scored attempts, and the band (saturated: all scored pass; zero: none; learning_zone: in "
        "between; unscored: nothing scored). Results of different task fingerprints (task definition, tools, DB, "
        "policy) are never pooled. With --gold-check: check each task's reference solution instead (the scripted "
        "gold agent reaches 1.0; the evaluator's gold state equals the live path). Models: any litellm model "
        "string, or scripted/gold, scripted/flaky[:P] (drops each reference action with probability P) for the "
        "agent, scripted/user for the user.")
    cal.add_argument("--domain", required=True, metavar="D", help="domain name (e.g. mock, airline, telecom-workflow)")
    cal.add_argument("--task", dest="tasks", action="extend", nargs="+", default=[], metavar="ID",
                     help="only these tasks (repeatable; default: every task of the domain)")
    cal.add_argument("--gold-check", action="store_true",
                     help="check the tasks' reference solutions instead of calibrating a model")
    cal.add_argument("--agent-llm", metavar="MODEL", help="agent model to run (without it, only --from runs are shown)")
    cal.add_argument("--user-llm", metavar="MODEL", help="user model, or scripted/user (needed with --agent-llm)")
    cal.add_argument("--agent-llm-args", metavar="JSON", help="extra litellm arguments for the agent")
    cal.add_argument("--user-llm-args", metavar="JSON", help="extra litellm arguments for the user")
    cal.add_argument("-k", "--num-trials", type=int, default=4, metavar="N", help="trials per task (default 4)")
    cal.add_argument("--concurrency", type=int, default=3, metavar="C", help="simulations at once (default 3)")
    cal.add_argument("--from", dest="sources", action="extend", nargs="+", default=[], metavar="PATH",
                     help="recorded runs (files or folders) to include; runs of other domains are skipped")
    cal.add_argument("--recompute", action="store_true",
                     help="score --from runs with our evaluator instead of their recorded rewards")
    cal.add_argument("--out", metavar="PATH", help="results file for the new trials (default "
                     "runs/calibrate_<time>_<domain>.json); an existing one is resumed: only missing trials run")
    cal.add_argument("--seed", type=int, default=300, metavar="S", help="run seed (default 300)")
    cal.add_argument("--max-steps", type=int, default=200, metavar="N", help="step limit per simulation (default 200)")
    cal.add_argument("--max-errors", type=int, default=10, metavar="N", help="tool-error limit (default 10)")
    cal.add_argument("--timeout", type=float, metavar="SECONDS", help="wall-clock limit per simulation")
    cal.add_argument("--judge-llm", metavar="MODEL", help="model judging NL assertions (without it, rewards that "
                     "need them are unscored; in --gold-check they are left out)")
    cal.add_argument("--llm-retries", type=int, default=5, metavar="N",
                     help="retries of a model call on rate limits and transient errors (default 5)")
    cal.add_argument("--band", dest="bands", action="extend", nargs="+", default=[], metavar="BAND",
                     choices=("saturated", "zero", "learning_zone", "unscored"), help="only rows in these bands")
    cal.add_argument("--sort", choices=("task", "band", "pass_rate", "unscored"), default="task",
                     help="row order (default task; band puts the learning zone first)")
    cal.add_argument("--all", action="store_true", help="--gold-check: list passing tasks too (human output)")
    cal.add_argument("--json", action="store_true", help="one JSON object per row (or per task with --gold-check), "
                     "one per line")
    cal.add_argument("--quiet", action="store_true", help="no progress display")
    _add_common(cal)


def _add_notes(sub: Any, full: bool) -> None:
    """The notes sub-command; its vocabulary (pydantic models) is imported only when it runs."""
    notes = sub.add_parser(
        "notes", help="annotate simulations and steps (sidecar <recording>.notes.json), list and export notes",
        description="Notes on recorded simulations, stored in <recording stem>.notes.json beside the recording "
        "(the recording itself is never written).")
    if not full:
        return
    from tau_tui.model.notes import ERROR_TYPES, SOURCES

    actions = notes.add_subparsers(dest="notes_command", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="annotate a simulation or one of its steps",
                             description="Error types: " + "; ".join(f"{k}: {v}" for k, v in ERROR_TYPES.items()))
    add.add_argument("path", metavar="PATH", help="the recording (run file or run directory)")
    add.add_argument("--sim", required=True, metavar="ID", help="simulation id (or a unique prefix)")
    add.add_argument("--step", type=int, metavar="N", help="message index in the trajectory (default: the whole "
                     "simulation)")
    add.add_argument("--source", required=True, choices=SOURCES, help="whose fault or doing it is")
    add.add_argument("--type", dest="error_type", required=True, choices=tuple(ERROR_TYPES), metavar="TYPE",
                     help="error type: " + ", ".join(ERROR_TYPES))
    add.add_argument("--text", default="", help="free text")
    add.add_argument("--author", help="who wrote the note")
    add.add_argument("--json", action="store_true", help="print the note as JSON")

    def filters(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="recordings (files or folders)")
        parser.add_argument("--sim", metavar="ID", help="only notes on this simulation (id or prefix)")
        parser.add_argument("--task", metavar="ID", help="only notes on simulations of this task")
        parser.add_argument("--source", choices=SOURCES, help="only notes with this source")
        parser.add_argument("--type", dest="error_type", choices=tuple(ERROR_TYPES), metavar="TYPE",
                            help="only notes of this error type")
        parser.add_argument("--grep", dest="text", metavar="TEXT", help="only notes whose text contains TEXT")

    listing = actions.add_parser("list", help="show notes")
    filters(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per note, one per line")
    export = actions.add_parser("export", help="export notes of several recordings as JSON or CSV")
    filters(export)
    export.add_argument("--format", choices=("json", "csv"), default="json", help="default json")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    remove = actions.add_parser("remove", help="delete a note")
    remove.add_argument("path", metavar="PATH", help="the recording")
    remove.add_argument("note_id", metavar="NOTE", help="note id (or a unique prefix)")


def tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau-tui",
        description="Open the TUI on run files or folders (default: the bundled recordings). "
        "Sub-commands: " + ", ".join(SUBCOMMANDS) + " ('tau-tui <sub-command> --help').",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run files or folders")
    parser.add_argument("--calibrate", metavar="DOMAIN", help="open on the calibrate screen of DOMAIN (its loaded "
                        "recordings in a grid; n runs k trials)")
    parser.add_argument("--judge", metavar="MODEL", help="litellm model that judges a trajectory's NL assertions "
                        "when asked (J on the trajectory screen); default: judge_model from the settings")
    parser.add_argument("--judge-api-base", metavar="URL", help="API base URL for the judge model")
    _add_common(parser)
    return parser


def err(message: str) -> None:
    """An error or note line on stderr; ``message`` may echo recorded text or file names: shown visibly."""
    say(f"tau-tui: {message}", file=sys.stderr)


def say(text: Any, file: Any = None) -> None:
    """Print a line of human output; recorded control characters in it are shown, never sent."""
    from tau_tui.textsafe import shown

    print(shown(text), file=file or sys.stdout)


# --- replay ----------------------------------------------------------------------


def _open_all(paths: Sequence[Path | str], keep: Callable[[Path], bool] | None = None,
              ) -> Iterator[tuple[Path, Any, str | None]]:
    """(path, run or None, error line or None) for every run file under ``paths`` that ``keep`` accepts."""
    from tau_tui.model.io import RunFileError, describe_empty, open_run, scan_paths

    scan = scan_paths(paths)
    notice = scan.data_folder_notice()
    if notice:
        err(f"note: {notice}")
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
        yield path, run, None


def _fmt_args(arguments: Any) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return repr(arguments)


def _clip(text: str | None, limit: int = 400) -> str:
    text = "" if text is None else text
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def human_block(analysis, data: dict[str, Any] | None = None) -> str:
    """One readable block per simulation for ``tau-tui replay`` (``data``: its ``to_json()``, when made already)."""
    from tau_tui.replay.mismatch import detail_lines

    data = analysis.to_json() if data is None else data
    v = data["verdicts"]
    lines = [
        f"{data['sim']}  task {data['task']}"
        + (f" trial {data['trial']}" if data["trial"] is not None else "")
        + f"  [{data['domain']}, {data['termination']}]",
        f"  calls: {v['replayed']} replayed, {v['mismatch']} mismatch, {v['skipped_read']} read (not re-run), "
        f"{v['skipped_unknown']} hallucinated; {v['recorded_error']} recorded errors",
    ]
    timeline = analysis.timeline
    if timeline.injected_faults:
        faults = ", ".join(f"{c.name} {c.fault.get('kind')} (attempt {c.attempt}, step {c.result_step})"
                           for c in timeline.injected_faults)
        lines.append(f"  injected faults (a timeout or temporary error is reproduced, never re-run): {faults}")
    refusals = timeline.refusals
    if refusals:
        first = refusals[0]
        lines.append(f"  refused: {first.name} at step {first.result_step} ({first.refusal.get('reason')})"
                     + (f" and {len(refusals) - 1} call(s) after it" if len(refusals) > 1 else ""))
    for found in timeline.discoveries:
        lines.append(f"  discovered {found.tool} at step {found.step}")

    def short(h: str | None) -> str:
        return "none" if h is None else h[:12]

    if data["gold_db"] is None and data["pred_db"] is not None and analysis.gold is None:
        lines.append(f"  DB: predicted {short(data['pred_db'])}; no gold state (task not found)")
    else:
        verdict = "match" if data["db_match"] else "DIFFER"
        lines.append(
            f"  DB: {verdict}  agent {short(data['pred_db'])} vs gold {short(data['gold_db'])}"
            f"; user {short(data['pred_user_db'])} vs gold {short(data['gold_user_db'])}"
        )
    recorded = data["recorded_db_match"]
    if recorded is not None and data["db_match"] is not None and recorded != data["db_match"]:
        lines.append(f"  note: the recording says db_match={recorded}")
    mismatch = data["first_mismatch"]
    if mismatch:
        lines.append(f"  first mismatch at step {mismatch['step']}: {mismatch['tool']}({_fmt_args(mismatch['arguments'])})")
        lines.append(f"    recorded: {_clip(mismatch['recorded'])}")
        lines.append(f"    replayed: {_clip(mismatch['replayed'])}")
        detail = mismatch.get("detail") or []
        if detail:
            lines.append("    field by field (recorded → replayed):")
            lines += [f"      {line}" for line in detail_lines(detail)]
    for finding in data["findings"]:
        where = f"step {finding['step']}: " if finding["step"] is not None else ""
        lines.append(f"  finding [{finding['kind']}] {where}{finding['message']}")
    if not mismatch and not data["findings"]:
        lines.append("  strict replay ok")
    return "\n".join(lines)


def cmd_replay(args: argparse.Namespace) -> int:
    from tau_tui.textsafe import json_line, visible
    from tau_tui.workspace import Workspace
    from tau_tui.domains import DomainError
    from tau_tui.model.io import RunFileError

    analyzer = Workspace.from_args(args).analyzer
    status = EXIT_OK
    wanted = list(args.sim)
    found_wanted: set[str] = set()
    out = sys.stdout
    totals = ReplayTotals()
    for path, run, error in _open_all(args.paths):
        if run is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
            continue
        indices = range(len(run.entries))
        if wanted:
            picked = []
            for sim_id in wanted:
                index = run.find(sim_id)
                if index is not None:
                    picked.append(index)
                    found_wanted.add(sim_id)
            indices = picked
        for index in indices:
            try:
                analysis = analyzer.analyze(run, index)
            except (DomainError, RunFileError) as exc:
                err(str(exc))
                status = EXIT_INPUT
                totals.failed += 1
                if isinstance(exc, DomainError):
                    break
                continue
            record = analysis.to_json()
            totals.add(record)
            for note in analyzer.registry.new_warnings():
                err(f"note: {note}")
            if args.json:
                out.write(json_line(record) + "\n")
            else:
                out.write(visible(f"{path}\n{human_block(analysis, record)}\n\n"))
            if status == EXIT_OK and (record["first_mismatch"] or record["findings"]):
                status = EXIT_FINDINGS
    for sim_id in wanted:
        if sim_id not in found_wanted:
            err(f"no simulation {sim_id!r} in the given files")
            status = EXIT_INPUT
    if totals.sims and not args.json:
        out.write(totals.line() + "\n")
    out.flush()
    return status


class ReplayTotals:
    """What ``tau-tui replay`` found over all its files, for the line that ends its human output."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.sims = self.ok = self.mismatched = self.with_findings = self.failed = 0
        self.db_checked = self.db_matched = 0

    def add(self, record: dict[str, Any]) -> None:
        self.files.add(record["file"])
        self.sims += 1
        self.mismatched += record["first_mismatch"] is not None
        self.with_findings += bool(record["findings"])
        self.ok += record["first_mismatch"] is None and not record["findings"]
        if record["db_match"] is not None:
            self.db_checked += 1
            self.db_matched += bool(record["db_match"])

    def line(self) -> str:
        """``24 simulations in 3 files: 22 ok, 1 with mismatches, 1 with findings; db_match 20/24``."""
        files = len(self.files)
        text = (f"{self.sims} simulation{'s' if self.sims != 1 else ''} in {files} file{'s' if files != 1 else ''}: "
                f"{self.ok} ok, {self.mismatched} with mismatches, {self.with_findings} with findings")
        if self.failed:
            text += f", {self.failed} not replayed"
        return text + f"; db_match {self.db_matched}/{self.db_checked}"


# --- eval ----------------------------------------------------------------------


def _selected(run, wanted: list[str], found: set[str]) -> list[int]:
    """Indices of the simulations ``--sim`` asks for (all when none is asked for)."""
    if not wanted:
        return list(range(len(run.entries)))
    picked = []
    for sim_id in wanted:
        index = run.find(sim_id)
        if index is not None:
            picked.append(index)
            found.add(sim_id)
    return picked


def _num_trials(run) -> int | None:
    trials = run.raw_info.get("num_trials")
    return trials if isinstance(trials, int) and not isinstance(trials, bool) else None


def _file_record(path: Path, run, metrics, recorded_metrics, reports: list) -> dict[str, Any]:
    """The per-file ``tau-tui eval --json`` object: metrics over recomputed and recorded rewards."""
    from tau_tui.evaluate import FLAG_KINDS

    compared = [r.agrees for r in reports if r.agrees is not None]
    return {
        "kind": "file",
        "file": str(path),
        "domain": run.domain,
        "agent_model": run.agent_model,
        "metrics": metrics.to_json(),
        "recorded_metrics": recorded_metrics.to_json(),
        "agreement": {"compared": len(compared), "agree": sum(compared), "differ": len(compared) - sum(compared),
                      "not_computable": sum(r.evaluation.reward is None for r in reports)},
        "flags": {kind: sum(r.flag_counts()[kind] for r in reports) for kind in FLAG_KINDS},
    }


def cmd_eval(args: argparse.Namespace) -> int:
    from tau_tui.textsafe import json_line, visible
    from tau_tui.domains import DomainError
    from tau_tui.evaluate import Outcome, ScorerConfig, ScorerConfigError, compute_metrics
    from tau_tui.evaluate.render import metrics_block, simulation_block
    from tau_tui.evaluate.scorer import is_sidecar, load_scorer_config
    from tau_tui.model.io import RunFileError

    from tau_tui.workspace import Workspace

    ws = Workspace.from_args(args)
    judge = ws.judge()
    analyzer = ws.analyzer
    override = None
    if args.scorer:
        try:
            override = load_scorer_config(Path(args.scorer))
        except ScorerConfigError as exc:
            err(str(exc))
            return EXIT_INPUT
    status = EXIT_OK
    found: set[str] = set()
    files: list[dict[str, Any]] = []
    out = sys.stdout
    for path, run, error in _open_all(args.paths, keep=lambda p: not is_sidecar(p)):
        if run is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
            continue
        scorer = override
        if scorer is None:
            try:
                scorer = analyzer.scorer_config(run)
            except ScorerConfigError as exc:
                err(f"{exc} (tool-call scores skipped)")
                status = EXIT_INPUT
                scorer = ScorerConfig(None, None, {})
        outcomes, recorded, reports = [], [], []
        domain_missing = False
        for index in _selected(run, args.sim, found):
            try:
                report = analyzer.evaluate(run, index, judge=judge, scorer=scorer)
            except (DomainError, RunFileError) as exc:
                err(str(exc))
                status = EXIT_INPUT
                domain_missing = isinstance(exc, DomainError)
                if domain_missing:
                    break
                continue
            reports.append(report)
            outcomes.append(Outcome(report.task_id, report.evaluation.reward, report.evaluation.termination))
            recorded.append(Outcome(report.task_id, report.recorded_reward, report.evaluation.termination))
            if args.json:
                out.write(json_line(report.to_json(str(path))) + "\n")
            else:
                out.write(visible(f"{path}\n{simulation_block(report)}\n\n"))
            if status == EXIT_OK and report.agrees is False:
                status = EXIT_FINDINGS
        if domain_missing:
            continue
        metrics = compute_metrics(outcomes, _num_trials(run))
        recorded_metrics = compute_metrics(recorded, _num_trials(run))
        files.append(_file_record(path, run, metrics, recorded_metrics, reports))
        if not args.json:
            out.write(visible(metrics_block(str(path), metrics, recorded_metrics) + "\n\n"))
    if args.json:
        for record in files:
            out.write(json_line(record) + "\n")
    for sim_id in args.sim:
        if sim_id not in found:
            err(f"no simulation {sim_id!r} in the given files")
            status = EXIT_INPUT
    out.flush()
    return status


# --- run / play -------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from tau_tui.domains import DomainError
    from tau_tui.rollout import ParticipantSpecError, RunError
    from tau_tui.workspace import RequestError, Workspace

    ws = Workspace.from_args(args)
    request = _run_request(args, domain=args.domain or "-")  # the domain is checked below (or the cassette's)
    try:
        request.validate()
    except RequestError as exc:
        err(str(exc))
        return EXIT_INPUT
    if args.cassette:
        return cmd_run_cassette(args, ws,
                                ws.participant(args.agent_llm, request.json_object("agent_args"), args.llm_retries),
                                ws.participant(args.user_llm or "scripted/user", request.json_object("user_args"),
                                               args.llm_retries))
    if args.cassette_sim:
        err("--cassette-sim needs --cassette RECORDING")
        return EXIT_INPUT
    if not args.domain:
        err("--domain is required (or --cassette RECORDING)")
        return EXIT_INPUT
    progress = None
    try:
        runner = ws.runner(ws.run_plan(_run_request(args)))
        runner.prepare()
        if not args.quiet:
            from tau_tui.rollout.console import RunProgress

            progress = RunProgress()
            runner.listener = progress
            progress.__enter__()
        summary = asyncio.run(runner.run())
    except (DomainError, RunError, ParticipantSpecError, ValueError) as exc:
        err(str(exc))
        return EXIT_INPUT
    finally:
        if progress is not None:
            progress.__exit__(None, None, None)
    avg = summary.average_reward
    terms = ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items())) or "none"
    say(f"{summary.path}: {summary.already_done + summary.completed}/{summary.total} simulations "
          f"({summary.completed} this run); average reward {'-' if avg is None else f'{avg:.3f}'}"
          f"{f'; {summary.unscored} unscored' if summary.unscored else ''}; terminations: {terms}")
    return EXIT_FINDINGS if summary.terminations.get("infrastructure_error") else EXIT_OK


def _run_request(args: argparse.Namespace, **fields: Any):
    """The run flags as a ``RunRequest`` (run and calibrate)."""
    from tau_tui.workspace import RunRequest

    values: dict[str, Any] = dict(
        domain=args.domain, agent=args.agent_llm, user=args.user_llm, agent_args=args.agent_llm_args,
        user_args=args.user_llm_args, tasks=list(args.tasks) or None, num_trials=args.num_trials,
        concurrency=args.concurrency, max_steps=args.max_steps, max_errors=args.max_errors, seed=args.seed,
        timeout=args.timeout, solo=getattr(args, "solo", False), llm_retries=args.llm_retries,
        layout=getattr(args, "format", "json"), out=args.out, resume=getattr(args, "resume", False),
        allow_existing=True)
    values.update(fields)
    return RunRequest(**values)


def cmd_run_cassette(args: argparse.Namespace, ws, agent, user) -> int:
    """``tau-tui run --cassette``: one new simulation per recorded one, over its recorded tool results."""
    import asyncio

    from tau_tui.domains import DomainError
    from tau_tui.rollout import ParticipantSpecError
    from tau_tui.rollout.cassette import CassetteError, run_cassettes

    if args.num_trials != 1 or args.resume or args.solo or args.format != "json":
        err("--cassette runs one trial per recorded simulation, in the recording's mode, to a new json file "
            "(-k, --resume, --solo and --format do not apply)")
        return EXIT_INPUT
    out = Path(args.out) if args.out else ws.new_output_path("cassette", Path(args.cassette).stem)

    def report(outcome) -> None:
        sim = outcome.simulation
        reward = "-" if outcome.reward is None else f"{outcome.reward:g}"
        refusal = ((sim.info or {}).get("cassette") or {}).get("refusal")
        tail = f"; refused {refusal['tool']} ({refusal['reason']})" if refusal else ""
        if not args.quiet:
            say(f"{outcome.source} -> {sim.id}: {sim.termination_reason}, reward {reward}{tail}")

    try:
        summary = asyncio.run(run_cassettes(
            args.cassette, ws.registry, agent, user, out, sim_ids=list(args.cassette_sim) or None,
            task_ids=list(args.tasks) or None, domain=args.domain, seed=args.seed,
            max_steps=args.max_steps, max_errors=args.max_errors, timeout=args.timeout, judge=ws.judge(), listener=report))
    except (CassetteError, DomainError, ParticipantSpecError, ValueError) as exc:
        err(str(exc))
        return EXIT_INPUT
    refused = sum(o.simulation.termination_reason == "no_recorded_result" for o in summary.outcomes)
    say(f"{summary.path}: {len(summary.outcomes)} simulations over {args.cassette}; {refused} stopped at a "
          f"request with no recorded result")
    return EXIT_OK


def cmd_play(args: argparse.Namespace) -> int:
    import asyncio

    from tau_tui.domains import DomainError
    from tau_tui.model.io import error_text
    from tau_tui.rollout import ParticipantSpecError
    from tau_tui.workspace import PlayRequest, Workspace

    ws = Workspace.from_args(args)
    try:
        request = PlayRequest(args.domain, args.task, args.play_as, args.llm, args.llm_args, solo=args.solo,
                              seed=args.seed, max_steps=args.max_steps, out=args.out)
        out = ws.play_path(request)

        async def main() -> int:
            session = ws.play_session(request)
            from tau_tui.rollout.console import outcome_line, play_plain

            screen = None if args.plain else _play_screen()
            if screen is None:
                return await play_plain(session, out)
            code = await screen(session, out, keymap=args.keymap)
            if code == EXIT_OK:
                print(f"{outcome_line(session)}saved to {out}", end="\n", flush=True)
            else:
                err("left before the conversation ended: nothing saved")
            return code

        return asyncio.run(main())
    except (DomainError, ParticipantSpecError, KeyError, ValueError) as exc:
        err(error_text(exc))
        return EXIT_INPUT


def _play_screen():
    """The TUI's play screen, when the TUI provides one (``tau_tui.tui.play.run_play(session, out)``)."""
    try:
        from tau_tui.tui.play import run_play  # type: ignore[import-not-found]
    except ImportError:
        return None
    return run_play


# --- calibrate / notes ----------------------------------------------------------------------


def _print_json(record: dict[str, Any]) -> None:
    from tau_tui.textsafe import json_line

    sys.stdout.write(json_line(record) + "\n")


def cmd_calibrate(args: argparse.Namespace) -> int:
    from tau_tui.calibrate.tasks import TaskSourceError
    from tau_tui.domains import DomainError
    from tau_tui.rollout import ParticipantSpecError, RunError

    try:
        if args.gold_check:
            return _gold_check(args)
        return _calibrate(args)
    except (DomainError, RunError, ParticipantSpecError, TaskSourceError, ValueError) as exc:
        err(str(exc))
        return EXIT_INPUT


def _gold_check(args: argparse.Namespace) -> int:
    from tau_tui.calibrate.render import gold_summary, render_gold_check
    from tau_tui.rollout.runner import select_tasks

    from tau_tui.workspace import GoldCheckRequest, Workspace

    checker = Workspace.from_args(args).gold_checker(GoldCheckRequest(args.domain, list(args.tasks) or None))
    tasks = select_tasks(checker.domain, list(args.tasks) or None)

    def show(check) -> None:
        if args.json:
            _print_json(check.to_json())
        elif not check.ok:
            say(render_gold_check(check))
        elif args.all:
            say(f"ok   {check.task_id}")

    checks = checker.run(tasks, show)
    summary = gold_summary(args.domain, checks)
    say(summary, file=sys.stderr if args.json else sys.stdout)
    return EXIT_FINDINGS if any(not c.ok for c in checks) else EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    import asyncio

    from tau_tui.calibrate.render import render_grid
    from tau_tui.workspace import CalibrateRequest, Workspace

    if not args.agent_llm and not args.sources:
        err("give --agent-llm (and --user-llm) to run trials, or --from PATH to calibrate recorded runs")
        return EXIT_INPUT
    if args.agent_llm and not args.user_llm:
        err("--user-llm is required with --agent-llm (a model, or scripted/user)")
        return EXIT_INPUT
    ws = Workspace.from_args(args)
    calibrator = ws.calibrator(CalibrateRequest(args.domain))
    status = EXIT_OK
    if args.sources:
        report = calibrator.load_paths(args.sources, recompute=args.recompute)
        for path, reason in report.skipped:
            err(f"note: skipped {reason}" if str(path) in reason else f"note: skipped {path}: {reason}")
        if not report.total and not args.agent_llm:
            err(f"no simulation of domain '{args.domain}' in the given runs")
            return EXIT_INPUT
    summary = None
    if args.agent_llm:
        plan = ws.run_plan(_run_request(args, kind="calibrate", solo=False, layout="json"))
        out = plan.path
        progress = None
        if not args.quiet:
            from tau_tui.rollout.console import RunProgress

            progress = RunProgress(per_simulation=False)
            progress.__enter__()
        try:
            summary = asyncio.run(calibrator.run(plan.config, out, resume=out.exists(), runner_listener=progress))
        finally:
            if progress is not None:
                progress.__exit__(None, None, None)
        err(f"note: trials saved in {out}")
        if summary.terminations.get("infrastructure_error"):
            status = EXIT_FINDINGS
    wanted = set(args.tasks)
    rows = [r for r in calibrator.grid.rows(sort=args.sort, bands=args.bands or None)
            if not wanted or r.task_id in wanted]
    if args.json:
        for row in rows:
            _print_json(row.to_json())
    else:
        say(render_grid(calibrator.grid, rows, k=args.num_trials if args.agent_llm else None))
    return status


def cmd_notes(args: argparse.Namespace) -> int:
    from tau_tui.model.io import RunFileError
    from tau_tui.model.notes import NotesError

    try:
        handler = {"add": _notes_add, "list": _notes_list, "export": _notes_export,
                   "remove": _notes_remove}[args.notes_command]
        return handler(args)
    except (NotesError, RunFileError) as exc:
        err(str(exc))
        return EXIT_INPUT


def _notes_add(args: argparse.Namespace) -> int:
    from tau_tui.model.io import open_run
    from tau_tui.model.notes import NoteBook

    run = open_run(args.path)
    index = run.find(args.sim)
    if index is None:
        err(f"{args.path}: no simulation {args.sim!r} (or the prefix is not unique)")
        return EXIT_INPUT
    entry = run.entries[index]
    if args.step is not None and not 0 <= args.step < entry.n_messages:
        err(f"{args.path}: simulation {entry.id} has {entry.n_messages} messages; no step {args.step}")
        return EXIT_INPUT
    book = NoteBook(run.path)
    note = book.add(entry.id, args.source, args.error_type, args.text, step=args.step, task_id=entry.task_id,
                    trial=entry.trial, author=args.author)
    if args.json:
        _print_json(note.model_dump(mode="json"))
    else:
        say(f"note {note.id} added to {book.path}")
    return EXIT_OK


def _notebooks(paths: Sequence[str]) -> list:
    """The notebooks of every recording under ``paths`` that has a notes file."""
    from tau_tui.model.io import expand_paths
    from tau_tui.model.notes import NoteBook

    books = [NoteBook(path) for path in expand_paths(paths)]
    return [book for book in books if book.exists]


def _note_filters(args: argparse.Namespace) -> dict[str, Any]:
    return {"sim_id": args.sim, "task_id": args.task, "source": args.source, "error_type": args.error_type,
            "text": args.text}


def _notes_list(args: argparse.Namespace) -> int:
    from tau_tui.model.notes import note_rows

    rows = note_rows(_notebooks(args.paths), **_note_filters(args))
    for row in rows:
        if args.json:
            _print_json(row)
        else:
            where = f"step {row['step']}" if row["step"] is not None else "simulation"
            text = f": {row['text']}" if row["text"] else ""
            say(f"{row['id']}  {row['recording']}  sim {row['sim_id']} (task {row['task_id']}) {where}  "
                  f"[{row['source']}/{row['error_type']}]{text}")
    if not args.json:
        say(f"{len(rows)} note(s)", file=sys.stderr)
    return EXIT_OK


def _notes_export(args: argparse.Namespace) -> int:
    from tau_tui.model.io import write_atomic
    from tau_tui.model.notes import export_csv, export_json, note_rows
    from tau_tui.textsafe import json_visible, visible

    rows = note_rows(_notebooks(args.paths), **_note_filters(args))
    text = export_csv(rows) if args.format == "csv" else export_json(rows)
    if args.out:
        write_atomic(Path(args.out), text.encode())
        say(f"{len(rows)} note(s) written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(visible(text) if args.format == "csv" else json_visible(text))
    return EXIT_OK


def _notes_remove(args: argparse.Namespace) -> int:
    from tau_tui.model.notes import NoteBook

    note = NoteBook(args.path).remove(args.note_id)
    say(f"note {note.id} removed")
    return EXIT_OK


# --- TUI -----------------------------------------------------------------------


def cmd_tui(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or default_paths()
    missing = [p for p in paths if not p.exists()]
    if missing:
        err(f"{missing[0]}: does not exist")
        return EXIT_INPUT
    try:
        from tau_tui.tui.app import TauTuiApp
    except ImportError as exc:  # textual missing in a headless install
        err(f"the TUI needs textual ({exc}); headless sub-commands still work")
        return EXIT_INPUT
    from tau_tui.workspace import Workspace

    app = TauTuiApp(paths, workspace=Workspace.from_args(args), calibrate=args.calibrate, keymap=args.keymap)
    app.run()
    return EXIT_OK


def _apply_settings(args: argparse.Namespace) -> None:
    """Fill what the command line left open from the settings file and environment (flags win).

    Raises ``ConfigError`` (one line naming the file) for an unreadable settings file.
    """
    import os

    from tau_tui.config import load_settings

    settings = load_settings()
    if getattr(args, "tau2_data", None) is None and settings.tau2_data and not os.environ.get("TAU2_DATA_DIR"):
        args.tau2_data = str(settings.tau2_data)  # TAU2_DATA_DIR itself is looked up by the registry
    if hasattr(args, "domains"):
        args.domains = list(args.domains) + [str(p) for p in settings.domain_paths]
    args.runs_dir = str(settings.runs_dir)
    if hasattr(args, "judge") and not args.judge:
        args.judge = settings.judge_model
    if hasattr(args, "judge_llm") and not args.judge_llm:
        args.judge_llm = settings.judge_model
    if not getattr(args, "judge_api_base", None):
        args.judge_api_base = settings.judge_api_base
    args.keymap = settings.keymap


def main(argv: Sequence[str] | None = None) -> int:
    from tau_tui.config import ConfigError
    from tau_tui.model.io import WriteError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = build_parser(argv[0]).parse_args(argv)
            _apply_settings(args)
            handler = {"replay": cmd_replay, "eval": cmd_eval, "run": cmd_run, "play": cmd_play,
                       "calibrate": cmd_calibrate, "notes": cmd_notes}[args.command]
            return handler(args)
        args = tui_parser().parse_args(argv)
        _apply_settings(args)
        return cmd_tui(args)
    except (ConfigError, WriteError) as exc:  # a file that cannot be written: named, nothing half-written
        err(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
