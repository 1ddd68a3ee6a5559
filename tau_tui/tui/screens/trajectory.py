"""The trajectory screen: messages with a cursor, and beside them the live state at the cursor.

Left: the message list (``TrajectoryView``). Right: tabs — State (agent and
user DB trees at the cursor, then this step's change, a mismatch side by
side, or the diff against the gold final state), Task, Reward (recorded and
derived, apart), Eval (our recomputed reward beside the recorded one, each
check, why it failed, the recording's consistency, the tool-call score and
the process flags), Notes (the user's annotations, from the sidecar beside
the recording). ``b`` forks the run at the cursor (``ForkScreen``); ``A``
adds a note on the step under the cursor.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from tau_tui import formats
from tau_tui.analysis import SimAnalysis
from tau_tui.catalog import query_terms
from tau_tui.evaluate import SimReport
from tau_tui.model.io import RunFile, RunFileError, error_text, open_run
from tau_tui.model.messages import message_to_dict
from tau_tui.model.notes import review_suggestion
from tau_tui.model.provenance import recorded_judge
from tau_tui.replay.diff import Change, diff_states
from tau_tui.replay.facts import Fact
from tau_tui.session.notes import add_note, adopt_review
from tau_tui.session.simulation import judged, open_simulation
from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context, subscribe
from tau_tui.tui.messages import ForkFinished, NLJudged, SimulationReady
from tau_tui.tui.screens.compare import CompareScreen, ForkSide
from tau_tui.tui.screens.fork import ForkScreen, step_summary
from tau_tui.tui.screens.note_form import NoteFormScreen, NoteRequest
from tau_tui.tui.screens.text_view import TextViewScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.state_tree import StateTree
from tau_tui.tui.widgets.trajectory_view import TrajectoryView, cursor_bindings
from tau_tui.views.eval_panels import render_evaluation, render_no_evaluation
from tau_tui.views.notes_view import default_source, render_notes
from tau_tui.views.panels import (
    DERIVED_STYLE,
    RECORDED_STYLE,
    render_call,
    render_changes,
    render_derived,
    render_mismatch,
    render_recorded,
    render_task,
    render_tool_log,
)
from tau_tui.views.render import content_lines, pretty_lines
from tau_tui.views.review_view import TicksView
from tau_tui.views.review_view import render_review as render_review_panel
from tau_tui.views.state_nodes import marks_for
from tau_tui.views.trajectory_doc import TrajectoryDoc

if TYPE_CHECKING:
    from tau_tui.workspace import ForkRequest

TRAJECTORY = "trajectory"  # the name of the inspector's trajectory screen, installed once
SPINNER_DELAY = 0.2  # seconds before a loading spinner shows

# What each jump key looks for, and how the help names it.
JUMPS = {
    "call": "tool call",
    "write": "write",
    "mismatch": "mismatch",
    "hallucinated": "hallucinated call",
    "error": "error",
    "fault": "injected fault",
    "refusal": "refused call (cassette)",
    "discovery": "discovered tool",
    "finding": "finding",
    "flag": "process flag",
    "divergence": "divergence from the gold path",
    "review": "review error (recorded review)",
    "note": "note",
    "match": "search match",
}


def _jump_bindings() -> list[Binding]:
    keys = {
        "call": "t",
        "write": "w",
        "mismatch": "m",
        "hallucinated": "h",
        "error": "x",
        "fault": "i",
        "refusal": "u",
        "finding": "f",
        "flag": "p",
        "review": "y",
        "note": "o",
        "match": "n",
    }
    out = []
    for target, key in keys.items():
        name = JUMPS[target]
        out.append(
            Binding(
                key,
                f"jump('{target}', 1)",
                f"Next {name}",
                id=f"traj.next_{target}",
                show=target in ("write", "mismatch"),
            )
        )
        out.append(
            Binding(key.upper(), f"jump('{target}', -1)", f"Previous {name}", id=f"traj.prev_{target}", show=False)
        )
    return out


HEADER_STYLES = {
    "mismatch": "red",
    "hallucinated": "magenta",
    "findings": "yellow",
    "injected_faults": "bold orange1",
    "refused": "bold medium_purple1",
    "discovered": "cyan",
    "db": "red",
}
# Kinds whose warning reads apart from their bad state: mismatches that only library text or upstream fixes explain.
HEADER_WARN_STYLES = {"mismatch": "yellow"}


def header_fact(fact: Fact, sep: str = "") -> Text:
    """One count of the header's derived summary (``SimAnalysis.summary()``), styled by kind when it is not neutral."""
    style = ""
    if fact.severity == "warn":
        style = HEADER_WARN_STYLES.get(fact.kind) or HEADER_STYLES.get(fact.kind, "")
    elif fact.severity == "bad":
        style = HEADER_STYLES.get(fact.kind, "")
    mark = f" {'—' if fact.mark is None else ('✓' if fact.mark else '✗')}" if fact.marked else ""
    return Text(f"{sep}{one_line(fact.short_text)}{mark}", style=style)


