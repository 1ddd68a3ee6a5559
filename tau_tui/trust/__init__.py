"""Can I trust this score? Run-vs-run comparison with paired statistics (``compare``).

Headless: built on ``analysis`` (replay and recomputed rewards) and ``evaluate.stats``; the CLI
(``tau-tui compare``) and the TUI's comparison screen both call it.
"""

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
    load_runs,
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
    "TaskRow",
    "compare_many",
    "compare_runs",
    "comparison_lines",
    "load_runs",
    "load_side",
    "many_lines",
    "statistics_lines",
]
