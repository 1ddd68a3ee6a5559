"""OpenAI function schemas for a toolkit's tools, built from signatures and Google-style docstrings.

What a model is told about a tool follows tau2's construction, so prompts
built here read like tau2's: the parameters are a pydantic model named
``parameters`` made from the signature (type hints, defaults) with each
parameter's description taken from the docstring's ``Args`` section, and the
description is the docstring's first line, followed by the rest of its
free text after a blank line. Discoverable tools are never listed unless
asked for.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable

import orjson
from pydantic import Field, create_model

from tau_tui.env.tools import Toolkit

# Section titles that end the free text of a Google-style docstring (docstring_parser's list).
_SECTIONS = (
    "Arguments",
    "Args",
    "Parameters",
    "Params",
    "Raises",
    "Exceptions",
    "Except",
    "Attributes",
    "Example",
    "Examples",
    "Returns",
    "Yields",
)
_TITLE = re.compile(r"^(" + "|".join(_SECTIONS) + r"):[ \t\r\f\v]*$", re.MULTILINE)
_PARAM_SECTIONS = {"Arguments", "Args", "Parameters", "Params"}
_RETURN_SECTIONS = {"Returns", "Yields"}
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*:(.*)$")


@dataclass(frozen=True)
class Docstring:
    """The parts of a Google-style docstring a tool schema uses."""

    summary: str = ""
    details: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None

    @property
    def description(self) -> str:
        """The summary, then the details after a blank line (tau2's tool description)."""
        if self.details:
            return f"{self.summary}\n\n{self.details}"
        return self.summary


def _entry_description(first: str, rest: list[str]) -> str:
    first = first[1:] if first.startswith(" ") else first
    if rest:
        first = first + "\n" + inspect.cleandoc("\n".join(rest))
    return first.strip("\n").strip()


def _section_entries(body: str) -> dict[str, str]:
    """``name (type): text`` entries of an Args-like section, continuation lines included."""
    lines = inspect.cleandoc(body).splitlines() if body.strip() else []
    entries: dict[str, str] = {}
    name: str | None = None
    first = ""
    rest: list[str] = []
    for line in lines:
        match = _ENTRY.match(line) if line and not line[0].isspace() else None
        if match:
            if name is not None:
                entries[name] = _entry_description(first, rest)
            name, first, rest = match.group(1).lstrip("*"), match.group(3), []
        elif name is not None:
            rest.append(line)
    if name is not None:
        entries[name] = _entry_description(first, rest)
    return entries


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into summary, details, parameter and return descriptions."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return Docstring()
    titles = list(_TITLE.finditer(text))
    head = text[: titles[0].start()] if titles else text
    first, _, rest = head.partition("\n")
    params: dict[str, str] = {}
    returns: str | None = None
    for i, title in enumerate(titles):
        end = titles[i + 1].start() if i + 1 < len(titles) else len(text)
        body = text[title.end() : end]
        name = title.group(1)
        if name in _PARAM_SECTIONS:
            params.update(_section_entries(body))
        elif name in _RETURN_SECTIONS:
            returns = inspect.cleandoc(body).strip() or None
    return Docstring(first.strip(), rest.strip(), params, returns)


def _type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - an unresolvable hint degrades to Any, as an unannotated one
        return {}


def function_schema(func: Callable[..., Any], name: str | None = None) -> dict[str, Any]:
    """The OpenAI function schema of one callable (a bound method: ``self`` is not a parameter)."""
    signature = inspect.signature(func)
    hints = _type_hints(func)
    doc = parse_docstring(func.__doc__)
    fields: dict[str, Any] = {}
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, Any)
        default: Any = ... if param.default is param.empty else param.default
        if pname in doc.params:
            default = Field(default, description=doc.params[pname])
        fields[pname] = (annotation, default)
    parameters = create_model("parameters", **fields)
    tool_name = name or func.__name__
    return {
        "type": "function",
        "function": {
            "name": tool_name,
            "description": doc.description or tool_name,
            "parameters": parameters.model_json_schema(),
        },
    }


@lru_cache(maxsize=None)
def _cached_schema(kit_class: type[Toolkit], name: str) -> dict[str, Any]:
    method = getattr(kit_class, name)
    return function_schema(method.__get__(object.__new__(kit_class), kit_class), name)


@lru_cache(maxsize=None)
def _cached_bytes(kit_class: type[Toolkit], name: str) -> bytes:
    return orjson.dumps(_cached_schema(kit_class, name))  # type: ignore[arg-type]  # python/mypy#11470


def tool_schema(toolkit: Toolkit, name: str) -> dict[str, Any]:
    """The schema of one declared tool (a fresh copy; built once per toolkit class)."""
    if not toolkit.has_tool(name):
        raise ValueError(f"Tool '{name}' not found.")
    schema: dict[str, Any] = orjson.loads(_cached_bytes(type(toolkit), name))  # type: ignore[arg-type]  # as above
    return schema


def toolkit_schemas(
    toolkit: Toolkit | None, include: Iterable[str] | None = None, include_discoverable: bool = False
) -> list[dict[str, Any]]:
    """Schemas of a toolkit's declared tools, in declaration order.

    ``include`` keeps only the named tools (tau2's ``task.user_tools``: None
    means all, an empty list means none). Discoverable tools are left out
    unless ``include_discoverable``.
    """
    if toolkit is None:
        return []
    wanted = None if include is None else set(include)
    return [
        tool_schema(toolkit, name)
        for name in toolkit.tool_names(include_discoverable)
        if wanted is None or name in wanted
    ]
