"""Comparing two trajectories of one task (two trials, or two models) side by side.

Both trajectories are cut into turns (a participant message with the tool
results that answer it) and aligned by turn number. Their tool calls, in
order, are compared as (requestor, name, arguments); the first position
where they differ is the divergence: its turn is marked on both sides and
the DB states right after that call (or at the end of a trajectory that has
no call there) are diffed, agent DB and user DB. The final states are
diffed too. ``render_comparison`` draws it all as plain text.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from typing import Any

from tau_tui import formats
from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.env.environment import EnvState
from tau_tui.env.store import to_plain
from tau_tui.model.io import RunFile
from tau_tui.model.messages import Message, ParticipantMessage, ToolMessage
from tau_tui.replay import Change, Timeline, diff_states, path_text
from tau_tui.textsafe import clip_json


@dataclass(frozen=True)
class TrialCall:
    """One tool call of a trajectory, with its result."""

    position: int  # among the compared calls of its trajectory
    requestor: str
    name: str
    arguments: Any
    step: int  # message holding the call
    result_step: int | None
    result: str | None
    error: bool

    @property
    def signature(self) -> tuple[str, str, str]:
        return (self.requestor, self.name, json.dumps(self.arguments, sort_keys=True, default=str))

    def text(self) -> str:
        args = (
            ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
            if isinstance(self.arguments, dict)
            else repr(self.arguments)
        )
        who = "" if self.requestor == "assistant" else f"[{self.requestor}] "
        return f"{who}{self.name}({args})"


@dataclass
class Turn:
    """A participant message and the tool messages that answer it."""

    index: int
    role: str
    steps: list[int]
    text: str | None
    calls: list[TrialCall] = field(default_factory=list)


@dataclass
class AlignedTurn:
    """Turn ``index`` of both trials side by side (None where one side has no such turn)."""

    index: int
    left: Turn | None
    right: Turn | None
    divergent: bool = False  # holds the first differing tool call (on either side)


@dataclass
class TrialDivergence:
    """The first position where the two call sequences differ, and the DB states just after it."""

    position: int
    left: TrialCall | None
    right: TrialCall | None
    left_step: int  # state step compared (after the call's result, or the last step)
    right_step: int
    agent_diff: list[Change]
    user_diff: list[Change]


@dataclass
class Side:
    """One of the two compared trials: its label, outcome and replayed timeline."""

    label: str
    task_id: str
    termination: str | None
    reward: float | None
    timeline: Timeline


@dataclass
class TrialComparison:
    """Two trials of a task aligned by turn, their first differing call and final DB diffs."""

    left: Side
    right: Side
    turns: list[AlignedTurn]
    divergence: TrialDivergence | None
    final_agent_diff: list[Change]
    final_user_diff: list[Change]
    writes_only: bool = False

    @property
    def same_calls(self) -> bool:
        return self.divergence is None

    def to_json(self) -> dict[str, Any]:
        def changes(items: list[Change]) -> list[dict[str, Any]]:
            return [
                {"path": path_text(c.path), "kind": c.kind, "left": to_plain(c.before), "right": to_plain(c.after)}
                for c in items
            ]

        def call(view: TrialCall | None) -> dict[str, Any] | None:
            return (
                None
                if view is None
                else {
                    "position": view.position,
                    "requestor": view.requestor,
                    "name": view.name,
                    "arguments": view.arguments,
                    "step": view.step,
                    "result": view.result,
                    "error": view.error,
                }
            )

        d = self.divergence
        return {
            "left": {
                "label": self.left.label,
                "task": self.left.task_id,
                "termination": self.left.termination,
                "reward": self.left.reward,
            },
            "right": {
                "label": self.right.label,
                "task": self.right.task_id,
                "termination": self.right.termination,
                "reward": self.right.reward,
            },
            "turns": len(self.turns),
            "divergence": None
            if d is None
            else {
                "position": d.position,
                "left": call(d.left),
                "right": call(d.right),
                "left_step": d.left_step,
                "right_step": d.right_step,
                "turn": next((t.index for t in self.turns if t.divergent), None),
                "agent_diff": changes(d.agent_diff),
                "user_diff": changes(d.user_diff),
            },
            "final_agent_diff": changes(self.final_agent_diff),
            "final_user_diff": changes(self.final_user_diff),
        }


def _is_write(timeline: Timeline, name: str) -> bool:
    env = timeline.env
    return env is None or not env.has_tool(name) or env.mutates(name)


def turns_of(timeline: Timeline, writes_only: bool = False) -> tuple[list[Turn], list[TrialCall]]:
    """The trajectory's turns, and its compared calls in order (only mutating ones with ``writes_only``)."""
    turns: list[Turn] = []
    calls: list[TrialCall] = []
    for step in timeline.steps:
        message: Message = step.message
        if isinstance(message, ToolMessage) and turns:
            turns[-1].steps.append(step.index)
            continue
        text = message.content if isinstance(getattr(message, "content", None), str) else None
        turn = Turn(len(turns), message.role, [step.index], text)
        turns.append(turn)
        if isinstance(message, ParticipantMessage):
            for record_index in step.calls:
                record = timeline.calls[record_index]
                if writes_only and not _is_write(timeline, record.name):
                    continue
                view = TrialCall(
                    len(calls),
                    record.requestor,
                    record.name,
                    record.call.arguments,
                    record.call_step,
                    record.result_step,
                    record.recorded,
                    record.recorded_error,
                )
                calls.append(view)
                turn.calls.append(view)
    return turns, calls


