"""Build the static report of several runs into a folder, atomically, never over a user's files.

The pages are written into a new folder beside ``out`` and moved into place at the end, so ``out`` is either
the previous report or the new one, never half of each. ``out`` must be missing, empty, or a report of ours:
a folder holding ``MARKER`` (the list of the files we wrote) and nothing else; anything else is refused.
Simulations are replayed and scored once each (``trust.Sides.add``'s ``visit``), their page written at once,
so memory stays bounded by one simulation however many there are.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tau_tui.report import pages

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.evaluate import Judge
    from tau_tui.model.io import RunFile
    from tau_tui.model.notes import Note
    from tau_tui.trust import Sides

MARKER = ".tau-tui-report.json"
REPORT_VERSION = 1


class ReportError(Exception):
    """The report cannot be written where asked; ``str()`` is one line."""


@dataclass
class ReportResult:
    out: Path
    files: int
    bytes: int
    simulations: int
    seconds: float
    errors: list[str] = field(default_factory=list)
    comparison: Any = None  # trust.ManyComparison


def check_target(out: Path) -> list[str] | None:
    """The files of a previous report at ``out`` (None when it is missing or empty); ReportError when ``out``
    holds anything that is not ours."""
    if not out.exists():
        return None
    if not out.is_dir():
        raise ReportError(f"{out}: exists and is not a folder")
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() or p.is_symlink())
    if not present and not any(out.iterdir()):
        return None
    try:
        listed = json.loads((out / MARKER).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ReportError(f"{out}: not empty and not a tau-tui report: refusing to write into it") from None
    ours = set(listed) | {MARKER}
    others = [p for p in present if p not in ours]
    if others:
        raise ReportError(f"{out}: holds files the report did not write ({others[0]}…): refusing to write into it")
    return [str(p) for p in listed]


class _Pages:
    """The pages written so far into the staging folder: their names, their bytes, the simulations done."""

    def __init__(self, root: Path, progress: Callable[[int], None] | None) -> None:
        self.root = root
        self.progress = progress
        self.written: list[str] = []
        self.size = 0
        self.simulations = 0
        self.errors: list[str] = []

    def write(self, name: str, html: str) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = html.encode("utf-8")
        path.write_bytes(data)
        self.written.append(name)
        self.size += len(data)

    def run_pages(
        self, r: int, label: str, source: str, runs: Sequence[tuple[Path, RunFile]], sides: Sides
    ) -> list[pages.SimLink]:
        """Run ``r`` scored into ``sides``: its simulation pages, each written once it is scored, then its list
        pages."""
        from tau_tui.model.notes import NoteBook, NotesError

        links: list[pages.SimLink] = []
        books: dict[Path, dict[str, list[Note]]] = {}

        def visit(path: Path, run: RunFile, index: int, analysis: Any, report: Any) -> None:
            sim = run.simulation(index)
            if path not in books:
                try:
                    books[path] = NoteBook(path).by_simulation()
                except NotesError as exc:  # the report goes on without them, saying so
                    books[path] = {}
                    self.errors.append(f"notes not shown: {exc}")
            entry = run.entries[index]
            reward = report.evaluation.reward if report is not None else entry.reward
            recorded_reward = report.recorded_reward if report is not None else entry.reward
            link = pages.SimLink(
                r, len(links), sim.id, sim.task_id, sim.trial, reward, recorded_reward, sim.termination_reason
            )
            links.append(link)
            self.write(link.href, pages.sim_page(label, link, run, sim, analysis, report, books[path].get(sim.id, [])))
            self.simulations += 1
            if self.progress is not None:
                self.progress(self.simulations)

        _, problems = sides.add(source, runs, visit=visit)
        self.errors += problems
        for name, html in pages.sim_list_pages(r, label, links):
            self.write(f"runs/{r + 1}/{name}", html)
        return links


def build_report(
    sources: Sequence[tuple[str, Sequence[tuple[Path, RunFile]]]],
    out: Path,
    analyzer: Analyzer,
    *,
    baseline: int = 0,
    recorded: bool = False,
    judge: Judge | None = None,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> ReportResult:
    """The report of ``sources`` (each a run: its path as given and its opened files) into ``out``;
    ``progress`` is called with the number of simulations done."""
    from tau_tui.trust import Sides, labels_apart

    check_target(out)
    started = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        labels = labels_apart([runs for _, runs in sources])  # the pages name each run as the comparison does
        written = _Pages(staging, progress)
        sides = Sides(analyzer, recorded=recorded, judge=judge)
        links_of = [
            written.run_pages(r, label, source, runs, sides)
            for r, ((source, runs), label) in enumerate(zip(sources, labels, strict=True))
        ]
        many = sides.against(baseline, seed=seed)
        first: dict[tuple[int, str], int] = {}
        for r, links in enumerate(links_of):
            for link in links:
                first.setdefault((r, link.task), link.number)
        for name, html in pages.index_pages(many, [len(x) for x in links_of], first, written.errors):
            written.write(name, html)
        marker = {"tau_tui_report": REPORT_VERSION, "files": sorted(written.written)}
        (staging / MARKER).write_text(json.dumps(marker, indent=0), encoding="utf-8")
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ReportResult(
        out, len(written.written), written.size, written.simulations, time.monotonic() - started, written.errors, many
    )


def _swap(staging: Path, out: Path) -> None:
    """Move the finished report to ``out``: an empty folder or a previous report of ours is replaced."""
    check_target(out)  # again: nothing of the user's may have appeared meanwhile
    os.chmod(staging, 0o755)
    if not out.exists():
        staging.rename(out)
        return
    if not any(out.iterdir()):
        out.rmdir()
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
    old.rmdir()
    out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
