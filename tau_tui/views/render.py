"""Render by lookup: one small pure function per trajectory event kind.

``RENDERERS[kind](event, ctx)`` returns the rich ``Text`` of one event, at
most ``ctx.width`` cells wide per line. ``render_event`` is the edge where
recorded text is shown: the event's text goes in with its control characters
made visible (``tau_tui.textsafe``) and the finished line is checked once more,
so names and values inside it are never sent to the terminal either. The trajectory view adds the gutter
(role, step number, cursor) around it. A new event kind costs one entry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Callable

import orjson
from rich.text import Text

from tau_tui import formats, textsafe
from tau_tui.env.jsonify import parse_content
from tau_tui.views.markdown_text import looks_like_markdown, markdown_text
from tau_tui.views.trajectory_doc import CallView, Event, StepView

# Lines of an expanded argument or result block before it is clipped.
EXPANDED_LINES = 30

PILL_STYLES: dict[str, str] = {
    "ok": "bold black on green",
    "read": "black on grey62",
    "error": "bold white on dark_orange3",
    "mismatch": "bold white on red3",
    "lib text": "black on light_salmon3",
    "upstream fix": "black on light_sky_blue3",
    "hallucinated": "bold white on magenta",
    "fault": "bold black on orange1",
    "slow": "black on khaki1",
    "refused": "bold white on purple4",
    "no result": "black on yellow",
    "not replayed": "black on grey42",
    "done": "bold black on green3",
}
PILL_HELP: dict[str, str] = {
    "ok": "write re-executed by our replay, same output as recorded",
    "read": "read-only tool: not re-executed",
    "error": "the recorded result is an error",
    "mismatch": "re-executed write whose output differs from the recording",
    "lib text": "a mismatch only in text a library embeds (pydantic's docs-URL version): strict replay still fails",
    "upstream fix": "a mismatch the recording explains by an upstream fix of the tool (the issue is named); "
    "--upstream-fixes replays with the fix",
    "hallucinated": "not a tool of this domain: never executed",
    "fault": "an injected fault (timeout, transient error) kept the call from running: replay reproduces it",
    "slow": "an injected slow response: the call ran and answered late",
    "refused": "refused by the episode's backend (a cassette had no recorded result): never run",
    "no result": "the recording has no result for this call",
    "not replayed": "replay could not run for this simulation",
    "done": "executed by the environment in this live session",
}

# role → (label, style of label and gutter)
ROLE_STYLES: dict[str, tuple[str, str]] = {
    "assistant": ("agent", "green"),
    "user": ("user", "cyan"),
    "tool": ("tool", "grey62"),
    "system": ("system", "yellow"),
    "user_tool": ("user ⚒", "bright_cyan"),
    "user_tool_result": ("user tool", "bright_cyan"),
    "other": ("?", "red"),
}
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")


def role_of(step: StepView) -> tuple[str, str]:
    """Label and style for a step's role column; user-side tool traffic is its own role."""
    if step.user_side_tool:
        return ROLE_STYLES["user_tool_result" if step.role == "tool" else "user_tool"]
    return ROLE_STYLES.get(step.role, ROLE_STYLES["other"])


@dataclass(frozen=True)
class RenderContext:
    width: int
    expanded: bool = False
    terms: tuple[str, ...] = ()


Renderer = Callable[[Event, RenderContext], Text]


# --- helpers -------------------------------------------------------------------------


def pill(name: str) -> Text:
    return Text(f" {name} ", style=PILL_STYLES.get(name, "reverse"))


def one_line(value: Any) -> str:
    """Compact single-line text of a value (JSON for structures)."""
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, str):  # made visible before the split: CR, VT, FF, NEL are not whitespace to drop
        return textsafe.one_line(" ".join(textsafe.visible(value).split()))
    try:
        return textsafe.one_line(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode())
    except TypeError:
        return textsafe.one_line(" ".join(textsafe.visible(str(value)).split()))


def pretty_lines(value: Any) -> list[str]:
    """Indented JSON lines of a structure; a plain string stays as it is."""
    if isinstance(value, str):
        return textsafe.visible(value).splitlines() or [""]
    try:
        return textsafe.visible(
            orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
        ).splitlines()
    except TypeError:
        return textsafe.visible(str(value)).splitlines()


def content_lines(text: str | None) -> list[str]:
    """A tool output as readable lines: parsed JSON pretty-printed, plain text as is."""
    return pretty_lines(parse_content(text)) if text else [""]


def size_label(text: str | None) -> str:
    return formats.size(len(text or ""))


