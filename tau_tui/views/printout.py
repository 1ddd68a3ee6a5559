"""One simulation printed whole, as plain text or GitHub Markdown: ``tau-tui show``, to paste into an issue.

Every message (role, text, tool calls with their arguments and the replay's verdict, tool results,
the findings at that step), then the replay facts (``replay.facts``, what ``tau-tui replay``
prints) and the reward explained (``evaluate.render``, what ``tau-tui eval`` prints, with each
component recorded beside recomputed). Long texts are clipped, saying how much was left out,
unless ``full``.

Recorded text is untrusted: it is made visible (``textsafe.visible``) before it is placed, and in
Markdown it goes inside fenced blocks whose fence is longer than any run of backticks in it, or is
escaped where it sits inline (headings, table cells), so it can neither close a fence nor bring in
HTML, links or emphasis of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tau_tui import formats
from tau_tui.evaluate.render import breakdown_rows, simulation_block
from tau_tui.model.messages import OtherMessage, ParticipantMessage, ToolMessage
from tau_tui.replay.facts import plain_text
from tau_tui.replay.timeline import Verdict
from tau_tui.textsafe import one_line, visible

if TYPE_CHECKING:
    from tau_tui.analysis import SimAnalysis
    from tau_tui.evaluate import SimReport
    from tau_tui.model.io import RunFile
    from tau_tui.model.results import SimulationRun

CLIP_CHARS = 1200  # a message text, tool arguments or a tool result longer than this is clipped
CLIP_LINES = 25

VERDICT_WORDS = {
    Verdict.REPLAYED: "replayed",
    Verdict.MISMATCH: "MISMATCH: replayed output differs",
    Verdict.SKIPPED_READ: "skipped: a read, not re-run",
    Verdict.SKIPPED_UNKNOWN: "hallucinated: no such tool",
    Verdict.INJECTED_FAULT: "injected fault, reproduced",
    Verdict.REFUSED: "refused",
    Verdict.NO_RESULT: "no result recorded",
}


@dataclass
class Shown:
    """A recorded text as it is printed: made visible, clipped unless asked in full."""

    text: str
    cut: int = 0  # characters left out

    @classmethod
    def of(cls, text: str, full: bool) -> Shown:
        text = visible(text)
        if full:
            return cls(text)
        lines = text.split("\n")
        kept = "\n".join(lines[:CLIP_LINES])[:CLIP_CHARS]
        return cls(kept, len(text) - len(kept))

    @property
    def tail(self) -> str:
        return f"… {self.cut:,} more character{'s' if self.cut != 1 else ''} (--full shows all)" if self.cut else ""


@dataclass
class Call:
    name: str
    arguments: Any
    requestor: str
    verdict: str | None  # None: not replayed


@dataclass
class Entry:
    """One message of the trajectory with what the replay says about it."""

    index: int
    role: str
    text: str
    calls: list[Call]
    result_of: str | None = None  # a tool message: the tool whose result it is
    error: bool = False
    findings: tuple[str, ...] = ()


def entries(sim: SimulationRun, analysis: SimAnalysis | None) -> list[Entry]:
    """The trajectory as printed: from the replay's steps when there is one, else the recorded messages."""
    if analysis is None:
        return [_entry(index, message) for index, message in enumerate(sim.trajectory)]
    timeline = analysis.timeline
    out = []
    for step in timeline.steps:
        entry = _entry(step.index, step.message)
        if step.calls:
            entry.calls = [
                Call(r.name, r.call.arguments, r.requestor, VERDICT_WORDS.get(r.verdict, r.verdict.value))
                for r in (timeline.calls[i] for i in step.calls)
            ]
        if entry.result_of is not None and step.executed is not None:
            entry.result_of = timeline.calls[step.executed].name
        entry.findings = tuple(
            f"finding [{timeline.findings[i].kind.value}]: {timeline.findings[i].message}" for i in step.findings
        )
        out.append(entry)
    return out


def _entry(index: int, message: Any) -> Entry:
    """A recorded message as printed, before the replay adds its verdicts."""
    text = message.text
    if isinstance(message, OtherMessage) and message.problem:
        text = f"(unreadable message: {message.problem}) {text}".strip()
    calls = [
        Call(c.name, c.arguments, c.requestor, None)
        for c in (message.tool_calls or [] if isinstance(message, ParticipantMessage) else [])
    ]
    tool = isinstance(message, ToolMessage)
    return Entry(index, message.role, text, calls, "" if tool else None, tool and message.error)


