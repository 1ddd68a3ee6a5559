"""Thread-safe access to the analyzer for the TUI's workers.

The background replay worker (verdict columns of the runs table) and the
trajectory screen's worker both replay simulations; one lock keeps domain
loading and the gold-state cache consistent between them. Recent full
analyses are kept so that reopening a run is instant.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.domains import DomainError, DomainRegistry
from tau_tui.model.io import RunFile, RunFileError
from tau_tui.tui.catalog import ReplaySummary


class ReplayService:
    """Replays simulations of loaded runs; safe to call from several threads."""

    def __init__(self, tau2_data: Path | str | None = None, domain_paths: list[Path] | None = None,
                 keep: int = 8):
        self.tau2_data = tau2_data
        self.domain_paths = list(domain_paths or [])
        self._analyzer: Analyzer | None = None
        self._lock = threading.RLock()
        self._recent: OrderedDict[tuple[int, int], SimAnalysis] = OrderedDict()
        self._keep = keep
        self._domain_errors: dict[str, str] = {}

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer(DomainRegistry(self.tau2_data, self.domain_paths))
        return self._analyzer

    def analyze(self, run: RunFile, index: int) -> SimAnalysis:
        """Full analysis of one simulation; raises DomainError / RunFileError when replay cannot start."""
        key = (id(run), index)
        with self._lock:
            cached = self._recent.get(key)
            if cached is not None and cached.run is run:
                self._recent.move_to_end(key)
                return cached
            domain = run.domain or ""
            if domain in self._domain_errors:
                raise DomainError(self._domain_errors[domain])
            try:
                analysis = self.analyzer.analyze(run, index)
            except DomainError as exc:
                self._domain_errors[domain] = str(exc)
                raise
            self._recent[key] = analysis
            while len(self._recent) > self._keep:
                self._recent.popitem(last=False)
            return analysis

    def summarize(self, run: RunFile, index: int) -> tuple[ReplaySummary | None, str | None]:
        """(summary, None) or (None, one-line reason) for the runs table."""
        try:
            with self._lock:
                domain = run.domain or ""
                if domain in self._domain_errors:
                    return None, self._domain_errors[domain]
                analysis = self.analyzer.analyze(run, index)
        except DomainError as exc:
            with self._lock:
                self._domain_errors[run.domain or ""] = str(exc)
            return None, str(exc)
        except RunFileError as exc:
            return None, str(exc)
        except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
            return None, f"replay failed: {type(exc).__name__}: {exc}"
        return ReplaySummary.of(analysis), None

    def forget_domain_errors(self) -> None:
        """Retry domains that failed before (after a reload: a domain may have landed)."""
        with self._lock:
            self._domain_errors.clear()
            self._recent.clear()
