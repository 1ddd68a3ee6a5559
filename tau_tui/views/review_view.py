"""The trajectory screen's Review and Ticks tabs: a recorded review, and the time axis of a voice run.

Pure functions from ``model.reviews.SimReview`` and ``model.ticks.TickTimeline`` to rich ``Text``;
the screen only places them. Text from the recording is made visible by the pane that shows it.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from tau_tui.model.reviews import ReviewError, SimReview
from tau_tui.model.ticks import SIDES, TickTimeline, lane_lines

AUTH_STYLES = {"succeeded": "green", "failed": "bold red", "not_needed": "dim"}
LANE_PREFIX = 7  # a lane's label and the space after it
LANE_LABELS = (
    ("agent", "agent ", "green"),
    ("user", "user  ", "cyan"),
    ("overlap", "both  ", "yellow"),
    ("tools", "tools ", "magenta"),
    ("events", "events", "bold red"),
)


def render_review(review: SimReview | None, unplaced: list[ReviewError]) -> Text:
    """Everything the recording's newer fields say about the simulation, as recorded (not derived)."""
    text = Text()
    if review is None or not review.present:
        text.append("No review recorded for this simulation.\n", style="dim italic")
        text.append(
            "tau2 review writes results_reviewed.json: reviews of agent and user errors; "
            "voice runs record effects and hallucination checks.",
            style="dim",
        )
        return text
    if review.reviewed:
        kind = "agent + user" if review.review_kind == "full" else "user simulator only"
        text.append(f"review ({kind})", style="bold")
        if review.review_cost is not None:
            text.append(f"  cost ${review.review_cost:.4f}", style="dim")
        text.append("\n")
        if review.summary:
            text.append(f"{review.summary}\n", style="italic")
        for label, value in (
            ("agent error", review.agent_error),
            ("user error", review.user_error),
            ("critical user error", review.critical_user_error),
        ):
            if value is not None:
                text.append(f"  {label}: ", style="dim")
                text.append("yes" if value else "no", style="bold red" if value else "green")
                text.append("\n")
        for source in ("agent", "user", "unknown"):
            errors = review.errors_by(source)
            if errors:
                text.append(f"  {len(errors)} {source} error(s): ", style="dim")
                text.append(", ".join(e.label.split(" · ", 1)[-1] for e in errors) + "\n")
    if review.auth_status is not None:
        text.append("authentication ", style="bold")
        text.append(review.auth_status, style=AUTH_STYLES.get(review.auth_status, ""))
        if review.auth_reasoning:
            text.append(f": {review.auth_reasoning}", style="italic")
        text.append("\n")
    if review.hallucination_found is not None or review.hallucination_retries:
        text.append("hallucination check ", style="bold")
        found = review.hallucination_found
        text.append(
            "—" if found is None else ("found" if found else "none found"), style="bold red" if found else "green"
        )
        if review.hallucination_retries:
            text.append(f" · {review.hallucination_retries} retry(ies) of the user simulator", style="yellow")
        if review.hallucination_summary:
            text.append(f": {review.hallucination_summary}", style="italic")
        text.append("\n")
    if review.effects:
        kinds: dict[str, int] = {}
        for effect in review.effects:
            kinds[effect.effect_type] = kinds.get(effect.effect_type, 0) + 1
        text.append("audio effects ", style="bold")
        text.append(", ".join(f"{k} ×{n}" for k, n in kinds.items()) + "\n")
    if unplaced:
        text.append("\nerrors that name no step:\n", style="bold")
        for error in unplaced:
            text.append(f"  {error.label}: ", style="yellow")
            text.append(f"{error.reasoning}\n", style="italic")
    if review.problems:
        text.append("\nunreadable review fields (skipped):\n", style="bold yellow")
        for problem in review.problems[:20]:
            text.append(f"  {problem}\n", style="yellow")
    if review.errors:
        text.append("\ny / Y: next / previous review error · R: keep the review's errors as notes", style="dim")
    return text


def _axis(start: int, cells: int, bucket: int, seconds: float, room: int) -> str:
    """A time ruler over ``cells`` lane cells: a seconds label every 10 cells, in ``room`` cells at most (a label may
    run past the lanes; one that does not fit is left out, never cut)."""
    out = [" "] * room
    for cell in range(0, cells, 10):
        label = f"{(start + cell * bucket) * seconds:.0f}s"
        if cell + len(label) <= room:
            out[cell : cell + len(label)] = label
    return "".join(out).rstrip()


