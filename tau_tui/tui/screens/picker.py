"""A modal picker with type-to-filter (sort column, filter values)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from tau_tui.textsafe import visible_renderable


class PickerScreen(ModalScreen[str | None]):
    """Pick one of ``options`` ((value, label) pairs); dismisses with the value or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="picker.cancel"),
        Binding("down", "focus_list", "To the list", show=False, id="picker.list"),
    ]

    def __init__(self, title: str, options: list[tuple[str, str]], current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.options = options
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Input(placeholder="type to filter", id="picker-filter")
            yield OptionList(id="picker-options")

    def on_mount(self) -> None:
        self.query_one("#picker").border_title = visible_renderable(self.title_text, single_line=True)
        self._fill("")

    def _fill(self, text: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        needle = text.lower()
        shown = [(v, label) for v, label in self.options if needle in label.lower()]
        options.add_options([Option(visible_renderable(label, single_line=True), id=value) for value, label in shown])
        if shown:
            values = [v for v, _ in shown]
            options.highlighted = values.index(self.current) if self.current in values else 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_focus_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
