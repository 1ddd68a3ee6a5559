"""The filter form of the runs screen; every change applies at once."""

from __future__ import annotations

from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select

from tau_tui.catalog import RunFilter

CHECKS = (
    ("failed_only", "failed only (recorded reward < 1; unscored and infra runs excluded)"),
    ("has_mismatch", "has replay mismatches"),
    ("has_divergence", "has replay divergences (mismatches beyond library text and upstream fixes)"),
    ("has_hallucination", "has hallucinated tool calls"),
    ("has_tool_error", "has tool errors"),
    ("has_finding", "has structural findings"),
    ("has_fault", "has injected faults"),
    ("has_refusal", "has calls refused by a cassette"),
    ("disagrees", "recomputed reward differs from the recorded one"),
    ("has_note", "has notes"),
    ("has_review_error", "a recorded review found an error"),
)
CHOICES = (
    "domain",
    "termination",
    "model",
    "file",
    "submission",
    "retrieval",
    "flag",
    "note_source",
    "note_type",
    "review_source",
    "review_tag",
    "review_severity",
    "auth",
)


class FilterScreen(ModalScreen[None]):
    """Edits a ``RunFilter``; calls ``apply`` with the new filter on every change."""

    BINDINGS = [
        Binding("escape", "close", "Close filters", id="filters.close"),
        Binding("ctrl+r", "clear", "Clear all filters", id="filters.clear"),
    ]

    def __init__(
        self, current: RunFilter, values: dict[str, list[tuple[str, int]]], apply: Callable[[RunFilter], None]
    ) -> None:
        super().__init__()
        self.current = current
        self.values = values
        self.apply = apply

    def compose(self) -> ComposeResult:
        with Vertical(id="filters"):
            for name, text in CHECKS:
                yield Checkbox(text, getattr(self.current, name), id=f"f-{name}", compact=True)
            for index, name in enumerate(CHOICES):
                with Horizontal(classes="filter-row filter-group" if index == 0 else "filter-row"):
                    yield Label(name.replace("_", " "), classes="filter-label")
                    choices = self.values.get(name, [])
                    options = [(f"{value}  ({count})", value) for value, count in choices]
                    value = getattr(self.current, name)
                    known = {v for v, _ in choices}
                    yield Select(
                        options,
                        value=value if value in known else Select.NULL,
                        prompt=f"any {name.replace('_', ' ')}",
                        id=f"f-{name}",
                        compact=True,
                    )
            with Horizontal(classes="filter-row filter-group"):
                yield Label("task id", classes="filter-label")
                yield Input(self.current.task or "", placeholder="contains…", id="f-task", compact=True)
            with Horizontal(classes="filter-row"):
                yield Label("text", classes="filter-label")
                yield Input(self.current.text, placeholder="words in any message…", id="f-text", compact=True)
            with Horizontal(id="filter-buttons"):
                yield Button("Clear all", id="f-clear", variant="warning")
                yield Button("Done", id="f-done", variant="primary")

    def on_mount(self) -> None:
        form = self.query_one("#filters")
        form.border_title = "filters · esc to close · ctrl+r clears"
        self.watch(form, "scroll_y", lambda _: self._mark_more(), init=False)
        self.call_after_refresh(self._mark_more)

    def on_resize(self) -> None:
        self.call_after_refresh(self._mark_more)

    def _mark_more(self) -> None:
        """Say on the form's lower border whether fields are hidden below or above (a short terminal)."""
        form = self.query_one("#filters")
        below, above = form.scroll_y < form.max_scroll_y, form.scroll_y > 0
        marks = (["↑ more above"] if above else []) + (["↓ more below: tab or scroll"] if below else [])
        form.border_subtitle = " · ".join(marks)

    def _read(self) -> RunFilter:
        changes: dict[str, object] = {}
        for name, _ in CHECKS:
            changes[name] = self.query_one(f"#f-{name}", Checkbox).value
        for name in CHOICES:
            value = self.query_one(f"#f-{name}", Select).value
            changes[name] = value if isinstance(value, str) else None
        changes["task"] = self.query_one("#f-task", Input).value.strip() or None
        changes["text"] = self.query_one("#f-text", Input).value.strip()
        return RunFilter(**changes)  # type: ignore[arg-type]

    @on(Checkbox.Changed)
    @on(Select.Changed)
    @on(Input.Changed)
    def _changed(self) -> None:
        new = self._read()
        if new != self.current:
            self.current = new
            self.apply(new)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#f-done")
    def action_close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#f-clear")
    def action_clear(self) -> None:
        for name, _ in CHECKS:
            self.query_one(f"#f-{name}", Checkbox).value = False
        for name in CHOICES:
            self.query_one(f"#f-{name}", Select).clear()
        self.query_one("#f-task", Input).value = ""
        self.query_one("#f-text", Input).value = ""
