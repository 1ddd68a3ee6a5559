"""The tau-tui Textual app (a first runs listing; the inspector grows from here)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Header

from tau_tui.model.io import RunFileError, expand_paths, open_run


class TauTuiApp(App):
    TITLE = "tau-tui"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, paths: list[Path], tau2_data: str | None = None, domain_paths: list[Path] | None = None):
        super().__init__()
        self.paths = paths
        self.tau2_data = tau2_data
        self.domain_paths = domain_paths or []

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="runs", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("file", "sim", "task", "trial", "reward", "termination", "messages")
        for path in expand_paths(self.paths):
            try:
                run = open_run(path)
            except RunFileError as exc:
                self.notify(str(exc), severity="error")
                continue
            for e in run.entries:
                table.add_row(path.name, e.id[:8], e.task_id, e.trial, e.reward, e.termination, e.n_messages)
