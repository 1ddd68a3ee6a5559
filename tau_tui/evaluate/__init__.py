"""Recomputing and explaining rewards: tau2's evaluators, a tool-call scorer, process flags, metrics.

Headless: imports replay, env and model only. litellm is imported only inside
``LiteLLMJudge.__call__``.
"""

from tau_tui.evaluate import (
    compliance,  # noqa: F401  (registers the policy-compliance and user-hint detectors)
    components,  # noqa: F401  (registers the built-in reward components)
    invariants,  # noqa: F401  (registers the domain-invariant detector)
)
from tau_tui.evaluate.checks import ActionCheck, CommunicateCheck, DBCheck, EnvAssertionCheck, NLCheck, action_matches
from tau_tui.evaluate.diagnostics import (
    DETECTORS,
    FLAG_KINDS,
    FLAG_LETTERS,
    Detector,
    Flag,
    diagnose,
    register_detector,
    unregister_detector,
)
from tau_tui.evaluate.explain import Explanation, GoldDivergence, MissedAction, RecordingIssue, StateDiff, explain
from tau_tui.evaluate.file_metrics import FileMetrics, recorded_trials
from tau_tui.evaluate.judge import Judge, JudgeError, LiteLLMJudge, parse_verdicts
from tau_tui.evaluate.metrics import MetricOutcome, RunMetrics, TaskMetrics, compute_metrics, pass_at_k, pass_hat_k
from tau_tui.evaluate.report import SimReport, assess
from tau_tui.evaluate.reward import (
    REWARD_COMPONENTS,
    Evaluation,
    Replayed,
    RewardComponent,
    evaluate,
    is_success,
    register_component,
    unregister_component,
)
from tau_tui.evaluate.scorer import (
    ScorerConfig,
    ScorerConfigError,
    ScorerResult,
    ScorerSpec,
    score_tool_calls,
    scorer_config_for,
)
from tau_tui.evaluate.scoring import GoldCache, ScoredSimulation, score

__all__ = [
    "DETECTORS",
    "FLAG_KINDS",
    "FLAG_LETTERS",
    "REWARD_COMPONENTS",
    "ActionCheck",
    "CommunicateCheck",
    "DBCheck",
    "Detector",
    "EnvAssertionCheck",
    "Evaluation",
    "Explanation",
    "FileMetrics",
    "Flag",
    "GoldCache",
    "GoldDivergence",
    "Judge",
    "JudgeError",
    "LiteLLMJudge",
    "MetricOutcome",
    "MissedAction",
    "NLCheck",
    "RecordingIssue",
    "Replayed",
    "RewardComponent",
    "RunMetrics",
    "ScorerConfig",
    "ScorerConfigError",
    "ScorerResult",
    "ScorerSpec",
    "ScoredSimulation",
    "SimReport",
    "StateDiff",
    "TaskMetrics",
    "action_matches",
    "assess",
    "compute_metrics",
    "diagnose",
    "evaluate",
    "explain",
    "is_success",
    "recorded_trials",
    "parse_verdicts",
    "pass_at_k",
    "pass_hat_k",
    "register_component",
    "register_detector",
    "score",
    "score_tool_calls",
    "scorer_config_for",
    "unregister_component",
    "unregister_detector",
]
