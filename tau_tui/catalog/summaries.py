"""The derived columns of one row, computed headlessly: replay and evaluation summaries, or why each is missing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.catalog.rows import EvalSummary, ReplaySummary


def assess_analysis(analyzer: Any, analysis: Any, judge: Any = None) -> Any:
    """``Analyzer.assess``, except that a broken scorer sidecar leaves the tool-call score out
    (the recomputed reward never depends on it) instead of failing the evaluation."""
    from tau_tui.evaluate import ScorerConfig, ScorerConfigError

    try:
        config = analyzer.scorer_config(analysis.run)
    except ScorerConfigError:
        config = None
    return analyzer.assess(analysis, judge=judge, scorer=config or ScorerConfig(None, None, {}))


@dataclass(frozen=True)
class Summaries:
    """The derived columns of one row: replay and evaluation, or why each is missing."""

    replay: ReplaySummary | None = None
    evaluation: EvalSummary | None = None
    error: str | None = None  # no replay (and so no evaluation)
    eval_error: str | None = None  # replayed, but the evaluation failed
