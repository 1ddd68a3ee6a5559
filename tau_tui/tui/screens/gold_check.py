"""The gold sanity check of a domain's tasks: the gold agent reaches 1.0, and gold state = live path.

``GoldChecker`` runs in a thread worker (about 10 ms a task, cancelled on
Esc); each result is posted as it comes. Left: the tasks checked, failing
ones marked (``f`` shows only those); right: the cursor's task, with the
reasons and the paths where the evaluator's gold state and the live path
differ (gold value → live value).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from tau_tui import formats
from tau_tui.textsafe import clip, shown
from tau_tui.tui.context import context
from tau_tui.tui.messages import GoldChecked
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.views.render import one_line

MAX_PATHS = 60


def check_option(check: Any) -> Text:
    mark = ("✓ ", "green") if check.ok else ("✗ ", "bold red")
    text = Text.assemble(mark, (one_line(check.task_id), "" if check.ok else "bold"))
    text.no_wrap, text.overflow = True, "ellipsis"
    return text


def render_check(check: Any) -> RenderableType:
    """One task's check: verdict, reasons, the gold agent's breakdown, the differing paths."""
    parts: list[RenderableType] = []
    head = Text()
    head.append(" OK " if check.ok else " FAIL ", style="bold black on green" if check.ok else "bold white on red3")
    head.append(f"  {one_line(check.task_id)}", style="bold")
    if check.fingerprint:
        head.append(f"  version {check.fingerprint[:8]}", style="dim")
    parts.append(head)
    facts = Text()
    facts.append("gold agent: ", style="dim")
    reward = formats.reward(check.gold_reward)
    facts.append(f"reward {reward}", style="green" if check.gold_agent_ok else "bold red")
    facts.append(f" · {one_line(check.termination or '?')}", style="dim")
    if check.breakdown:
        facts.append("  " + ", ".join(f"{one_line(k)} {v:g}" for k, v in check.breakdown.items()), style="dim")
    if check.not_evaluated:
        facts.append(f"  (not evaluated: {', '.join(map(one_line, check.not_evaluated))})", style="yellow")
    facts.append("\ngold state vs live path: ", style="dim")
    facts.append(
        "same" if check.gold_consistent else "DIFFERENT", style="green" if check.gold_consistent else "bold red"
    )
    if not check.gold_consistent and not check.inconsistency_matters:
        facts.append("  (DB is not in the reward basis: it does not change the reward)", style="dim")
    parts.append(facts)
    if check.reasons:
        reasons = Text("\nwhy\n", style="bold underline")
        for reason in check.reasons:
            reasons.append(f"• {shown(reason)}\n", style="red")
        reasons.rstrip()
        parts.append(reasons)
    if check.differences:
        parts.append(Text("\nwhere the states differ", style="bold underline"))
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
        table.add_column("DB", style="dim", no_wrap=True)
        table.add_column("path", ratio=2, overflow="fold")
        table.add_column("gold (evaluator)", ratio=2, overflow="fold", style="red")
        table.add_column("live path", ratio=2, overflow="fold", style="green")
        for difference in check.differences[:MAX_PATHS]:
            data = difference.to_json()
            table.add_row(
                *(
                    Text(cell)
                    for cell in (
                        one_line(data["side"]),
                        one_line(data["path"]),
                        _short(data["gold"]),
                        _short(data["live"]),
                    )
                )
            )  # recorded text: never markup
        if len(check.differences) > MAX_PATHS:
            table.add_row("", Text(f"… {len(check.differences) - MAX_PATHS} more", style="dim"), "", "")
        parts.append(table)
    return Group(*parts)


def _short(value: Any, limit: int = 80) -> str:
    return clip(one_line(value), limit)


class GoldCheckScreen(Screen[None]):
    """Checks the tasks of ``domain`` (``tasks``: only these ids) as results come in."""

    BINDINGS = [
        Binding("escape", "back", "Back (stops the check)", id="gold.back"),
        Binding("f", "toggle_failing", "Failing tasks only / all", id="gold.failing"),
        Binding("e", "open_json", "This check as JSON in $EDITOR", id="gold.editor", show=False),
    ]

    def __init__(self, domain: str, tasks: list[str] | None = None) -> None:
        super().__init__()
        self.domain = domain
        self.task_ids = tasks
        self.checks: list[Any] = []
        self.failing_only = False
        self.done = self.total = 0
        self.finished = False

    def compose(self) -> ComposeResult:
        yield InfoLine(id="gold-title")
        with Horizontal(id="gold-body"):
            yield OptionList(id="gold-tasks")
            yield RichPane(id="gold-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gold-tasks").border_title = "tasks"
        self.query_one("#gold-detail").border_title = "check"
        self.query_one("#gold-detail", RichPane).show(
            Text(
                "The gold agent (scripted/gold) plays each task and must reach reward 1.0; the evaluator's gold "
                "state (reference actions applied directly) must equal the state the same actions reach through "
                "the live environment. Results appear as tasks are checked.",
                style="dim italic",
            )
        )
        self.query_one(OptionList).focus()
        self._title()
        self.check_worker()

    @work(thread=True, exclusive=True, group="gold-check", name="gold check")
    def check_worker(self) -> None:
        from tau_tui.rollout.runner import select_tasks
        from tau_tui.workspace import GoldCheckRequest

        worker = get_current_worker()
        try:
            checker = context(self).session.workspace.gold_checker(GoldCheckRequest(self.domain, self.task_ids))
            tasks = select_tasks(checker.domain, self.task_ids)
        except Exception as exc:  # noqa: BLE001 - a domain that cannot load is reported on the screen
            self.post_message(GoldChecked(final=True, error=str(exc)))
            return
        total = len(tasks)
        done = 0

        def posted(check: Any) -> None:
            nonlocal done
            done += 1
            self.post_message(GoldChecked(check, done, total))

        checker.run(tasks, posted, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(GoldChecked(done=done, total=total, final=True))

    @on(GoldChecked)
    def _checked(self, message: GoldChecked) -> None:
        if message.error is not None:
            self.finished = True
            self.query_one("#gold-detail", RichPane).show(
                Text(f"cannot check: {shown(message.error)}", style="bold red")
            )
            self._title()
            return
        self.done, self.total = message.done, message.total
        if message.final:
            self.finished = True
        elif message.check is not None:
            check = message.check
            self.checks.append(check)
            if not (self.failing_only and check.ok):
                options = self.query_one(OptionList)
                options.add_option(Option(check_option(check), id=str(len(self.checks) - 1)))
                if options.option_count == 1:
                    options.highlighted = 0
        self._title()

    def _title(self) -> None:
        failing = sum(not c.ok for c in self.checks)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" gold check ", style="bold reverse")
        text.append(f"  {one_line(self.domain)} · {self.done}/{self.total or '?'} tasks checked · ")
        text.append(f"{failing} failing", style="bold red" if failing else "green")
        agent = sum(not c.gold_agent_ok for c in self.checks)
        inconsistent = sum(not c.gold_consistent for c in self.checks)
        text.append(f" (gold agent below 1.0: {agent}; gold state ≠ live path: {inconsistent})", style="dim")
        if not self.finished:
            text.append("  checking…", style="dim")
        if self.failing_only:
            text.append("  showing failing tasks only (f: all)", style="bold")
        self.query_one("#gold-title", InfoLine).set(text)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None:
            self.query_one("#gold-detail", RichPane).show(render_check(self.checks[int(event.option.id)]))

    @property
    def current(self) -> Any:
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        option = options.get_option_at_index(options.highlighted)
        return self.checks[int(option.id)] if option.id is not None else None

    def action_toggle_failing(self) -> None:
        self.failing_only = not self.failing_only
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            [Option(check_option(c), id=str(i)) for i, c in enumerate(self.checks) if not (self.failing_only and c.ok)]
        )
        if options.option_count:
            options.highlighted = 0
        self._title()

    def action_open_json(self) -> None:
        check = self.current
        if check is not None:
            context(self).open_json(check.to_json(), f"gold-{check.task_id}")

    def action_back(self) -> None:
        self.workers.cancel_group(self, "gold-check")
        self.dismiss(None)
