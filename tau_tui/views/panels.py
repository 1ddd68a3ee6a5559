"""Rich content of the side panels: state changes, mismatches, task, recorded reward, derived replay.

Pure functions from core objects to rich renderables, testable as text.
What the recording says and what our replay derived are rendered by
different functions under different headings, never mixed.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Iterable

import orjson
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from tau_tui import formats

if TYPE_CHECKING:
    from tau_tui.env.environment import EnvState
    from tau_tui.replay.timeline import Timeline
from tau_tui.analysis import SimAnalysis
from tau_tui.env.jsonify import parse_content
from tau_tui.model.provenance import RecordedExtras, usage_text
from tau_tui.model.results import SCORED_TERMINATIONS, SimulationRun
from tau_tui.model.tasks import StructuredInstructions, Task
from tau_tui.replay.diff import Change, diff_states, path_text
from tau_tui.replay.facts import Fact
from tau_tui.replay.mismatch import mismatch_detail, pair_text, short_json
from tau_tui.textsafe import clip, shown
from tau_tui.views.render import (
    PILL_HELP,
    call_marks,
    call_signature,
    content_lines,
    one_line,
    pill,
    pretty_lines,
)
from tau_tui.views.trajectory_doc import CallView

MAX_CHANGES = 200
MAX_SIDE_LINES = 400

RECORDED_STYLE = "bold blue"
DERIVED_STYLE = "bold magenta"


def _value(value: Any, limit: int = 80, quote: bool = False) -> str:
    """One-line text of a value; ``quote`` shows strings as JSON strings (to tell "1" from 1)."""
    text = one_line(value) if not (quote and isinstance(value, str)) else orjson.dumps(value).decode()
    return clip(text, limit)


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    if isinstance(value, list):
        return f"[{len(value)} items]"
    return _value(value)


# --- state changes ----------------------------------------------------------------------

KIND_MARKS = {"changed": ("~", "yellow"), "added": ("+", "green"), "removed": ("−", "red")}


def render_change(change: Change) -> Text:
    mark, style = KIND_MARKS.get(change.kind, ("?", ""))
    line = Text.assemble((f"{mark} ", "bold " + style), (one_line(change.dotted), style))
    if change.kind == "changed":
        line.append("\n    ")
        line.append(_value(change.before, 200, quote=True), style="red")
        line.append(" → ", style="dim")
        line.append(_value(change.after, 200, quote=True), style="green")
    elif change.kind == "added":
        lines = (
            pretty_lines(change.after)
            if isinstance(change.after, (dict, list))
            else [_value(change.after, 200, quote=True)]
        )
        shown = lines[:12] + ([f"… {len(lines) - 12} more lines"] if len(lines) > 12 else [])
        line.append("\n" + "\n".join("    " + s for s in shown), style="green")
    else:
        line.append(f"  (was {_short(change.before)})", style="dim")
    return line


def render_changes(sides: Iterable[tuple[str, list[Change] | None]], empty: str) -> Text:
    """Changes per DB side, e.g. ``[("agent DB", [...]), ("user DB", [...])]``; None: no such DB."""
    out = Text()
    any_change = False
    for label, changes in sides:
        if changes is None:
            continue
        if not changes:
            continue
        any_change = True
        if out:
            out.append("\n")
        out.append(f"{label} · {formats.count(len(changes), 'change')}\n", style="bold")
        for change in changes[:MAX_CHANGES]:
            out.append_text(render_change(change))
            out.append("\n")
        if len(changes) > MAX_CHANGES:
            out.append(f"… {len(changes) - MAX_CHANGES} more changes\n", style="dim")
    if not any_change:
        out.append(empty, style="dim italic")
    out.rstrip()
    return out


# --- a call and its mismatch --------------------------------------------------------------


def render_call(call: CallView) -> Text:
    record = call.record
    head = Text.assemble(pill(call.pill), " ", (one_line(call.name), "bold"))
    facts = [f"requested by {'the user' if call.by_user else 'the agent'}"]
    if record is not None and record.tool_type is not None:
        facts.append(f"{record.tool_type.value} tool")
    if record is not None and record.attempt is not None and record.attempt > 1:
        facts.append(f"attempt {record.attempt} with these arguments")
    head.append("  " + " · ".join(facts), style="dim")
    head.append(f"\n{PILL_HELP.get(call.pill, '')}", style="italic dim")
    for text, style in call_marks(call):
        head.append(f"\n{shown(text)}", style=style)
    return head


class OutputLines:
    """Recorded vs replayed lines: side by side when there is room, one above the other when narrow."""

    MIN_SIDE_BY_SIDE = 56

    def __init__(self, left: list[str], right: list[str], titles: tuple[str, str]) -> None:
        self.left, self.right, self.titles = left, right, titles

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width >= self.MIN_SIDE_BY_SIDE:
            yield side_by_side(self.left, self.right, self.titles)
            return
        yield Text.assemble(
            ("− " + one_line(self.titles[0]), "bold red"), ("   ", ""), ("+ " + one_line(self.titles[1]), "bold green")
        )
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, self.left, self.right, autojunk=False).get_opcodes():
            if tag == "equal":
                for line in self.left[i1:i2]:
                    yield Text("  " + shown(line))
                continue
            for line in self.left[i1:i2]:
                yield Text("− " + shown(line), style="bold red")
            for line in self.right[j1:j2]:
                yield Text("+ " + shown(line), style="bold green")


def side_by_side(left: list[str], right: list[str], titles: tuple[str, str]) -> Table:
    """Two aligned columns; lines that differ are marked (− recorded, + replayed)."""
    table = Table(show_header=True, header_style="bold", expand=True, box=None, padding=(0, 1), show_edge=False)
    table.add_column(Text(one_line(titles[0])), ratio=1, overflow="fold")  # a recorded label: never markup
    table.add_column(Text(one_line(titles[1])), ratio=1, overflow="fold")
    rows = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        a, b = left[i1:i2], right[j1:j2]
        for k in range(max(len(a), len(b))):
            if rows >= MAX_SIDE_LINES:
                table.add_row(Text("… clipped", style="dim"), Text("… clipped", style="dim"))
                return table
            la = a[k] if k < len(a) else None
            lb = b[k] if k < len(b) else None
            if tag == "equal":
                table.add_row(Text(shown(la or "")), Text(shown(lb or "")))
            else:
                table.add_row(
                    Text("− " + shown(la), style="bold red") if la is not None else Text(""),
                    Text("+ " + shown(lb), style="bold green") if lb is not None else Text(""),
                )
            rows += 1
    return table


MISMATCH_DETAIL_LINES = 20


def render_mismatch_detail(changes: list[dict[str, Any]]) -> Text | None:
    """Field by field (``FieldChange.to_json`` records): path, recorded → replayed, type changes, added/removed."""
    if not changes:
        return None
    text = Text("field by field (recorded → replayed)\n", style="bold")
    for change in changes[:MISMATCH_DETAIL_LINES]:
        text.append(f"  {one_line(change['path'])}: ", style="bold")
        kind = change["change"]
        if kind == "added":
            text.append("added ", style="dim")
            text.append(one_line(short_json(change["replayed"])), style="green")
        elif kind == "removed":
            text.append("removed ", style="dim")
            text.append(one_line(short_json(change["recorded"])), style="red")
        else:
            before, after = pair_text(change["recorded"], change["replayed"], 80)
            text.append(one_line(before), style="red")
            text.append(" → ")
            text.append(one_line(after), style="green")
            if kind == "type_changed":
                text.append(f"  (type {' → '.join(change['types'])})", style="yellow")
        text.append("\n")
    if len(changes) > MISMATCH_DETAIL_LINES:
        text.append(f"  … {len(changes) - MISMATCH_DETAIL_LINES} more field(s)\n", style="dim")
    text.rstrip()
    return text


def mismatch_heading(call: CallView) -> Text:
    """``≠ mismatch (divergence) tool(...)``, or ``≈ library text only …`` with what the difference is."""
    record = call.record
    if record is None or call.pill == "mismatch":
        return Text.assemble(("≠ mismatch ", "bold red"), ("(divergence) ", "red"), (call_signature(call), "bold"))
    what = "library text only" if record.upstream is None else f"upstream fix, {record.upstream.issue}"
    return Text.assemble(
        ("≈ mismatch ", "bold yellow"),
        (f"({what}) ", "yellow"),
        (call_signature(call), "bold"),
        ("\n" + one_line(record.mismatch_note or ""), "yellow"),
    )


def render_mismatch(call: CallView) -> RenderableType:
    """Recorded vs replayed output of a mismatching call, side by side, with the differing paths."""
    record = call.record
    recorded = record.recorded if record is not None else call.result
    replayed = record.replayed if record is not None else None
    parts: list[RenderableType] = [mismatch_heading(call)]
    before, after = parse_content(recorded), parse_content(replayed)
    if isinstance(before, (dict, list)) and isinstance(after, (dict, list)):
        paths = diff_states(before, after)
        if paths:
            text = Text("differs at: ", style="dim")
            text.append(", ".join(one_line(path_text(c.path)) for c in paths[:12]), style="red")
            if len(paths) > 12:
                text.append(f" … {len(paths) - 12} more", style="dim")
            parts.append(text)
    if record is not None and record.recorded is not None and record.replayed is not None:
        detail = render_mismatch_detail([c.to_json() for c in mismatch_detail(record.recorded, record.replayed)])
        if detail is not None:
            parts.append(detail)
    if record is not None and record.recorded_error != bool(record.replayed_error):
        parts.append(
            Text(f"recorded error={record.recorded_error}, replayed error={record.replayed_error}", style="red")
        )
    parts.append(OutputLines(content_lines(recorded), content_lines(replayed), ("recorded", "replayed (ours)")))
    return Group(*parts)


# --- task -------------------------------------------------------------------------------------


def _section(out: list[RenderableType], title: str, body: str | Text | None, style: str = "") -> None:
    if body is None or (isinstance(body, str) and not body.strip()):
        return
    out.append(Text(title, style="bold underline"))
    out.append(body if isinstance(body, Text) else Text(shown(body.strip("\n")), style=style))
    out.append(Text(""))


def render_task(task: Task | None, task_id: str) -> RenderableType:
    if task is None:
        return Text(f"Task {shown(repr(task_id))} is neither in the file nor in the domain's task set.", style="italic")
    out: list[RenderableType] = [Text(f"task {one_line(task.id)}", style="bold reverse"), Text("")]
    scenario = task.user_scenario
    if scenario is not None:
        _section(out, "Persona", scenario.persona)
        instructions = scenario.instructions
        if isinstance(instructions, StructuredInstructions):
            _section(out, "Reason for call", instructions.reason_for_call)
            _section(out, "Known info", instructions.known_info, "green")
            _section(out, "Unknown info (the user does not know)", instructions.unknown_info, "yellow")
            _section(out, "Task instructions", instructions.task_instructions)
        else:
            _section(out, "Instructions", instructions)
    if task.ticket:
        _section(out, "Ticket (solo mode)", task.ticket)
    if task.description is not None:
        _section(out, "Purpose", task.description.purpose)
        _section(out, "Relevant policies", task.description.relevant_policies)
        _section(out, "Notes", task.description.notes)
    criteria = task.evaluation_criteria
    if criteria is not None:
        body = Text()
        body.append("reward basis: ", style="dim")
        body.append(shown(", ".join(criteria.reward_basis)) + "\n", style="bold")
        for action in criteria.actions or []:
            who = "user" if action.requestor == "user" else "agent"
            args = ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in action.arguments.items())
            body.append(f"• {who}: ", style="dim")
            body.append(one_line(action.name), style="bold")
            body.append(f"({args})")
            if action.compare_args is not None:
                body.append(f"  compare {shown(action.compare_args)}", style="dim")
            body.append("\n")
        for assertion in criteria.env_assertions or []:
            args = ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in assertion.arguments.items())
            body.append(
                f"• assert {shown(assertion.env_type)}: {one_line(assertion.func_name)}({args}) is "
                f"{shown(assertion.assert_value)}\n"
            )
        for info in criteria.communicate_info or []:
            body.append("• communicate: ", style="dim")
            body.append(f"{shown(info)}\n")
        for nl in criteria.nl_assertions or []:
            body.append("• NL: ", style="dim")
            body.append(f"{shown(nl)}\n")
        body.rstrip()
        _section(out, "Evaluation criteria", body)
    state = task.initial_state
    if state is not None:
        body = Text()
        data = state.initialization_data
        if data is not None:
            for side, patch in (("agent data", data.agent_data), ("user data", data.user_data)):
                if patch:
                    lines = pretty_lines(patch)
                    body.append(f"{side}:\n", style="dim")
                    body.append("\n".join("  " + line for line in lines[:40]) + "\n")
                    if len(lines) > 40:
                        body.append(f"  … {len(lines) - 40} more lines\n", style="dim")
        for init_action in state.initialization_actions or []:
            args = ", ".join(f"{one_line(k)}={one_line(v)}" for k, v in init_action.arguments.items())
            body.append(f"• {shown(init_action.env_type)}: {one_line(init_action.func_name)}({args})\n")
        if state.message_history:
            body.append(
                f"message history: {len(state.message_history)} messages (the first steps of the trajectory)\n",
                style="dim",
            )
        body.rstrip()
        _section(out, "Initial state", body if body else None)
    if task.user_tools is not None:
        _section(out, "User tools", ", ".join(map(one_line, task.user_tools)) or "(none)")
    return Group(*out)


# --- reward: recorded and derived, apart ---------------------------------------------------


def _mark(ok: object) -> Text:
    if ok is None:
        return Text("—", style="dim")
    return Text("✓", style="green") if ok else Text("✗", style="bold red")


def render_recorded(sim: SimulationRun, judge: str | None = None) -> RenderableType:
    """The reward and checks exactly as the recording states them; ``judge``: the judge model its run records.

    Fields newer than tau2 1.0.1 (``model.provenance``) are shown when present: an unpriced agent cost (never
    $0), the agent's usage records, the reward's provenance, a judge failure, an out-of-scope stop.
    """
    extras = RecordedExtras.of(sim)
    out = Text()
    out.append("AS RECORDED", style=RECORDED_STYLE + " reverse")
    out.append("  what the file says\n\n", style="dim")
    out.append("termination: ", style="dim")
    out.append(
        one_line(sim.termination_reason or "?"), style="" if sim.termination_reason in SCORED_TERMINATIONS else "red"
    )
    if extras.out_of_scope:
        out.append(" (###OUT-OF-SCOPE###: an aborted scenario graded as a normal stop, tau2-bench#517)", style="yellow")
    if sim.duration is not None:
        out.append(f"   duration {formats.seconds(sim.duration)}", style="dim")
    costs = [
        f"{label} {formats.money(cost)}" if cost is not None else f"{label} unpriced"
        for label, cost in (("agent", sim.agent_cost), ("user", sim.user_cost))
        if cost is not None or label in sim.unpriced
    ]
    if costs:
        out.append("   " + ", ".join(costs), style="dim")
    out.append("\n")
    if extras.usage is not None:
        out.append(f"agent usage: {shown(usage_text(extras.usage))}\n", style="dim")
    if judge:
        out.append(f"judge: {shown(judge)}\n", style="dim")
    if sim.info and sim.info.get("error"):
        out.append(f"error: {shown(sim.info.get('error_type') or '')} {shown(sim.info.get('error'))}\n", style="yellow")
    info = sim.reward_info
    if info is None:
        out.append("no reward_info: this run is unscored\n", style="italic")
        return out
    out.append("reward: ", style="dim")
    reward = info.reward
    out.append(formats.reward(reward), style="bold green" if reward == 1 else "bold red")
    if info.reward_basis:
        out.append(f"   basis {shown(', '.join(map(str, info.reward_basis)))}", style="dim")
    if info.reward_breakdown:
        out.append("   " + ", ".join(f"{one_line(k)} {v:g}" for k, v in info.reward_breakdown.items()), style="dim")
    out.append("\n")
    if info.db_check is not None:
        out.append("DB match ")
        out.append_text(_mark(info.db_check.db_match))
        out.append("\n")
    for check in info.action_checks or []:
        action = check.get("action") or {}
        args = action.get("arguments") or {}
        out.append_text(_mark(check.get("action_match")))
        out.append(f" action {one_line(action.get('name', '?'))}(")
        out.append(", ".join(f"{one_line(k)}={one_line(v)}" for k, v in args.items()) if isinstance(args, dict) else "")
        out.append(")\n")
    for check in info.env_assertions or []:
        assertion = check.get("env_assertion") or {}
        out.append_text(_mark(check.get("met")))
        out.append(
            f" assertion {one_line(assertion.get('func_name', '?'))}({one_line(assertion.get('arguments') or {})})\n"
        )
    for check in info.communicate_checks or []:
        out.append_text(_mark(check.get("met")))
        out.append(f" communicate {shown(repr(check.get('info', '')))}\n")
    failed_judge = set(extras.judge_failures)
    for check in info.nl_assertions or []:
        out.append_text(_mark(check.get("met")))
        out.append(f" NL {shown(check.get('nl_assertion', ''))}")
        if str(check.get("nl_assertion") or "?") in failed_judge:
            out.append("  judge failure, not the agent's (tau2-bench#469)", style="bold yellow")
        out.append("\n")
        if check.get("justification"):
            out.append(f"    {shown(check['justification'])}\n", style="dim italic")
    if extras.provenance.present:
        out.append(f"provenance: {shown(extras.provenance.text() or 'warnings only')}\n", style="dim")
        for warning in extras.provenance.warnings:
            out.append(f"  warning: {shown(warning)}\n", style="yellow")
    notes = info.info or {}
    for key, value in notes.items():
        if value:
            out.append(f"{one_line(key)}: {_value(value, 200)}\n", style="dim")
    out.rstrip()
    return out


FACT_STYLES = {"info": "", "ok": "", "warn": "yellow", "bad": "red"}
FACT_STYLE_BY_KIND = {
    "calls": "",
    "strict": "",
    "db": "",
    "finding": "yellow",
    "injected_faults": "bold orange1",
    "refused": "bold medium_purple1",
    "discovered": "cyan",
}


def render_fact(fact: Fact) -> Text:
    """One headless fact (``tau_tui.replay.facts``) as the derived panel's line: its short wording, styled."""
    out = Text()
    style = FACT_STYLE_BY_KIND.get(fact.kind, FACT_STYLES[fact.severity])
    out.append(shown(fact.short_text), style=style)
    if fact.marked:
        out.append(" ")
        out.append_text(_mark(fact.mark))
    if fact.aside:
        out.append(f"   {shown(fact.aside)}", style="dim")
    return out


