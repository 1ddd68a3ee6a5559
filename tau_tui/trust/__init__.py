"""Can I trust this score? Run-vs-run comparison with paired statistics (``compare``).

Headless: built on ``analysis`` (replay and recomputed rewards) and ``evaluate.stats``; the CLI
(``tau-tui compare``), the report and the TUI's comparison screens all assemble their comparison through
``Sides`` (``assembly``).
"""

from tau_tui.trust.assembly import Sides, labels_apart, load_runs
from tau_tui.trust.compare import (
    CATEGORIES,
    PairRow,
    RunComparison,
    SideOutcome,
    compare_runs,
    comparison_lines,
    load_side,
    statistics_lines,
)
from tau_tui.trust.many import (
    ManyComparison,
    RunSide,
    RunSummary,
    TaskRow,
    compare_many,
    many_lines,
)

__all__ = [
    "CATEGORIES",
    "ManyComparison",
    "PairRow",
    "RunComparison",
    "RunSide",
    "RunSummary",
    "SideOutcome",
    "Sides",
    "TaskRow",
    "compare_many",
    "compare_runs",
    "comparison_lines",
    "labels_apart",
    "load_runs",
    "load_side",
    "many_lines",
    "statistics_lines",
]
