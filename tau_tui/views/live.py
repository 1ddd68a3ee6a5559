"""The status line of work in progress: a rollout (``rollout.progress.RolloutProgress``), a calibration's trials."""

from __future__ import annotations

from rich.text import Text

from tau_tui import formats
from tau_tui.rollout.progress import RolloutProgress


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