class TrajectoryScreen(Screen[None]):
    """One simulation: step through its messages with the replayed state beside them."""

    # (key, title) of the side tabs; each key has a ``_tab_<key>`` compose method.
    SIDE_TABS = (
        ("state", "State"),
        ("task", "Task"),
        ("reward", "Reward"),
        ("eval", "Eval"),
        ("notes", "Notes"),
        ("review", "Review"),
        ("ticks", "Ticks"),
    )
    OPTIONAL_TABS = ("review", "ticks")  # shown only for a simulation that has a recorded review / ticks

    BINDINGS = [
        Binding("escape", "back", "Back", id="traj.back"),
        *cursor_bindings("traj"),
        *_jump_bindings(),
        Binding("space,enter", "toggle_expand", "Expand/collapse", id="traj.expand"),
        Binding("a", "expand_all", "Expand/collapse all", id="traj.expand_all", show=False),
        Binding("z", "toggle_silent", "Show/fold the silent chunks of a voice run", id="traj.silent", show=False),
        Binding("v", "view_all", "View message in full", id="traj.view_all", show=False),
        Binding("d", "toggle_gold", "Diff vs gold", id="traj.gold"),
        Binding("slash", "search", "Search", id="traj.search", show=False),
        Binding("e", "open_message_json", "Message JSON in $EDITOR", id="traj.editor_message", show=False),
        Binding("E", "open_simulation_json", "Simulation JSON in $EDITOR", id="traj.editor_sim", show=False),
        Binding("1", "side_tab('state')", "State tab", id="traj.tab_state", show=False),
        Binding("2", "side_tab('task')", "Task tab", id="traj.tab_task", show=False),
        Binding("3", "side_tab('reward')", "Reward tab", id="traj.tab_reward", show=False),
        Binding("4", "side_tab('eval')", "Eval tab", id="traj.tab_eval"),
        Binding("5", "side_tab('notes')", "Notes tab", id="traj.tab_notes", show=False),
        Binding(
            "6",
            "side_tab('review')",
            "Review tab (recorded review, auth, hallucination check)",
            id="traj.tab_review",
            show=False,
        ),
        Binding("7", "side_tab('ticks')", "Ticks tab (voice runs: who speaks when)", id="traj.tab_ticks", show=False),
        Binding("R", "adopt_review", "Keep the recorded review's errors as notes", id="traj.adopt_review", show=False),
        Binding("A", "add_note", "Add a note on this step…", id="traj.note", show=False),
        Binding(
            "S",
            "accept_suggestion",
            "Note the suggested source of this step's flag (agent / user)",
            id="traj.accept_suggestion",
            show=False,
        ),
        Binding("D", "divergence", "Jump to where the run left the gold path", id="traj.divergence", show=False),
        Binding("b", "fork", "Fork from here…", id="traj.fork"),
        Binding("J", "judge", "Judge the NL assertions with the judge model", id="traj.judge", show=False),
        Binding(
            "c",
            "consolidated",
            "Consolidated messages list (a voice run graded from its ticks)",
            id="traj.consolidated",
            show=False,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.run: RunFile | None = None
        self.index = 0
        self.sim_id = ""
        self.doc: TrajectoryDoc | None = None
        self.analysis: SimAnalysis | None = None
        self.replay_error: str | None = None
        self.report: SimReport | None = None
        self.eval_error: str | None = None
        self.gold_mode = False
        self.query_text = ""
        self._token = 0
        self._restore_step: int | None = None
        self._restore_expanded: set[int] = set()
        self._shown_step: int | None = None
        self._spinner: Timer | None = None
        self._fork_token = 0

    def open(self, run: RunFile, index: int, *, step: int | None = None, query: str = "") -> None:
        """Show simulation ``index`` of ``run`` (the app keeps one trajectory screen and reuses it)."""
        self.run, self.index, self.sim_id = run, index, run.entries[index].id
        self.doc = self.analysis = self.replay_error = self.report = self.eval_error = None
        self.gold_mode = False
        self.query_text = query
        self._restore_step, self._restore_expanded = step, set()
        if self.is_mounted:
            self._begin()

    @property
    def current(self) -> RunFile:
        """The run file of the simulation on screen."""
        assert self.run is not None, "no simulation opened"
        return self.run

    @property
    def view(self) -> TrajectoryView:
        return self.query_one(TrajectoryView)

    @property
    def cursor(self) -> int:
        return self.view.cursor

    # --- layout -------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield InfoLine(id="traj-header")
        with Horizontal(id="traj-body"):
            with Vertical(id="traj-left"):
                yield TrajectoryView(id="trajectory")
                yield InfoLine(id="traj-status")
                yield Input(placeholder="search this trajectory (n / N: next / previous match)", id="traj-search")
            with TabbedContent(id="side", initial="tab-state"):
                for key, title in self.SIDE_TABS:
                    with TabPane(title, id=f"tab-{key}"):
                        yield from getattr(self, f"_tab_{key}")()
        yield Footer()

    # One method per side tab, found by key: a new tab is one SIDE_TABS entry and one method.
    def _tab_state(self) -> ComposeResult:
        yield StateTree(id="state-tree")
        yield RichPane(id="change-view")

    def _tab_task(self) -> ComposeResult:
        with VerticalScroll(id="task-scroll"):
            yield Static(id="task-view")

    def _tab_reward(self) -> ComposeResult:
        with VerticalScroll(id="reward-scroll"):
            yield Static(id="recorded-view")
            yield Static(id="derived-view")

    def _tab_eval(self) -> ComposeResult:
        yield RichPane(id="eval-view")

    def _tab_notes(self) -> ComposeResult:
        yield RichPane(id="notes-view")

    def _tab_review(self) -> ComposeResult:
        yield RichPane(id="review-view")

    def _tab_ticks(self) -> ComposeResult:
        yield RichPane(id="ticks-view")

    def on_mount(self) -> None:
        self.query_one("#recorded-view").border_title = "as recorded"
        self.query_one("#derived-view").border_title = "derived by tau-tui"
        if self.run is not None:
            self._begin()
        ctx = context(self)
        subscribe(self, ctx.file_rebound, self._file_rebound)
        subscribe(self, ctx.notes_changed, lambda _: self.notes_changed())

    def _file_rebound(self, run: RunFile) -> None:
        if self.run is not None and self.run.path == run.path and self.run is not run:
            self.rebind(run)

    def _begin(self) -> None:
        """Reset the panes for a new simulation and start loading it."""
        self.query_one("#traj-search").display = False
        self.action_side_tab("state")
        self.query_one(StateTree).forget_all()
        self.query_one("#change-view", RichPane).show("")
        self.query_one("#eval-view", RichPane).show(Text("evaluating…", style="dim"))
        self.query_one("#notes-view", RichPane).show("")
        tabs = self.query_one(TabbedContent)
        for key in self.OPTIONAL_TABS:
            tabs.hide_tab(f"tab-{key}")
        self.query_one("#traj-header", InfoLine).set(Text(f" opening {one_line(self.sim_id)} …", style="dim"))
        self.query_one("#traj-status", InfoLine).set("")
        self.view.clear()
        self.view.focus()
        self._start_load()

    # --- loading --------------------------------------------------------------------------------------
    def _start_load(self) -> None:
        self._token += 1
        token, run, index = self._token, self.run, self.index
        assert run is not None
        service = context(self).session.service

        def load() -> None:
            self.post_message(SimulationReady(token, open_simulation(service, run, index)))

        self.run_worker(load, thread=True, exclusive=True, group="simulation", name="open simulation")
        # A spinner only when replay takes a while (the first run of a domain loads its DB).
        self._spinner = self.set_timer(SPINNER_DELAY, self._show_spinner)

    def _show_spinner(self) -> None:
        if self.doc is None:
            self.view.loading = True

    def rebind(self, run: RunFile) -> None:
        """The file was reloaded: show the same simulation from the new data, at the same step."""
        index = run.find(self.sim_id)
        if index is None or run.entries[index].id != self.sim_id:
            self.notify(
                f"simulation {self.sim_id} is no longer in {run.path.name}; showing the old copy", severity="warning"
            )
            return
        self._restore_step = self.cursor
        self._restore_expanded = set(self.view.expanded)
        self.run, self.index = run, index
        self._start_load()

    @on(SimulationReady)
    def _ready(self, message: SimulationReady) -> None:
        if message.token != self._token:
            return
        if self._spinner is not None:
            self._spinner.stop()
        self.view.loading = False
        opened = message.opened
        if opened.load_error is not None or opened.doc is None:
            self.notify(opened.load_error or "cannot open this simulation", severity="error")
            if self.doc is None:
                self.dismiss(None)
            return
        self.doc, self.analysis, self.replay_error = opened.doc, opened.analysis, opened.replay_error
        self.report, self.eval_error = opened.report, opened.eval_error
        step = self._restore_step if self._restore_step is not None else 0
        hits = self.doc.search(self.query_text) if self.query_text else []
        self.view.set_terms(tuple(query_terms(self.query_text)))
        if self._restore_step is None and hits:
            step = hits[0]
        self._shown_step = None
        self.view.set_doc(self.doc, cursor=step, expanded=self._restore_expanded, trailer=self._trailer())
        self._restore_step, self._restore_expanded = None, set()
        self._update_header()
        self._update_task()
        self._update_reward()
        self._update_eval()
        self._update_review()
        self.notes_changed()

    def notes_changed(self) -> None:
        """Show the notes the catalog has for this simulation (after opening, a save, a reload)."""
        doc = self.doc
        if doc is None or self.run is None:
            return
        book = context(self).session.catalog.notebooks.get(context(self).session.catalog.file_key(self.run.path))
        notes = book.by_simulation().get(self.sim_id, []) if book is not None else []
        self.view.rerender(doc.set_notes(notes))
        self.query_one("#notes-view", RichPane).show(
            render_notes(doc.run_notes, [e.note for s in doc.steps for e in s.events if e.note is not None])
        )
        self._update_titles()
        self._update_header()
        if self._shown_step is not None:
            self._show_position(self._shown_step)

    def _update_review(self) -> None:
        """Show the Review and Ticks tabs when the simulation has a recorded review or ticks (hidden otherwise)."""
        doc = self.doc
        assert doc is not None
        tabs = self.query_one(TabbedContent)
        has_review = doc.review is not None and doc.review.present
        has_ticks = doc.ticks is not None and len(doc.ticks) > 0
        for key, shown in (("review", has_review), ("ticks", has_ticks)):
            (tabs.show_tab if shown else tabs.hide_tab)(f"tab-{key}")
        if has_review:
            self.query_one("#review-view", RichPane).show(render_review_panel(doc.review, doc.run_reviews))

    def _update_ticks(self, step: int) -> None:
        doc = self.doc
        if doc is None or doc.ticks is None or not len(doc.ticks):
            return
        self.query_one("#ticks-view", RichPane).show(TicksView(doc.ticks, doc.ticks.tick_at_step(step)))

    def action_adopt_review(self) -> None:
        """Keep the recorded review's errors as notes, each at its step (ones already noted are skipped)."""
        doc = self.doc
        if doc is None or doc.review is None or not doc.review.errors:
            self.notify("no recorded review errors on this simulation", severity="warning")
            return
        suggestions = [review_suggestion(e.review, e.step) for s in doc.steps for e in s.events if e.review is not None]
        suggestions += [review_suggestion(error, None) for error in doc.run_reviews]
        entry = self.current.entries[self.index]
        context(self).change_notes(
            self.current.path, adopt_review(self.sim_id, suggestions, task_id=entry.task_id, trial=entry.trial)
        )

    def _trailer(self) -> Text:
        sim = self.current.simulation(self.index)
        reason = sim.termination_reason or "?"
        text = Text(f"      ■ end of trajectory: {reason}", style="bold dim")
        if sim.info and sim.info.get("error"):
            text.append(f" · {sim.info.get('error')}", style="yellow")
        return text

    # --- panels ------------------------------------------------------------------------------------------
    def _update_header(self) -> None:
        run, entry = self.current, self.current.entries[self.index]
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" task {one_line(str(entry.task_id))}", style="bold")
        if entry.trial is not None:
            text.append(f" · trial {entry.trial}")
        text.append(f" · {one_line(run.domain or '?')}")
        if run.solo:
            text.append(" · solo (no user)", style="yellow")
        sim = run.simulation(self.index)
        if sim.graded_from == "ticks":
            text.append(" · voice: graded from ticks", style="cyan")
            if sim.consolidated is not None:
                text.append(" (c: consolidated list)", style="dim")
        usage = sim.usage
        if usage is not None:
            text.append(f" · usage {one_line(usage.summary())}", style="dim")
        elif "agent" in sim.unpriced:
            text.append(" · agent unpriced", style="dim")
        text.append(f" · agent {one_line(run.agent_model or '?')}")
        if run.user_model and not run.solo:
            text.append(f" · user {one_line(run.user_model)}")
        text.append(f" · sim {one_line(entry.id)} · {one_line(run.path.name)}", style="dim")
        text.append("\n")
        text.append(" recorded ", style=RECORDED_STYLE + " reverse")
        reward = entry.reward
        text.append(
            f" reward {formats.reward(reward)}",
            style="green" if reward == 1 else ("red" if reward is not None else "dim"),
        )
        text.append(f" · db {'—' if entry.db_match is None else ('✓' if entry.db_match else '✗')}")
        text.append(f" · {one_line(entry.termination or '?')}")
        text.append("   ")
        text.append(" derived ", style=DERIVED_STYLE + " reverse")
        analysis = self.analysis
        if analysis is None:
            text.append(f" no replay: {one_line(self.replay_error or '?')}", style="yellow")
        else:
            for n, fact in enumerate(analysis.summary()):
                text.append_text(header_fact(fact, " · " if n else " "))
        report = self.report
        if report is not None:
            ev = report.evaluation
            text.append(" · reward ")
            text.append(
                formats.reward(ev.reward, "n/a"),
                style="yellow" if ev.reward is None else ("green" if ev.success else "red"),
            )
            if report.agrees is False:
                text.append(" ≠ recorded", style="bold white on red3")
            if report.flags:
                text.append(f" · {formats.count(len(report.flags), 'flag')}", style="cyan")
        review = self.doc.review if self.doc is not None else None
        if review is not None and review.present:
            text.append("   review ", style="bold")
            agent, user = len(review.errors_by("agent")), len(review.errors_by("user"))
            text.append(f"{agent} agent / {user} user error(s)", style="bold red" if agent or user else "green")
            if review.auth_status:
                text.append(f" · auth {review.auth_status}", style="dim")
            text.append(" (6)", style="dim")
        notes = self._note_count()
        if notes:
            text.append(f"   ✐ {formats.count(notes, 'note')} (5)", style="bold yellow")
        self.query_one("#traj-header", InfoLine).set(text)

    def _note_count(self) -> int:
        doc = self.doc
        if doc is None:
            return 0
        return len(doc.run_notes) + sum(1 for s in doc.steps for e in s.events if e.kind == "note")

    def _update_titles(self) -> None:
        """Pane titles: set once per simulation or mode, never per step (a title change repaints a pane)."""
        doc = self.doc
        if doc is not None:
            counts = doc.counts()
            folded = self.view.n_folded()
            self.view.border_title = (
                f"trajectory · {folded} silent chunks folded (z shows)"
                if folded
                else (
                    "trajectory · silent chunks shown (z folds)"
                    if doc.ticks is not None and self.view.show_silent
                    else "trajectory"
                )
            )
            extra = "".join(
                f"  {mark} {counts[key]}"
                for key, mark in (
                    ("message_error", "✗msg"),
                    ("fault", "↯"),
                    ("refusal", "⊘"),
                    ("discovery", "✦"),
                    ("review", "☰"),
                    ("note", "✐"),
                )
                if counts[key]
            )
            self.view.border_subtitle = (
                f"⚒ {counts['call']} calls  ✎ {counts['write']}  ≠ {counts['mismatch']}  "
                f"? {counts['hallucinated']}  ✗ {counts['error']}  ⚠ {counts['finding']}  "
                f"⚑ {counts['flag']}{extra}"
            )
        tree = self.query_one(StateTree)
        if self.gold_mode:
            tree.border_title = "vs the gold final state · d: back"  # the step says same or differs
        else:
            has_gold = self.analysis is not None and self.analysis.gold is not None
            tree.border_title = "state after this message" + (" · d: vs gold" if has_gold else "")

    def _show_position(self, step: int) -> None:
        """One status line under the messages: where the cursor is, and which write/mismatch/… it is on."""
        doc = self.doc
        assert doc is not None
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" step {step}/{len(doc) - 1}", style="bold")
        message = doc.steps[step].message
        text.append(f" · {message.role}", style="dim")
        for target, label in (
            ("write", "write"),
            ("mismatch", "mismatch"),
            ("hallucinated", "hallucinated"),
            ("error", "error"),
            ("fault", "injected fault"),
            ("refusal", "refused"),
            ("discovery", "discovery"),
            ("finding", "finding"),
            ("flag", "flag"),
            ("divergence", "left the gold path"),
            ("review", "review error"),
            ("note", "note"),
            ("match", "match"),
        ):
            steps = doc.targets.get(target, [])
            if step in steps:
                text.append(f" · {label} {steps.index(step) + 1}/{len(steps)}", style="bold yellow")
        self.query_one("#traj-status", InfoLine).set(text)

    def _update_task(self) -> None:
        task_id = self.current.entries[self.index].task_id
        task = self.analysis.task if self.analysis is not None else self.current.tasks().get(task_id)
        self.query_one("#task-view", Static).update(visible_renderable(render_task(task, task_id)))

    def _update_reward(self) -> None:
        sim = self.current.simulation(self.index)
        judge = recorded_judge(self.current.raw_info)
        self.query_one("#recorded-view", Static).update(visible_renderable(render_recorded(sim, judge)))
        self.query_one("#derived-view", Static).update(
            visible_renderable(render_derived(self.analysis, self.replay_error))
        )

    def _update_eval(self) -> None:
        pane = self.query_one("#eval-view", RichPane)
        if self.report is None:
            pane.show(render_no_evaluation(self.eval_error or "not evaluated"))
            return
        pane.show(render_evaluation(self.report, self.current.simulation(self.index)))

    @on(TrajectoryView.CursorMoved)
    def _cursor_moved(self, message: TrajectoryView.CursorMoved) -> None:
        if message.step != self._shown_step:
            self.show_step(message.step)

    def go(self, step: int | None) -> None:
        """Move the cursor and update the state pane at once, so both land in the same frame."""
        if self.view.move_to(step):
            self.show_step(self.cursor)

    def show_step(self, step: int) -> None:
        """Bring the state pane to ``step``: tree, marks, the step's change or the gold diff."""
        doc = self.doc
        if doc is None or not len(doc):
            return
        self._shown_step = step
        self._show_position(step)
        self._update_ticks(step)
        tree = self.query_one(StateTree)
        change_view = self.query_one("#change-view", RichPane)
        analysis = self.analysis
        if analysis is None:
            tree.display = False
            change_view.show(
                Text(
                    f"No replayed state: {self.replay_error or 'replay did not run'}.\n"
                    "The messages are shown as recorded.",
                    style="italic yellow",
                )
            )
            return
        tree.display = True
        timeline = analysis.timeline
        state = timeline.state_at(step)
        parts: list[RenderableType] = [
            Text(f"⚠ {f.kind.value}: {f.message}", style="yellow") for f in doc.general_findings
        ]
        parts += self._call_parts(step)
        tool_log = render_tool_log(timeline, state, step)
        if tool_log is not None:
            parts.append(tool_log)
        if self.gold_mode and analysis.gold is not None:
            gold = analysis.gold.state
            agent = self._diff(state.agent, gold.agent)
            user = self._diff(state.user, gold.user)
            marks = {
                "agent": marks_for(((c.path, "gold") for c in agent or []), "gold_within"),
                "user": marks_for(((c.path, "gold") for c in user or []), "gold_within"),
            }
            differs = bool(agent or user)
            title = f"{'≠ differs from' if differs else '= same as'} the gold final state · d: back"
            if tree.border_title != title:  # changes only when the answer does (a title change repaints the pane)
                tree.border_title = title
            parts.append(Text(f"state after step {step} → gold final state", style="bold magenta"))
            parts.append(render_changes((("agent DB", agent), ("user DB", user)), "same as the gold final state"))
        else:
            agent, user = timeline.changes_at(step)
            marks = {
                "agent": marks_for((c.path, c.kind) for c in agent),
                "user": marks_for((c.path, c.kind) for c in user),
            }
            parts.append(Text(f"step {step} · DB change", style="bold"))
            parts.append(
                render_changes(
                    (
                        ("agent DB", agent if state.agent is not None else None),
                        ("user DB", user if state.user is not None else None),
                    ),
                    "no DB change at this step",
                )
            )
        tree.show(state, marks)
        change_view.show(Group(*parts))

    @staticmethod
    def _diff(before: Any, after: Any) -> list[Change] | None:
        if before is None and after is None:
            return None
        return diff_states(before, after)

    def _call_parts(self, step: int) -> list[RenderableType]:
        assert self.doc is not None
        parts: list[RenderableType] = []
        for call in self.doc.call_views_at(step):
            if call.is_mismatch:
                parts.append(render_mismatch(call))
            else:
                parts.append(render_call(call))
            parts.append(Text(""))
        return parts

    # --- actions ----------------------------------------------------------------------------------------------
    def action_back(self) -> None:
        search = self.query_one("#traj-search", Input)
        if search.display:
            search.display = False
            self.view.focus()
            return
        self.dismiss(None)

    def action_step(self, delta: int) -> None:
        self.go(self.cursor + delta)

    def action_first(self) -> None:
        self.go(0)

    def action_last(self) -> None:
        if self.doc is not None:
            self.go(len(self.doc) - 1)

    def action_jump(self, target: str, direction: int) -> None:
        if self.doc is None:
            return
        step = self.doc.next(target, self.cursor) if direction > 0 else self.doc.previous(target, self.cursor)
        if step is None:
            where = "after" if direction > 0 else "before"
            if target == "match" and not self.query_text:
                self.notify("no search yet: press / to search this trajectory", timeout=2)
            elif not self.doc.targets.get(target):
                self.notify(f"this trajectory has no {JUMPS[target]}", timeout=2)
            else:
                self.notify(f"no {JUMPS[target]} {where} step {self.cursor}", timeout=2)
            return
        self.go(step)

    def action_judge(self) -> None:
        """Ask the judge model about this task's NL assertions; the Eval tab and reward follow its verdicts."""
        app = context(self)
        analysis = self.analysis
        if analysis is None:
            self.notify(f"nothing to judge: {self.replay_error or 'not replayed yet'}", severity="warning")
            return
        criteria = analysis.task.evaluation_criteria if analysis.task is not None else None
        if criteria is None or not criteria.nl_assertions:
            self.notify("this task has no NL assertions", timeout=3)
            return
        judge_model = app.session.workspace.judge_model
        if not judge_model:
            self.notify(
                "no judge model: start tau-tui with --judge MODEL, or set judge_model in the settings file",
                severity="warning",
                timeout=6,
            )
            return
        from tau_tui.evaluate import JudgeError

        judge = app.session.workspace.judge()
        if judge is None:
            return
        token, service = self._token, app.session.service
        self.notify(f"asking {judge_model} about {len(criteria.nl_assertions)} NL assertion(s)…", timeout=3)

        def ask() -> None:
            try:
                report, _ = service.judge_nl(analysis, judge)
            except JudgeError as exc:
                self.post_message(NLJudged(token, None, str(exc)))
            except Exception as exc:  # noqa: BLE001 - a judge failure never takes the screen down
                self.post_message(NLJudged(token, None, f"judging failed: {type(exc).__name__}: {exc}"))
            else:
                self.post_message(NLJudged(token, report, None))

        self.run_worker(ask, thread=True, exclusive=True, group="judge", name="judge NL assertions")

    @on(NLJudged)
    def _judged(self, message: NLJudged) -> None:
        if message.token != self._token:
            return
        if message.report is None:
            self.notify(message.error or "the judge gave no answer", severity="error", timeout=8)
            return
        self.report = message.report
        self._update_header()
        self._update_eval()
        verdicts = message.report.evaluation.nl or []
        met = sum(1 for c in verdicts if c.met)
        self.notify(f"judged: {met}/{len(verdicts)} NL assertion(s) met", timeout=4)
        if self.run is not None:
            ctx = context(self)
            ctx.publish(judged(ctx.session.catalog, self.run, self.sim_id, message.report))

    def action_consolidated(self) -> None:
        """Show the recorded consolidated messages of a run graded from its ticks (its second view)."""
        from tau_tui.tui.screens.consolidated import ConsolidatedScreen

        sim = self.current.simulation(self.index)
        if sim.consolidated is None:
            what = "graded from its ticks" if sim.graded_from == "ticks" else "graded from its messages"
            self.notify(f"no consolidated messages list: this simulation is {what}", severity="warning")
            return
        self.app.push_screen(ConsolidatedScreen(sim.consolidated, self.sim_id))

    def action_divergence(self) -> None:
        report = self.report
        if report is None:
            self.notify(f"no evaluation: {self.eval_error or 'not evaluated'}", timeout=3)
            return
        div = report.explanation.divergence
        if div is None:
            why = "the final DB matches gold" if report.evaluation.db_match else "no DB check for this task"
            self.notify(f"the run never left the gold path ({why})", timeout=3)
            return
        if div.step is None:
            self.notify(div.message, timeout=6)
            return
        self.go(div.step)

    def action_toggle_expand(self) -> None:
        self.view.toggle_expanded()

    def action_expand_all(self) -> None:
        self.view.toggle_expand_all()

    def action_toggle_silent(self) -> None:
        if self.doc is None or self.doc.ticks is None:
            self.notify("not a voice (full-duplex) run: no silent chunks to fold", timeout=2)
            return
        self.view.toggle_silent()
        self._update_titles()

    def action_toggle_gold(self) -> None:
        if self.analysis is None or self.analysis.gold is None:
            self.notify("no gold state for this simulation (task unknown or no replay)", timeout=3)
            return
        self.gold_mode = not self.gold_mode
        self.action_side_tab("state")
        self._update_titles()
        self._shown_step = None
        self.show_step(self.cursor)

    def action_side_tab(self, key: str) -> None:
        tabs = self.query_one(TabbedContent)
        if key in self.OPTIONAL_TABS and not tabs.get_tab(f"tab-{key}").display:
            what = "recorded review" if key == "review" else "ticks (not a full-duplex run)"
            self.notify(f"this simulation has no {what}", severity="information")
            return
        if tabs.active != f"tab-{key}":
            tabs.active = f"tab-{key}"

    def action_search(self) -> None:
        search = self.query_one("#traj-search", Input)
        search.display = True
        search.value = self.query_text
        search.focus()

    @on(Input.Submitted, "#traj-search")
    def _search(self, event: Input.Submitted) -> None:
        self.query_text = event.value.strip()
        event.input.display = False
        self.view.focus()
        if self.doc is None:
            return
        hits = self.doc.search(self.query_text)
        self.view.set_terms(tuple(query_terms(self.query_text)))
        if not self.query_text:
            return
        if not hits:
            self.notify(f"no message matches {self.query_text!r}", timeout=3)
            return
        following = [h for h in hits if h >= self.cursor]
        self.go(following[0] if following else hits[0])
        self.notify(f"{formats.count(len(hits), 'matching message')} (n / N)", timeout=2)

    def _message_raw(self, step: int) -> Any:
        try:
            raw = self.current.raw_simulation(self.index)
        except RunFileError:  # changed on disk since it was indexed: the message as it was read
            raw = None
        messages = raw.get("messages") if isinstance(raw, dict) else None
        if isinstance(messages, list) and step < len(messages):
            return messages[step]
        assert self.doc is not None
        return message_to_dict(self.doc.steps[step].message)

    def action_open_message_json(self) -> None:
        if self.doc is not None and len(self.doc):
            context(self).open_json(self._message_raw(self.cursor), f"{self.sim_id}-step{self.cursor}")

    def action_open_simulation_json(self) -> None:
        try:
            raw = self.current.raw_simulation(self.index)
        except RunFileError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return
        context(self).open_json(raw, self.sim_id)

    def action_view_all(self) -> None:
        if self.doc is None or not len(self.doc):
            return
        step = self.doc.steps[self.cursor]
        lines: list[str] = []
        message = step.message
        if message.text:
            lines += content_lines(message.text) if message.role == "tool" else message.text.splitlines()
        for call in self.doc.call_views_at(self.cursor):
            if call.call_step == self.cursor:
                lines += ["", f"⚒ {call.name} ({call.pill})", *pretty_lines(call.call.arguments)]
        self.app.push_screen(TextViewScreen(f"step {self.cursor} · {step.role}", "\n".join(lines).strip("\n")))

    # --- notes ------------------------------------------------------------------------------------------------
    def action_add_note(self) -> None:
        """A note on the step under the cursor (the form can put it on the whole simulation instead)."""
        if self.doc is None or not len(self.doc):
            return
        step = self.doc.steps[self.cursor]
        entry = self.current.entries[self.index]
        path, sim_id = self.current.path, self.sim_id

        def chosen(request: NoteRequest | None) -> None:
            if request is not None:
                context(self).change_notes(
                    path,
                    add_note(
                        sim_id,
                        request.source,
                        request.error_type,
                        request.text,
                        step=request.step,
                        task_id=entry.task_id,
                        trial=entry.trial,
                    ),
                )

        self.app.push_screen(
            NoteFormScreen(
                f"simulation {sim_id} (task {entry.task_id})",
                step.index,
                default_source(step.role),
                step_summary(step, 70),
            ),
            chosen,
        )

    def action_accept_suggestion(self) -> None:
        """``S``: save, as a note on this step, the source a flag here suggests (compliance: agent; user hints: user)."""
        from tau_tui.evaluate.compliance import SUGGESTED_ERROR_TYPE, SUGGESTED_SOURCE

        if self.doc is None or self.report is None:
            return
        flag = next((f for f in self.report.flags if f.step == self.cursor and f.kind in SUGGESTED_SOURCE), None)
        if flag is None:
            self.notify("no flag with a suggested source at this step", timeout=3)
            return
        entry = self.current.entries[self.index]
        context(self).change_notes(
            self.current.path,
            add_note(
                self.sim_id,
                SUGGESTED_SOURCE[flag.kind],
                SUGGESTED_ERROR_TYPE[flag.kind],
                f"{flag.kind}: {flag.message}",
                step=self.cursor,
                task_id=entry.task_id,
                trial=entry.trial,
            ),
        )

    # --- fork from here -----------------------------------------------------------------------------------------
    def action_fork(self) -> None:
        """Continue this trajectory after the cursor's message with a new agent and user, then compare."""
        if self.doc is None or not len(self.doc):
            return
        step = self.doc.steps[self.cursor]

        def chosen(request: ForkRequest | None) -> None:
            if request is not None:
                self._fork_token += 1
                self.notify(f"forking after message {request.after}: {request.agent} / {request.user}…", timeout=3)
                self.fork_worker(self._fork_token, self.current, request)

        self.app.push_screen(ForkScreen(self.sim_id, step, solo=self.current.solo), chosen)

    @work(exclusive=True, group="fork", name="fork")
    async def fork_worker(self, token: int, run: RunFile, request: ForkRequest) -> None:
        """The continuation runs on the event loop (model calls are async); the workspace reads and saves in
        threads (``Workspace.fork_simulation``, shared with ``tau-tui fork``)."""
        analysis = self.analysis if self.analysis is not None and self.analysis.run is run else None
        task = analysis.task if analysis is not None else None
        try:
            result = await context(self).session.workspace.fork_simulation(run, request, task)  # scored with the judge
            fork_run = await asyncio.to_thread(open_run, result.path)
        except Exception as exc:  # noqa: BLE001 - a history that cannot be replayed, a model error…: shown
            self.post_message(ForkFinished(token, error=error_text(exc) or type(exc).__name__))
            return
        self.post_message(ForkFinished(token, result.episode, result.path, fork_run, step=result.after))

    @on(ForkFinished)
    def _fork_finished(self, message: ForkFinished) -> None:
        if message.token != self._fork_token:
            return
        if message.error:
            self.notify(f"fork failed: {message.error}", severity="error", timeout=8)
            return
        episode, fork_run = message.episode, message.run
        if fork_run is None:
            self.notify("fork failed: its recording could not be read back", severity="error", timeout=8)
            return
        context(self).add_run(fork_run)
        step = message.step
        sim = self.current.simulation(self.index)
        report = self.report
        original = ForkSide(
            "original",
            self.current.entries[self.index].reward,
            report.evaluation.reward if report is not None else None,
            sim.termination_reason,
            list(sim.trajectory),
            self.analysis.db_match if self.analysis is not None else None,
            self.analysis.timeline.final if self.analysis is not None else None,
        )
        result = episode.result
        reward_info = result.reward_info
        fork = ForkSide(
            "fork",
            None,
            episode.scored.reward if episode.scored is not None else None,
            result.termination_reason,
            list(result.messages or []),
            reward_info.db_check.db_match if reward_info is not None and reward_info.db_check else None,
            episode.env.freeze(),
        )
        title = (
            f"fork of {self.sim_id} after message {step} · agent {episode.agent_spec.model} · "
            f"user {episode.user_spec.model} · saved to {message.path}"
        )
        compare = CompareScreen(original, fork, step, fork_run, title)
        if self.app.screen is self:
            self.app.push_screen(compare)
        else:
            self.notify(f"fork finished: reward {fork.reward}; saved to {message.path}", timeout=6)


def show_trajectory(app: App[Any], run: RunFile, index: int, *, step: int | None = None, query: str = "") -> None:
    """Show simulation ``index`` of ``run`` on the inspector's trajectory screen (installed once, reused: reopening
    is instant); when that screen is already under the current one (a fork's comparison, a play session), a
    second trajectory screen opens on top."""
    if not app.is_screen_installed(TRAJECTORY):
        app.install_screen(TrajectoryScreen(), TRAJECTORY)
    screen = app.get_screen(TRAJECTORY)
    assert isinstance(screen, TrajectoryScreen)
    if screen in app.screen_stack and app.screen is not screen:
        screen = TrajectoryScreen()
    screen.open(run, index, step=step, query=query)
    if screen not in app.screen_stack:
        app.push_screen(screen)
