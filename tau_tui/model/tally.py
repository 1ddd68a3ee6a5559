"""Items grouped, and keys counted, in a registry's order: the one way findings and hits are tallied per rule.

The doctor groups its findings by rule and counts them per rule, its registered rules first (``doctor.report``,
``doctor.recordings``, ``doctor.task_rules``); the re-grade audit groups simulations by the rule responsible and
counts the rules of its notes (``trust.audit``). A key no registry lists (a rule since removed) comes after the
listed ones, in the order it first comes, so nothing found is ever dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

Item = TypeVar("Item")
Key = TypeVar("Key", bound=Hashable)


def grouped(
    items: Iterable[Item], key: Callable[[Item], Key | None], order: Iterable[Key] = ()
) -> dict[Key, list[Item]]:
    """``items`` by ``key(item)`` (an item whose key is None is left out), each group in item order: first the keys
    of ``order`` that have items, then the others as they first come."""
    groups: dict[Key, list[Item]] = {}
    for item in items:
        name = key(item)
        if name is not None:
            groups.setdefault(name, []).append(item)
    listed = {name: groups[name] for name in order if name in groups}
    return listed | {name: group for name, group in groups.items() if name not in listed}


def counted(keys: Iterable[Key], order: Iterable[Key] = ()) -> dict[Key, int]:
    """How often each key comes: every key of ``order`` first (zeros too), then the others as they first come."""
    out = dict.fromkeys(order, 0)
    for name in keys:
        out[name] = out.get(name, 0) + 1
    return out
