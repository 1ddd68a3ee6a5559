"""Path-level differences between two state trees.

States share every unchanged subtree (copy on write), so the walk skips any
pair of identical objects and costs what changed, not the size of the DB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.env.store import Collection

_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One changed leaf or subtree: ``kind`` is 'added', 'removed' or 'changed'."""

    path: tuple[Any, ...]
    kind: str
    before: Any = None
    after: Any = None

    @property
    def dotted(self) -> str:
        return path_text(self.path)


def path_text(path: tuple[Any, ...]) -> str:
    """``('orders', '#W1', 'items', 0)`` → ``orders["#W1"].items[0]``, readable and unambiguous."""
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        elif isinstance(key, str) and key.isidentifier():
            out += f".{key}" if out else key
        else:
            out += f"[{key!r}]"
    return out or "(root)"


def _mapping(node: Any) -> bool:
    return isinstance(node, (dict, Collection))


def diff_states(before: Any, after: Any, path: tuple[Any, ...] = ()) -> list[Change]:
    """Every path where ``after`` differs from ``before``, shallowest first per branch."""
    out: list[Change] = []
    _walk(before, after, path, out)
    return out


def _walk(a: Any, b: Any, path: tuple[Any, ...], out: list[Change]) -> None:
    if a is b:
        return
    if isinstance(a, Collection) and isinstance(b, Collection) and a.base is b.base:
        keys = sorted(a.changed_keys() | b.changed_keys(), key=str)
        for key in keys:
            _entry(a.get(key, _MISSING), b.get(key, _MISSING), path + (key,), out)
        return
    if _mapping(a) and _mapping(b):
        seen = set()
        for key in a:
            seen.add(key)
            _entry(a[key], b.get(key, _MISSING), path + (key,), out)
        for key in b:
            if key not in seen:
                _entry(_MISSING, b[key], path + (key,), out)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _entry(a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING, path + (i,), out)
        return
    if a != b or type(a) is not type(b):
        out.append(Change(path, "changed", a, b))


def _entry(a: Any, b: Any, path: tuple[Any, ...], out: list[Change]) -> None:
    if a is _MISSING:
        out.append(Change(path, "added", None, b))
    elif b is _MISSING:
        out.append(Change(path, "removed", a, None))
    else:
        _walk(a, b, path, out)