def _state_after(timeline: Timeline, call: TrialCall | None) -> tuple[int, EnvState]:
    if call is not None and call.result_step is not None:
        return call.result_step, timeline.state_at(call.result_step)
    last = len(timeline.steps) - 1
    return last, timeline.state_at(last)


def compare_timelines(left: Side, right: Side, writes_only: bool = False) -> TrialComparison:
    """Align two replayed trajectories by turn and find their first differing tool call."""
    left_turns, left_calls = turns_of(left.timeline, writes_only)
    right_turns, right_calls = turns_of(right.timeline, writes_only)
    divergence = None
    for position in range(max(len(left_calls), len(right_calls))):
        a = left_calls[position] if position < len(left_calls) else None
        b = right_calls[position] if position < len(right_calls) else None
        if a is None or b is None or a.signature != b.signature:
            left_step, left_state = _state_after(left.timeline, a)
            right_step, right_state = _state_after(right.timeline, b)
            divergence = TrialDivergence(
                position,
                a,
                b,
                left_step,
                right_step,
                diff_states(left_state.agent, right_state.agent),
                diff_states(left_state.user, right_state.user),
            )
            break
    aligned = []
    for index in range(max(len(left_turns), len(right_turns))):
        lt = left_turns[index] if index < len(left_turns) else None
        rt = right_turns[index] if index < len(right_turns) else None
        marked = divergence is not None and any(
            t is not None and any(call is view for call in t.calls)
            for t, view in ((lt, divergence.left), (rt, divergence.right))
        )
        aligned.append(AlignedTurn(index, lt, rt, marked))
    return TrialComparison(
        left,
        right,
        aligned,
        divergence,
        diff_states(left.timeline.final.agent, right.timeline.final.agent),
        diff_states(left.timeline.final.user, right.timeline.final.user),
        writes_only,
    )


def side_of(analysis: SimAnalysis, label: str | None = None) -> Side:
    sim = analysis.sim
    reward = sim.reward_info.reward if sim.reward_info else None
    name = label or f"{analysis.run.agent_model or analysis.run.name} trial {sim.trial}"
    return Side(name, sim.task_id, sim.termination_reason, reward, analysis.timeline)


