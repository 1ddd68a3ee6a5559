"""Environment core: tools, toolkits, DB state with tau2's hash, and tool execution."""

from tau_tui.env.discovery import discoverable_tools, revealed_tools
from tau_tui.env.environment import Environment, EnvState, make_store
from tau_tui.env.episode import REFUSAL_KEY, EpisodeTools, LoggedCall, ToolBackend, refusal_mark
from tau_tui.env.faults import (
    FAULT_KEY,
    AttemptCounter,
    FaultKind,
    FaultPlan,
    FaultPlanError,
    InjectedFault,
    fault_mark,
    is_withheld_fault,
    task_seeds,
)
from tau_tui.env.jsonify import ModelDict, as_model, parse_content, to_json_str
from tau_tui.env.schema import DBSchema
from tau_tui.env.store import Collection, Store, canonical_json, clone, state_hash, to_plain
from tau_tui.env.tools import Toolkit, ToolSpec, ToolType, UnknownFunction, helper, tool

__all__ = [
    "FAULT_KEY",
    "REFUSAL_KEY",
    "AttemptCounter",
    "Collection",
    "DBSchema",
    "EnvState",
    "Environment",
    "EpisodeTools",
    "FaultKind",
    "FaultPlan",
    "FaultPlanError",
    "InjectedFault",
    "LoggedCall",
    "ModelDict",
    "Store",
    "ToolBackend",
    "ToolSpec",
    "ToolType",
    "Toolkit",
    "UnknownFunction",
    "as_model",
    "canonical_json",
    "clone",
    "discoverable_tools",
    "fault_mark",
    "helper",
    "is_withheld_fault",
    "make_store",
    "parse_content",
    "refusal_mark",
    "revealed_tools",
    "state_hash",
    "task_seeds",
    "to_json_str",
    "to_plain",
    "tool",
]
