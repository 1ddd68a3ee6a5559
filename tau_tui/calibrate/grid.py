"""The calibration grid: one row per task version and setup, one cell per trial.

A row is keyed by (task id, task fingerprint, setup); the setup is the agent
and user that played (pass^k only means something over trials of one
setup). Results of different fingerprints are never pooled: an edited task
gets a new row, and every row of a task that has several versions in the
grid is marked (``versions`` > 1, ``current`` says whether it is the version
the domain defines now).

A cell is a pass, a scored fail, or unscored (infrastructure errors,
timeouts, unexpected errors of our own, rewards that could not be computed);
pending and running cells are trials still to come. Rates, pass^k and pass@k
count scored attempts only. Bands: saturated (every scored attempt passed),
zero (none did), learning zone (in between), unscored (nothing scored).

The grid is plain data with change events (``RowAdded``, ``CellChanged``,
``RowChanged``) for a UI to subscribe to; it knows nothing of how cells are
produced (see ``workbench``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable

from tau_tui.calibrate.fingerprint import changed_parts
from tau_tui.config import id_order
from tau_tui.evaluate.metrics import pass_at_k, pass_hat_k
from tau_tui.evaluate.reward import is_success
from tau_tui.evaluate.stats import Interval, wilson

# Terminations that say nothing about the agent: left out of every rate.
UNSCORED_TERMINATIONS = frozenset({"infrastructure_error", "timeout", "unexpected_error"})


class Band(str, Enum):
    """Where a row's pass rate puts its task: always, never, sometimes passed, or unscored."""

    SATURATED = "saturated"
    ZERO = "zero"
    LEARNING_ZONE = "learning_zone"
    UNSCORED = "unscored"


# Sort order of bands: the informative rows first.
BAND_ORDER = {Band.LEARNING_ZONE: 0, Band.ZERO: 1, Band.SATURATED: 2, Band.UNSCORED: 3}


class TrialOutcome(str, Enum):
    """One trial cell of the calibration grid: pending, running, pass, fail or unscored."""

    PENDING = "pending"
    RUNNING = "running"
    PASS = "pass"
    FAIL = "fail"
    UNSCORED = "unscored"


FINISHED = (TrialOutcome.PASS, TrialOutcome.FAIL, TrialOutcome.UNSCORED)


def classify(reward: float | None, termination: str | None, note: str | None = None) -> tuple[TrialOutcome, str | None]:
    """A finished attempt's outcome and, when unscored, why."""
    if termination in UNSCORED_TERMINATIONS:
        return TrialOutcome.UNSCORED, termination + (f": {note}" if note else "")
    if reward is None:
        return TrialOutcome.UNSCORED, note or "reward not computable"
    return (TrialOutcome.PASS if is_success(reward) else TrialOutcome.FAIL), None


@dataclass(frozen=True)
class SimRef:
    """Where a cell's trajectory is saved: a run file and the simulation id in it."""

    path: Path
    sim_id: str


@dataclass(frozen=True)
class Setup:
    """Who played: the agent's and the user's model strings (as the run records them)."""

    agent: str | None
    user: str | None

    @property
    def label(self) -> str:
        return f"{self.agent or '?'} / {self.user or '?'}"


@dataclass
class Cell:
    """One trial of a row."""

    outcome: TrialOutcome = TrialOutcome.PENDING
    trial: int | None = None
    seed: int | None = None
    reward: float | None = None
    termination: str | None = None
    reason: str | None = None  # why unscored
    ref: SimRef | None = None

    @property
    def finished(self) -> bool:
        return self.outcome in FINISHED

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "trial": self.trial,
            "seed": self.seed,
            "reward": self.reward,
            "termination": self.termination,
            "reason": self.reason,
            "file": str(self.ref.path) if self.ref else None,
            "sim": self.ref.sim_id if self.ref else None,
        }


RowKey = tuple[str, str, Setup]