def render_derived(analysis: SimAnalysis | None, error: str | None) -> Text:
    """What tau-tui's own replay found; never mixed with the recorded reward."""
    out = Text()
    out.append("DERIVED", style=DERIVED_STYLE + " reverse")
    out.append("  tau-tui's replay against its own environment\n\n", style="dim")
    if analysis is None:
        out.append(f"no replay: {shown(error or 'not run')}\n", style="italic")
        return out
    facts = [f for f in analysis.facts(detail=False) if f.panel]
    for fact in facts:
        if fact.kind == "finding":
            continue
        out.append_text(render_fact(fact))
        out.append("\n")
    for assertion, met, error_text in analysis.assertions:
        out.append_text(_mark(met))
        out.append(f" assertion {one_line(assertion.func_name)}({one_line(assertion.arguments)})")
        if error_text:
            out.append(f"  {shown(error_text)}", style="red")
        out.append("\n")
    if analysis.gold is not None:
        for index, message in analysis.gold.action_errors:
            out.append(f"gold action #{index} failed: {shown(message)}\n", style="yellow")
    findings = [f for f in facts if f.kind == "finding"]
    if findings:
        out.append(f"\nfindings ({len(findings)})\n", style="bold yellow")
        for fact in findings:
            out.append_text(render_fact(fact))
            out.append("\n")
    out.rstrip()
    return out


