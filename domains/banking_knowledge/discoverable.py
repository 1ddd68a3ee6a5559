"""What the agent is told about a discoverable tool: parsed from the tool's docstring.

A discoverable tool documents itself as a short description, then an
``Args:`` section of ``name (type[, optional]): text`` lines, then
``Returns:``. Unlocking a tool shows the description and the parameters in
a fixed layout; giving one to the user shows the description.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

_ARGS = re.compile(r"\n\s*Args:\s*\n")
_RETURNS = re.compile(r"\n\s*Returns:\s*\n")
_PARAM = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)
_OPTIONAL = re.compile(r",?\s*optional", re.IGNORECASE)


def tool_info(func: Callable[..., Any]) -> dict[str, Any]:
    """Name, description, parameters (type, description, required) and success message of a tool."""
    doc = inspect.getdoc(func) or ""
    head, *rest = _ARGS.split(doc, maxsplit=1)
    params: dict[str, dict[str, Any]] = {}
    success = "Action completed successfully."
    if rest:
        args_text, *returns = _RETURNS.split(rest[0], maxsplit=1)
        if returns:
            success = returns[0].strip().split("\n")[0].strip()
        for match in _PARAM.finditer(args_text):
            kind = match.group(2) or "string"
            params[match.group(1)] = {
                "type": _OPTIONAL.sub("", kind).strip() or "string",
                "description": match.group(3).strip(),
                "required": "optional" not in kind.lower(),
            }
    return {"name": func.__name__, "description": head.strip(), "parameters": params, "success_message": success}


def unlock_text(info: dict[str, Any]) -> str:
    """The tool card shown when the agent unlocks a tool."""
    lines = [
        f"  - {name}: {p.get('type', 'string')}{' (required)' if p.get('required', True) else ' (optional)'}"
        f" - {p.get('description', '')}"
        for name, p in info.get("parameters", {}).items()
    ]
    params = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {info['name']}\nDescription: {info['description']}\nParameters:\n{params}"
