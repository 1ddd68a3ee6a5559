"""A fork beside its original: outcomes, the messages after the fork point side by side, the final DBs.

Both trajectories share messages 0…k (k: where the fork was taken); the view
aligns what came after, marks lines that differ, and lists how the fork's
final DB differs from the original's. ``o`` opens the fork in the inspector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tau_tui.model.io import RunFile
from tau_tui.model.messages import Message, ParticipantMessage, ToolMessage
from tau_tui.replay.diff import Change, diff_states
from tau_tui.tui.context import context
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.views.eval_panels import DIFFERS_STYLE, fmt
from tau_tui.views.panels import render_changes, side_by_side
from tau_tui.views.render import one_line

LINE_LIMIT = 100


def message_line(message: Message) -> str:
    """One line per message: who, and what it said or called (tool results after an arrow)."""
    if isinstance(message, ToolMessage):
        return f"  ↳ {'error: ' if message.error else ''}{one_line(message.text)}"[:LINE_LIMIT]
    who = {"assistant": "agent"}.get(message.role, message.role)
    parts = [one_line(message.text)] if message.text else []
    if isinstance(message, ParticipantMessage):
        parts += [f"⚒ {one_line(call.name)}({one_line(call.arguments)})" for call in message.tool_calls or []]
    return f"{who}: {' · '.join(parts) or '(empty)'}"[:LINE_LIMIT]


@dataclass
class ForkSide:
    """One side of the comparison."""

    label: str
    recorded_reward: float | None
    reward: float | None  # computed by our evaluator
    termination: str | None
    messages: list[Message]
    db_match: bool | None
    final: Any  # EnvState, or None when unknown


def render_comparison(original: ForkSide, fork: ForkSide, step: int) -> RenderableType:
    table = Table(box=None, padding=(0, 2), show_edge=False, header_style="bold")
    table.add_column("")
    table.add_column(Text(one_line(original.label)), style="blue")  # recorded text: never markup
    table.add_column(Text(one_line(fork.label)), style="magenta")
    rows = [
        ("recorded reward", fmt(original.recorded_reward), "—"),
        ("reward (our evaluator)", fmt(original.reward), fmt(fork.reward)),
        ("termination", one_line(original.termination or "?"), one_line(fork.termination or "?")),
        ("messages after the fork", str(len(original.messages) - step - 1), str(len(fork.messages) - step - 1)),
        ("final DB matches gold", _yes(original.db_match), _yes(fork.db_match)),
    ]
    for label, a, b in rows:
        differs = label in ("reward (our evaluator)", "final DB matches gold", "termination") and a != b
        table.add_row(Text(label), Text(a), Text(b), style=DIFFERS_STYLE if differs else None)
    left = [message_line(m) for m in original.messages[step + 1 :]]
    right = [message_line(m) for m in fork.messages[step + 1 :]]
    parts: list[RenderableType] = [
        table,
        Text(""),
        Text(f"messages 0…{step} are shared; after them (− only in the original, + only in the fork):", style="bold"),
        side_by_side(left, right, (original.label, fork.label)),
        Text(""),
        Text("final DB: original → fork", style="bold"),
    ]
    if original.final is None or fork.final is None:
        parts.append(Text("the original's final state is unknown (it could not be replayed)", style="dim italic"))
    else:
        parts.append(
            render_changes(
                (
                    ("agent DB", _diff(original.final.agent, fork.final.agent)),
                    ("user DB", _diff(original.final.user, fork.final.user)),
                ),
                "the fork ends with the same DB as the original",
            )
        )
    return Group(*parts)


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("✓" if value else "✗")


def _diff(before: Any, after: Any) -> list[Change] | None:
    if before is None and after is None:
        return None
    return diff_states(before, after)


class CompareScreen(Screen[None]):
    """The fork (saved as ``fork_run``) against the original simulation."""

    BINDINGS = [
        Binding("escape", "back", "Back to the original", id="compare.back"),
        Binding("o", "open_fork", "Open the fork in the inspector", id="compare.open"),
    ]

    def __init__(self, original: ForkSide, fork: ForkSide, step: int, fork_run: RunFile, title: str) -> None:
        super().__init__()
        self.original = original
        self.fork = fork
        self.step = step
        self.fork_run = fork_run
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield InfoLine(Text(f" {one_line(self.title_text)}", no_wrap=True, overflow="ellipsis"), id="compare-header")
        yield RichPane(id="compare-view")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one("#compare-view", RichPane)
        pane.border_title = f"fork after message {self.step} vs the original · o opens the fork"
        pane.show(render_comparison(self.original, self.fork, self.step))
        pane.focus()

    @property
    def plain(self) -> str:
        return self.query_one("#compare-view", RichPane).plain

    def action_back(self) -> None:
        self.dismiss(None)

    def action_open_fork(self) -> None:
        context(self).open_run_at(self.fork_run, 0, step=self.step + 1)
