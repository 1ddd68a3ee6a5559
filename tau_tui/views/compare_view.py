"""Two trajectories of one task side by side, as rich content (the compare screen's pane).

Pure functions over ``calibrate.compare.TrialComparison``: one row per aligned
turn (left | right), the turn holding the first differing tool call marked
and that call highlighted on both sides, then the DB states right after it
diffed (path, left value, right value), then the final DBs.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tau_tui import formats
from tau_tui.calibrate.compare import AlignedTurn, Side, TrialCall, TrialComparison, Turn
from tau_tui.env.store import to_plain
from tau_tui.replay.diff import Change, path_text
from tau_tui.textsafe import clip
from tau_tui.views.render import one_line

DIVERGENT_STYLE = "on grey23"
TEXT_LIMIT = 240
MAX_CHANGES = 40
ROLE_LABELS = {"assistant": "agent", "user": "user", "system": "system"}


def _side_head(side: Side) -> Text:
    reward = formats.reward(side.reward)
    style = "green" if side.reward is not None and side.reward >= 1.0 - 1e-9 else "red"
    return Text.assemble(
        (one_line(side.label), "bold"), (f"  {one_line(side.termination or '?')} · reward ", "dim"), (reward, style)
    )


def _call_text(call: TrialCall, differs: bool, side: str) -> Text:
    args = call.arguments
    inner = (
        ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in args.items()) if isinstance(args, dict) else one_line(args)
    )
    who = "" if call.requestor == "assistant" else f"[{one_line(call.requestor)}] "
    text = Text()
    if differs:
        text.append("▶ ", style="bold red" if side == "left" else "bold green")
    text.append(
        f"⚒ {who}{one_line(call.name)}",
        style="bold" + (" red" if differs and side == "left" else " green" if differs else ""),
    )
    text.append(f"({inner})", style="red" if differs and side == "left" else "green" if differs else "dim")
    if call.error:
        text.append("  error", style="bold dark_orange")
    return text


def turn_cell(turn: Turn | None, divergent_call: TrialCall | None, side: str) -> Text:
    """A turn's text and its calls; the divergent call (if in this turn) marked."""
    if turn is None:
        return Text("—", style="dim")
    out = Text()
    label = ROLE_LABELS.get(turn.role, turn.role)
    out.append(f"{label}: ", style="bold cyan" if turn.role == "user" else "bold green")
    if turn.text:
        text = one_line(turn.text)  # visible before the whitespace is folded
        out.append(text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…")
    elif not turn.calls:
        out.append("(no text)", style="dim")
    for call in turn.calls:
        out.append("\n")
        out.append_text(_call_text(call, call is divergent_call, side))
    return out


def _value(value: Any, limit: int = 70) -> str:
    return clip(one_line(to_plain(value)), limit)


def changes_table(changes: list[tuple[str, Change]], left: str, right: str) -> RenderableType:
    """Differing paths: side, path, the left value, the right value."""
    if not changes:
        return Text("  the same on both sides", style="dim italic")
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
    table.add_column("DB", no_wrap=True, style="dim")
    table.add_column("path", ratio=2, overflow="fold")
    table.add_column(Text(one_line(left)), ratio=2, overflow="fold", style="red")  # recorded labels: never markup
    table.add_column(Text(one_line(right)), ratio=2, overflow="fold", style="green")
    for side, change in changes[:MAX_CHANGES]:
        before = "(absent)" if change.kind == "added" else _value(change.before)
        after = "(absent)" if change.kind == "removed" else _value(change.after)
        table.add_row(Text(side), Text(one_line(path_text(change.path))), Text(before), Text(after))
    if len(changes) > MAX_CHANGES:
        table.add_row("", Text(f"… {len(changes) - MAX_CHANGES} more", style="dim"), "", "")
    return table


def _sided(agent: list[Change], user: list[Change]) -> list[tuple[str, Change]]:
    return [("agent", c) for c in agent] + [("user", c) for c in user]


def divergent_turn(comparison: TrialComparison) -> AlignedTurn | None:
    return next((t for t in comparison.turns if t.divergent), None)


def render_trial_comparison(comparison: TrialComparison) -> RenderableType:
    """The whole comparison: heads, aligned turns, first differing call, DB at that point, final DB."""
    left, right = comparison.left, comparison.right
    d = comparison.divergence
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True, show_lines=False)
    table.add_column("turn", justify="right", no_wrap=True, width=5)
    table.add_column(_side_head(left), ratio=1, overflow="fold")
    table.add_column(_side_head(right), ratio=1, overflow="fold")
    for turn in comparison.turns:
        marked = turn.divergent
        number = Text(f"{'▶' if marked else ''}{turn.index}", style="bold red" if marked else "dim")
        table.add_row(
            number,
            turn_cell(turn.left, d.left if d else None, "left"),
            turn_cell(turn.right, d.right if d else None, "right"),
            style=DIVERGENT_STYLE if marked else None,
        )
        table.add_row("", "", "")
    parts: list[RenderableType] = [table]
    kind = "write " if comparison.writes_only else ""
    if d is None:
        parts.append(Text(f"same {kind}tool calls on both sides, in the same order", style="bold green"))
    else:
        divergent = divergent_turn(comparison)
        head = Text(f"▶ first differing {kind}tool call: #{d.position + 1}", style="bold red")
        if divergent is not None:
            head.append(f" (turn {divergent.index})", style="red")
        parts += [
            head,
            Text.assemble(
                ("  left:  ", "dim"),
                _call_text(d.left, True, "left") if d.left else Text("(none: no more calls)", style="dim"),
            ),
            Text.assemble(
                ("  right: ", "dim"),
                _call_text(d.right, True, "right") if d.right else Text("(none: no more calls)", style="dim"),
            ),
            Text(""),
            Text(f"DB right after it (left step {d.left_step}, right step {d.right_step})", style="bold"),
            changes_table(_sided(d.agent_diff, d.user_diff), left.label, right.label),
        ]
    parts += [
        Text(""),
        Text("final DB", style="bold"),
        changes_table(_sided(comparison.final_agent_diff, comparison.final_user_diff), left.label, right.label),
    ]
    return Group(*parts)
