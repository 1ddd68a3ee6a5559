"""The time axis of a full-duplex (voice) simulation: who speaks when, overlaps, interruptions, tool calls.

A full-duplex run records ``ticks`` instead of ``messages``: per tick (``tick_duration_seconds``, 0.2 s
by default in tau2) the agent's and the user's chunk, and the tool calls and results of each side. A
side speaks in a tick when its chunk says so (``contains_speech``, true unless the chunk says false,
as in tau2's message model). Contiguous speaking ticks are a segment. When one side starts a segment
while the other is speaking, that is an interruption, unless the user's chunk calls it a backchannel
("mm-hmm") or its speech is a vocal tic; the interrupted side yielded when it stopped within the
yield window (2 s, tau2's ``no_yield_window_sec``).

``steps`` gives each tick's first message in the trajectory from ticks (``model.duplex.tick_messages``), so
a tick range (a review's ``tick_start``..``tick_end``) maps onto the trajectory's steps.
Untrusted input: a tick that is not an object counts for nothing; no field is trusted to have its type.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from tau_tui.model.duplex import tick_items

DEFAULT_TICK_SECONDS = 0.2
YIELD_WINDOW_SECONDS = 2.0
SIDES = ("agent", "user")


@dataclass
class TickRow:
    """One tick as the timeline shows it."""

    position: int  # index in ``ticks``
    tick_id: int
    step: int  # first message of this tick in the flattened trajectory (the next tick's when it adds none)
    speaking: dict[str, bool]
    text: dict[str, str]
    calls: dict[str, list[str]]
    results: dict[str, int]
    action: str | None = None  # the user's turn-taking action (wait, keep_talking, backchannel…)
    insert: str | None = None  # the user's speech insert type (vocal_tic, non_directed…)


@dataclass
class Segment:
    side: str
    start: int  # position of the first tick
    end: int  # position of the last tick (inclusive)

    @property
    def ticks(self) -> int:
        return self.end - self.start + 1


@dataclass
class Interruption:
    """``by`` started speaking at ``tick`` while ``of`` was speaking."""

    by: str
    of: str
    tick: int
    kind: str  # "interruption", "backchannel", "vocal_tic"
    yielded: bool | None  # the interrupted side stopped within the yield window (None: not an interruption)
    yield_ticks: int | None = None


@dataclass
class TickTimeline:
    rows: list[TickRow] = field(default_factory=list)
    tick_seconds: float = DEFAULT_TICK_SECONDS
    segments: list[Segment] = field(default_factory=list)
    overlaps: list[tuple[int, int]] = field(default_factory=list)  # (first, last) positions where both speak
    interruptions: list[Interruption] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def position_of_tick(self, tick_id: int) -> int | None:
        """The position of the tick with ``tick_id`` (ticks are in order; ids need not start at 0)."""
        ids = [r.tick_id for r in self.rows]
        pos = bisect_right(ids, tick_id) - 1
        return pos if pos >= 0 and ids[pos] == tick_id else None

    def step_of_tick(self, tick_id: int) -> int | None:
        pos = self.position_of_tick(tick_id)
        return None if pos is None else self.rows[pos].step

    def tick_at_step(self, step: int) -> int | None:
        """The position of the tick a trajectory step belongs to."""
        steps = [r.step for r in self.rows]
        pos = bisect_right(steps, step) - 1
        return pos if pos >= 0 else None

    def position_at_ms(self, ms: int) -> int | None:
        """The position of the tick that holds time ``ms`` (from the run's start), clamped to the last tick."""
        if not self.rows:
            return None
        return min(int(ms / (self.tick_seconds * 1000) + 1e-9), len(self.rows) - 1)

    def seconds(self, position: int) -> float:
        return position * self.tick_seconds

    def counts(self) -> dict[str, int]:
        kinds = [i.kind for i in self.interruptions]
        return {
            "ticks": len(self.rows),
            "agent_segments": sum(s.side == "agent" for s in self.segments),
            "user_segments": sum(s.side == "user" for s in self.segments),
            "overlaps": len(self.overlaps),
            "user_interrupts_agent": sum(i.kind == "interruption" and i.by == "user" for i in self.interruptions),
            "agent_interrupts_user": sum(i.kind == "interruption" and i.by == "agent" for i in self.interruptions),
            "backchannels": kinds.count("backchannel"),
            "vocal_tics": kinds.count("vocal_tic"),
            "tool_calls": sum(len(r.calls[s]) for r in self.rows for s in SIDES),
        }


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count_messages(tick: dict[str, Any]) -> int:
    """How many messages the trajectory from ticks (``model.duplex.tick_items``) makes of one tick."""
    return sum(1 for _ in tick_items([tick]))


def _speaks(chunk: Any) -> bool:
    return isinstance(chunk, dict) and chunk.get("contains_speech", True) is True


def _chunk_text(chunk: Any) -> str:
    content = chunk.get("content") if isinstance(chunk, dict) else None
    return content[:500] if isinstance(content, str) else ""


def _names(calls: Any) -> list[str]:
    return [str(c.get("name"))[:80] for c in _list(calls) if isinstance(c, dict)]


def _user_marks(chunk: Any) -> tuple[str | None, str | None]:
    if not isinstance(chunk, dict):
        return None, None
    action = chunk.get("turn_taking_action")
    action = action.get("action") if isinstance(action, dict) else None
    effects = chunk.get("speech_effects")
    insert = effects.get("speech_insert") if isinstance(effects, dict) else None
    kind = insert.get("type") if isinstance(insert, dict) else None
    return (action if isinstance(action, str) else None), (kind if isinstance(kind, str) else None)


def _tick_seconds(ticks: list[Any]) -> float:
    for tick in ticks:
        value = tick.get("tick_duration_seconds") if isinstance(tick, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 60:
            return float(value)
    return DEFAULT_TICK_SECONDS


def read_ticks(ticks: Any, tick_seconds: float | None = None) -> TickTimeline:
    """The timeline of a simulation's raw ``ticks`` (an empty timeline for anything but a list)."""
    timeline = TickTimeline()
    raw = _list(ticks)
    timeline.tick_seconds = tick_seconds if tick_seconds and tick_seconds > 0 else _tick_seconds(raw)
    step = 0
    for tick in raw:
        if not isinstance(tick, dict):
            continue
        position = len(timeline.rows)
        tick_id = tick.get("tick_id")
        if (
            not isinstance(tick_id, int)
            or isinstance(tick_id, bool)
            or (timeline.rows and tick_id <= timeline.rows[-1].tick_id)
        ):
            tick_id = timeline.rows[-1].tick_id + 1 if timeline.rows else position  # missing or out of order
        action, insert = _user_marks(tick.get("user_chunk"))
        timeline.rows.append(
            TickRow(
                position=position,
                tick_id=tick_id,
                step=step,
                speaking={s: _speaks(tick.get(f"{s}_chunk")) for s in SIDES},
                text={s: _chunk_text(tick.get(f"{s}_chunk")) for s in SIDES},
                calls={s: _names(tick.get(f"{s}_tool_calls")) for s in SIDES},
                results={s: len(_list(tick.get(f"{s}_tool_results"))) for s in SIDES},
                action=action,
                insert=insert,
            )
        )
        step += _count_messages(tick)
    _analyse(timeline)
    return timeline


def _analyse(timeline: TickTimeline) -> None:
    rows = timeline.rows
    open_at: dict[str, int | None] = {s: None for s in SIDES}
    for row in rows:
        for side in SIDES:
            opened = open_at[side]
            if row.speaking[side] and opened is None:
                open_at[side] = row.position
            elif not row.speaking[side] and opened is not None:
                timeline.segments.append(Segment(side, opened, row.position - 1))
                open_at[side] = None
    for side in SIDES:
        opened = open_at[side]
        if opened is not None:
            timeline.segments.append(Segment(side, opened, len(rows) - 1))
    timeline.segments.sort(key=lambda s: (s.start, s.side))
    start = None
    for row in rows:
        both = row.speaking["agent"] and row.speaking["user"]
        if both and start is None:
            start = row.position
        elif not both and start is not None:
            timeline.overlaps.append((start, row.position - 1))
            start = None
    if start is not None:
        timeline.overlaps.append((start, len(rows) - 1))
    window = max(1, round(YIELD_WINDOW_SECONDS / timeline.tick_seconds))
    ends = {(s.side, p): s.end for s in timeline.segments for p in range(s.start, s.end + 1)}
    for segment in timeline.segments:
        other = "user" if segment.side == "agent" else "agent"
        at = segment.start
        if not (at > 0 and rows[at].speaking[other] and rows[at - 1].speaking[other]):
            continue  # the other side was not already speaking: a turn, not an interruption
        row = rows[at]
        kind = "interruption"
        if segment.side == "user" and row.action == "backchannel":
            kind = "backchannel"
        elif segment.side == "user" and row.insert == "vocal_tic":
            kind = "vocal_tic"
        other_end = ends.get((other, at), at)
        stopped_after = other_end - at + 1
        yielded = stopped_after <= window if kind == "interruption" else None
        timeline.interruptions.append(
            Interruption(segment.side, other, at, kind, yielded, stopped_after if yielded else None)
        )


LANE_MARKS = {"agent": "█", "user": "▓", "both": "▒"}


def lane_lines(timeline: TickTimeline, start: int = 0, width: int = 80, bucket: int = 1) -> dict[str, str]:
    """Text lanes of ``width`` cells from tick ``start``, ``bucket`` ticks per cell.

    ``agent`` / ``user``: a block where that side speaks in any tick of the cell; ``overlap``: ▒ where
    both do; ``tools``: ⚒ (agent) or ⚙ (user) where a tool is called; ``events``: ⚡ where one side
    interrupts the other, ~ for a backchannel or vocal tic.
    """
    bucket = max(1, bucket)
    rows = timeline.rows
    marks: dict[int, str] = {}
    for event in timeline.interruptions:
        marks[event.tick] = "⚡" if event.kind == "interruption" else "~"
    lanes: dict[str, list[str]] = {name: [] for name in ("agent", "user", "overlap", "tools", "events")}
    for cell in range(width):
        first = start + cell * bucket
        chunk = rows[first : first + bucket]
        if not chunk:
            break
        agent = any(r.speaking["agent"] for r in chunk)
        user = any(r.speaking["user"] for r in chunk)
        lanes["agent"].append(LANE_MARKS["agent"] if agent else "·")
        lanes["user"].append(LANE_MARKS["user"] if user else "·")
        lanes["overlap"].append(
            LANE_MARKS["both"] if any(r.speaking["agent"] and r.speaking["user"] for r in chunk) else " "
        )
        tool = next(("⚒" if r.calls["agent"] else "⚙" for r in chunk if r.calls["agent"] or r.calls["user"]), " ")
        lanes["tools"].append(tool)
        lanes["events"].append(next((marks[r.position] for r in chunk if r.position in marks), " "))
    return {name: "".join(cells) for name, cells in lanes.items()}
