"""The status line of work in progress: a rollout (``rollout.progress.RolloutProgress``), a calibration's trials;
and, over Ray, the line of the rollout's nodes (``node_line``), fitted to the width it is drawn at."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from tau_tui import formats
from tau_tui.rollout.progress import NodeTally, RolloutProgress, RunTally, node_parts
from tau_tui.textsafe import one_line

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

NODE_STYLES = {"done": "", "running": "cyan", "dead": "bold red", "lost": "yellow"}  # ``node_parts`` kinds
NODE_NAME_WIDTH = 24  # a longer node name is clipped in the middle (its host and its id both show)


def progress_status(
    pill: str,
    head: str,
    done: int | None = None,
    total: int | None = None,
    running: int = 0,
    tail: list[tuple[str, str]] | None = None,
    state: str = "running",
    stopped: str = "stopped",
    head_style: str = "",
) -> Text:
    """The one status line of work in progress (a rollout, a calibration's trials):
    ``[pill] head done/total done · N running <tail> <state>`` where state is ``finished``,
    ``stopped`` (its own wording) or running (``K stops``)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {pill} ", style="bold reverse")
    text.append(head, style=head_style)
    if done is None:
        return text
    text.append(f"{done}/{total or '?'} done", style="bold")
    if running:
        text.append(f" · {running} running")
    for part, style in tail or []:
        text.append(part, style=style)
    if state == "stopped":
        text.append(f"  {stopped}", style="yellow")
    elif state == "finished":
        text.append("  finished", style="green")
    else:
        text.append("  K stops", style="dim")
    return text


def rollout_status(progress: RolloutProgress) -> Text:
    """The runs screen's status line of the rollout in progress (or the last one)."""
    head = f" {progress.domain} · agent {progress.agent} · user {progress.user} · "
    if progress.error:
        text = progress_status("rollout", head)
        text.append(f"failed: {progress.error}", style="bold red")
        return text
    tail: list[tuple[str, str]] = [(f" · avg reward {formats.average(progress.average)}", "")]
    if progress.unscored:
        tail.append((f" · {progress.unscored} unscored", "yellow"))
    tail.append((f" · {progress.path}", "dim"))
    return progress_status(
        "rollout",
        head,
        progress.done,
        progress.total,
        progress.running if progress.active else 0,
        tail,
        "stopped" if progress.stopped else "finished" if progress.finished else "running",
        "stopped (tau-tui run --resume finishes it)",
    )


def _node_name(name: str, width: int = NODE_NAME_WIDTH) -> str:
    name = one_line(name)
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head) :]


def node_line(tally: RunTally, width: int) -> Text:
    """``[nodes] a: 12 done · 2 running │ b: died · 3 done · 1 lost │ +N more``: as many nodes as fit in
    ``width`` cells, in ``RunTally.ranked_nodes`` order, the rest counted (dead ones among them named)."""
    ranked = tally.ranked_nodes()
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" nodes ", style="bold reverse")
    for shown, (name, node) in enumerate(ranked):
        entry = Text(" │ " if shown else " ", style="dim")
        entry.append(_node_name(name), style="bold red" if node.dead else "bold")
        entry.append(": ")
        for i, (part, kind) in enumerate(node_parts(node)):
            entry.append(" · " if i else "", style="dim")
            entry.append(part, style=NODE_STYLES[kind])
        after = _more(ranked[shown + 1 :])  # what must still fit if this node is shown
        if shown and text.cell_len + entry.cell_len + after.cell_len > width:
            text.append_text(_more(ranked[shown:]))
            return text
        text.append_text(entry)
    return text


def _more(rest: list[tuple[str, NodeTally]]) -> Text:
    """`` │ +N more (K died)``: the nodes left out (nothing when none is)."""
    if not rest:
        return Text()
    dead = sum(node.dead for _, node in rest)
    text = Text(" │ ", style="dim")
    text.append(f"+{len(rest)} more")
    if dead:
        text.append(f" ({dead} died)", style="bold red")
    return text


class NodeLine:
    """``node_line`` as a renderable: fitted to the width it is drawn at (80 columns or 200)."""

    def __init__(self, tally: RunTally):
        self.tally = tally

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield node_line(self.tally, options.max_width)
