"""Environment core: tools, toolkits, DB state with tau2's hash, and tool execution."""

from tau_tui.env.environment import Environment, EnvState, make_store
from tau_tui.env.jsonify import ModelDict, as_model, parse_content, to_json_str
from tau_tui.env.schema import DBSchema
from tau_tui.env.store import Collection, Store, canonical_json, clone, state_hash, to_plain
from tau_tui.env.tools import Toolkit, ToolSpec, ToolType, UnknownFunction, helper, tool

__all__ = [
    "Collection", "DBSchema", "EnvState", "Environment", "ModelDict", "Store", "ToolSpec", "ToolType", "Toolkit",
    "UnknownFunction", "as_model", "canonical_json", "clone", "helper", "make_store", "parse_content",
    "state_hash", "to_json_str", "to_plain", "tool",
]
