"""Messages that workers post to the app and its screens (workers never touch widgets)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.message import Message

from tau_tui.evaluate import SimReport
from tau_tui.model.io import RunFile
from tau_tui.session.events import LoadEvent, ReplayOutcome
from tau_tui.session.simulation import OpenedSimulation


@dataclass
class LoadReport(Message):
    """An event of the session's loader (``session.events``: a file started, grew, loaded, failed...)."""

    event: LoadEvent


@dataclass
class SimsReplayed(Message):
    """A batch of background replay and evaluation results for the runs table."""

    generation: int
    outcomes: list[ReplayOutcome]

    def can_replace(self, message: Message) -> bool:
        """A pending batch of the same generation absorbs this one (its rows go first), so a burst reaches
        the runs table as one refresh and no row is lost."""
        if not isinstance(message, SimsReplayed) or message.generation != self.generation:
            return False
        message.outcomes = [*self.outcomes, *message.outcomes]
        return True


class ReplayIdle(Message):
    """The replay worker emptied its queue and stopped."""


@dataclass
class NLJudged(Message):
    """The judge answered (or failed) for the NL assertions of the trajectory screen's simulation."""

    token: int
    report: SimReport | None
    error: str | None


@dataclass
class SimulationReady(Message):
    """The trajectory screen's simulation is read and (when possible) replayed and assessed."""

    token: int
    opened: OpenedSimulation


# --- rollouts, sessions, forks ---------------------------------------------------------------


@dataclass
class RolloutEvent(Message):
    """An event of the running rollout (``tau_tui.rollout.runner``: RunStarted, SimulationFinished, ...)."""

    event: Any


@dataclass
class RolloutFailed(Message):
    """The rollout could not start or stopped with an error; ``error`` is one line."""

    error: str


@dataclass
class LiveFileAdded(Message):
    """A results file written by this app (a play session, a fork) was read back."""

    run: RunFile


@dataclass
class SessionEvent(Message):
    """An event of a play session: ``MessageAdded`` / ``EpisodeEnded`` from the orchestrator."""

    event: Any


@dataclass
class SessionTurn(Message):
    """It is the person's turn in a play session (``request`` is a ``TurnRequest``)."""

    request: Any


@dataclass
class SessionFinished(Message):
    """The play session's episode ended (``error`` set when it failed instead)."""

    error: str | None = None


@dataclass
class ForkFinished(Message):
    """A fork's continuation ran (``episode``), was saved (``path``) and read back (``run``), or failed."""

    token: int
    episode: Any = None
    path: Path | None = None
    run: RunFile | None = None
    error: str | None = None
    step: int = 0


@dataclass
class MetricsReady(Message):
    """Progress of the metrics screen's evaluation; when ``final``, ``summaries`` maps index → EvalSummary."""

    summaries: dict[int, Any]
    done: int
    total: int
    final: bool

    def can_replace(self, message: Message) -> bool:
        """A progress report is superseded by any later report of the same evaluation (lossless: the
        handler reads only ``done``/``total`` from it; the final report, with the summaries, is never
        dropped)."""
        return not self.final and isinstance(message, MetricsReady)


# --- notes, calibration, comparison -------------------------------------------------------


@dataclass
class NotesSaved(Message):
    """A note was added or removed: ``notebook`` is the recording's ``NoteBook`` as saved (or ``error``)."""

    notebook: Any = None
    error: str | None = None
    done: str = ""


@dataclass
class GridEvent(Message):
    """An event of a calibration: the grid's (RowAdded, CellChanged, RowChanged), the runner's, or
    CalibrationStarted / CalibrationFinished."""

    event: Any


@dataclass
class CalibratorReady(Message):
    """The calibrate screen's domain is loaded and its recorded runs are in the grid (or ``error``)."""

    calibrator: Any = None
    loaded: int = 0
    skipped: list[str] | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.skipped is None:
            self.skipped = []


@dataclass
class CalibrationFailed(Message):
    """A calibration run could not start or stopped with an error; ``error`` is one line."""

    error: str


@dataclass
class TaskReloaded(Message):
    """After an edit: the task's definition was read back and the domain's tasks reloaded (or ``error``)."""

    task_id: str
    fingerprinter: Any = None
    error: str | None = None


@dataclass
class SimulationOpened(Message):
    """A run file read to open one of its simulations (a calibration cell, a compared side), or ``error``."""

    run: RunFile | None
    sim_id: str
    step: int | None = None
    error: str | None = None


@dataclass
class GoldChecked(Message):
    """One task's gold sanity check (``check`` is a ``GoldCheck``), or the end of the check (``final``)."""

    check: Any = None
    done: int = 0
    total: int = 0
    final: bool = False
    error: str | None = None


@dataclass
class ComparisonReady(Message):
    """Two trajectories replayed and compared (``comparison`` is a ``calibrate.TrialComparison``), or ``error``."""

    comparison: Any = None
    sides: tuple[Any, Any] | None = None
    error: str | None = None


@dataclass
class TaskLocated(Message):
    """Where a task is defined (a ``calibrate.TaskSource``), found off the UI thread, or ``error``."""

    task_id: str
    source: Any = None
    error: str | None = None


@dataclass
class RunsComparisonReady(Message):
    """Run files compared (``comparison``: a ``trust.RunComparison`` of two, a ``trust.ManyComparison`` of several
    with a baseline) and the lines of what could not be scored, or ``error``."""

    comparison: Any = None
    errors: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class DoctorReady(Message):
    """The doctor's examination of the loaded runs (``doctor.recordings.Examination``) and its task findings."""

    exam: Any = None
    task_findings: list[Any] = field(default_factory=list)


@dataclass
class AuditReady(Message):
    """A file's re-grade audit (``audit`` is a ``trust.audit.FileAudit``) and the lines of what could not run."""

    audit: Any = None
    errors: list[str] = field(default_factory=list)
