"""Turning tool return values into tool-message text exactly as tau2 does.

A top-level string is returned as is. Anything else is processed and dumped
with ``json.dumps(..., default=str)``: model objects are dumped as they are
(numbers stay numbers), while numbers and booleans inside plain lists, tuples
and dicts become strings, and dates become ISO text. ``ModelDict`` marks a
plain dict that stands for a tau2 pydantic model.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from tau_tui.model.nesting import text_may_nest_deeper, too_deep


class ModelDict(dict[str, Any]):
    """A dict that tau2 would have returned as a pydantic model object."""


class UnsupportedResult(ValueError):
    """A tool returned a value tau2 cannot turn into text (it raises too)."""


def as_model(value: dict[str, Any]) -> ModelDict:
    """An entity marked as a model for JSON-ification (the environment copies results)."""
    return ModelDict(value)


def _process(value: Any) -> Any:
    if isinstance(value, ModelDict):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, list):
        return [_process(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_process(v) for v in value)
    if isinstance(value, dict):
        return {k: _process(v) for k, v in value.items()}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise UnsupportedResult(f"Unsupported type: {type(value)}")


def to_json_str(value: Any) -> str:
    """tau2's ``Environment.to_json_str``."""
    if isinstance(value, str):
        return value
    return json.dumps(_process(value), default=str)


def parse_content(text: Any) -> Any:
    """Tool-message content as tau2 compares it: parsed JSON, or the raw text.

    JSON nested deeper than ``MAX_NESTING`` levels stays text, so no later walk
    over the parsed value can recurse too deep.
    """
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    return text if text_may_nest_deeper(text) and too_deep(value) else value
