"""Runs that grow while the app is open: a rollout's progress and its results file as rows.

Pure Python (rich for the status line). The runner saves every finished
simulation at once; ``Runner.snapshot()`` gives what it saved as a ``RunFile``
without reading the file back, so each finished simulation lands in the runs
table the moment it ends. The progress itself is ``rollout.progress.RunTally``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from tau_tui.rollout.progress import RunTally
from tau_tui.tui.catalog import RunRow
from tau_tui import formats


def carry_over(old: list[RunRow], new: list[RunRow]) -> list[RunRow]:
    """Copy derived summaries from the previous rows of a file onto its new rows; returns the rows still to derive.

    A simulation is the same when its id and message count are (saved simulations never change).
    """
    before = {(row.sim_id, row.entry.n_messages): row for row in old}
    fresh = []
    for row in new:
        prior = before.get((row.sim_id, row.entry.n_messages))
        if prior is not None and (prior.replay is not None or prior.replay_error is not None):
            row.replay, row.replay_error = prior.replay, prior.replay_error
            row.evaluation, row.eval_error = prior.evaluation, prior.eval_error
        else:
            fresh.append(row)
    return fresh


@dataclass
class RolloutProgress(RunTally):
    """What the runs screen shows about the rollout in progress (or the last one).

    The counts are a ``RunTally`` (``apply`` folds the runner's events into them); this adds
    what the runs screen needs besides: the run's names, stop/failure and its rows' state.
    """

    path: Path
    domain: str
    agent: str
    user: str
    stopped: bool = False
    error: str | None = None
    shown: bool = False  # the runs table was narrowed to this run's file once

    @property
    def active(self) -> bool:
        return not (self.finished or self.stopped or self.error)

    def status(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" rollout ", style="bold reverse")
        text.append(f" {self.domain} · agent {self.agent} · user {self.user} · ")
        if self.error:
            text.append(f"failed: {self.error}", style="bold red")
            return text
        text.append(f"{self.done}/{self.total or '?'} done", style="bold")
        if self.running and self.active:
            text.append(f" · {self.running} running")
        avg = self.average
        text.append(f" · avg reward {formats.average(avg)}")
        if self.unscored:
            text.append(f" · {self.unscored} unscored", style="yellow")
        text.append(f" · {self.path}", style="dim")
        if self.stopped:
            text.append("  stopped (tau-tui run --resume finishes it)", style="yellow")
        elif self.finished:
            text.append("  finished", style="green")
        else:
            text.append("  K stops", style="dim")
        return text
