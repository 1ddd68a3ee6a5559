"""A form's protocol field: auto / tau2 / own, and beneath it the protocol that choice gives.

Rollouts are made under protocol ``tau2`` (tau2's own user-simulator guidelines and agent prompt) or ``own``
(tau-tui's prompts); ``auto`` is tau2 where tau2's data is found. Which one a choice gives depends on the
settings and on what is installed, so the field resolves it in a thread worker (reading tau2's texts, maybe
asking another Python) and shows its one line, or why it cannot be had, before the run starts.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Select

from tau_tui.textsafe import visible_renderable

CHOICES = (
    ("auto: tau2 where its data is found", "auto"),
    ("tau2: tau2's prompts", "tau2"),
    ("own: tau-tui's prompts", "own"),
)


class ProtocolChoice(Vertical):
    """The protocol select (id ``select_id``) and the line saying what it resolves to (``{select_id}-line``).

    ``describe(choice)`` is that line (run off the UI thread); an exception it raises is shown as the line.
    """

    DEFAULT_CSS = """
    ProtocolChoice {
        height: auto;
    }
    ProtocolChoice > .protocol-line {
        padding-left: 14;
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, default: str, describe: Callable[[str], str], *, select_id: str) -> None:
        super().__init__()
        self.default = default if default in {value for _, value in CHOICES} else "auto"
        self.describe = describe
        self.select_id = select_id
        self.resolved: str | None = None  # the choice the line was last resolved for

    def compose(self) -> ComposeResult:
        with Horizontal(classes="form-row"):
            yield Label("protocol", classes="form-label")
            yield Select(CHOICES, value=self.default, allow_blank=False, id=self.select_id, compact=True)
        yield Label("", id=f"{self.select_id}-line", classes="form-hint protocol-line")

    @property
    def value(self) -> str:
        """The choice, as a request's ``protocol`` takes it."""
        chosen = self.query_one(f"#{self.select_id}", Select).value
        return chosen if isinstance(chosen, str) else self.default

    @property
    def line(self) -> str:
        """What the field says the choice gives (empty while it is worked out)."""
        return str(self.query_one(f"#{self.select_id}-line", Label).render())

    def on_mount(self) -> None:
        self._resolve(self.value)

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.resolved:
            self._resolve(event.value)

    def _resolve(self, choice: str) -> None:
        self.resolved = choice
        self.query_one(f"#{self.select_id}-line", Label).update(Text("working out the protocol…", style="dim"))
        self.resolve_worker(choice)

    @work(thread=True, exclusive=True, group="form-protocol", name="resolve protocol")
    def resolve_worker(self, choice: str) -> None:
        try:
            line, problem = self.describe(choice), False
        except Exception as exc:  # noqa: BLE001 - a protocol that cannot be had is shown, not raised
            line, problem = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__, True
        self.app.call_from_thread(self._show, choice, line, problem)

    def _show(self, choice: str, line: str, problem: bool) -> None:
        if choice != self.resolved or not self.is_mounted:
            return
        text = Text(line, style="bold red" if problem else "")
        self.query_one(f"#{self.select_id}-line", Label).update(visible_renderable(text))
