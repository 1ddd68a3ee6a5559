"""The benchmark doctor over the loaded runs: findings grouped by rule, and failure clusters.

Opened with ``D`` from the runs table. ``doctor.recordings.examine`` replays every loaded simulation in a
thread worker through the replay service; ``t`` adds the task rules of the loaded runs' domains. One row
per finding under a header row per rule; Enter opens the simulation at the finding's step, or a task
finding's task as text. ``c`` shows the failure clusters instead (suspect tasks first); Enter opens a
cluster's first simulation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer
from textual.worker import get_current_worker

from tau_tui.model.io import RunFile
from tau_tui.textsafe import visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.messages import DoctorReady
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.layout import at_cursor


class DoctorScreen(Screen[None]):
    """What is wrong with the benchmark in the loaded runs; Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="doctor.back"),
        Binding("enter", "open", "Open the simulation at the step / the task", id="doctor.open"),
        Binding("c", "toggle_clusters", "Findings / failure clusters", id="doctor.clusters"),
        Binding("t", "task_rules", "Also check the domains' task definitions", id="doctor.tasks"),
    ]

    def __init__(self, runs: list[RunFile]) -> None:
        super().__init__()
        self.runs = runs
        self.exam: Any = None
        self.task_findings: list[Any] = []
        self.with_tasks = False
        self.show_clusters = False
        self.shown: list[Any] = []  # per table row: a finding, a cluster, or None for a header

    def compose(self) -> ComposeResult:
        yield InfoLine(id="doctor-title")
        yield DataTable(id="doctor-rows", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self._start()

    def _start(self) -> None:
        self.exam = None
        self.query_one("#doctor-title", InfoLine).set(
            Text(f" examining {sum(len(r.raw_sims) for r in self.runs)} simulation(s)…", style="dim")
        )
        self.doctor_worker(self.with_tasks)

    @work(thread=True, exclusive=True, group="doctor", name="benchmark doctor")
    def doctor_worker(self, with_tasks: bool) -> None:
        from tau_tui.calibrate.gold import GoldChecker
        from tau_tui.doctor.recordings import examine
        from tau_tui.doctor.task_rules import DuplicateIndex, TaskProbe, check_task
        from tau_tui.domains import DomainError

        worker = get_current_worker()
        service = context(self).session.service
        exam = examine(service.analyzer, self.runs, analyze=service.analyze, cancelled=lambda: worker.is_cancelled)
        tasks: list[Any] = []
        if with_tasks:
            for name in sorted({r.domain for r in self.runs if r.domain}):
                try:
                    checker = GoldChecker.for_name(service.registry, name)
                    every = checker.domain.tasks()
                except DomainError as exc:
                    exam.problems.append(str(exc))
                    continue
                duplicates = DuplicateIndex(every.values())
                for task in every.values():
                    if worker.is_cancelled:
                        return
                    tasks.extend(check_task(TaskProbe(checker, task, duplicates), name))
        if not worker.is_cancelled:
            self.post_message(DoctorReady(exam, tasks))

    @on(DoctorReady)
    def _ready(self, message: DoctorReady) -> None:
        self.exam = message.exam
        self.task_findings = message.task_findings
        for problem in self.exam.problems[:3]:
            self.notify(problem, severity="warning", timeout=6)
        self._show()

    def _title(self) -> Text:
        exam = self.exam
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(" doctor ", style="bold reverse")
        suspects = sum(1 for c in exam.clusters if c.suspect)
        title.append(
            f"  {exam.simulations} simulation(s) · {len(exam.findings)} finding(s)"
            + (f" · {len(self.task_findings)} task finding(s)" if self.with_tasks else "")
            + f" · {len(exam.clusters)} cluster(s), {suspects} suspect task(s)"
            + ("  [clusters]" if self.show_clusters else "")
        )
        return title

    def _show(self) -> None:
        self.query_one("#doctor-title", InfoLine).set(visible_renderable(self._title(), single_line=True))
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if self.show_clusters:
            self._show_clusters(table)
        else:
            self._show_findings(table)

    def _show_findings(self, table: DataTable[Any]) -> None:
        from tau_tui.doctor.sim_rules import SIM_RULES
        from tau_tui.doctor.task_rules import TASK_RULES

        groups: dict[str, list[Any]] = {}
        for finding in [*self.task_findings, *self.exam.findings]:
            groups.setdefault(finding.rule, []).append(finding)
        from tau_tui.views.layout import distinct_starts, elide

        names = {f.file: Path(f.file).stem for f in self.exam.findings}
        starts = distinct_starts(names.values())
        # The detail is what is read: the other columns take what their values need, up to a share of the width.
        share = max(12, self.size.width // 4)

        def where_of(finding: Any) -> str:
            """A task finding's domain; a recording's simulation, after its file's distinguishing part when several."""
            if hasattr(finding, "domain"):
                return str(finding.domain)
            if len(names) <= 1:
                return str(finding.sim)
            name = names[finding.file]
            return f"{elide(name, share // 2, starts.get(name, 0))} · {finding.sim}"

        findings = [f for found in groups.values() for f in found]
        where_w = min(share, max([len(where_of(f)) for f in findings] + [5]))
        task_w = min(share // 2 + 4, max([len(str(f.task)) for f in findings] + [4]))
        for label, width in (("where", where_w), ("task", task_w), ("step", 4), ("detail", 160)):
            table.add_column(label, width=width, key=label)
        descriptions = {
            **{n: r.description for n, r in TASK_RULES.items()},
            **{n: r.description for n, r in SIM_RULES.items()},
        }
        self.shown = []
        for rule in [*TASK_RULES, *SIM_RULES, *(r for r in groups if r not in TASK_RULES and r not in SIM_RULES)]:
            found = groups.get(rule)
            if not found:
                continue
            header = Text(f"{rule} ({len(found)})", style="bold")  # in the widest column: never cut at 80
            header.append(f"  {descriptions.get(rule, '')}", style="dim")
            table.add_row(Text("▸", style="bold"), "", "", header)
            self.shown.append(None)
            for finding in found:
                where = where_of(finding)
                step = getattr(finding, "step", None)
                table.add_row(
                    visible_renderable(where, single_line=True),
                    visible_renderable(finding.task, single_line=True),
                    "" if step is None else str(step),
                    visible_renderable(finding.detail, single_line=True),
                )
                self.shown.append(finding)

    def _show_clusters(self, table: DataTable[Any]) -> None:
        for label, width in (("", 7), ("task", 24), ("sims", 5), ("models", 40), ("how it failed", 120)):
            table.add_column(label, width=width, key=label or "mark")
        self.shown = list(self.exam.clusters)
        for cluster in self.shown:
            table.add_row(
                Text("suspect", style="bold red") if cluster.suspect else "",
                visible_renderable(f"{cluster.domain}/{cluster.task}", single_line=True),
                str(len(cluster.members)),
                visible_renderable(", ".join(cluster.models), single_line=True),
                visible_renderable(cluster.signature.text, single_line=True),
            )

    @property
    def current(self) -> Any:
        return at_cursor(self.shown, self.query_one(DataTable).cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        from tau_tui.doctor.clusters import Cluster
        from tau_tui.doctor.task_rules import TaskFinding

        item = self.current
        ctx = context(self)
        if isinstance(item, Cluster):
            first = item.members[0]
            ctx.open_simulation_ref(Path(first.file), first.sim)
        elif isinstance(item, TaskFinding):
            self._open_task(item)
        elif item is not None:
            ctx.open_simulation_ref(Path(item.file), item.sim, item.step)

    def _open_task(self, finding: Any) -> None:
        from tau_tui.domains import DomainError, split_variant
        from tau_tui.tui.screens.text_view import TextViewScreen

        registry = context(self).session.service.registry
        try:
            task = registry.get(split_variant(finding.domain)[0]).tasks().get(finding.task)
        except DomainError as exc:
            self.notify(str(exc), severity="warning")
            return
        body = json.dumps(task.model_dump(mode="json", exclude_none=True), indent=2) if task is not None else ""
        text = f"{finding.rule} ({finding.severity}): {finding.detail}\n\n{body}"
        self.app.push_screen(TextViewScreen(f"{finding.domain} task {finding.task}", text))

    def action_toggle_clusters(self) -> None:
        if self.exam is not None:
            self.show_clusters = not self.show_clusters
            self._show()

    def action_task_rules(self) -> None:
        if not self.with_tasks:
            self.with_tasks = True
            self._start()

    def action_back(self) -> None:
        self.workers.cancel_group(self, "doctor")
        self.dismiss(None)