def clipped_block(lines: list[str], indent: str = "  ", limit: int = EXPANDED_LINES) -> Text:
    shown = lines[:limit]
    block = Text("\n".join(indent + line for line in shown), style="")
    if len(lines) > limit:
        block.append(
            f"\n{indent}… {len(lines) - limit} more lines — v: view all · e: open in $EDITOR", style="italic dim"
        )
    return block


def call_signature(call: CallView, limit: int = 400) -> str:
    """``name(k=v, ...)`` on one line, at most about ``limit`` characters."""
    args = call.call.arguments
    if isinstance(args, dict):
        inner = ", ".join(f"{one_line(k)}={clip(one_line(v), limit)}" for k, v in args.items())
    else:
        inner = one_line(args)
    return f"{textsafe.one_line(call.name)}({clip(inner, limit)})"


def clip(text: str, limit: int) -> str:
    """Cut a long one-line text early: rendering cost grows with its length, the screen shows a line."""
    return textsafe.clip(text, limit)


def fit_line(body: Text, width: int, right: Text | None = None) -> Text:
    """``body`` clipped to one line of ``width`` cells, with ``right`` flush right."""
    room = width - (right.cell_len + 1 if right is not None else 0)
    line = body.copy()
    line.truncate(max(room, 1), overflow="ellipsis")
    if right is not None:
        line.pad_right(max(width - line.cell_len - right.cell_len, 1))
        line.append_text(right)
    return line


def highlight(text: Text, ctx: RenderContext) -> Text:
    if ctx.terms:
        text.highlight_words(list(ctx.terms), style="black on yellow", case_sensitive=False)
    return text


def fault_text(fault: dict[str, Any]) -> str:
    """``timeout (30 s) · attempt 1 · plan rule 0``: what an injected fault was."""
    parts = [str(fault.get("kind", "fault")).replace("_", " ")]
    if fault.get("seconds") is not None:
        parts[0] += f" ({fault['seconds']:g} s)"
    if fault.get("attempt") is not None:
        parts.append(f"attempt {fault['attempt']}")
    if fault.get("rule") is not None:
        parts.append(f"plan rule {fault['rule']}")
    return " · ".join(parts)


def refusal_text(refusal: dict[str, Any]) -> str:
    """``refused by the cassette: different arguments``."""
    by = refusal.get("by") or "backend"
    reason = str(refusal.get("reason") or "no recorded result").replace("_", " ")
    return f"refused by the {by}: {reason}"


def discovery_text(call: CallView) -> str:
    """Where a discoverable tool became known, for one of its calls (through a wrapper: which tool)."""
    via = call.record.via if call.record is not None else None
    if via is not None:
        if call.discovered_at is None or call.discovered_at > call.call_step:
            return f"runs discoverable tool {via}, not unlocked or given before this call"
        return f"runs discoverable tool {via}, made available at step {call.discovered_at}"
    if call.discovered_at is None or call.discovered_at > call.call_step:
        return "discoverable tool called before this trajectory discovered it"
    return f"discoverable tool, discovered at step {call.discovered_at}"


def call_marks(call: CallView) -> list[tuple[str, str]]:
    """(text, style) lines saying what was special about a call: its fault, refusal, discovery, cassette."""
    out = []
    if call.fault is not None:
        ran = "carried out, answered late" if call.pill == "slow" else "not carried out"
        out.append((f"↯ injected fault: {fault_text(call.fault)} ({ran})", "orange1"))
    if call.refusal is not None:
        out.append((f"⊘ {refusal_text(call.refusal)} (never run)", "bold medium_purple1"))
    if call.mismatch_note is not None:
        out.append((f"≈ {call.mismatch_note}", "yellow"))
    if call.discoverable:
        out.append((f"✦ {discovery_text(call)}", "cyan"))
    if call.served is not None:
        where = f"{call.served.get('sim') or 'the recording'} step {call.served.get('step', '?')}"
        out.append((f"⏵ served by the cassette: the result recorded at {where}", "dim cyan"))
    return out


def _right_side(call: CallView, before: Text | None = None) -> Text:
    """The pill at the right end of a call or result line, with a ✦ for a discoverable tool."""
    right = before.copy() if before is not None else Text()
    if call.discoverable:
        right.append("✦ ", style="bold cyan")
    right.append_text(pill(call.pill))
    return right


# --- renderers ------------------------------------------------------------------------


def render_message_text(event: Event, ctx: RenderContext) -> Text:
    return _marked(Text(event.text.strip("\n")), ctx)


def render_assistant_text(event: Event, ctx: RenderContext) -> Text:
    """The agent's text formatted as Markdown (``views.markdown_text``); plain when there is nothing to format."""
    source = event.text.strip("\n")
    if not looks_like_markdown(source):
        return render_message_text(event, ctx)
    return _marked(markdown_text(source, ctx.width).copy(), ctx)


