"""The "add a note" form: source, error type from the fixed list, free text.

Modal. A note annotates a whole simulation or one of its steps; from the
trajectory screen the step under the cursor is proposed, and a checkbox puts
the note on the whole simulation instead. The text field has the focus first;
saving without an error type asks for one there. Dismisses with a ``NoteRequest``;
the app saves it in the sidecar beside the recording (never in it).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from tau_tui.model.notes import ERROR_TYPES, SOURCES
from tau_tui.textsafe import visible_renderable


@dataclass(frozen=True)
class NoteRequest:
    source: str
    error_type: str
    text: str
    step: int | None


class NoteFormScreen(ModalScreen[NoteRequest | None]):
    """Fill in a note on ``target`` (a simulation, or its ``step``)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="note.cancel"),
        Binding("ctrl+s", "save", "Save the note", id="note.save"),
    ]

    def __init__(self, target: str, step: int | None = None, source: str = "agent", step_summary: str = "") -> None:
        super().__init__()
        self.target = target
        self.step = step
        self.source = source if source in SOURCES else SOURCES[0]
        self.step_summary = step_summary

    def compose(self) -> ComposeResult:
        with Vertical(id="note-form", classes="form"):
            what = Text.assemble(("on ", "dim"), (self.target, "bold"))
            if self.step is not None:
                what.append(f" · step {self.step}", style="bold")
                if self.step_summary:
                    what.append(f"  ({self.step_summary})", style="dim")
            yield Static(visible_renderable(what), id="note-what")
            if self.step is not None:
                yield Checkbox("on the whole simulation instead of this step", False, id="n-whole", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("source", classes="form-label")
                yield Select(
                    [(s, s) for s in SOURCES], value=self.source, allow_blank=False, id="n-source", compact=True
                )
            with Horizontal(classes="form-row"):
                yield Label("error type", classes="form-label")
                yield Select(
                    [(f"{name} — {meaning}", name) for name, meaning in ERROR_TYPES.items()],
                    prompt="pick one",
                    id="n-type",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("text", classes="form-label")
                yield Input(placeholder="what went wrong, in a few words (enter saves)", id="n-text", compact=True)
            yield Label("", id="n-error", classes="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel", id="n-cancel")
                yield Button("Save (ctrl+s)", id="n-save", variant="primary")

    def on_mount(self) -> None:
        form = self.query_one("#note-form")
        form.border_title = "add a note · esc cancels · ctrl+s saves"
        form.border_subtitle = "saved beside the recording in <name>.notes.json; the recording is never written"
        self.query_one("#n-text").focus()

    def request(self) -> NoteRequest | None:
        error_type = self.query_one("#n-type", Select).value
        if not isinstance(error_type, str):
            self.query_one("#n-error", Label).update("error type: pick one")
            self.query_one("#n-type").focus()
            return None
        source = self.query_one("#n-source", Select).value
        whole = self.step is not None and self.query_one("#n-whole", Checkbox).value
        return NoteRequest(
            str(source), error_type, self.query_one("#n-text", Input).value.strip(), None if whole else self.step
        )

    @on(Input.Submitted)
    @on(Button.Pressed, "#n-save")
    def action_save(self) -> None:
        request = self.request()
        if request is not None:
            self.dismiss(request)

    @on(Button.Pressed, "#n-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
