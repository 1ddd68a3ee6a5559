"""Reading state trees for display: values at paths, children, labels, marks.

State trees mix dicts, lists, scalars and ``Collection`` mappings (big entity
collections sharing one base). Nothing here copies a collection: children
are read one at a time, so showing the 7 MB airline DB costs what is on
screen.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Iterable, Iterator

import orjson
from rich.text import Text

from tau_tui import textsafe
from tau_tui.views.render import one_line

MISSING = object()

# Marks on tree labels: what happened at (or under) a path.
MARK_STYLES = {
    "changed": ("✎ ", "bold black on yellow"),
    "added": ("+ ", "bold black on green"),
    "removed": ("− ", "bold white on red"),
    "within": ("• ", "yellow"),
    "gold": ("≠ ", "bold white on magenta"),
    "gold_within": ("• ", "magenta"),
}


def is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def value_at(root: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` under ``root``, or ``MISSING``."""
    node = root
    for key in path:
        try:
            if is_mapping(node):
                node = node[key]
            elif isinstance(node, (list, tuple)) and isinstance(key, int):
                node = node[key]
            else:
                return MISSING
        except (KeyError, IndexError, TypeError):
            return MISSING
    return node


def child_keys(value: Any) -> Iterator[Any]:
    if is_mapping(value):
        yield from value
    elif isinstance(value, (list, tuple)):
        yield from range(len(value))


def size(value: Any) -> int:
    return len(value) if is_container(value) else 0


def key_text(key: Any) -> str:
    return f"[{key}]" if isinstance(key, int) else textsafe.one_line(str(key))


def summary(value: Any, limit: int = 60) -> Text:
    """Short text of a value for a tree label."""
    if isinstance(value, Enum):
        value = value.value
    if is_mapping(value):
        return Text(f"{{{len(value)}}}", style="dim")
    if isinstance(value, (list, tuple)):
        return Text(f"[{len(value)}]", style="dim")
    text = orjson.dumps(value).decode() if isinstance(value, str) else one_line(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    style = {bool: "magenta", type(None): "dim italic"}.get(type(value), "green" if isinstance(value, str) else "cyan")
    return Text(text, style=style)


def label(key: Any, value: Any, mark: str | None = None) -> Text:
    """``key: value`` (leaves) or ``key {n}`` (containers), with a change mark."""
    text = Text()
    if mark is not None:
        prefix, style = MARK_STYLES[mark]
        text.append(prefix, style=style.split(" on ")[0] if mark.endswith("within") else style)
        text.append(key_text(key), style=style if not mark.endswith("within") else "bold " + style)
    else:
        text.append(key_text(key), style="bold" if is_container(value) else "")
    text.append(": " if not is_container(value) else " ", style="dim")
    text.append_text(summary(value))
    return textsafe.visible_text(text, single_line=True)


def marks_for(paths: Iterable[tuple[tuple[Any, ...], str]], within: str = "within") -> dict[tuple[Any, ...], str]:
    """Marks for changed paths and a ``within`` mark on every ancestor of one."""
    marks: dict[tuple[Any, ...], str] = {}
    for path, kind in paths:
        for depth in range(1, len(path)):
            marks.setdefault(path[:depth], within)
        marks[path] = kind
    return marks
