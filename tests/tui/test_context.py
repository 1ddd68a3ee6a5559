"""The app and its screens meet only through ``tau_tui.tui.context``: the app publishes signals and names a
screen class only to push it; screens type against the context and never import the app."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from tau_tui.model.io import open_run
from tau_tui.session.notes import add_note
from tau_tui.tui.context import context, subscribe

from .conftest import ROOT, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

TUI = ROOT / "tau_tui" / "tui"
# What the app used to call on screens; it publishes a signal instead.
SCREEN_METHODS = {
    "loading",
    "rows_changed",
    "rows_replayed",
    "notices_changed",
    "rollout_changed",
    "notes_changed",
    "show_only_file",
    "rebind",
    "refresh_notes",
    "refresh_now",
    "open",
    "refresh_rows",
    "set_filter",
}


def annotation_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node inside an annotation (naming a screen's type there is fine)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotations = [a.annotation for a in [*node.args.args, *node.args.kwonlyargs] if a.annotation]
            annotations += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for annotation in annotations:
            inside |= {id(n) for n in ast.walk(annotation)}
    return inside


def test_the_app_names_a_screen_class_only_to_push_it() -> None:
    tree = ast.parse((TUI / "app.py").read_text())
    in_annotation = annotation_nodes(tree)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    problems = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"isinstance", "issubclass"}
        ):
            kinds = ast.walk(node.args[1]) if len(node.args) > 1 else []
            problems += [
                f"line {node.lineno}: isinstance(…, {n.id})"
                for n in kinds
                if isinstance(n, ast.Name) and n.id.endswith("Screen")
            ]
        if (
            isinstance(node, ast.Name)
            and node.id.endswith("Screen")
            and node.id != "Screen"
            and id(node) not in called
            and id(node) not in in_annotation
        ):
            problems.append(f"line {node.lineno}: {node.id} used other than constructed")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SCREEN_METHODS:
            problems.append(f"line {node.lineno}: calls .{node.func.attr}() (a screen's method)")
        if (
            isinstance(node, ast.Attribute)
            and node.attr in {"runs_screen", "_runs_screen"}
            and isinstance(node.ctx, ast.Load)
        ):
            parent_uses = [p for p in ast.walk(tree) if isinstance(p, ast.Attribute) and p.value is node]
            problems += [f"line {p.lineno}: reaches into the runs screen (.{p.attr})" for p in parent_uses]
        if isinstance(node, (ast.For, ast.comprehension)) and "screen_stack" in ast.unparse(node.iter):
            problems.append(f"line {getattr(node, 'lineno', node.iter.lineno)}: scans the screen stack")
    assert problems == []


def test_no_screen_imports_the_app() -> None:
    for path in sorted((TUI / "screens").glob("*.py")):
        text = path.read_text()
        assert "tau_tui.tui.app" not in text, path.name
        assert "tau_app" not in text, path.name


class Listener(Screen[None]):
    """A second subscriber, knowing the app only through the context."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("listening")

    def on_mount(self) -> None:
        ctx = context(self)
        subscribe(self, ctx.catalog_changed, lambda _: self.heard.append("catalog"))
        subscribe(self, ctx.notes_changed, lambda _: self.heard.append("notes"))
        subscribe(self, ctx.file_rebound, lambda run: self.heard.append(f"file:{Path(run.path).name}"))


async def test_a_second_screen_hears_catalog_and_notes_signals(make_app: MakeApp, demo_copy: Path) -> None:
    recording = demo_copy
    app = make_app([recording])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        listener = Listener()
        app.push_screen(listener)
        await wait_until(pilot, lambda: listener.is_mounted, "the listener")
        row = app.session.catalog.rows[0]
        app.change_notes(row.path, add_note(row.sim_id, "agent", "policy_violation", "heard by a second screen"))
        await wait_until(pilot, lambda: "notes" in listener.heard, "the notes signal")
        found = app.session.catalog.find(row.path, row.sim_id)
        assert found is not None
        assert "heard by a second screen" in [note.text for note in found.notes]
        app.add_run(open_run(recording))
        assert listener.heard[-2:] == ["catalog", "file:mock_demo.json"]
        await settle(pilot)
        app.pop_screen()
        await pilot.pause()
        heard = len(listener.heard)
        app.notes_changed.publish(None)  # off the stack: no longer called
        assert len(listener.heard) == heard