def _marked(text: Text, ctx: RenderContext) -> Text:
    """Stop tokens dimmed, search terms highlighted."""
    for token in STOP_TOKENS:
        text.highlight_words([token], style="bold dim")
    return highlight(text, ctx)


def render_system(event: Event, ctx: RenderContext) -> Text:
    text = Text(event.text.strip("\n"), style="italic")
    if not ctx.expanded and len(text.plain.splitlines()) > 3:
        lines = text.plain.splitlines()
        return Text("\n".join(lines[:3]) + f"\n… {len(lines) - 3} more lines (space: expand)", style="italic dim")
    return highlight(text, ctx)


def _call_line(event: Event, ctx: RenderContext, marker: str, style: str = "") -> Text:
    call = event.call
    assert call is not None
    signature = call_signature(call, 2 * ctx.width)
    name = textsafe.one_line(call.name)
    body = Text.assemble(
        (marker + " ", "bold " + style if style else "bold"),
        (name, "bold " + style),
        (signature[len(name) :], "dim" if not style else style),
    )
    line = highlight(fit_line(body, ctx.width, _right_side(call)), ctx)
    if not ctx.expanded:
        return line
    line.append("\n")
    line.append_text(clipped_block(pretty_lines(call.call.arguments)))
    for text, mark_style in call_marks(call):
        line.append(f"\n  {text}", style=mark_style)
    return line


def render_tool_call(event: Event, ctx: RenderContext) -> Text:
    return _call_line(event, ctx, "⚒")


def render_write(event: Event, ctx: RenderContext) -> Text:
    return _call_line(event, ctx, "✎")


def render_mismatch(event: Event, ctx: RenderContext) -> Text:
    divergent = event.call is None or event.call.pill == "mismatch"  # not explained by library text or a fix
    text = _call_line(event, ctx, "≠" if divergent else "≈", "red" if divergent else "yellow")
    if ctx.expanded:
        text.append(
            "\n  replay gave a different output: recorded vs replayed in the state pane"
            if divergent
            else "\n  recorded vs replayed in the state pane",
            style="red" if divergent else "yellow",
        )
    return text


def render_hallucinated(event: Event, ctx: RenderContext) -> Text:
    text = _call_line(event, ctx, "?", "magenta")
    if ctx.expanded:
        text.append("\n  not a tool of this domain: never executed, no state change", style="magenta")
    return text


def render_fault(event: Event, ctx: RenderContext) -> Text:
    return _call_line(event, ctx, "↯", "orange1")


def render_refused(event: Event, ctx: RenderContext) -> Text:
    return _call_line(event, ctx, "⊘", "medium_purple1")


def _result(event: Event, ctx: RenderContext, style: str) -> Text:
    call = event.call
    size = Text(size_label(event.text) + " ", style="dim")
    right = _right_side(call, size) if call is not None else Text.assemble(size, pill("no result"))
    name = f"{textsafe.one_line(call.name)} → " if call is not None else "(no call) → "
    body = Text.assemble(
        ("↳ ", "dim"), (name, "dim"), (clip(one_line(parse_content(event.text)), 2 * ctx.width), style)
    )
    line = highlight(fit_line(body, ctx.width, right), ctx)
    if ctx.expanded:
        line.append("\n")
        line.append_text(highlight(clipped_block(content_lines(event.text)), ctx))
        for text, mark_style in call_marks(call) if call is not None else []:
            line.append(f"\n  {text}", style=mark_style)
    return line


def render_tool_result(event: Event, ctx: RenderContext) -> Text:
    return _result(event, ctx, "")


def render_tool_error(event: Event, ctx: RenderContext) -> Text:
    return _result(event, ctx, "dark_orange")


def render_finding(event: Event, ctx: RenderContext) -> Text:
    kind = event.finding.kind.value if event.finding is not None else "finding"
    return Text.assemble(("⚠ ", "bold yellow"), (f"{kind}: ", "yellow"), (event.text, "yellow"))


def render_flag(event: Event, ctx: RenderContext) -> Text:
    return Text.assemble(("⚑ ", "bold cyan"), (event.text, "cyan"))


def render_discovery(event: Event, ctx: RenderContext) -> Text:
    if event.how == "unlock":
        return Text.assemble(
            ("✦ unlocked ", "bold cyan"),
            (event.text, "bold cyan"),
            (": the agent may call it through call_discoverable_agent_tool from here on", "cyan"),
        )
    if event.how == "give":
        return Text.assemble(
            ("✦ given to the user ", "bold cyan"),
            (event.text, "bold cyan"),
            (": the user may call it through call_discoverable_user_tool from here on", "cyan"),
        )
    return Text.assemble(
        ("✦ discovered ", "bold cyan"),
        (event.text, "bold cyan"),
        (": this result made the tool known; the agent may call it from here on", "cyan"),
    )


