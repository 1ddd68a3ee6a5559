"""Messages that workers post to the app and its screens (workers never touch widgets)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from tau_tui.analysis import SimAnalysis
from tau_tui.model.io import RunFile
from tau_tui.tui.catalog import ReplaySummary
from tau_tui.tui.trajectory_doc import TrajectoryDoc


class LoadStarted(Message):
    """The load worker found ``total`` run files to open."""

    def __init__(self, generation: int, total: int) -> None:
        super().__init__()
        self.generation = generation
        self.total = total


class FileLoaded(Message):
    """One run file was opened and indexed."""

    def __init__(self, generation: int, run: RunFile, notes: list[str]) -> None:
        super().__init__()
        self.generation = generation
        self.run = run
        self.notes = notes


class FileFailed(Message):
    """One run file could not be read; ``error`` is one line."""

    def __init__(self, generation: int, path: Path, error: str) -> None:
        super().__init__()
        self.generation = generation
        self.path = path
        self.error = error


class LoadFinished(Message):
    """Every file of this load generation was tried."""

    def __init__(self, generation: int, seen: list[Path]) -> None:
        super().__init__()
        self.generation = generation
        self.seen = seen


@dataclass(frozen=True)
class ReplayOutcome:
    row_key: str
    summary: ReplaySummary | None
    error: str | None


class SimsReplayed(Message):
    """A batch of background replay results for the runs table."""

    def __init__(self, generation: int, outcomes: list[ReplayOutcome]) -> None:
        super().__init__()
        self.generation = generation
        self.outcomes = outcomes


class ReplayIdle(Message):
    """The replay worker emptied its queue and stopped."""


class SimulationReady(Message):
    """The trajectory screen's simulation is parsed and (when possible) replayed."""

    def __init__(self, token: int, doc: TrajectoryDoc | None, analysis: SimAnalysis | None,
                 replay_error: str | None, load_error: str | None) -> None:
        super().__init__()
        self.token = token
        self.doc = doc
        self.analysis = analysis
        self.replay_error = replay_error
        self.load_error = load_error
