"""One assembly of a comparison for every front end: runs loaded into labelled sides, then compared.

``tau-tui compare``, the report (``tau-tui report``) and the TUI's two compare screens each give their runs to a
``Sides`` one after another, as (the path named for the run, its files): ``add`` scores a run (``load_side``; a
file given as None is opened there, ``RunFileError`` when it cannot be) into a ``RunSide`` labelled ``model (file
name)``. Then ``two_way`` compares the two runs as A and B (``compare_runs``, with every run's error lines), or
``against(baseline)`` every run with one of them (``compare_many``; labels that read the same numbered apart,
as ``labels_apart`` gives them beforehand to a front end that names the runs while they load). The rewards
compared are the recorded ones with ``recorded``, else ours.

What stays with each front end: how it opens files and says what it could not read, what it does with a run
that has nothing to compare (the CLI exits 2 at once; the report and the TUI show the run empty), and whether
it compares two-way or against a baseline (the CLI by the number of runs and ``--baseline``, the report always
against one, the TUI by its screen).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from tau_tui.analysis import Analyzer
from tau_tui.evaluate import Judge
from tau_tui.evaluate.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from tau_tui.model.io import RunFile, open_run
from tau_tui.trust.compare import RunComparison, compare_runs, load_side
from tau_tui.trust.many import ManyComparison, RunSide, compare_many, distinct_labels, run_label

Visit = Callable[[Path, RunFile, int, Any, Any], None]  # as ``load_side`` calls its ``visit``


def labels_apart(runs: Sequence[Sequence[tuple[Path, RunFile]]]) -> list[str]:
    """The labels ``Sides.against`` gives runs of these files, in their order."""
    return distinct_labels([run_label(files) for files in runs])


class Sides:
    """The runs of one comparison, loaded in the order given; ``via``, ``judge`` and ``cancelled`` as
    ``load_side`` takes them."""

    def __init__(
        self,
        analyzer: Analyzer,
        *,
        recorded: bool = False,
        judge: Judge | None = None,
        via: Any = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.analyzer = analyzer
        self.recorded = recorded
        self.judge = judge
        self.via = via
        self.cancelled = cancelled
        self.runs: list[RunSide] = []
        self.errors: list[str] = []  # every run's lines of what could not be scored, in order

    @property
    def rewards(self) -> str:
        """The rewards compared: ``recorded`` or ``ours``."""
        return "recorded" if self.recorded else "ours"

    def add(
        self, source: str, files: Sequence[tuple[Path, RunFile | None]], *, visit: Visit | None = None
    ) -> tuple[RunSide, list[str]]:
        """Run ``source`` of ``files`` (a file given as None opened here) scored into a side; the side and the
        error lines of what of it could not be scored."""
        opened = [(path, run if run is not None else open_run(path)) for path, run in files]
        outcomes, problems = load_side(
            opened,
            self.analyzer,
            recorded=self.recorded,
            judge=self.judge,
            via=self.via,
            cancelled=self.cancelled,
            visit=visit,
        )
        side = RunSide(run_label(opened), source, outcomes)
        self.runs.append(side)
        self.errors += problems
        return side, problems

    def two_way(self, *, seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES) -> RunComparison:
        """The first run (A) against the second (B), labelled as loaded; ValueError unless there are two."""
        if len(self.runs) != 2:
            raise ValueError(f"a two-way comparison takes two runs, not {len(self.runs)}")
        a, b = self.runs
        return compare_runs(
            a.outcomes,
            b.outcomes,
            a_label=a.label,
            b_label=b.label,
            rewards=self.rewards,
            seed=seed,
            resamples=resamples,
            errors=self.errors,
        )

    def against(
        self, baseline: int = 0, *, seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES
    ) -> ManyComparison:
        """Every run against run ``baseline``, labels that read the same numbered apart (``#2``)."""
        labels = distinct_labels([side.label for side in self.runs])
        runs = [RunSide(label, side.source, side.outcomes) for label, side in zip(labels, self.runs, strict=True)]
        return compare_many(runs, baseline, rewards=self.rewards, seed=seed, resamples=resamples)


def load_runs(
    runs: Sequence[tuple[Path, RunFile | None]],
    analyzer: Analyzer,
    *,
    recorded: bool = False,
    via: Any = None,
    cancelled: Callable[[], bool] | None = None,
) -> tuple[list[RunSide], list[str]]:
    """One side per run file (``Sides.add`` of each, its path the source), and the error lines of what could
    not be scored."""
    sides = Sides(analyzer, recorded=recorded, via=via, cancelled=cancelled)
    for path, run in runs:
        sides.add(str(path), [(path, run)])
    return sides.runs, sides.errors
