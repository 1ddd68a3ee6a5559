"""Messages that workers post to the app and its screens (workers never touch widgets)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from typing import Any

from tau_tui.analysis import SimAnalysis
from tau_tui.evaluate import SimReport
from tau_tui.model.io import RunFile
from tau_tui.tui.replay_service import Summaries
from tau_tui.tui.trajectory_doc import TrajectoryDoc


class LoadStarted(Message):
    """The load worker found ``total`` run files to open."""

    def __init__(self, generation: int, total: int) -> None:
        super().__init__()
        self.generation = generation
        self.total = total


class FileLoaded(Message):
    """One run file was opened and indexed; ``notebook`` holds its sidecar notes (None when unreadable)."""

    def __init__(self, generation: int, run: RunFile, notes: list[str], notebook: Any = None) -> None:
        super().__init__()
        self.generation = generation
        self.run = run
        self.notes = notes
        self.notebook = notebook


class FileFailed(Message):
    """One run file could not be read; ``error`` is one line."""

    def __init__(self, generation: int, path: Path, error: str) -> None:
        super().__init__()
        self.generation = generation
        self.path = path
        self.error = error


class FolderNotice(Message):
    """A note about a scanned folder as a whole (such as the tau2 data folders skipped in it)."""

    def __init__(self, generation: int, path: Path, text: str) -> None:
        super().__init__()
        self.generation = generation
        self.path = path
        self.text = text


class LoadFinished(Message):
    """Every file of this load generation was tried."""

    def __init__(self, generation: int, seen: list[Path]) -> None:
        super().__init__()
        self.generation = generation
        self.seen = seen


@dataclass(frozen=True)
class ReplayOutcome:
    row_key: str
    summaries: Summaries


class SimsReplayed(Message):
    """A batch of background replay and evaluation results for the runs table."""

    def __init__(self, generation: int, outcomes: list[ReplayOutcome]) -> None:
        super().__init__()
        self.generation = generation
        self.outcomes = outcomes


class ReplayIdle(Message):
    """The replay worker emptied its queue and stopped."""


class NLJudged(Message):
    """The judge answered (or failed) for the NL assertions of the trajectory screen's simulation."""

    def __init__(self, token: int, report: SimReport | None, error: str | None) -> None:
        super().__init__()
        self.token = token
        self.report = report
        self.error = error


class SimulationReady(Message):
    """The trajectory screen's simulation is parsed and (when possible) replayed."""

    def __init__(self, token: int, doc: TrajectoryDoc | None, analysis: SimAnalysis | None,
                 replay_error: str | None, load_error: str | None, report: SimReport | None = None,
                 eval_error: str | None = None) -> None:
        super().__init__()
        self.token = token
        self.doc = doc
        self.analysis = analysis
        self.replay_error = replay_error
        self.load_error = load_error
        self.report = report
        self.eval_error = eval_error


# --- rollouts, sessions, forks ---------------------------------------------------------------


class RolloutEvent(Message):
    """An event of the running rollout (``tau_tui.rollout.runner``: RunStarted, SimulationFinished, ...)."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class RolloutFailed(Message):
    """The rollout could not start or stopped with an error; ``error`` is one line."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class LiveFileAdded(Message):
    """A results file written by this app (a play session, a fork) was read back."""

    def __init__(self, run: RunFile) -> None:
        super().__init__()
        self.run = run


class SessionEvent(Message):
    """An event of a play session: ``MessageAdded`` / ``EpisodeEnded`` from the orchestrator."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class SessionTurn(Message):
    """It is the person's turn in a play session (``request`` is a ``TurnRequest``)."""

    def __init__(self, request: Any) -> None:
        super().__init__()
        self.request = request


class SessionFinished(Message):
    """The play session's episode ended (``error`` set when it failed instead)."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error


class ForkFinished(Message):
    """A fork's continuation ran (``episode``), was saved (``path``) and read back (``run``), or failed."""

    def __init__(self, token: int, episode: Any = None, path: Path | None = None, run: RunFile | None = None,
                 error: str | None = None, step: int = 0) -> None:
        super().__init__()
        self.token = token
        self.step = step
        self.episode = episode
        self.path = path
        self.run = run
        self.error = error


class MetricsReady(Message):
    """Progress of the metrics screen's evaluation; when ``final``, ``summaries`` maps index → EvalSummary."""

    def __init__(self, summaries: dict[int, Any], done: int, total: int, final: bool) -> None:
        super().__init__()
        self.summaries = summaries
        self.done = done
        self.total = total
        self.final = final


# --- notes, calibration, comparison -------------------------------------------------------


class NotesSaved(Message):
    """A note was added or removed: ``notebook`` is the recording's ``NoteBook`` as saved (or ``error``)."""

    def __init__(self, notebook: Any = None, error: str | None = None, done: str = "") -> None:
        super().__init__()
        self.notebook = notebook
        self.error = error
        self.done = done


class GridEvent(Message):
    """An event of a calibration: the grid's (RowAdded, CellChanged, RowChanged), the runner's, or
    CalibrationStarted / CalibrationFinished."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class CalibratorReady(Message):
    """The calibrate screen's domain is loaded and its recorded runs are in the grid (or ``error``)."""

    def __init__(self, calibrator: Any = None, loaded: int = 0, skipped: list[str] | None = None,
                 error: str | None = None) -> None:
        super().__init__()
        self.calibrator = calibrator
        self.loaded = loaded
        self.skipped = skipped or []
        self.error = error


class CalibrationFailed(Message):
    """A calibration run could not start or stopped with an error; ``error`` is one line."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class TaskReloaded(Message):
    """After an edit: the task's definition was read back and the domain's tasks reloaded (or ``error``)."""

    def __init__(self, task_id: str, fingerprinter: Any = None, error: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.fingerprinter = fingerprinter
        self.error = error


class SimulationOpened(Message):
    """A run file read to open one of its simulations (a calibration cell, a compared side), or ``error``."""

    def __init__(self, run: RunFile | None, sim_id: str, step: int | None = None, error: str | None = None) -> None:
        super().__init__()
        self.run = run
        self.sim_id = sim_id
        self.step = step
        self.error = error


class GoldChecked(Message):
    """One task's gold sanity check (``check`` is a ``GoldCheck``), or the end of the check (``final``)."""

    def __init__(self, check: Any = None, done: int = 0, total: int = 0, final: bool = False,
                 error: str | None = None) -> None:
        super().__init__()
        self.check = check
        self.done = done
        self.total = total
        self.final = final
        self.error = error


class ComparisonReady(Message):
    """Two trajectories replayed and compared (``comparison`` is a ``calibrate.TrialComparison``), or ``error``."""

    def __init__(self, comparison: Any = None, sides: tuple[Any, Any] | None = None,
                 error: str | None = None) -> None:
        super().__init__()
        self.comparison = comparison
        self.sides = sides
        self.error = error


class TaskLocated(Message):
    """Where a task is defined (a ``calibrate.TaskSource``), found off the UI thread, or ``error``."""

    def __init__(self, task_id: str, source: Any = None, error: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id
        self.source = source
        self.error = error
