"""The benchmark doctor over the loaded runs: findings grouped by rule, and failure clusters.

Opened with ``D`` from the runs table. ``doctor.recordings.examine`` replays every loaded simulation in a
thread worker through the replay service; ``t`` adds the task rules of the loaded runs' domains. One row
per finding under a header row per rule, in columns that fit the width; the pane below shows the cursor's
row whole (``doctor.report``'s parts: the full message, its effect on scores, what to do, the evidence).
Enter opens the simulation at the finding's step, or a task finding's task as text. ``c`` shows the failure
clusters instead (suspect tasks first; the pane says why there is none); Enter opens a cluster's first
simulation.
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
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.views.layout import at_cursor

CELL_PADDING = 2  # a DataTable column's cell padding, both sides
TABLE_FRAME = 4  # the table's border and its vertical scrollbar
BLOCKS = frozenset({"evidence", "simulations"})  # parts shown as indented lines under their label


def detail_text(parts: list[tuple[str, str]]) -> Text:
    """The detail pane's text: each part as ``label: text``; a block (the evidence) indented under its label."""
    text = Text()
    for index, (label, body) in enumerate(parts):
        if index:
            text.append("\n")
        text.append(f"{label}:", style="bold")
        if label in BLOCKS or "\n" in body:
            text.append("".join(f"\n  {line}" for line in body.splitlines()), style="dim")
        else:
            text.append(f" {body}")
    return text


class DoctorScreen(Screen[None]):
    """What is wrong with the benchmark in the loaded runs; Esc goes back."""

    # belongs in app.tcss beside #doctor-rows (kept here while that file is edited elsewhere)
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
        self.row_rules: list[str | None] = []  # per table row: the rule of a header or finding row
        self._width = 0  # the width the columns were fitted to

    def compose(self) -> ComposeResult:
        yield InfoLine(id="doctor-title")
        yield DataTable(id="doctor-rows", cursor_type="row", zebra_stripes=True)
        yield RichPane(id="doctor-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#doctor-detail").border_title = "detail"
        self.query_one(DataTable).focus()
        self._start()

    def on_resize(self) -> None:
        if self.exam is not None and self.size.width != self._width:
            self._show()

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
        row = table.cursor_row
        table.clear(columns=True)
        self._width = self.size.width
        if self.show_clusters:
            self._show_clusters(table)
        else:
            self._show_findings(table)
        if self.shown:
            table.move_cursor(row=min(row, len(self.shown) - 1))
        self._show_detail()

    def _rest(self, widths: list[int]) -> int:
        """The width left for the last column after ``widths``, so that no row scrolls sideways."""
        return max(20, self.size.width - TABLE_FRAME - sum(w + CELL_PADDING for w in widths) - CELL_PADDING)

    def _show_detail(self) -> None:
        from tau_tui.doctor.clusters import Cluster
        from tau_tui.doctor.report import cluster_parts, finding_parts, no_cluster_parts, rule_parts

        pane = self.query_one("#doctor-detail", RichPane)
        if self.exam is None:
            return
        item = self.current
        row = self.query_one(DataTable).cursor_row
        rule = at_cursor(self.row_rules, row) if not self.show_clusters else None
        if isinstance(item, Cluster):
            parts = cluster_parts(item)
        elif item is not None:
            parts = finding_parts(item)
        elif rule is not None:
            parts = rule_parts(rule)
        elif self.show_clusters:
            parts = no_cluster_parts(self.exam)
        else:
            checked = f"{self.exam.simulations} simulation(s) checked"
            tasks = f", {len(self.task_findings)} task finding(s)" if self.with_tasks else "; t checks the tasks too"
            parts = [("no findings", checked + tasks)]
        pane.show(detail_text(parts))

    def _show_findings(self, table: DataTable[Any]) -> None:
        from tau_tui.doctor.report import by_rule
        from tau_tui.doctor.rules import RULES
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

        findings = [*self.task_findings, *self.exam.findings]
        where_w = min(share, max([len(where_of(f)) for f in findings] + [5]))
        task_w = min(share // 2 + 4, max([len(str(f.task)) for f in findings] + [4]))
        widths = [where_w, task_w, 4]
        for label, width in (("where", where_w), ("task", task_w), ("step", 4), ("detail", self._rest(widths))):
            table.add_column(label, width=width, key=label)
        self.shown, self.row_rules = [], []
        for rule, found in by_rule(findings):
            header = Text(f"{rule} ({len(found)})", style="bold")  # the pane below shows the rule whole
            header.append(f"  {RULES[rule].description if rule in RULES else ''}", style="dim")
            table.add_row(Text("▸", style="bold"), "", "", header)
            self.shown.append(None)
            self.row_rules.append(rule)
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
                self.row_rules.append(rule)

    def _show_clusters(self, table: DataTable[Any]) -> None:
        share = max(12, self.size.width // 4)
        clusters = self.exam.clusters
        task_w = min(share, max([len(f"{c.domain}/{c.task}") for c in clusters] + [4]))
        models_w = min(share, max([len(", ".join(c.models)) for c in clusters] + [6]))
        widths = [7, task_w, 4, models_w]
        for label, width in zip(
            ("", "task", "sims", "models", "how it failed"), [*widths, self._rest(widths)], strict=True
        ):
            table.add_column(label, width=width, key=label or "mark")
        self.shown, self.row_rules = list(clusters), []
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

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

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
        from tau_tui.domains import DomainError
        from tau_tui.tui.screens.text_view import TextViewScreen

        registry = context(self).session.service.registry
        try:
            task = registry.get(finding.domain).tasks().get(finding.task)
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
