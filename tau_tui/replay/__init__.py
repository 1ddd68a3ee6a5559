"""Step-wise replay of recorded trajectories."""

from tau_tui.replay.diff import Change, diff_states, path_text
from tau_tui.replay.replayer import GoldResult, InitCache, gold_state, initialize, replay, run_assertions
from tau_tui.replay.timeline import (
    FATAL_IN_TAU2,
    CallRecord,
    Discovery,
    Finding,
    FindingKind,
    MismatchClass,
    Step,
    Timeline,
    Verdict,
)

__all__ = [
    "FATAL_IN_TAU2",
    "CallRecord",
    "Change",
    "Discovery",
    "Finding",
    "FindingKind",
    "GoldResult",
    "InitCache",
    "MismatchClass",
    "Step",
    "Timeline",
    "Verdict",
    "diff_states",
    "gold_state",
    "initialize",
    "path_text",
    "replay",
    "run_assertions",
]
