"""Calibration workbench, headless: k-trial grids, task fingerprints, gold sanity checks, comparisons.

- ``grid``: ``CalibrationGrid`` (rows per task version and setup, cells per trial, bands, pass^k / pass@k,
  sort and filter, change events);
- ``workbench``: ``Calibrator`` fills a grid from recorded runs and from live rollouts, and re-runs rows;
- ``fingerprint``: task fingerprints (task, tools, DB, policy) recorded by our runner or derived;
- ``gold``: ``GoldChecker``: the gold agent reaches 1.0, and the evaluator's gold state equals the live path;
- ``compare``: two trajectories of one task aligned by turn, the first differing call, the DB diff there;
- ``tasks``: where a task is defined (for ``$EDITOR``), reading it back, reloading a domain's tasks;
- ``render``: plain-text views for the CLI.

Notes on simulations are data and live in ``tau_tui.model.notes``.
"""

from tau_tui.calibrate.compare import TrialComparison, compare_simulations, compare_timelines, render_comparison
from tau_tui.calibrate.fingerprint import Fingerprint, Fingerprinter, changed_parts
from tau_tui.calibrate.gold import GoldCheck, GoldChecker, StateDifference
from tau_tui.calibrate.grid import (
    BAND_ORDER,
    UNSCORED_TERMINATIONS,
    Band,
    CalibrationGrid,
    Cell,
    CellChanged,
    Row,
    RowAdded,
    RowChanged,
    Setup,
    SimRef,
    TrialOutcome,
    classify,
    filter_rows,
    sort_rows,
)
from tau_tui.calibrate.tasks import TaskSource, TaskSourceError, find_task_source, read_task, reload_domain_tasks
from tau_tui.calibrate.workbench import (
    CalibrationFinished,
    CalibrationStarted,
    Calibrator,
    LoadReport,
)

__all__ = [
    "BAND_ORDER",
    "UNSCORED_TERMINATIONS",
    "Band",
    "CalibrationFinished",
    "CalibrationGrid",
    "CalibrationStarted",
    "Calibrator",
    "Cell",
    "CellChanged",
    "Fingerprint",
    "Fingerprinter",
    "GoldCheck",
    "GoldChecker",
    "LoadReport",
    "Row",
    "RowAdded",
    "RowChanged",
    "Setup",
    "SimRef",
    "StateDifference",
    "TaskSource",
    "TaskSourceError",
    "TrialComparison",
    "TrialOutcome",
    "changed_parts",
    "classify",
    "compare_simulations",
    "compare_timelines",
    "filter_rows",
    "find_task_source",
    "read_task",
    "reload_domain_tasks",
    "render_comparison",
    "sort_rows",
]
