"""The "new rollout" form: domain, tasks, agent and user models, k trials, concurrency, output file.

Modal. Domains come from the registry; the task list loads in a thread
worker when a domain is picked and filters as you type (space ticks a task;
ticking none runs every task, as the line under the list says, with no box
drawn ticked). Models are any litellm model string or a scripted participant
(``scripted/gold``, ``scripted/user``). "protocol" picks whose prompts the LLM participants get (auto / tau2 / own, the settings' by
default) and says which protocol that gives. "run on" picks
where the episodes run: here, or on Ray actors (``workers`` of them) through
the same ``Workspace.rollout_remote`` as ``tau-tui run --executor ray``; without
the ``ray`` extra the choice says so. Dismisses with its ``RunPlan``; the app
runs it. The calibrate screen uses the same form for its trials
(``calibrate=True``: the domain is fixed, k defaults to 4, re-running rows
fixes the tasks too, and the trials run here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, Select, SelectionList

from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.widgets.protocol_choice import ProtocolChoice
from tau_tui.tui.widgets.task_checklist import TaskChecklist
from tau_tui.workers.pool import ray_missing
from tau_tui.workspace import FORM_LABELS, RequestError, RunPlan, RunRequest, Workspace, parse_json_object

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

AGENT_SUGGESTIONS = ["scripted/gold", "scripted/flaky:0.3", "gpt-4.1", "gpt-4o", "claude-sonnet-4-20250514"]
USER_SUGGESTIONS = ["scripted/user", "gpt-4.1", "gpt-4o"]


class FormError(ValueError):
    """A field of a form that cannot be used; ``str()`` names the field."""


def json_object(text: str, field: str) -> dict[str, Any] | None:
    """A JSON object typed into a form field (empty: None)."""
    try:
        return parse_json_object(text, field)
    except RequestError as exc:
        raise FormError(str(exc)) from None


def task_option(task: str, hint: str, width: int = 84) -> Text:
    """A task id with its hint dimmed, clipped to one line of ``width`` cells."""
    task, hint = one_line(task), one_line(hint)  # a task set may come from a file: shown, never sent
    room = width - len(task) - 2
    hint = hint if len(hint) <= room else hint[: max(room - 1, 0)] + "…"
    return Text.assemble(task, ("  " + hint if room > 4 else "", "dim"))


def task_hint(task: Any) -> str:
    """One short line saying what a task is about: the reason for the call, else the purpose or ticket."""
    scenario = task.user_scenario
    instructions = scenario.instructions if scenario is not None else None
    text = getattr(instructions, "reason_for_call", None) or (instructions if isinstance(instructions, str) else "")
    if not text and task.description is not None:
        text = task.description.purpose or ""
    text = text or task.ticket or ""
    return " ".join(text.split())[:120]


class TaskLister:
    """The tasks of the picked domain, loaded off the UI thread; used by the rollout and play forms."""

    def __init__(self, registry: DomainRegistry):
        self.registry = registry

    def load(self, domain: str) -> tuple[list[tuple[str, str]], str | None]:
        """[(task id, one-line description)] or ([], error)."""
        try:
            tasks = self.registry.get(domain).tasks()
        except Exception as exc:  # noqa: BLE001 - shown in the form
            return [], str(exc)
        return [(task.id, task_hint(task)) for task in tasks.values()], None


class RolloutScreen(ModalScreen["RunPlan | None"]):
    """Fill in a rollout; Start dismisses with its ``RunPlan`` (built by the session's workspace)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="rollout.cancel"),
        Binding("ctrl+s", "start", "Start the rollout", id="rollout.start"),
        Binding("ctrl+a", "toggle_all", "Select all shown tasks / none", id="rollout.all", priority=True),
    ]

    def __init__(
        self,
        domain: str | None = None,
        *,
        calibrate: bool = False,
        tasks: list[str] | None = None,
        fixed_tasks: bool = False,
        agent: str = "scripted/gold",
        user: str = "scripted/user",
        trials: int | None = None,
        title: str | None = None,
    ) -> None:
        """``calibrate``: trials for the calibrate screen of ``domain`` (fixed); ``tasks`` preselected
        (``fixed_tasks``: they cannot change, as when re-running rows)."""
        super().__init__()
        self.initial_domain = domain
        self.calibrate = calibrate
        self.fixed_tasks = fixed_tasks
        self.agent, self.user = agent, user
        self.trials = trials if trials is not None else (4 if calibrate else 1)
        self.title_text = title or ("calibrate: k trials per task" if calibrate else "new rollout")
        self.tasks: list[tuple[str, str]] = []
        self.selected: set[str] = set(tasks or [])

    @property
    def workspace(self) -> Workspace:
        """What the rollout is built through: the session's (its settings, registry and judge)."""
        return context(self).session.workspace

    @property
    def lister(self) -> TaskLister:
        return TaskLister(self.workspace.registry)

    def compose(self) -> ComposeResult:
        names = self.workspace.registry.names()
        domain = self.initial_domain if self.initial_domain in names else ("mock" if "mock" in names else None)
        with Vertical(id="rollout-form", classes="form"):
            with Horizontal(classes="form-row"):
                yield Label("domain", classes="form-label")
                yield Select(
                    [(n, n) for n in names],
                    value=domain if domain else Select.NULL,
                    prompt="pick a domain",
                    id="r-domain",
                    compact=True,
                    disabled=self.calibrate,
                )
            with Horizontal(classes="form-row"):
                yield Label("tasks", classes="form-label")
                yield Input(
                    placeholder="type to filter the tasks below", id="r-filter", compact=True, disabled=self.fixed_tasks
                )
            yield TaskChecklist(id="r-tasks", disabled=self.fixed_tasks)
            yield Label("", id="r-task-count", classes="form-hint")
            with Horizontal(classes="form-row"):
                yield Label("agent model", classes="form-label")
                yield Input(
                    self.agent,
                    id="r-agent",
                    compact=True,
                    suggester=SuggestFromList(AGENT_SUGGESTIONS, case_sensitive=False),
                )
                yield Label("args", classes="form-label-short")
                yield Input(placeholder='litellm args, e.g. {"api_base": "http://…"}', id="r-agent-args", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("user model", classes="form-label")
                yield Input(
                    self.user,
                    id="r-user",
                    compact=True,
                    suggester=SuggestFromList(USER_SUGGESTIONS, case_sensitive=False),
                )
                yield Label("args", classes="form-label-short")
                yield Input(placeholder="litellm args (JSON)", id="r-user-args", compact=True)
            yield ProtocolChoice(self.workspace.settings.protocol, self._describe_protocol, select_id="r-protocol")
            with Horizontal(classes="form-row"):
                yield Label("trials (k)", classes="form-label")
                yield Input(str(self.trials), id="r-k", compact=True, type="integer")
                yield Label("concurrency", classes="form-label")
                yield Input("3", id="r-concurrency", compact=True, type="integer")
            with Horizontal(classes="form-row"):
                yield Label("max steps", classes="form-label")
                yield Input("200", id="r-max-steps", compact=True, type="integer")
                yield Label("max errors", classes="form-label")
                yield Input("10", id="r-max-errors", compact=True, type="integer")
                yield Label("timeout (s)", classes="form-label")
                yield Input(placeholder="none", id="r-timeout", compact=True, type="number")
            missing = ray_missing()
            with Horizontal(classes="form-row", id="r-executor-row"):
                yield Label("run on", classes="form-label")
                yield Select(
                    [("here", "local"), ("Ray", "ray")] if missing is None else [("here", "local")],
                    value="local",
                    allow_blank=False,
                    id="r-executor",
                    compact=True,
                    disabled=missing is not None,
                )
                yield Label("workers", classes="form-label")
                default = self.workspace.settings.workers
                yield Input(
                    placeholder=str(default) if default else "all CPUs",
                    id="r-workers",
                    compact=True,
                    type="integer",
                    disabled=True,
                )
                yield Label(visible_renderable(missing or self._ray_hint()), id="r-executor-hint", classes="form-hint")
            with Horizontal(classes="form-row"):
                yield Label("output file", classes="form-label")
                name = "calibrate_<time>_<domain>" if self.calibrate else "<time>_<domain>_<agent>_<user>"
                yield Input(placeholder=f"{self.workspace.runs_dir}/{name}.json", id="r-out", compact=True)
            yield Label("", id="r-error", classes="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel", id="r-cancel")
                yield Button("Start (ctrl+s)", id="r-start", variant="primary")

    def _describe_protocol(self, choice: str) -> str:
        """The protocol ``choice`` gives, in one line (off the UI thread: it reads tau2's texts)."""
        return self.workspace.protocol(choice).describe()

    def _ray_hint(self) -> str:
        """Which cluster "Ray" joins: the settings' (``RAY_ADDRESS``), else a Ray instance on this machine."""
        address = self.workspace.settings.ray_address
        return f"Ray at {address}" if address else "Ray: a local instance"

    @on(Select.Changed, "#r-executor")
    def _executor_changed(self, event: Select.Changed) -> None:
        self.query_one("#r-workers", Input).disabled = event.value != "ray"

    def on_mount(self) -> None:
        if self.calibrate:
            self.query_one("#r-executor-row").display = False  # the calibrate screen runs its trials here
        form = self.query_one("#rollout-form")
        form.border_title = visible_renderable(f"{self.title_text} · esc cancels · ctrl+s starts", single_line=True)
        form.border_subtitle = (
            "models: any litellm model string, or scripted/gold, scripted/flaky:P (agent) / scripted/user (user)"
        )
        domain = self.query_one("#r-domain", Select).value
        if isinstance(domain, str):
            self.load_tasks(domain)

    # --- tasks -----------------------------------------------------------------------------------------
    @on(Select.Changed, "#r-domain")
    def _domain_changed(self, event: Select.Changed) -> None:
        if self.calibrate:
            return  # the domain is fixed (and its tasks already loading)
        self.selected.clear()
        self.tasks = []
        self._fill()
        if isinstance(event.value, str):
            self.load_tasks(event.value)

    def load_tasks(self, domain: str) -> None:
        self.query_one("#r-task-count", Label).update(f"loading the tasks of {domain}…")
        self.task_worker(domain)

    @work(thread=True, exclusive=True, group="form-tasks", name="list tasks")
    def task_worker(self, domain: str) -> None:
        tasks, error = self.lister.load(domain)
        self.app.call_from_thread(self._tasks_loaded, domain, tasks, error)

    def _tasks_loaded(self, domain: str, tasks: list[tuple[str, str]], error: str | None) -> None:
        if self.query_one("#r-domain", Select).value != domain:
            return
        self.tasks = tasks
        if error:
            self.query_one("#r-error", Label).update(visible_renderable(error))
        self._fill()

    def _shown(self) -> list[tuple[str, str]]:
        if self.fixed_tasks:
            return [(t, hint) for t, hint in self.tasks if t in self.selected]
        needle = self.query_one("#r-filter", Input).value.strip().lower()
        return [(t, hint) for t, hint in self.tasks if needle in t.lower() or needle in hint.lower()]

    def _fill(self) -> None:
        selection = self.query_one("#r-tasks", SelectionList)
        selection.clear_options()
        selection.add_options(
            [(task_option(task, hint, 78), task, task in self.selected) for task, hint in self._shown()]
        )
        if selection.option_count:
            selection.highlighted = 0
        self._count()

    def _count(self) -> None:
        shown = len(self._shown())
        picked = len(self.selected)
        text = (
            f"{picked} of {len(self.tasks)} tasks ticked"
            if picked
            else f"no task ticked: all {len(self.tasks)} tasks run"
        )
        if self.fixed_tasks:
            self.query_one("#r-task-count", Label).update(f"{text} (the rows being re-run)")
            return
        if shown != len(self.tasks):
            text += f" · {shown} shown"
        self.query_one("#r-task-count", Label).update(text + " · space ticks · ctrl+a ticks all shown")

    @on(Input.Changed, "#r-filter")
    def _filter_changed(self) -> None:
        self._fill()

    @on(Input.Submitted, "#r-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#r-tasks").focus()

    @on(SelectionList.SelectedChanged, "#r-tasks")
    def _selection_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        visible = {task for task, _ in self._shown()}
        self.selected = (self.selected - visible) | set(event.selection_list.selected)
        self._count()

    def action_toggle_all(self) -> None:
        if self.fixed_tasks:
            return
        visible = {task for task, _ in self._shown()}
        if visible <= self.selected:
            self.selected -= visible
        else:
            self.selected |= visible
        self._fill()

    # --- start -------------------------------------------------------------------------------------------
    def request(self) -> RunRequest:
        """The form as a ``RunRequest`` (the retry policy is the command line's default)."""
        domain = self.query_one("#r-domain", Select).value
        agent = self.query_one("#r-agent", Input).value.strip()
        user = self.query_one("#r-user", Input).value.strip()
        executor = self.query_one("#r-executor", Select).value
        return RunRequest(
            domain if isinstance(domain, str) else None,
            agent,
            user,
            agent_args=self.query_one("#r-agent-args", Input).value,
            user_args=self.query_one("#r-user-args", Input).value,
            protocol=self.query_one(ProtocolChoice).value,
            tasks=[t for t, _ in self.tasks if t in self.selected] or None,
            num_trials=self.query_one("#r-k", Input).value,
            concurrency=self.query_one("#r-concurrency", Input).value,
            max_steps=self.query_one("#r-max-steps", Input).value,
            max_errors=self.query_one("#r-max-errors", Input).value,
            timeout=self.query_one("#r-timeout", Input).value.strip() or None,
            out=self.query_one("#r-out", Input).value,
            kind="calibrate" if self.calibrate else "run",
            executor=str(executor),
            workers=self.query_one("#r-workers", Input).value if executor == "ray" else None,
            labels=dict(FORM_LABELS),
        )

    def plan(self) -> RunPlan:
        """The form as a ``RunPlan``, built by the workspace; raises ``RequestError`` (or ``FormError``)
        naming the first bad field."""
        return self.workspace.run_plan(self.request())

    @on(Button.Pressed, "#r-start")
    def action_start(self) -> None:
        try:
            result = self.plan()
        except (FormError, RequestError) as exc:
            self.query_one("#r-error", Label).update(visible_renderable(str(exc)))
            return
        self.dismiss(result)

    @on(Button.Pressed, "#r-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
