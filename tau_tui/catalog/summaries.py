"""The derived columns of one row, computed headlessly: replay and evaluation summaries, or why each is missing.

``summarize`` is the one computation of them: the TUI's background replay calls it in this process
(``session.replay_service``) and in worker processes (``pool.Worker``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tau_tui.catalog.rows import EvalSummary, ReplaySummary

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer, SimAnalysis
    from tau_tui.evaluate import Judge, SimReport


def assess_analysis(analyzer: Analyzer, analysis: SimAnalysis, judge: Judge | None = None) -> SimReport:
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


def summarize(analyzer: Analyzer, analysis: SimAnalysis, judge: Judge | None = None) -> Summaries:
    """The replay and evaluation columns of an analysed simulation; a failed evaluation keeps the replay's."""
    replay = ReplaySummary.of(analysis)
    try:
        report = assess_analysis(analyzer, analysis, judge)
        return Summaries(replay, EvalSummary.of(report, analyzer.validity(analysis, report)))
    except Exception as exc:  # noqa: BLE001 - the replay columns are still worth showing
        return Summaries(replay, eval_error=f"evaluation failed: {type(exc).__name__}: {exc}")
