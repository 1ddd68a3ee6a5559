"""How deep recorded values nest, and cutting them at a depth every part of the app can walk.

The reader accepts JSON nested 1024 levels deep (orjson's limit), but most
walks over a value — hashing, diffs, copies, comparisons, ``repr``, JSON
output — recurse and would raise ``RecursionError`` long before that. So a
recorded value (tool-call arguments, non-text message content, parsed tool
results) nested deeper than ``MAX_NESTING`` levels is cut there, with a
marker in place of what was below, and replay reports it. Both functions
here are iterative: they work at any depth.
"""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100
CUT_MARKER = f"<nested deeper than {MAX_NESTING} levels: cut here>"


def nesting_depth(value: Any, stop: int | None = None) -> int:
    """Levels of lists and objects in ``value`` (a scalar is 0); stops counting once past ``stop``."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if stop is not None and deepest > stop:
                return deepest
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    if not isinstance(value, (dict, list)):
        return False
    children = value.values() if isinstance(value, dict) else value
    if not any(isinstance(child, (dict, list)) for child in children):
        return limit < 1  # one level: the common case of flat tool arguments, without a walk
    return nesting_depth(value, limit) > limit


def text_may_nest_deeper(text: str, limit: int = MAX_NESTING) -> bool:
    """Whether JSON ``text`` could nest deeper than ``limit``: it cannot with at most ``limit`` brackets."""
    return text.count("{") + text.count("[") > limit


class CutDict(dict[str, Any]):
    """An object cut by ``clip_nesting`` (so a reader can tell, with one ``isinstance``)."""


class CutList(list[Any]):
    """A list cut by ``clip_nesting``."""


def was_cut(value: Any) -> bool:
    return isinstance(value, (CutDict, CutList))


def clip_nesting(value: Any, limit: int = MAX_NESTING) -> Any:
    """A copy of ``value`` whose lists and objects below ``limit`` levels are replaced by ``CUT_MARKER``.

    The copy's top level is a ``CutDict`` or ``CutList`` (``was_cut``)."""
    if not isinstance(value, (dict, list)):
        return value
    root: Any = CutDict() if isinstance(value, dict) else CutList()
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        source, target, depth = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    copied: Any = CUT_MARKER
                else:
                    copied = {} if isinstance(child, dict) else []
                    stack.append((child, copied, depth + 1))
            else:
                copied = child
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def bounded(value: Any, limit: int = MAX_NESTING) -> Any:
    """``value`` itself when it nests at most ``limit`` levels, else its cut copy."""
    return clip_nesting(value, limit) if too_deep(value, limit) else value
