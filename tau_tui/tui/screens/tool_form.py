"""A tool call filled in by a person: pick a tool, then one field per parameter of its JSON schema.

Modal. String parameters are typed as they are; every other type (numbers,
booleans, arrays, objects) as JSON. ``argument_problems`` (the rollout
core's check) and the field parsing run before the form closes, so a
malformed call never reaches the session. Dismisses with (name, arguments).
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tau_tui.rollout.human import argument_problems


def parameters(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """(name, property schema, required) for each parameter of a function schema, required first."""
    params = schema["function"].get("parameters") or {}
    required = set(params.get("required", []))
    props = params.get("properties", {})
    return sorted(((name, spec, name in required) for name, spec in props.items()), key=lambda p: not p[2])


def type_label(spec: dict[str, Any]) -> str:
    """A short type name: string, integer, array, one of the enum values…"""
    if "enum" in spec:
        return " | ".join(json.dumps(v) for v in spec["enum"])
    kind = spec.get("type")
    if kind is None and "anyOf" in spec:
        kinds = [s.get("type", "object") for s in spec["anyOf"] if isinstance(s, dict)]
        return " | ".join(k for k in kinds if k != "null") or "any"
    return str(kind or "any")


def is_text(spec: dict[str, Any]) -> bool:
    """A parameter typed as plain text (everything else is JSON)."""
    if spec.get("type") == "string":
        return True
    options = [s for s in spec.get("anyOf", []) if isinstance(s, dict) and s.get("type") != "null"]
    return bool(options) and all(s.get("type") == "string" for s in options)


def parse_form(schema: dict[str, Any], values: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Typed arguments from the form's text fields, and what is wrong (empty optional fields are left out)."""
    arguments: dict[str, Any] = {}
    problems: list[str] = []
    for name, spec, _required in parameters(schema):
        raw = values.get(name, "")
        if not raw.strip():
            continue
        if is_text(spec):
            arguments[name] = raw
            continue
        try:
            arguments[name] = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{name}: not valid JSON ({exc.msg}); a {type_label(spec)} is expected")
    problems += argument_problems(schema, arguments)
    return arguments, problems


class ToolFormScreen(ModalScreen[tuple[str, dict[str, Any]] | None]):
    """Pick one of ``tools`` (function schemas) and fill in its arguments."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="tool.cancel"),
        Binding("ctrl+s", "submit", "Call the tool", id="tool.submit"),
    ]

    def __init__(self, tools: list[dict[str, Any]], side: str) -> None:
        super().__init__()
        self.tools = {t["function"]["name"]: t for t in tools}
        self.side = side
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="tool-form"):
            with Vertical(id="tool-pick"):
                yield Input(placeholder="filter tools", id="tool-filter", compact=True)
                yield OptionList(id="tool-list")
            with Vertical(id="tool-fields-box"):
                yield Static(id="tool-doc")
                yield VerticalScroll(id="tool-fields")
                yield Label("", id="tool-error", classes="form-error")
                with Horizontal(classes="form-buttons"):
                    yield Button("Cancel", id="tool-cancel")
                    yield Button("Call (ctrl+s)", id="tool-call", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#tool-form").border_title = f"call a tool as the {self.side} · esc cancels · ctrl+s calls"
        self._fill("")
        if not self.tools:
            self.query_one("#tool-error", Label).update(f"the {self.side} has no tools in this task")
        self.query_one("#tool-filter").focus()

    def _fill(self, needle: str) -> None:
        options = self.query_one("#tool-list", OptionList)
        options.clear_options()
        names = [n for n in self.tools if needle.lower() in n.lower()]
        options.add_options([Option(n, id=n) for n in names])
        if names:
            options.highlighted = 0

    @on(Input.Changed, "#tool-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_key(self, event: events.Key) -> None:
        """↑/↓ in the filter move through the tool list (the filter keeps the focus)."""
        if event.key not in ("up", "down") or self.focused is not self.query_one("#tool-filter"):
            return
        options = self.query_one("#tool-list", OptionList)
        if options.option_count:
            current = options.highlighted if options.highlighted is not None else -1
            step = 1 if event.key == "down" else -1
            options.highlighted = max(0, min(options.option_count - 1, current + step))
        event.stop()
        event.prevent_default()

    @on(Input.Submitted, "#tool-filter")
    def _filter_done(self) -> None:
        first = self.query("#tool-fields Input")
        if first:
            first.first().focus()

    @on(OptionList.OptionHighlighted, "#tool-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None and event.option.id != self.current:
            self.show_tool(event.option.id)

    @on(OptionList.OptionSelected, "#tool-list")
    def _selected(self) -> None:
        self._filter_done()

    def show_tool(self, name: str) -> None:
        """Rebuild the fields for tool ``name``."""
        self.current = name
        schema = self.tools[name]
        doc = Text(name, style="bold")
        doc.append("\n" + " ".join(str(schema["function"].get("description", "")).split()), style="dim")
        self.query_one("#tool-doc", Static).update(doc)
        box = self.query_one("#tool-fields", VerticalScroll)
        box.remove_children()
        rows: list[Widget] = []
        for param, spec, required in parameters(schema):
            label = Text(param, style="bold" if required else "")
            label.append("*" if required else "", style="bold red")
            hint = type_label(spec) + ("" if is_text(spec) else " (JSON)")
            description = " ".join(str(spec.get("description", "")).split())
            rows.append(
                Vertical(
                    Label(label, classes="tool-param"),
                    Input(placeholder=f"{hint} · {description}"[:200], compact=True, name=param),
                    classes="tool-field",
                )
            )
        if not rows:
            rows.append(Label("no parameters: ctrl+s calls it", classes="form-hint"))
        box.mount_all(rows)
        self.query_one("#tool-error", Label).update("")

    def values(self) -> dict[str, str]:
        return {
            field.name: field.value
            for field in self.query("#tool-fields Input").results(Input)
            if field.name is not None
        }

    @on(Input.Submitted, "#tool-fields Input")
    @on(Button.Pressed, "#tool-call")
    def action_submit(self) -> None:
        if self.current is None:
            self.query_one("#tool-error", Label).update("pick a tool first")
            return
        arguments, problems = parse_form(self.tools[self.current], self.values())
        if problems:
            self.query_one("#tool-error", Label).update("; ".join(problems))
            return
        self.dismiss((self.current, arguments))

    @on(Button.Pressed, "#tool-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