def render_refusal(event: Event, ctx: RenderContext) -> Text:
    call = event.call
    refusal = call.refusal if call is not None and call.refusal is not None else {}
    text = Text.assemble(
        ("⊘ ", "bold medium_purple1"),
        (refusal_text(refusal), "bold medium_purple1"),
        (": no recorded result for this request; the call never ran", "medium_purple1"),
    )
    if event.text == "first":
        text.append(" — the episode ended here", style="bold medium_purple1")
    return text


def render_note(event: Event, ctx: RenderContext) -> Text:
    note = event.note
    label = f"{note.source} · {note.error_type}" if note is not None else "note"
    text = Text.assemble(("✐ note ", "bold yellow"), (f"[{label}] ", "yellow"), (event.text, "italic"))
    return highlight(text, ctx)


REVIEW_STYLES = {"agent": "bold white on dark_red", "user": "bold black on cyan", "unknown": "bold black on grey62"}


def render_review(event: Event, ctx: RenderContext) -> Text:
    """A recorded review's error (``tau2 review``, or a hallucination check): who, how bad, tags, why."""
    error = event.review
    assert error is not None, "a review event carries its error"
    origin = {"review": "review", "user_only_review": "user review", "hallucination_check": "hallucination check"}
    text = Text.assemble(
        (f" {origin.get(error.origin, 'review')} ", REVIEW_STYLES.get(error.source, "")),
        (f" {error.label}", "bold red" if error.critical else "bold yellow"),
    )
    if error.tick_start is not None:
        text.append(f" ({error.where})", style="dim")
    body = event.text.strip()
    if not ctx.expanded and len(body) > 300:
        body = body[:300] + " … (space: expand)"
    if body:
        text.append(f"\n  {body}", style="italic")
    if ctx.expanded and error.correct_behavior:
        text.append(f"\n  should have: {error.correct_behavior}", style="green")
    if ctx.expanded and error.user_message:
        text.append(f"\n  user said: {error.user_message}", style="dim")
    return highlight(text, ctx)


def render_effect(event: Event, ctx: RenderContext) -> Text:
    effect = event.effect
    assert effect is not None, "an effect event carries its effect"
    span = f"{effect.start_ms} ms" + ("" if effect.end_ms is None else f"–{effect.end_ms} ms")
    params = f" {one_line(effect.params)}" if effect.params and ctx.expanded else ""
    return Text.assemble(
        ("♪ audio effect ", "bold blue"),
        (f"{effect.effect_type} ", "blue"),
        (f"on the {effect.participant} side, {span}{params}", "dim"),
    )


def render_divergence(event: Event, ctx: RenderContext) -> Text:
    return Text.assemble(("⤷ left the gold path here: ", "bold magenta"), (event.text, "magenta"))


def render_message_error(event: Event, ctx: RenderContext) -> Text:
    text = event.text.strip()
    if not ctx.expanded and len(text.splitlines()) > 2:
        text = "\n".join(text.splitlines()[:2]) + " … (space: expand)"
    return Text.assemble(("✗ recorded error: ", "bold dark_orange"), (text, "dark_orange"))


def render_unreadable(event: Event, ctx: RenderContext) -> Text:
    return Text.assemble(("⚠ unreadable message: ", "bold red"), (event.text, "red"))


RENDERERS: dict[str, Renderer] = {
    "system": render_system,
    "user_text": render_message_text,
    "assistant_text": render_assistant_text,
    "tool_call": render_tool_call,
    "write": render_write,
    "mismatch": render_mismatch,
    "hallucinated": render_hallucinated,
    "fault": render_fault,
    "refused": render_refused,
    "tool_result": render_tool_result,
    "tool_error": render_tool_error,
    "finding": render_finding,
    "flag": render_flag,
    "divergence": render_divergence,
    "discovery": render_discovery,
    "refusal": render_refusal,
    "note": render_note,
    "review": render_review,
    "effect": render_effect,
    "message_error": render_message_error,
    "unreadable": render_unreadable,
}


def render_event(event: Event, ctx: RenderContext) -> Text:
    """One event's lines; recorded control characters come out visible (the edge of the trajectory)."""
    if textsafe.has_unsafe(event.text):
        event = replace(event, text=textsafe.visible(event.text))
    return textsafe.visible_text(RENDERERS[event.kind](event, ctx))


def render_step(step: StepView, ctx: RenderContext) -> Text:
    """All events of one message, one after another ("(empty message)" when it has none)."""
    if not step.events:
        return Text("(empty message)", style="dim italic")
    return Text("\n").join(render_event(e, ctx) for e in step.events)