@dataclass
class Row:
    """One task version under one setup, and its trials."""

    task_id: str
    fingerprint: str
    setup: Setup
    cells: list[Cell] = field(default_factory=list)
    fingerprint_parts: dict[str, str] | None = None
    fingerprint_source: str = "recorded"
    versions: int = 1  # distinct fingerprints of this task in the grid
    current: bool | None = None  # whether this is the version the domain defines now (None: unknown)
    changed: list[str] = field(default_factory=list)  # parts that differ from the current version

    @property
    def key(self) -> RowKey:
        return (self.task_id, self.fingerprint, self.setup)

    @property
    def n_passed(self) -> int:
        return sum(c.outcome is TrialOutcome.PASS for c in self.cells)

    @property
    def n_failed(self) -> int:
        return sum(c.outcome is TrialOutcome.FAIL for c in self.cells)

    @property
    def n_scored(self) -> int:
        return self.n_passed + self.n_failed

    @property
    def n_unscored(self) -> int:
        return sum(c.outcome is TrialOutcome.UNSCORED for c in self.cells)

    @property
    def n_pending(self) -> int:
        return sum(not c.finished for c in self.cells)

    @property
    def complete(self) -> bool:
        return self.n_pending == 0

    @property
    def pass_rate(self) -> float | None:
        return self.n_passed / self.n_scored if self.n_scored else None

    @property
    def pass_rate_interval(self) -> Interval | None:
        """The Wilson 95% interval of the pass rate over scored attempts (None when nothing is scored)."""
        return wilson(self.n_passed, self.n_scored)

    @property
    def band(self) -> Band:
        scored, passed = self.n_scored, self.n_passed
        if scored == 0:
            return Band.UNSCORED
        if passed == scored:
            return Band.SATURATED
        if passed == 0:
            return Band.ZERO
        return Band.LEARNING_ZONE

    @property
    def mixed_versions(self) -> bool:
        return self.versions > 1

    def pass_hat_k(self) -> dict[int, float]:
        """pass^k over scored attempts, for k from 1 to their number."""
        n, c = self.n_scored, self.n_passed
        return {k: pass_hat_k(n, c, k) for k in range(1, n + 1)}

    def pass_at_k(self) -> dict[int, float]:
        n, c = self.n_scored, self.n_passed
        return {k: pass_at_k(n, c, k) for k in range(1, n + 1)}

    def to_json(self) -> dict[str, Any]:
        """The ``tau-tui calibrate --json`` record of this row."""
        return {
            "task": self.task_id,
            "fingerprint": self.fingerprint,
            "fingerprint_source": self.fingerprint_source,
            "fingerprint_parts": self.fingerprint_parts,
            "versions": self.versions,
            "current": self.current,
            "changed": self.changed,
            "agent": self.setup.agent,
            "user": self.setup.user,
            "n_trials": len(self.cells),
            "n_scored": self.n_scored,
            "n_passed": self.n_passed,
            "n_unscored": self.n_unscored,
            "n_pending": self.n_pending,
            "pass_rate": self.pass_rate,
            "pass_rate_interval": iv.to_json() if (iv := self.pass_rate_interval) is not None else None,
            "band": self.band.value,
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k().items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k().items()},
            "cells": [c.to_json() for c in self.cells],
        }


# --- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowAdded:
    key: RowKey


@dataclass(frozen=True)
class CellChanged:
    key: RowKey
    index: int
    cell: Cell


@dataclass(frozen=True)
class RowChanged:
    """A row's marks changed (versions, current) or its cells were cleared."""

    key: RowKey


GridListener = Callable[[Any], None]


def task_order(task_id: str) -> tuple[int, int, str]:
    """Numeric task ids in numeric order, then the others by name."""
    return id_order(task_id)


SORT_KEYS: dict[str, Callable[[Row], Any]] = {
    "task": lambda r: (task_order(r.task_id), r.setup.label, not r.current),
    "band": lambda r: (BAND_ORDER[r.band], task_order(r.task_id)),
    "pass_rate": lambda r: (
        r.pass_rate is None,
        r.pass_rate if r.pass_rate is not None else 0.0,
        task_order(r.task_id),
    ),
    "unscored": lambda r: (-r.n_unscored, task_order(r.task_id)),
}


def sort_rows(rows: Iterable[Row], by: str = "task", reverse: bool = False) -> list[Row]:
    """Rows sorted by ``task``, ``band`` (learning zone first), ``pass_rate`` or ``unscored``."""
    if by not in SORT_KEYS:
        raise ValueError(f"cannot sort by {by!r} (one of: {', '.join(SORT_KEYS)})")
    return sorted(rows, key=SORT_KEYS[by], reverse=reverse)