def _json(value: Any, indent: int | None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=False, default=str)


def _result_text(text: str, indent: int | None) -> str:
    """A tool result: as JSON, laid out, when it is JSON; else as recorded."""
    try:
        return _json(json.loads(text), indent)
    except (ValueError, TypeError, RecursionError):
        return text


def _header(run: RunFile, sim: SimulationRun) -> list[tuple[str, str]]:
    recorded = sim.reward_info.reward if sim.reward_info is not None else None
    rows = [("file", str(run.path)), ("simulation", sim.id), ("task", str(sim.task_id))]
    if sim.trial is not None:
        rows.append(("trial", str(sim.trial)))
    rows += [
        ("domain", run.domain or "?"),
        ("termination", str(sim.termination_reason or "?")),
        ("agent", run.agent_model or run.agent_implementation or "?"),
        ("user", run.user_model or run.user_implementation or "?"),
        ("recorded reward", formats.reward(recorded, "none")),
    ]
    return rows


# --- plain text ---------------------------------------------------------------------------------------------


def _indented(text: str, prefix: str) -> list[str]:
    return [prefix + line for line in text.split("\n")]


def text_printout(
    run: RunFile,
    sim: SimulationRun,
    analysis: SimAnalysis | None,
    report: SimReport | None,
    *,
    full: bool = False,
    problem: str | None = None,
) -> str:
    """The plain-text printout; ``problem``: why there is no replay (then only the messages are shown)."""
    lines = [f"{name}: {one_line(value)}" for name, value in _header(run, sim)]
    items = entries(sim, analysis)
    lines += ["", f"TRAJECTORY ({len(items)} message{'s' if len(items) != 1 else ''})"]
    pad = " " * 6
    for entry in items:
        role = entry.role if entry.result_of is None else f"tool {entry.result_of}".rstrip()
        lines.append(f"[{entry.index}] {one_line(role)}{' (error)' if entry.error else ''}")
        body = entry.text if entry.result_of is None else _result_text(entry.text, None)
        if body:
            shown = Shown.of(body, full)
            lines += _indented(shown.text, pad)
            if shown.tail:
                lines.append(pad + shown.tail)
        for call in entry.calls:
            who = "" if call.requestor == "assistant" else f" ({one_line(call.requestor)})"
            verdict = f"  [{call.verdict}]" if call.verdict else ""
            arguments = Shown.of(_json(call.arguments, None), full)
            lines.append(f"{pad}→ {one_line(call.name)}{who}{verdict}")
            lines += _indented(arguments.text, pad + "  ")
            if arguments.tail:
                lines.append(pad + "  " + arguments.tail)
        lines += [f"{pad}⚠ {visible(f)}" for f in entry.findings]
    lines += ["", "REPLAY"]
    if analysis is None:
        lines.append(f"  not replayed: {problem or 'no replay'}")
    else:
        lines.append(_replay_text(analysis))
    if report is not None:
        lines += ["", "REWARD", _reward_text(report), "  components (recorded → recomputed):"]
        rows = breakdown_rows(report, _recorded_breakdown(sim))
        width = max((len(name) for name, _, _ in rows), default=0)
        lines += [
            f"    {one_line(name).ljust(width)}  {formats.reward(a, '—')} → {formats.reward(b, '—')}"
            f"{'  DIFFERS' if _differ(a, b) else ''}"
            for name, a, b in rows
        ]
        if not rows:
            lines.append("    none on either side")
    return visible("\n".join(lines))


def _replay_text(analysis: SimAnalysis) -> str:
    """What ``tau-tui replay`` prints, without its heading (the printout's header says the same)."""
    return plain_text([fact for fact in analysis.facts() if fact.level > 0])


def _reward_text(report: SimReport) -> str:
    """What ``tau-tui eval --sim`` prints, without its heading."""
    return simulation_block(report).partition("\n")[2]


def _recorded_breakdown(sim: SimulationRun) -> dict[str, float]:
    info = sim.reward_info
    return dict(info.reward_breakdown or {}) if info is not None else {}


def _differ(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) > 1e-6


# --- GitHub Markdown --------------------------------------------------------------------------------------

