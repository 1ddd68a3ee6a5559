"""Key bindings as the help screen and the command palette list them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from textual.binding import Binding, BindingType
from textual.keys import format_key


@dataclass(frozen=True)
class KeyHelp:
    keys: str
    description: str
    action: str
    id: str


def _display(key: str) -> str:
    *modifiers, name = key.split("+")
    return "+".join([*modifiers, format_key(name)])


def key_help(bindings: Iterable[BindingType]) -> list[KeyHelp]:
    """One entry per binding that has a description, keys joined ("j / ↓")."""
    out = []
    for binding in bindings:
        if not isinstance(binding, Binding):
            key, action, description = (list(binding) + ["", "", ""])[:3]
            binding = Binding(key, action, description)
        if not binding.description:
            continue
        keys = binding.key_display or " / ".join(_display(k.strip()) for k in binding.key.split(","))
        out.append(KeyHelp(keys, binding.description, binding.action, binding.id or binding.action))
    return out