def compare_simulations(
    analyzer: Analyzer,
    left: tuple[RunFile, int],
    right: tuple[RunFile, int],
    *,
    labels: tuple[str | None, str | None] = (None, None),
    writes_only: bool = False,
    allow_other_tasks: bool = False,
) -> TrialComparison:
    """Replay two recorded simulations and compare them (they must be of the same task unless allowed)."""
    a = analyzer.analyze(*left)
    b = analyzer.analyze(*right)
    if a.sim.task_id != b.sim.task_id and not allow_other_tasks:
        raise ValueError(f"simulations of different tasks ({a.sim.task_id!r} and {b.sim.task_id!r})")
    return compare_timelines(side_of(a, labels[0]), side_of(b, labels[1]), writes_only)


# --- text -----------------------------------------------------------------------------


def _value(value: Any, limit: int = 80) -> str:
    return clip_json(to_plain(value), limit)


def _turn_lines(turn: Turn | None, width: int) -> list[str]:
    if turn is None:
        return []
    lines = []
    if turn.text:
        lines += textwrap.wrap(f"{turn.role}: {' '.join(turn.text.split())}", width) or [f"{turn.role}:"]
    for call in turn.calls:
        mark = " !" if call.error else ""
        lines += textwrap.wrap(f"→ {call.text()}{mark}", width)
    if not lines:
        lines = [f"{turn.role}: (no text)"]
    return lines[:6] + ([f"  … {len(lines) - 6} more lines"] if len(lines) > 6 else [])


def change_lines(changes: list[Change], side: str, limit: int = 20) -> list[str]:
    out = [
        f"  {side} {path_text(c.path)}: {_value(c.before)} | {_value(c.after)}"
        if c.kind == "changed"
        else f"  {side} {path_text(c.path)}: {c.kind} on the {'right' if c.kind == 'added' else 'left'} only"
        for c in changes[:limit]
    ]
    if len(changes) > limit:
        out.append(f"  … {len(changes) - limit} more {side} differences")
    return out


def render_comparison(comparison: TrialComparison, width: int = 120) -> str:
    """Side by side, one aligned turn per block, the divergent turn marked ``>>``, then the DB diffs."""
    col = max(20, (width - 8) // 2)
    left, right = comparison.left, comparison.right

    def head(side: Side) -> str:
        reward = formats.reward(side.reward, "-")
        return f"{side.label} [{side.termination}, reward {reward}]"

    lines = [
        f"task {left.task_id}" + (f" vs {right.task_id}" if right.task_id != left.task_id else ""),
        f"     {head(left)[:col]:<{col}} | {head(right)[:col]}",
        "-" * min(width, 2 * col + 8),
    ]
    for turn in comparison.turns:
        a, b = _turn_lines(turn.left, col), _turn_lines(turn.right, col)
        marker = ">>" if turn.divergent else "  "
        for i in range(max(len(a), len(b), 1)):
            prefix = f"{marker}{turn.index:>3}" if i == 0 else "     "
            lines.append(f"{prefix} {(a[i] if i < len(a) else ''):<{col}} | {b[i] if i < len(b) else ''}".rstrip())
    lines.append("")
    d = comparison.divergence
    kind = "write " if comparison.writes_only else ""
    if d is None:
        lines.append(f"same {kind}tool calls on both sides")
    else:
        lines.append(f"first differing {kind}tool call: #{d.position + 1}")
        lines.append(f"  left:  {d.left.text() if d.left else '(none: no more calls)'}")
        lines.append(f"  right: {d.right.text() if d.right else '(none: no more calls)'}")
        lines.append(
            f"DB after it (left step {d.left_step}, right step {d.right_step}): "
            + ("same" if not d.agent_diff and not d.user_diff else "left | right")
        )
        lines += change_lines(d.agent_diff, "agent") + change_lines(d.user_diff, "user")
    final = comparison.final_agent_diff or comparison.final_user_diff
    lines.append("final DB: " + ("left | right" if final else "same"))
    lines += change_lines(comparison.final_agent_diff, "agent") + change_lines(comparison.final_user_diff, "user")
    return "\n".join(lines)
