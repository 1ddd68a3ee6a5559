"""The "fork from here" form: who continues a recorded trajectory from the cursor's message.

Modal. Agent and user are any litellm model string or a scripted
participant. Strict replay of the recorded prefix (tau2's rule) is the
default; a recording made with other tool versions may need the lenient
setting, which continues from whatever state the prefix replays to.
Dismisses with the workspace's ``ForkRequest`` (validated the same way as
``tau-tui fork``'s flags).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Checkbox, Input, Label, Static

from tau_tui.textsafe import visible_renderable
from tau_tui.tui.screens.rollout import AGENT_SUGGESTIONS, USER_SUGGESTIONS
from tau_tui.views.render import one_line
from tau_tui.views.trajectory_doc import StepView
from tau_tui.workspace import FORM_LABELS, ForkRequest, RequestError


def step_summary(step: StepView, limit: int = 100) -> str:
    """One line naming a message: its role and its text or calls."""
    message = step.message
    calls = [e.call for e in step.events if e.call is not None and e.call.call_step == step.index]
    body = message.text or ", ".join(f"{c.name}(…)" for c in calls) or "(empty)"
    text = f"{step.role}: {one_line(body)}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ForkScreen(ModalScreen[ForkRequest | None]):
    """Pick the agent and user that continue the trajectory after message ``step``."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="fork.cancel"),
        Binding("ctrl+s", "start", "Run the fork", id="fork.start"),
    ]

    def __init__(self, sim_id: str, step: StepView, solo: bool = False) -> None:
        super().__init__()
        self.sim_id = sim_id
        self.step = step
        self.solo = solo

    def compose(self) -> ComposeResult:
        with Vertical(id="fork-form", classes="form"):
            yield Static(
                Text.assemble(
                    ("keeps messages 0…", "dim"),
                    (str(self.step.index), "bold"),
                    ("  (the last one: ", "dim"),
                    step_summary(self.step),
                    (")", "dim"),
                ),
                id="fork-what",
            )
            with Horizontal(classes="form-row"):
                yield Label("agent model", classes="form-label")
                yield Input(
                    "scripted/gold",
                    id="k-agent",
                    compact=True,
                    suggester=SuggestFromList(AGENT_SUGGESTIONS, case_sensitive=False),
                )
                yield Input(placeholder="litellm args (JSON)", id="k-agent-args", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("user model", classes="form-label")
                yield Input(
                    "scripted/user",
                    id="k-user",
                    compact=True,
                    disabled=self.solo,
                    suggester=SuggestFromList(USER_SUGGESTIONS, case_sensitive=False),
                )
                yield Input(placeholder="litellm args (JSON)", id="k-user-args", compact=True, disabled=self.solo)
            yield Checkbox(
                "lenient: continue even if the recorded prefix replays differently (other tool versions)",
                False,
                id="k-lenient",
                compact=True,
            )
            yield Label("", id="k-error", classes="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel", id="k-cancel")
                yield Button("Run the fork (ctrl+s)", id="k-start", variant="primary")

    def on_mount(self) -> None:
        form = self.query_one("#fork-form")
        form.border_title = visible_renderable(
            f"fork {self.sim_id} after message {self.step.index} · esc cancels · ctrl+s runs", single_line=True
        )
        form.border_subtitle = "models: a litellm model string, or scripted/gold (agent) / scripted/user (user)"
        self.query_one("#k-agent").focus()

    def request(self) -> ForkRequest:
        """The form as a validated request (``RequestError`` names the field as the form labels it)."""
        request = ForkRequest(
            self.sim_id,
            self.step.index,
            self.query_one("#k-agent", Input).value,
            self.query_one("#k-user", Input).value.strip() or "scripted/user",
            self.query_one("#k-agent-args", Input).value,
            self.query_one("#k-user-args", Input).value,
            strict=not self.query_one("#k-lenient", Checkbox).value,
            labels=dict(FORM_LABELS),
        )
        request.validate()
        return request

    @on(Input.Submitted)
    @on(Button.Pressed, "#k-start")
    def action_start(self) -> None:
        try:
            request = self.request()
        except RequestError as exc:
            self.query_one("#k-error", Label).update(visible_renderable(str(exc)))
            return
        self.dismiss(request)

    @on(Button.Pressed, "#k-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