def filter_rows(
    rows: Iterable[Row],
    bands: Iterable[Band | str] | None = None,
    *,
    mixed_versions: bool | None = None,
    current: bool | None = None,
    text: str | None = None,
) -> list[Row]:
    """Rows in any of ``bands``; optionally only (not) marked as mixed, (not) current, or matching ``text``."""
    wanted = None if bands is None else {Band(b) for b in bands}
    needle = text.lower() if text else None
    out = []
    for row in rows:
        if wanted is not None and row.band not in wanted:
            continue
        if mixed_versions is not None and row.mixed_versions != mixed_versions:
            continue
        if current is not None and row.current is not current:
            continue
        if needle and needle not in row.task_id.lower() and needle not in row.setup.label.lower():
            continue
        out.append(row)
    return out


class CalibrationGrid:
    """Rows of trials, with change events; every change goes through these methods."""

    def __init__(self) -> None:
        self._rows: dict[RowKey, Row] = {}
        self._current: dict[str, tuple[str, dict[str, str] | None]] = {}
        self._listeners: list[GridListener] = []

    # --- subscription ------------------------------------------------------------------
    def subscribe(self, listener: GridListener) -> Callable[[], None]:
        """Call ``listener`` with every event; returns a function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            listener(event)

    # --- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def row(self, key: RowKey) -> Row:
        return self._rows[key]

    def rows(
        self, sort: str = "task", reverse: bool = False, bands: Iterable[Band | str] | None = None, **filters: Any
    ) -> list[Row]:
        """The rows, filtered (``filter_rows``) and sorted (``sort_rows``)."""
        return sort_rows(filter_rows(self._rows.values(), bands, **filters), sort, reverse)

    def rows_of(self, task_id: str) -> list[Row]:
        return [r for r in self._rows.values() if r.task_id == task_id]

    def band_counts(self) -> dict[str, int]:
        counts = {band.value: 0 for band in Band}
        for row in self._rows.values():
            counts[row.band.value] += 1
        return counts

    def to_json(self, sort: str = "task") -> list[dict[str, Any]]:
        return [row.to_json() for row in self.rows(sort)]

    # --- changing --------------------------------------------------------------------------
    def ensure_row(
        self,
        task_id: str,
        fingerprint: str,
        setup: Setup,
        *,
        parts: dict[str, str] | None = None,
        source: str = "recorded",
    ) -> Row:
        """The row for this task version and setup, created (``RowAdded``) if new."""
        key = (task_id, fingerprint, setup)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = Row(task_id, fingerprint, setup, fingerprint_parts=parts, fingerprint_source=source)
            self.emit(RowAdded(key))
            self._mark(task_id)
        elif parts and not row.fingerprint_parts:
            row.fingerprint_parts = parts
        return row

    def add_cell(self, key: RowKey, cell: Cell) -> int:
        row = self._rows[key]
        row.cells.append(cell)
        index = len(row.cells) - 1
        self.emit(CellChanged(key, index, cell))
        return index

    def update_cell(self, key: RowKey, index: int, **changes: Any) -> Cell:
        cell = self._rows[key].cells[index]
        for name, value in changes.items():
            setattr(cell, name, value)
        self.emit(CellChanged(key, index, cell))
        return cell

    def clear_cells(self, key: RowKey) -> None:
        self._rows[key].cells.clear()
        self.emit(RowChanged(key))

    def set_current(self, task_id: str, fingerprint: str, parts: dict[str, str] | None = None) -> None:
        """Record the fingerprint the domain's current definition of ``task_id`` has (marks its rows)."""
        self._current[task_id] = (fingerprint, parts)
        self._mark(task_id)

    def current_fingerprint(self, task_id: str) -> str | None:
        hit = self._current.get(task_id)
        return hit[0] if hit else None

    def _mark(self, task_id: str) -> None:
        rows = self.rows_of(task_id)
        versions = len({r.fingerprint for r in rows})
        current = self._current.get(task_id)
        for row in rows:
            is_current = None if current is None else row.fingerprint == current[0]
            changed = [] if current is None or is_current else changed_parts(row.fingerprint_parts, current[1])
            if (row.versions, row.current, row.changed) != (versions, is_current, changed):
                row.versions, row.current, row.changed = versions, is_current, changed
                self.emit(RowChanged(row.key))
