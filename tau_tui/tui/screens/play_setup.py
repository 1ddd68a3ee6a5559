"""The form that starts a play session: which side you play, domain, task, and who plays the other side.

Modal. The task list loads in a thread worker and filters as you type; "protocol"
picks whose prompts the LLM on the other side gets (auto / tau2 / own).
Start builds the ``PlaySession`` in a thread worker (the first use of a
domain loads its data) and then replaces this form with the ``PlayScreen``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, OptionList, Select
from textual.widgets.option_list import Option

from tau_tui.model.io import error_text
from tau_tui.textsafe import visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.screens.rollout import (
    AGENT_SUGGESTIONS,
    USER_SUGGESTIONS,
    FormError,
    TaskLister,
    task_option,
)
from tau_tui.tui.widgets.protocol_choice import ProtocolChoice
from tau_tui.workspace import FORM_LABELS, PlayRequest, RequestError

if TYPE_CHECKING:
    from tau_tui.rollout import PlaySession

OTHER_DEFAULT = {"user": "scripted/gold", "agent": "scripted/user"}


class PlaySetupScreen(ModalScreen[None]):
    """Pick the side, the task and the other participant; Start opens the session."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="play_setup.cancel"),
        Binding("ctrl+s", "start", "Start the session", id="play_setup.start"),
    ]

    def __init__(self, domain: str | None = None, task: str | None = None) -> None:
        super().__init__()
        self.initial_domain = domain
        self.initial_task = task
        self.tasks: list[tuple[str, str]] = []
        self.starting = False

    @property
    def lister(self) -> TaskLister:
        return TaskLister(context(self).session.workspace.registry)

    def compose(self) -> ComposeResult:
        names = context(self).session.workspace.registry.names()
        domain = self.initial_domain if self.initial_domain in names else ("mock" if "mock" in names else None)
        with Vertical(id="play-form", classes="form"):
            with Horizontal(classes="form-row"):
                yield Label("you play", classes="form-label")
                yield Select(
                    [("the user (a customer)", "user"), ("the agent (with its tools)", "agent")],
                    value="user",
                    allow_blank=False,
                    id="p-side",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("domain", classes="form-label")
                yield Select(
                    [(n, n) for n in names],
                    value=domain if domain else Select.NULL,
                    prompt="pick a domain",
                    id="p-domain",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("task", classes="form-label")
                yield Input(placeholder="type to filter the tasks below", id="p-filter", compact=True)
            yield OptionList(id="p-tasks")
            with Horizontal(classes="form-row"):
                yield Label("other side", classes="form-label")
                yield Input(
                    OTHER_DEFAULT["user"],
                    id="p-other",
                    compact=True,
                    suggester=SuggestFromList(AGENT_SUGGESTIONS + USER_SUGGESTIONS, case_sensitive=False),
                )
                yield Label("args", classes="form-label-short")
                yield Input(placeholder="litellm args (JSON)", id="p-other-args", compact=True)
            workspace = context(self).session.workspace
            yield ProtocolChoice(
                workspace.settings.protocol,
                lambda choice: workspace.protocol(choice).describe(),
                select_id="p-protocol",
            )
            with Horizontal(classes="form-row"):
                yield Label("output file", classes="form-label")
                yield Input(
                    placeholder=f"{context(self).session.runs_dir}/<time>_play_<domain>_<task>.json",
                    id="p-out",
                    compact=True,
                )
            yield Label("", id="p-error", classes="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel", id="p-cancel")
                yield Button("Start (ctrl+s)", id="p-start", variant="primary")

    def on_mount(self) -> None:
        form = self.query_one("#play-form")
        form.border_title = "play a session · esc cancels · ctrl+s (or enter on a task) starts"
        form.border_subtitle = "other side: a litellm model, or scripted/gold (agent) / scripted/user (user)"
        domain = self.query_one("#p-domain", Select).value
        if isinstance(domain, str):
            self.task_worker(domain)

    @on(Select.Changed, "#p-side")
    def _side_changed(self, event: Select.Changed) -> None:
        other = self.query_one("#p-other", Input)
        if other.value in OTHER_DEFAULT.values() and isinstance(event.value, str):
            other.value = OTHER_DEFAULT[event.value]

    @on(Select.Changed, "#p-domain")
    def _domain_changed(self, event: Select.Changed) -> None:
        self.tasks = []
        self._fill()
        if isinstance(event.value, str):
            self.task_worker(event.value)

    @work(thread=True, exclusive=True, group="form-tasks", name="list tasks")
    def task_worker(self, domain: str) -> None:
        tasks, error = self.lister.load(domain)
        self.app.call_from_thread(self._tasks_loaded, domain, tasks, error)

    def _tasks_loaded(self, domain: str, tasks: list[tuple[str, str]], error: str | None) -> None:
        if self.query_one("#p-domain", Select).value != domain:
            return
        self.tasks = tasks
        if error:
            self.query_one("#p-error", Label).update(visible_renderable(error))
        self._fill()

    def _fill(self) -> None:
        needle = self.query_one("#p-filter", Input).value.strip().lower()
        shown = [(t, hint) for t, hint in self.tasks if needle in t.lower() or needle in hint.lower()]
        options = self.query_one("#p-tasks", OptionList)
        options.clear_options()
        options.add_options([Option(task_option(task, hint), id=task) for task, hint in shown])
        ids = [t for t, _ in shown]
        if ids:
            options.highlighted = ids.index(self.initial_task) if self.initial_task in ids else 0

    @on(Input.Changed, "#p-filter")
    def _filter_changed(self) -> None:
        self._fill()

    @on(Input.Submitted, "#p-filter")
    def _filter_submitted(self) -> None:
        """Enter in the filter starts the session on the highlighted task (the first one shown)."""
        self.action_start()

    def _chosen_task(self) -> str | None:
        options = self.query_one("#p-tasks", OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        return options.get_option_at_index(options.highlighted).id

    @on(Button.Pressed, "#p-start")
    @on(OptionList.OptionSelected, "#p-tasks")
    def action_start(self) -> None:
        if self.starting:
            return
        error = self.query_one("#p-error", Label)
        try:
            side = str(self.query_one("#p-side", Select).value)
            domain = self.query_one("#p-domain", Select).value
            if not isinstance(domain, str):
                raise FormError("domain: pick one")
            task = self._chosen_task()
            if task is None:
                raise FormError("task: pick one from the list")
            request = PlayRequest(
                domain,
                task,
                side,
                self.query_one("#p-other", Input).value,
                self.query_one("#p-other-args", Input).value,
                out=self.query_one("#p-out", Input).value,
                protocol=self.query_one(ProtocolChoice).value,
                labels=dict(FORM_LABELS),
            )
            out = context(self).session.workspace.play_path(request)
        except (FormError, RequestError) as exc:
            error.update(visible_renderable(str(exc)))
            return
        self.starting = True
        error.update(Text(f"starting: loading {domain}…", style="dim"))
        self.session_worker(request, out)

    @work(thread=True, exclusive=True, group="play-setup", name="start session")
    def session_worker(self, request: PlayRequest, out: Path) -> None:
        try:
            session = context(self).session.workspace.play_session(request)  # with the judge, as tau-tui play
        except Exception as exc:  # noqa: BLE001 - shown in the form
            self.app.call_from_thread(self._failed, error_text(exc))
            return
        self.app.call_from_thread(self._started, session, out)

    def _failed(self, error: str) -> None:
        self.starting = False
        self.query_one("#p-error", Label).update(visible_renderable(error))

    def _started(self, session: PlaySession, out: Path) -> None:
        from tau_tui.tui.screens.play import PlayScreen

        app, ctx = self.app, context(self)
        self.dismiss(None)
        app.push_screen(PlayScreen(session, out, on_saved=ctx.add_run))

    @on(Button.Pressed, "#p-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
