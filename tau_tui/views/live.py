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

from tau_tui import formats
from tau_tui.catalog import RunRow
from tau_tui.rollout.progress import RunTally


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


def progress_status(pill: str, head: str, done: int | None = None, total: int | None = None, running: int = 0,
                    tail: list[tuple[str, str]] | None = None, state: str = "running",
                    stopped: str = "stopped", head_style: str = "") -> Text:
    """The one status line of work in progress (a rollout, a calibration's trials):
    ``[pill] head done/total done · N running <tail> <state>`` where state is ``finished``,
    ``stopped`` (its own wording) or running (``K stops``)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {pill} ", style="bold reverse")
    text.append(head, style=head_style)
    if done is None:
        return text
    text.append(f"{done}/{total or '?'} done", style="bold")
    if running:
        text.append(f" · {running} running")
    for part, style in tail or []:
        text.append(part, style=style)
    if state == "stopped":
        text.append(f"  {stopped}", style="yellow")
    elif state == "finished":
        text.append("  finished", style="green")
    else:
        text.append("  K stops", style="dim")
    return text


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
        head = f" {self.domain} · agent {self.agent} · user {self.user} · "
        if self.error:
            text = progress_status("rollout", head)
            text.append(f"failed: {self.error}", style="bold red")
            return text
        tail: list[tuple[str, str]] = [(f" · avg reward {formats.average(self.average)}", "")]
        if self.unscored:
            tail.append((f" · {self.unscored} unscored", "yellow"))
        tail.append((f" · {self.path}", "dim"))
        return progress_status("rollout", head, self.done, self.total, self.running if self.active else 0, tail,
                               "stopped" if self.stopped else "finished" if self.finished else "running",
                               "stopped (tau-tui run --resume finishes it)")