def _lanes(text: Text, timeline: TickTimeline, start: int, width: int, bucket: int, cursor: int | None) -> None:
    lanes = lane_lines(timeline, start, width, bucket)
    cells = len(lanes["agent"])
    text.append(" " * LANE_PREFIX + _axis(start, cells, bucket, timeline.tick_seconds, width) + "\n", style="dim")
    cursor_cell = None if cursor is None else (cursor - start) // bucket
    for key, label, style in LANE_LABELS:
        line = lanes[key]
        text.append(label + " ", style=f"bold {style}")
        for cell, ch in enumerate(line):
            text.append(ch, style=(style + " reverse") if cell == cursor_cell else style)
        text.append("\n")


def render_ticks(timeline: TickTimeline | None, cursor: int | None, width: int = 60) -> Text:
    """The tick timeline: the whole run at a glance, then the ticks around the cursor, then what happened there."""
    text = Text()
    if timeline is None or not len(timeline):
        text.append("Not a full-duplex run: no ticks recorded.", style="dim italic")
        return text
    width = max(20, width)
    counts = timeline.counts()
    seconds = len(timeline) * timeline.tick_seconds
    text.append(f"{counts['ticks']} ticks of {timeline.tick_seconds:g} s ({seconds:.1f} s)", style="bold")
    text.append(
        f" · agent {counts['agent_segments']} / user {counts['user_segments']} turns · {counts['overlaps']} overlaps · "
    )
    text.append(
        f"user interrupts {counts['user_interrupts_agent']} · agent interrupts {counts['agent_interrupts_user']}",
        style="bold red" if counts["agent_interrupts_user"] else "",
    )
    text.append(
        f" · {counts['backchannels']} backchannels · {counts['vocal_tics']} vocal tics · "
        f"{counts['tool_calls']} tool calls\n\n"
    )
    overview_bucket = max(1, -(-len(timeline) // width))
    text.append(f"whole run ({overview_bucket} tick(s) per cell)\n", style="bold dim")
    _lanes(text, timeline, 0, width, overview_bucket, cursor)
    if cursor is not None:
        start = max(0, min(cursor - width // 2, len(timeline) - width))
        text.append(f"\naround tick {timeline.rows[cursor].tick_id} (one tick per cell)\n", style="bold dim")
        _lanes(text, timeline, start, width, 1, cursor)
        row = timeline.rows[cursor]
        text.append(f"\ntick {row.tick_id} at {timeline.seconds(cursor):.1f} s: ", style="bold")
        speaking = [s for s in SIDES if row.speaking[s]]
        text.append((" and ".join(speaking) + " speaking") if speaking else "silence")
        if row.action:
            text.append(f" · user {row.action}", style="dim")
        if row.insert:
            text.append(f" · {row.insert}", style="yellow")
        for side in SIDES:
            if row.calls[side]:
                text.append(f" · {side} calls {', '.join(row.calls[side])}", style="magenta")
        text.append("\n")
    events = [e for e in timeline.interruptions if e.kind == "interruption"]
    if events:
        text.append("\ninterruptions\n", style="bold")
        for event in events[:50]:
            how = (
                "yielded after " + f"{event.yield_ticks * timeline.tick_seconds:.1f} s"
                if event.yielded and event.yield_ticks is not None
                else "kept talking"
            )
            text.append(
                f"  {timeline.seconds(event.tick):7.1f} s  {event.by} interrupts {event.of}: the {event.of} {how}\n",
                style="red" if not event.yielded else "",
            )
    calls = [(r, s, n) for r in timeline.rows for s in SIDES for n in r.calls[s]]
    if calls:
        text.append("\ntool calls on the time axis\n", style="bold")
        for row, side, name in calls[:100]:
            text.append(
                f"  {timeline.seconds(row.position):7.1f} s  tick {row.tick_id}  {side}: {name}\n", style="magenta"
            )
    return text


class TicksView:
    """``render_ticks`` at the width it is drawn in: its lanes fill the line and never wrap, at any pane size."""

    def __init__(self, timeline: TickTimeline | None, cursor: int | None) -> None:
        self.timeline, self.cursor = timeline, cursor

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield render_ticks(self.timeline, self.cursor, options.max_width - LANE_PREFIX)
