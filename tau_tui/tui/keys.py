"""Key bindings as the help screen and the command palette list them, and the keymap that remaps them by id."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from textual.binding import Binding, BindingType
from textual.keys import format_key

if TYPE_CHECKING:
    from textual.app import App, SystemCommand
    from textual.screen import Screen
    from textual.widget import Widget

    KeyOwner = App[Any] | Widget  # what holds bindings and runs their actions


@dataclass(frozen=True)
class KeyHelp:
    """One binding as help and the palette show it: its keys, description, action and id."""

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


# Scroll actions a widget skips (textual's SkipAction) when it cannot scroll that way: the key goes on down the chain.
SCROLL_ACTIONS = {
    "scroll_up": "allow_vertical_scroll",
    "scroll_down": "allow_vertical_scroll",
    "page_up": "allow_vertical_scroll",
    "page_down": "allow_vertical_scroll",
    "scroll_left": "allow_horizontal_scroll",
    "scroll_right": "allow_horizontal_scroll",
    "page_left": "allow_horizontal_scroll",
    "page_right": "allow_horizontal_scroll",
    "scroll_home": "_allow_scroll",
    "scroll_end": "_allow_scroll",
}


def _skipped(node: Any, binding: Binding) -> bool:
    """True when ``node`` would skip ``binding`` (a built-in scroll action on a widget with nothing to scroll)."""
    from textual.widget import Widget

    allowed = SCROLL_ACTIONS.get(binding.action)
    if allowed is None or not isinstance(node, Widget):
        return False
    method = f"action_{binding.action}"
    return getattr(type(node), method, None) is getattr(Widget, method) and not getattr(node, allowed)


def applying_bindings(screen: Any) -> dict[str, tuple[Any, Binding]]:
    """key → (node, binding) that a press of the key runs on ``screen`` now.

    textual's ``Screen.active_bindings`` walks the focus chain (focused
    widget, its containers, the screen, the app; priority bindings win) but
    keeps a built-in scroll binding of a widget that has nothing to scroll,
    which textual then skips at key time; here the key falls through as it does.
    """
    app = screen.app
    out: dict[str, tuple[Any, Binding]] = {}
    for node, bindings in screen._modal_binding_chain:
        for key, binding in bindings:
            if app._check_action_state(binding.action, node) is False or _skipped(node, binding):
                continue
            existing = out.get(key)
            if existing is None or (binding.priority and not existing[1].priority):
                out[key] = (node, binding)
    return out


def help_sections(screen: Any) -> list[tuple[str, list[KeyHelp]]]:
    """The keys of ``screen`` as they work right now: each key once, with the binding that applies to it.

    Keys of one binding are joined ("j / ↓"); a key another binding shadows
    is not listed under the shadowed one. Two sections: this screen (its own
    keys and the focused widget's), and everywhere (the app's, and textual's
    own screen keys such as tab).
    """
    app = screen.app
    groups: dict[tuple[int, str, str], tuple[Any, Binding, list[str]]] = {}
    for key, (node, binding) in applying_bindings(screen).items():
        if not binding.description:
            continue
        group = (id(node), binding.action, binding.description)
        groups.setdefault(group, (node, binding, []))[2].append(key)
    here: list[tuple[int, KeyHelp]] = []
    everywhere: list[KeyHelp] = []
    for node, binding, keys in groups.values():
        declared = [k.strip() for k in binding.key.split(",")]
        keys.sort(key=lambda k: declared.index(k) if k in declared else len(declared))
        shown = (
            binding.key_display
            if binding.key_display and len(keys) == len(declared)
            else " / ".join(_display(k) for k in keys)
        )
        entry = KeyHelp(shown, binding.description, binding.action, binding.id or binding.action)
        if node is app or (node is screen and _textual_screen_binding(binding)):
            everywhere.append(entry)
        else:
            here.append((0 if node is screen else 1, entry))
    title = f"{type(screen).__name__.replace('Screen', '')} screen"
    return [(title, [entry for _, entry in sorted(here, key=lambda item: item[0])]), ("everywhere", everywhere)]


def _textual_screen_binding(binding: Binding) -> bool:
    """Whether ``binding`` is one every textual screen has (tab, shift+tab, copy), not the screen's own."""
    from textual.screen import Screen

    return any(
        isinstance(b, Binding) and (b.action, b.description) == (binding.action, binding.description)
        for b in Screen.BINDINGS
    )


# --- keymap (binding id → keys, from the settings file) and the help / palette both apps share ----------------


def known_binding_ids() -> list[str]:
    """Every binding id of tau-tui's screens, widgets and apps (each module of ``tau_tui.tui`` is imported)."""
    import importlib
    import pkgutil

    from textual.dom import DOMNode

    import tau_tui.tui

    for module in pkgutil.walk_packages(tau_tui.tui.__path__, "tau_tui.tui."):
        importlib.import_module(module.name)
    ids: set[str] = set()
    pending = [DOMNode]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("tau_tui."):
            ids.update(b.id for b in cls.__dict__.get("BINDINGS", ()) if isinstance(b, Binding) and b.id)
    return sorted(ids)


def check_keymap(keymap: dict[str, str]) -> dict[str, str]:
    """``keymap`` when every id in it names a binding; else ``ConfigError``, one line naming the id and the known ids."""
    from tau_tui.config import ConfigError, config_path

    if not keymap:
        return keymap
    known = known_binding_ids()
    unknown = [binding_id for binding_id in keymap if binding_id not in known]
    if unknown:
        raise ConfigError(f"{config_path()}: keymap: unknown binding id {unknown[0]!r}; known ids: {', '.join(known)}")
    return keymap


def binding_owners(screen: Screen[Any]) -> list[tuple[str, KeyOwner, list[BindingType]]]:
    """(title, owner, bindings): the screen, the focused widget when it has keys of its own, the app."""
    owners: list[tuple[str, KeyOwner, list[BindingType]]] = [
        (f"{type(screen).__name__.replace('Screen', '')} screen", screen, list(screen.BINDINGS))
    ]
    focused = screen.focused
    if focused is not None and type(focused).__module__.startswith("tau_tui.") and focused.BINDINGS:
        owners.append((f"in the focused {type(focused).__name__}", focused, list(focused.BINDINGS)))
    owners.append(("everywhere", screen.app, list(screen.app.BINDINGS)))
    return owners


def _remapped(bindings: Iterable[BindingType], keymap: Mapping[str, str]) -> list[BindingType]:
    """``bindings`` with the keys ``keymap`` gives their ids (as textual applies it at key time)."""
    return [
        b.with_key(keymap[b.id], key_display=None)
        if isinstance(b, Binding) and b.id is not None and b.id in keymap
        else b
        for b in bindings
    ]


def palette_commands(screen: Screen[Any]) -> Iterable[SystemCommand]:
    """Every key action of ``screen``, its focused widget and the app as palette commands, with the keys
    the keymap gives them; each binding id once."""
    from textual.app import SystemCommand

    keymap = screen.app._keymap
    seen: set[str] = set()
    for _, owner, bindings in binding_owners(screen):
        for entry in key_help(_remapped(bindings, keymap)):
            if entry.id in seen or entry.action == "command_palette":
                continue
            seen.add(entry.id)
            yield SystemCommand(
                entry.description, f"key {entry.keys} · {entry.id}", partial(owner.run_action, entry.action)
            )
