"""``tau-tui replay``: replay recorded runs against the environment and check them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tau_tui.commands.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    Lost,
    Subparsers,
    add_domain_flag,
    add_workers_flag,
    err,
    executor_for,
    no_simulation,
    open_all,
    selected,
)

if TYPE_CHECKING:
    from tau_tui.workspace import Workspace

NAME = "replay"
SHARED_FLAGS = True


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    replay = sub.add_parser(
        NAME,
        help="replay recorded runs against the environment and check them",
        description="Replay every simulation: a verdict per tool call, findings, DB hashes. A file shown as "
        "recorded only (tau-bench v1 results) is not replayed: one note line says so. Exit 0: no mismatch or "
        "finding; 1: some; 2: some input unreadable.",
    )
    replay.add_argument("paths", nargs="+", metavar="PATH", help="run files or folders")
    replay.add_argument(
        "--sim", action="append", default=[], metavar="ID", help="only this simulation (id or prefix; repeatable)"
    )
    replay.add_argument("--json", action="store_true", help="one JSON object per simulation, one per line")
    add_upstream_fixes_flag(replay)
    add_domain_flag(replay)
    replay.add_argument(
        "--only-problems",
        action="store_true",
        help="print only the simulations with a mismatch or a finding (the totals line and the exit "
        "status still count every one)",
    )
    add_workers_flag(replay)
    return replay


def add_upstream_fixes_flag(parser: argparse.ArgumentParser) -> None:
    """``--upstream-fixes`` / ``--no-upstream-fixes``: replay with the tools as fixed upstream, or as tau2 1.0.1
    has them (the default; the settings file's ``upstream_fixes`` decides when neither is given)."""
    parser.add_argument(
        "--upstream-fixes",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replay with the registered upstream fixes of tau2 1.0.1's tools (e.g. retail's "
        "modify_pending_order_items, tau2-bench#317) instead of 1.0.1's own tools "
        "(default: off, or the settings' upstream_fixes)",
    )


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui import formats
    from tau_tui.replay.facts import has_problems
    from tau_tui.textsafe import visible
    from tau_tui.workers.pool import Job, Unit

    status = EXIT_OK
    wanted = list(args.sim)
    found_wanted: set[str] = set()
    ambiguous: dict[str, list[str]] = {}
    out = sys.stdout
    totals = ReplayTotals()
    noted: set[str] = set()
    lost = Lost()
    with executor_for(args, Job("replay", workspace.settings, text=not args.json), workspace) as executor:
        for path, recording, error in open_all(args.paths, prepare=workspace.analyzer.prepare):
            if recording is None:
                err(error or f"{path}: unreadable")
                status = EXIT_INPUT
                continue
            indices = list(selected(recording, wanted, found_wanted, ambiguous))
            if recording.recorded_only:  # tau-bench v1: nothing to replay; one line says so
                err(
                    f"note: {path}: {recording.recorded_only} ({formats.count(len(indices), 'simulation')} not replayed)"
                )
                continue
            executor.adopt(path, recording)
            for position, done in enumerate(lost.until_lost(executor.map(Unit(str(path), i) for i in indices))):
                if done.error is not None:
                    err(done.error)
                    status = EXIT_INPUT
                    if done.domain_error:  # the file's domain: none of its simulations can be replayed
                        totals.failed += len(indices) - position
                        break
                    totals.failed += 1
                    continue
                record, line = done.record, done.line
                assert record is not None and line is not None  # a replay unit that did not fail has both
                totals.add(record)
                for note in done.warnings:
                    if note not in noted:  # each worker process loads the domain: say it once
                        noted.add(note)
                        err(f"note: {note}")
                problems = has_problems(record)  # an Inspect log's own final DB differing from ours counts too
                if status == EXIT_OK and problems:
                    status = EXIT_FINDINGS
                if args.only_problems and not problems:
                    continue
                if args.json:
                    out.write(line + "\n")
                else:
                    out.write(visible(f"{path}\n{done.text}\n\n"))
            if lost.happened:
                status = EXIT_INPUT
                break
    for sim_id in wanted:
        if sim_id not in found_wanted:
            err(no_simulation(sim_id, "the given files", ambiguous.get(sim_id)))
            status = EXIT_INPUT
    if totals.sims and not args.json:
        out.write(totals.line() + "\n")
    out.flush()
    return status


class ReplayTotals:
    """What ``tau-tui replay`` found over all its files, for the line that ends its human output.

    A simulation with mismatches counts once, by its worst class: with divergences, else upstream-fix only,
    else library-text only.
    """

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.sims = self.ok = self.divergent = self.upstream_only = self.library_only = 0
        self.with_findings = self.failed = self.db_checked = self.db_matched = 0

    def add(self, record: dict[str, Any]) -> None:
        self.files.add(record["file"])
        self.sims += 1
        if record["first_mismatch"] is not None:
            classes = record["mismatch_classes"]
            if classes["divergence"]:
                self.divergent += 1
            elif classes["upstream_fix"]:
                self.upstream_only += 1
            else:
                self.library_only += 1
        self.with_findings += bool(record["findings"])
        self.ok += record["first_mismatch"] is None and not record["findings"]
        if record["db_match"] is not None:
            self.db_checked += 1
            self.db_matched += bool(record["db_match"])

    def line(self) -> str:
        """``24 simulations in 3 files: 21 ok, 1 library-text only, 1 with divergences, 1 with findings; db_match 20/24``."""
        from tau_tui import formats

        files = len(self.files)
        parts = [f"{self.ok} ok"]
        if self.library_only:
            parts.append(f"{self.library_only} library-text only")
        if self.upstream_only:
            parts.append(f"{self.upstream_only} upstream-fix only")
        parts += [f"{self.divergent} with divergences", f"{self.with_findings} with findings"]
        text = f"{formats.count(self.sims, 'simulation')} in {formats.count(files, 'file')}: " + ", ".join(parts)
        if self.failed:
            text += f"; {self.failed} more not replayed"
        return text + f"; db_match {self.db_matched}/{self.db_checked}"