_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#$])")  # emphasis, code, links, cells, strike, headings, math
_BLOCK_START = re.compile(r"^([-+=]|\d+(?=[.)]))")  # what would open a list or an underline where a line begins


def md_inline(text: str) -> str:
    """Recorded text for an inline place (a heading, a table cell, a list item): one line, HTML characters as
    entities, Markdown's inline marks escaped, and a list marker at its start too (no emphasis, link, code span,
    table cell or nested list of its own)."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)
    match = _BLOCK_START.match(text)
    if match is None:
        return text
    end = match.end()
    return text[:end] + "\\" + text[end:] if match.group(1)[0].isdigit() else "\\" + text


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a fenced code block no line of it can close: the fence is longer than its longest backtick run."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _md_block(text: str, full: bool, info: str = "text") -> list[str]:
    shown = Shown.of(text, full)
    out = [fenced(shown.text, info)]
    if shown.tail:
        out.append(f"*{md_inline(shown.tail)}*")
    return out


def markdown_printout(
    run: RunFile,
    sim: SimulationRun,
    analysis: SimAnalysis | None,
    report: SimReport | None,
    *,
    full: bool = False,
    problem: str | None = None,
) -> str:
    """The GitHub Markdown printout: headings, a table of the facts, fenced blocks, the reward table."""
    out = [f"### Simulation {md_inline(sim.id)}", "", "| | |", "|---|---|"]
    out += [f"| {name} | {md_inline(value)} |" for name, value in _header(run, sim)]
    if report is not None:
        out += ["", "#### Reward", "", "| component | recorded | recomputed |", "|---|---:|---:|"]
        ev = report.evaluation
        out.append(
            f"| **reward** | {formats.reward(report.recorded_reward, '—')} | "
            f"{formats.reward(ev.reward, 'not computable')} |"
        )
        for name, a, b in breakdown_rows(report, _recorded_breakdown(sim)):
            mark = " ≠" if _differ(a, b) else ""
            out.append(f"| {md_inline(name)} | {formats.reward(a, '—')} | {formats.reward(b, '—')}{mark} |")
        if report.explanation.failed:
            out += ["", "Why:", ""] + [f"- {md_inline(reason)}" for reason in report.explanation.failed]
        out += [
            "",
            "<details><summary>the whole explanation (as <code>tau-tui eval --sim</code> prints it)</summary>",
            "",
            fenced(visible(_reward_text(report))),
            "",
            "</details>",
        ]
    out += ["", "#### Replay", ""]
    if analysis is None:
        out.append(f"not replayed: {md_inline(problem or 'no replay')}")
    else:
        out.append(fenced(visible(_replay_text(analysis))))
    items = entries(sim, analysis)
    calls = [(entry.index, call) for entry in items for call in entry.calls]
    if calls:
        out += ["", "| step | tool call | verdict |", "|---:|---|---|"]
        out += [
            f"| {index} | {md_inline(call.name)} | {md_inline(call.verdict or 'not replayed')} |"
            for index, call in calls
        ]
    out += ["", f"#### Trajectory ({len(items)} message{'s' if len(items) != 1 else ''})"]
    for entry in items:
        role = (
            md_inline(entry.role)
            if entry.result_of is None
            else f"tool result of {md_inline(entry.result_of)}"
            if entry.result_of
            else "tool result"
        )
        out += ["", f"**{entry.index} · {role}**{' (error)' if entry.error else ''}", ""]
        if entry.result_of is not None:
            out += _md_block(_result_text(entry.text, 2), full, "json" if _is_json(entry.text) else "text")
        elif entry.text:
            out += _md_block(entry.text, full)
        for call in entry.calls:
            who = "" if call.requestor == "assistant" else f" ({md_inline(call.requestor)})"
            verdict = f" — {md_inline(call.verdict)}" if call.verdict else ""
            out += [f"→ tool call **{md_inline(call.name)}**{who}{verdict}", ""]
            out += _md_block(_json(call.arguments, 2), full, "json")
        out += [f"- ⚠ {md_inline(finding)}" for finding in entry.findings]
    return visible("\n".join(out)) + "\n"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


__all__ = ["CLIP_CHARS", "CLIP_LINES", "Entry", "entries", "fenced", "markdown_printout", "md_inline", "text_printout"]
