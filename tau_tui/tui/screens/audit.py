"""The re-grade audit of one run file: each simulation whose recorded reward differs from ours, and why.

Opened with ``u`` from the runs table. ``trust.audit.audit_file`` runs in a thread worker through
the replay service; the top shows the effect on the file's metrics (bounded in height, scrolled when
longer), the table one row per simulation (differing ones, or every one with a rule when ``a`` shows
all), Enter opens it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import get_current_worker

from tau_tui.model.io import RunFile
from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.messages import AuditReady
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.layout import at_cursor


class AuditScreen(Screen[None]):
    """Why the recomputed rewards of one file differ from the recorded ones; Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="audit.back"),
        Binding("enter", "open", "Open this simulation", id="audit.open"),
        Binding("a", "toggle_all", "Differing only / every simulation a rule applies to", id="audit.all"),
        Binding("t", "toggle_tasks", "Grade with the recording's / the current task definitions", id="audit.tasks"),
        Binding("e", "open_json", "Audit JSON in $EDITOR", id="audit.editor", show=False),
    ]

    def __init__(self, run: RunFile) -> None:
        super().__init__()
        self.run = run
        self.audit: Any = None
        self.show_all = False
        self.current_tasks = False
        self.shown: list[Any] = []

    def compose(self) -> ComposeResult:
        yield InfoLine(id="audit-title")
        with VerticalScroll(id="audit-effect"):
            yield Static(id="audit-summary")
        yield DataTable(id="audit-rows", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, width in (("task", 40), ("trial", 5), ("recorded", 8), ("ours*", 9), ("rule", 40), ("why", 80)):
            table.add_column(label, width=width, key=label)
        table.focus()
        self._start()

    def _start(self) -> None:
        self.audit = None
        self.query_one("#audit-title", InfoLine).set(Text(f" auditing {one_line(self.run.path.name)}…", style="dim"))
        self.audit_worker(self.current_tasks)

    @work(thread=True, exclusive=True, group="audit", name="audit file")
    def audit_worker(self, current_tasks: bool) -> None:
        from tau_tui.trust.audit import audit_file

        worker = get_current_worker()
        service = context(self).session.service
        audit, errors = audit_file(
            self.run.path,
            self.run,
            service.analyzer,
            via=service,
            current_tasks=current_tasks,
            cancelled=lambda: worker.is_cancelled,
        )
        if not worker.is_cancelled:
            self.post_message(AuditReady(audit, errors))

    @on(AuditReady)
    def _ready(self, message: AuditReady) -> None:
        self.audit = message.audit
        for problem in message.errors[:3]:
            self.notify(problem, severity="warning", timeout=6)
        self._show()

    def _show(self) -> None:
        from tau_tui.trust.audit import RULE_TEXT, effect_lines

        audit = self.audit
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" audit ", style="bold reverse")
        title.append(
            f"  {self.run.path.name} · {sum(s.differs for s in audit.sims)} of {len(audit.sims)} differ · "
            f"graded with {'the current' if self.current_tasks else 'the recording’s'} tasks"
        )
        self.query_one("#audit-title", InfoLine).set(visible_renderable(title, single_line=True))
        self.query_one("#audit-summary", Static).update(visible_renderable("\n".join(effect_lines(audit))))
        table = self.query_one(DataTable)
        table.clear()
        self.shown = [s for s in audit.sims if s.differs or (self.show_all and s.hits)]
        for sim in self.shown:
            rule = sim.responsible or (sim.hits[0].rule if sim.hits else "")
            why = next((h.message for h in sim.hits if h.rule == rule), "")
            ours = "unscored" if sim.ours is None else f"{sim.ours:g}"
            table.add_row(
                visible_renderable(sim.task_id, single_line=True),
                "" if sim.trial is None else str(sim.trial),
                "—" if sim.recorded is None else f"{sim.recorded:g}",
                ours,
                Text(
                    RULE_TEXT.get(rule, rule) + ("" if sim.differs else " (note)"),
                    style="bold" if sim.differs else "dim",
                ),
                visible_renderable(why, single_line=True),
            )

    @property
    def current(self) -> Any:
        return at_cursor(self.shown, self.query_one(DataTable).cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        sim = self.current
        if sim is not None:
            context(self).open_simulation_ref(self.run.path, sim.sim_id)

    def action_toggle_all(self) -> None:
        if self.audit is not None:
            self.show_all = not self.show_all
            self._show()

    def action_toggle_tasks(self) -> None:
        self.current_tasks = not self.current_tasks
        self._start()

    def action_open_json(self) -> None:
        if self.audit is not None:
            data = self.audit.to_json()
            data["simulations"] = [s.to_json() for s in self.audit.sims if s.differs or s.hits]
            context(self).open_json(data, "audit")

    def action_back(self) -> None:
        self.workers.cancel_group(self, "audit")
        self.dismiss(None)
