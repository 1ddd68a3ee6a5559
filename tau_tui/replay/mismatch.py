"""The detail of a return-value mismatch: recorded vs replayed output, field by field (with deepdiff).

Only for the one output a reader looks at (the TUI mismatch view, ``tau-tui
replay``), never for the step diff of the replay itself, which walks only the
changed keys of the copy-on-write DB (``replay/diff.py``). deepdiff is imported
on first use: start-up does not pay for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tau_tui.env.jsonify import parse_content
from tau_tui.replay.diff import path_text
from tau_tui.textsafe import clip_json

CHANGED, TYPE_CHANGED, ADDED, REMOVED = "changed", "type_changed", "added", "removed"
# deepdiff report type → our change kind
_KINDS = {
    "values_changed": CHANGED,
    "type_changes": TYPE_CHANGED,
    "dictionary_item_added": ADDED,
    "iterable_item_added": ADDED,
    "set_item_added": ADDED,
    "attribute_added": ADDED,
    "dictionary_item_removed": REMOVED,
    "iterable_item_removed": REMOVED,
    "set_item_removed": REMOVED,
    "attribute_removed": REMOVED,
}
_ABSENT = object()


@dataclass(frozen=True)
class FieldChange:
    """One path where the replayed output differs from the recorded one (a side is ``None`` when absent)."""

    path: tuple[Any, ...]
    change: str  # changed / type_changed / added / removed
    recorded: Any = None
    replayed: Any = None

    @property
    def dotted(self) -> str:
        return path_text(self.path)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.dotted, "change": self.change}
        if self.change != ADDED:
            out["recorded"] = self.recorded
        if self.change != REMOVED:
            out["replayed"] = self.replayed
        if self.change == TYPE_CHANGED:
            out["types"] = [type(self.recorded).__name__, type(self.replayed).__name__]
        return out

    def text(self, limit: int = 80) -> str:
        return change_text(self.to_json(), limit)


def change_text(change: dict[str, Any], limit: int = 80) -> str:
    """One change (its ``to_json``) as a line: ``lines[0].allocations[1]: removed (recorded {...})``."""
    path, kind = change["path"], change["change"]
    if kind == ADDED:
        return f"{path}: added {short_json(change['replayed'], limit)}"
    if kind == REMOVED:
        return f"{path}: removed (recorded {short_json(change['recorded'], limit)})"
    before, after = pair_text(change["recorded"], change["replayed"], limit)
    head = f"{path}: {before} → {after}"
    if kind == TYPE_CHANGED:
        head += f" (type {' → '.join(change['types'])})"
    return head


def pair_text(a: Any, b: Any, limit: int) -> tuple[str, str]:
    """Both values as short JSON; long texts that start alike are shown from a little before they differ."""
    ta, tb = json.dumps(a, sort_keys=True, default=str), json.dumps(b, sort_keys=True, default=str)
    if not (isinstance(a, str) and isinstance(b, str)) or max(len(ta), len(tb)) <= limit:
        return short_json(a, limit), short_json(b, limit)
    same = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), min(len(ta), len(tb)))
    start = max(0, same - 20)

    def cut(text: str) -> str:
        part = text[start : start + limit]
        return ("…" if start else "") + part + ("…" if start + limit < len(text) else "")

    return cut(ta), cut(tb)


def short_json(value: Any, limit: int = 80) -> str:
    """A value as one line of JSON, cut at ``limit`` characters."""
    return clip_json(value, limit)


def _position(before: Any, after: Any, path: tuple[Any, ...]) -> tuple[int, ...]:
    """Where a path comes in the document (recorded order first, then replayed), for a reading order."""
    out = []
    for key in path:
        if isinstance(before, dict) or isinstance(after, dict):
            keys = list(before) if isinstance(before, dict) else []
            keys += [k for k in (after if isinstance(after, dict) else {}) if k not in keys]
            out.append(keys.index(key) if key in keys else len(keys))
        else:
            out.append(key if isinstance(key, int) else 0)
        before = before[key] if _has(before, key) else _ABSENT
        after = after[key] if _has(after, key) else _ABSENT
    return tuple(out)


def _has(node: Any, key: Any) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)


def mismatch_detail(recorded: str | None, replayed: str | None) -> list[FieldChange]:
    """Field by field, where the replayed output differs from the recorded one, in reading order.

    Outputs are compared as tau2 compares them (parsed JSON, else the text); an
    output that is missing on either side has no detail.
    """
    if recorded is None or replayed is None:
        return []
    before, after = parse_content(recorded), parse_content(replayed)
    from deepdiff import DeepDiff  # ~0.2 s to import: only when a mismatch is looked at

    tree = DeepDiff(before, after, view="tree", verbose_level=2)
    out = []
    for report, levels in tree.items():
        kind = _KINDS.get(report, CHANGED)
        for level in levels:
            path = tuple(level.path(output_format="list"))
            out.append(
                FieldChange(path, kind, None if kind == ADDED else level.t1, None if kind == REMOVED else level.t2)
            )
    return sorted(out, key=lambda c: _position(before, after, c.path))


def detail_lines(changes: list[dict[str, Any]], limit: int = 12) -> list[str]:
    """The changes (their ``to_json``) as at most ``limit`` lines, then how many more."""
    lines = [change_text(change) for change in changes[:limit]]
    if len(changes) > limit:
        lines.append(f"… {len(changes) - limit} more field(s)")
    return lines
