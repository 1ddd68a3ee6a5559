"""Thread-safe access to the workspace's analyzer for the session's threads.

The background worker (derived columns of the runs table) and the trajectory
screen's worker both replay and evaluate simulations; one lock keeps domain
loading and the gold-state cache consistent between them. Recent full
analyses are kept so that reopening a run is instant.

Evaluation reuses the analysis it is given (``Analyzer.assess``) instead of
``Analyzer.evaluate``, which would replay the simulation a second time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.catalog.summaries import Summaries, assess_analysis, summarize
from tau_tui.domains import DomainError
from tau_tui.model.io import RunFile, RunFileError

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer, SimAnalysis
    from tau_tui.domains import DomainRegistry
    from tau_tui.evaluate import Judge, NLCheck, SimReport


def _sim_key(analysis: SimAnalysis) -> tuple[str, str]:
    return str(analysis.run.path), analysis.sim.id


def _domain_key(run: RunFile) -> str:
    """What a domain error is remembered by: the domain's name, or the file when it names none (each such file
    has its own reason)."""
    return run.domain or f"file:{run.path}"


def fixed_verdicts(checks: list[NLCheck]) -> Judge:
    """A judge that answers with verdicts obtained earlier (re-assessing without asking the model again)."""

    def judge(messages: list[Any], assertions: list[str]) -> list[NLCheck]:  # noqa: ARG001 - the Judge protocol
        return list(checks)

    return judge


class ReplayService:
    """Replays and evaluates simulations of loaded runs; safe to call from several threads."""

    def __init__(self, analyzer: Analyzer, keep: int = 8):
        """``analyzer``: the workspace's (one registry, one gold cache); ``keep``: full analyses kept."""
        self.analyzer = analyzer
        self._lock = threading.RLock()
        self._recent: OrderedDict[tuple[int, int], SimAnalysis] = OrderedDict()
        self._keep = keep
        self._domain_errors: dict[str, str] = {}
        # NL verdicts a judge gave in this session, by (file, simulation id): later assessments reuse them
        self._nl_verdicts: dict[tuple[str, str], list[NLCheck]] = {}

    @property
    def registry(self) -> DomainRegistry:
        """The domain registry rollouts, sessions and forks use (the same domains the inspector replays)."""
        return self.analyzer.registry

    def prepare(self, run: RunFile) -> list[str]:
        """Work out what ``run`` leaves out (``Analyzer.prepare``: its domain, old uploads' tasks); its notices."""
        with self._lock:
            return self.analyzer.prepare(run)

    def analyze(self, run: RunFile, index: int) -> SimAnalysis:
        """Full analysis of one simulation; raises DomainError / RunFileError when replay cannot start."""
        key = (id(run), index)
        with self._lock:
            cached = self._recent.get(key)
            if cached is not None and cached.run is run:
                self._recent.move_to_end(key)
                return cached
            domain = _domain_key(run)
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

    def assess(self, analysis: SimAnalysis, judge: Judge | None = None) -> SimReport:
        """The recomputed reward, explanation, tool-call score and flags of an analysed simulation.

        Without a judge, verdicts a judge gave earlier in this session for the simulation are used.
        """
        with self._lock:
            if judge is None:
                known = self._nl_verdicts.get(_sim_key(analysis))
                judge = fixed_verdicts(known) if known is not None else None
            return assess_analysis(self.analyzer, analysis, judge)

    def judge_nl(self, analysis: SimAnalysis, judge: Judge) -> tuple[SimReport, list[NLCheck]]:
        """Ask ``judge`` about the task's NL assertions, then re-assess with its verdicts.

        The (slow) model call happens outside the lock, so the background replay keeps going meanwhile.
        Raises ``JudgeError`` when the judge fails or gives no verdict.
        """
        criteria = analysis.task.evaluation_criteria if analysis.task is not None else None
        assertions = list(criteria.nl_assertions or []) if criteria is not None else []
        checks = judge([step.message for step in analysis.timeline.steps], assertions) if assertions else []
        with self._lock:
            self._nl_verdicts[_sim_key(analysis)] = checks
        return self.assess(analysis, judge=fixed_verdicts(checks)), checks

    def knows_verdicts(self, path: Path, sim_id: str) -> bool:
        """Whether a judge gave NL verdicts on this simulation in this session (its assessment uses them)."""
        with self._lock:
            return (str(path), sim_id) in self._nl_verdicts

    def summarize(self, run: RunFile, index: int) -> Summaries:
        """What the runs table derives for one simulation; failures become one-line reasons, never raise."""
        try:
            with self._lock:
                domain = _domain_key(run)
                if domain in self._domain_errors:
                    return Summaries(error=self._domain_errors[domain])
                analysis = self.analyzer.analyze(run, index)
        except DomainError as exc:
            with self._lock:
                self._domain_errors[_domain_key(run)] = str(exc)
            return Summaries(error=str(exc))
        except RunFileError as exc:
            return Summaries(error=str(exc))
        except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
            return Summaries(error=f"replay failed: {type(exc).__name__}: {exc}")
        with self._lock:
            known = self._nl_verdicts.get(_sim_key(analysis))
            return summarize(self.analyzer, analysis, fixed_verdicts(known) if known is not None else None)

    def forget_domain_errors(self) -> None:
        """Retry domains that failed before (after a reload: a domain may have landed)."""
        with self._lock:
            self._domain_errors.clear()
            self._recent.clear()
