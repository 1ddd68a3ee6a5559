"""Two trajectories of the same task side by side: aligned by turn, first differing call, DB diff there.

Opened with ``=`` on two runs (runs table or calibrate grid). Both are
replayed in a thread worker (the replay service's cache and lock) and
compared with ``calibrate.compare``; the fork comparison (``compare.py``)
is a different view: a fork shares its prefix with the original.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tau_tui.catalog import file_label
from tau_tui.model.io import RunFile, RunFileError, open_run
from tau_tui.textsafe import one_line, visible_renderable
from tau_tui.tui.context import context
from tau_tui.tui.messages import ComparisonReady
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.views.compare_view import divergent_turn, render_trial_comparison
from tau_tui.views.layout import distinct_starts, elide

SimKey = tuple[Path, str]  # (file, simulation id)
LABEL_FILE_WIDTH = 24


def side_labels(left: tuple[RunFile, int], right: tuple[RunFile, int]) -> tuple[str, str]:
    """Names for the two sides that tell them apart: the simulation id (whole) and trial, then what else differs.

    The agent model is added only when the two sides' models differ, the file
    only when the simulation ids are the same (the same run saved twice).
    """

    def parts(run: RunFile, index: int) -> tuple[str, str, str]:
        entry = run.entries[index]
        sim = entry.id if entry.trial is None else f"{entry.id} · trial {entry.trial}"
        return sim, run.agent_model or run.agent_implementation or "", file_label(run)

    (a_sim, a_model, a_file), (b_sim, b_model, b_file) = parts(*left), parts(*right)
    a, b = a_sim, b_sim
    if a_model != b_model:
        a, b = f"{a} · {a_model or '?'}", f"{b} · {b_model or '?'}"
    if a_sim == b_sim and a_file != b_file:
        starts = distinct_starts([a_file, b_file])
        a = f"{a} · {elide(a_file, LABEL_FILE_WIDTH, starts[a_file])}"
        b = f"{b} · {elide(b_file, LABEL_FILE_WIDTH, starts[b_file])}"
    return a, b


class TrialCompareScreen(Screen[None]):
    """The comparison of two simulations of one task; Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="trials.back"),
        Binding("d", "divergence", "Scroll to the first differing call", id="trials.divergence"),
        Binding("o", "open('left')", "Open the left run at the divergence", id="trials.open_left"),
        Binding("O", "open('right')", "Open the right run at the divergence", id="trials.open_right"),
        Binding("w", "toggle_writes", "Compare writes only / every call", id="trials.writes"),
        Binding("e", "open_json", "Comparison JSON in $EDITOR", id="trials.editor", show=False),
    ]

    def __init__(self, left: SimKey, right: SimKey) -> None:
        super().__init__()
        self.keys = (left, right)
        self.writes_only = False
        self.comparison: Any = None
        self.sides: tuple[tuple[RunFile, int], tuple[RunFile, int]] | None = None

    def compose(self) -> ComposeResult:
        yield InfoLine(id="trials-header")
        yield RichPane(id="trials-view")
        yield Footer()

    def on_mount(self) -> None:
        (lp, ls), (rp, rs) = self.keys
        self.query_one("#trials-header", InfoLine).set(
            Text(
                f" comparing {one_line(ls)} ({one_line(lp.name)}) with {one_line(rs)} ({one_line(rp.name)})…",
                style="dim",
            )
        )
        self.query_one("#trials-view", RichPane).focus()
        self._start()

    def _start(self) -> None:
        catalog = context(self).session.catalog
        known = []
        for path, sim_id in self.keys:
            row = catalog.find(path, sim_id)
            known.append((row.run, row.index) if row is not None else None)
        self.compare_worker(known, self.writes_only)

    @work(thread=True, exclusive=True, group="compare", name="compare trajectories")
    def compare_worker(self, known: list[tuple[RunFile, int] | None], writes_only: bool) -> None:
        from tau_tui.calibrate.compare import compare_timelines, side_of

        service = context(self).session.service
        sides = []
        try:
            for (path, sim_id), hit in zip(self.keys, known, strict=False):
                if hit is None:
                    run = open_run(path)
                    index = run.find(sim_id)
                    if index is None:
                        raise ValueError(f"{path.name} has no simulation {sim_id}")
                    hit = (run, index)
                sides.append(hit)
            left, right = sides
            analyses = [service.analyze(*left), service.analyze(*right)]
            if analyses[0].sim.task_id != analyses[1].sim.task_id:
                raise ValueError(
                    f"runs of different tasks ({analyses[0].sim.task_id} and "
                    f"{analyses[1].sim.task_id}): compare two runs of one task"
                )
            labels = side_labels(left, right)
            comparison = compare_timelines(
                side_of(analyses[0], labels[0]), side_of(analyses[1], labels[1]), writes_only
            )
        except (RunFileError, ValueError) as exc:
            self.post_message(ComparisonReady(error=str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - a replay that cannot run is reported, never a crash
            self.post_message(ComparisonReady(error=f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(ComparisonReady(comparison, (left, right)))

    @on(ComparisonReady)
    def _ready(self, message: ComparisonReady) -> None:
        if message.error is not None:
            self.notify(f"cannot compare: {message.error}", severity="error", timeout=8)
            self.dismiss(None)
            return
        self.comparison, self.sides = message.comparison, message.sides
        comparison = self.comparison
        pane = self.query_one("#trials-view", RichPane)
        pane.show(render_trial_comparison(comparison))
        d = comparison.divergence
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(" compare ", style="bold reverse")
        header.append(f"  task {one_line(str(comparison.left.task_id))} · {len(comparison.turns)} turns aligned · ")
        kind = "write " if comparison.writes_only else ""
        if d is None:
            header.append(f"same {kind}tool calls", style="green")
        else:
            turn = divergent_turn(comparison)
            header.append(
                f"first differing {kind}call #{d.position + 1}"
                + (f" at turn {turn.index}" if turn is not None else ""),
                style="bold red",
            )
            header.append(f" · DB there: {len(d.agent_diff) + len(d.user_diff)} differing paths")
        final = len(comparison.final_agent_diff) + len(comparison.final_user_diff)
        header.append(f" · final DB: {'same' if not final else f'{final} differing paths'}")
        self.query_one("#trials-header", InfoLine).set(header)
        pane.border_title = visible_renderable(
            f"{comparison.left.label}  │  {comparison.right.label}", single_line=True
        )
        pane.border_subtitle = "d: to the divergence · o / O: open left / right there · w: writes only"
        self.action_divergence()

    @property
    def plain(self) -> str:
        return self.query_one("#trials-view", RichPane).plain

    def action_back(self) -> None:
        self.dismiss(None)

    def action_divergence(self) -> None:
        """Scroll so that the marked turn is near the top."""
        pane = self.query_one("#trials-view", RichPane)
        lines = pane.plain.splitlines()
        marked = next((i for i, line in enumerate(lines) if line.lstrip().startswith("▶")), None)
        if marked is not None:
            pane.scroll_to(y=max(marked - 2, 0), animate=False)

    def action_open(self, side: str) -> None:
        if self.comparison is None or self.sides is None:
            return
        run, index = self.sides[0 if side == "left" else 1]
        d = self.comparison.divergence
        step = None
        if d is not None:
            call = d.left if side == "left" else d.right
            step = call.step if call is not None else (d.left_step if side == "left" else d.right_step)
        context(self).open_run_at(run, index, step=step)

    def action_toggle_writes(self) -> None:
        self.writes_only = not self.writes_only
        self.notify("comparing " + ("writes only" if self.writes_only else "every tool call"), timeout=2)
        self._start()

    def action_open_json(self) -> None:
        if self.comparison is not None:
            context(self).open_json(self.comparison.to_json(), "comparison")