def render_tool_log(timeline: Timeline, state: EnvState | None, step: int) -> Text | None:
    """Discoverable tools made available up to ``step`` and the environment's tool-log tables at that step.

    The log tables (``Environment.log_tables``, e.g. banking's unlock/give/call logs) are part of the hashed
    DB; the unlocks themselves live with the episode, so they come from the timeline.
    """
    env = getattr(timeline, "env", None)
    tables = getattr(env, "log_tables", ())
    found = [d for d in getattr(timeline, "discoveries", []) if d.step <= step]
    if not tables and not found:
        return None
    out = Text()
    if found:
        out.append("discoverable tools so far\n", style="bold cyan")
        how = {"unlock": "unlocked by the agent", "give": "given to the user", "read": "discovered"}
        for d in found:
            out.append(f"  ✦ {_value(d.tool)}", style="cyan")
            out.append(f"  {how.get(d.how, d.how)} at step {d.step}\n", style="dim")
    agent = state.agent if state is not None else None
    for table in tables:
        rows = ((agent or {}).get(table) or {}).get("data") if isinstance(agent, dict) else None
        if rows is None:
            continue
        out.append(f"log {table} ({len(rows)}, hashed)\n", style="bold")
        for rid, record in rows.items():
            out.append(f"  {_value(rid)}  {_value(record, 100)}\n")
    return out
