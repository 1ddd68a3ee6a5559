"""A voice run's consolidated ``messages`` list: the recorded second view of a run graded from its ticks.

Read-only: tau2 grades a full-duplex run from its ticks (the trajectory screen), so nothing here is
replayed; the header says how many tool results this list puts before the message that made their call.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tau_tui import formats
from tau_tui.model.duplex import results_before_calls
from tau_tui.model.messages import Message
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.trajectory_view import TrajectoryView, cursor_bindings
from tau_tui.views.trajectory_doc import TrajectoryDoc


class ConsolidatedScreen(Screen[None]):
    """The consolidated list as the trajectory view draws it, silent chunks folded; Esc or c goes back."""

    BINDINGS = [
        Binding("escape,c", "back", "Back to the trajectory from ticks", id="consolidated.back"),
        *cursor_bindings("consolidated"),
        Binding("space,enter", "toggle_expand", "Expand/collapse", id="consolidated.expand"),
        Binding("z", "toggle_silent", "Show/fold the silent chunks", id="consolidated.silent"),
    ]

    def __init__(self, messages: list[Message], sim_id: str) -> None:
        super().__init__()
        self.messages = messages
        self.sim_id = sim_id

    def compose(self) -> ComposeResult:
        yield InfoLine(self._header(), id="consolidated-header")
        yield TrajectoryView(id="consolidated-view")
        yield Footer()

    def _header(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" consolidated messages ", style="bold reverse")
        text.append(f" {formats.count(len(self.messages), 'message')} as recorded · not graded: ", style="dim")
        text.append("tau2 grades this voice run from its ticks", style="bold")
        early = results_before_calls(self.messages)
        if early:
            where = "before its call" if early == 1 else "before their calls"
            text.append(f" · {formats.count(early, 'tool result')} {where} here", style="yellow")
        return text

    def on_mount(self) -> None:
        view = self.query_one(TrajectoryView)
        view.set_doc(TrajectoryDoc(self.messages, voice=True))
        view.focus()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_step(self, delta: int) -> None:
        view = self.query_one(TrajectoryView)
        view.move_to(view.cursor + delta)

    def action_first(self) -> None:
        self.query_one(TrajectoryView).move_to(0)

    def action_last(self) -> None:
        self.query_one(TrajectoryView).move_to(len(self.messages) - 1)

    def action_toggle_expand(self) -> None:
        self.query_one(TrajectoryView).toggle_expanded()

    def action_toggle_silent(self) -> None:
        self.query_one(TrajectoryView).toggle_silent()
