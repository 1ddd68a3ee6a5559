"""A full-duplex (voice) simulation's views of its ``ticks``, as tau2 1.0.1 grades them.

tau2 grades a full-duplex simulation from its ticks, even when a consolidated ``messages`` list is saved
beside them (``evaluate_simulation`` takes ``simulation.ticks`` for ``FULL_DUPLEX``; ``tau2 evaluate-trajs``
calls a simulation full-duplex when its ``mode`` says so or it has ``ticks``). Each evaluator reads the
ticks its own way, and each has its function here:

* ``tick_messages``: the trajectory, per tick the user side then the agent side, each its chunk, one
  message with its tool calls, then their results. Without the chunks this is
  ``FullDuplexEnvironmentEvaluator.ticks_to_message_history`` (what the DB replay runs; a chunk is no tool
  call there, so a chunk's own ``tool_calls`` are dropped) and the calls in
  ``FullDuplexActionEvaluator``'s order. The task's message history is not part of it: tau2 replays only
  the ticks on the predicted side, while the gold side starts from the task's history as always.
* ``agent_utterances``: what ``FullDuplexCommunicateEvaluator`` searches: the agent's chunks that are no
  tool call, consecutive ones merged while their ``utterance_ids`` overlap.
* ``speech_conversation``: what ``FullDuplexNLAssertionsEvaluator`` shows the judge: speech only, the two
  sides' segments ordered by tau2's containment-aware rule ("if you speak entirely during someone else's
  turn, you get inserted where you stopped; otherwise whoever started first goes first").

A consolidated list sorted by timestamp can put a tool result before the message that made its call
(a chunk stamped after the result it waited for); graded from ticks, the pairing is the recorded one.
Untrusted input: a tick or chunk that is not an object counts for nothing; no field is trusted to have
its type.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from tau_tui.model.messages import AssistantMessage, Message, UserMessage

FULL_DUPLEX, HALF_DUPLEX = "full_duplex", "half_duplex"
GradedFrom = Literal["ticks", "messages"]
TICKS: GradedFrom = "ticks"
MESSAGES: GradedFrom = "messages"
SIDES = (("user", "user"), ("agent", "assistant"))  # tau2's order within a tick: (tick prefix, role)


def graded_from(mode: Any, messages: Any, ticks: Any) -> GradedFrom:
    """Which recorded view tau2 grades: ``ticks`` for a full-duplex simulation that has them, else ``messages``.

    As ``tau2 evaluate-trajs`` decides: a ``ticks`` list makes a simulation full-duplex, unless it says
    ``mode: half_duplex`` and has messages (tau2's half-duplex runs never write ticks).
    """
    if not isinstance(ticks, list):
        return MESSAGES
    if mode == HALF_DUPLEX and isinstance(messages, list) and messages:
        return MESSAGES
    return TICKS


def _objects(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _chunk(raw: Any) -> dict[str, Any] | None:
    """A tick's chunk as a trajectory message: tau2 never grades a chunk's own ``tool_calls``."""
    if not isinstance(raw, dict):
        return None
    return {**raw, "tool_calls": None} if raw.get("tool_calls") is not None else raw


@dataclass(frozen=True)
class TickItem:
    """One message of the trajectory from ticks: where it comes from and its raw form."""

    tick: int  # position in ``ticks``
    side: str  # "user" or "agent"
    part: Literal["chunk", "calls", "result"]
    raw: Any


def tick_items(ticks: list[Any]) -> Iterator[TickItem]:
    """The trajectory from ticks, message by message (see ``tick_messages``)."""
    for position, tick in enumerate(ticks):
        if not isinstance(tick, dict):
            continue
        for side, role in SIDES:
            chunk = _chunk(tick.get(f"{side}_chunk"))
            if chunk is not None:
                yield TickItem(position, side, "chunk", chunk)
            calls = tick.get(f"{side}_tool_calls")
            if calls:
                yield TickItem(position, side, "calls", {"role": role, "content": None, "tool_calls": calls})
            for result in _objects(tick.get(f"{side}_tool_results")):
                yield TickItem(position, side, "result", result)


def tick_messages(ticks: list[Any]) -> list[Any]:
    """The raw messages of full-duplex ticks in tau2's order: per tick the user side, then the agent side,
    each its chunk, its tool calls as one message, then their results."""
    return [item.raw for item in tick_items(ticks)]


def _text(raw: dict[str, Any]) -> str:
    content = raw.get("content")
    return content if isinstance(content, str) else ""


def _ids(raw: dict[str, Any]) -> list[str]:
    return [str(i) for i in _objects(raw.get("utterance_ids")) if isinstance(i, (str, int))]


def _merge_text(chunks: list[dict[str, Any]]) -> str:
    """tau2's ``merge_message_chunks`` text: contents joined, a space where two chunks' utterance ids are disjoint."""
    parts: list[str] = []
    previous: set[str] = set()
    for chunk in chunks:
        text = _text(chunk)
        if not text:
            continue
        ids = set(_ids(chunk))
        if parts and ids and previous and ids.isdisjoint(previous):
            parts.append(" ")
        parts.append(text)
        previous = ids
    return "".join(parts)


def _consolidated_text(chunks: list[dict[str, Any]]) -> str:
    """tau2's ``consolidate_messages`` text: the chunks merged one at a time into the message so far, so a
    chunk's ids are compared with all the ids merged before it."""
    text, ids = "", list[str]()
    for chunk in chunks:
        merged = _merge_text([{"content": text, "utterance_ids": ids}, chunk])
        ids = list(dict.fromkeys(ids + _ids(chunk)))
        text = merged
    return text


@dataclass(frozen=True)
class Utterance:
    """One merged agent utterance: the step of its first chunk in the trajectory from ticks, and its text."""

    step: int
    text: str


def agent_utterances(ticks: list[Any]) -> list[Utterance]:
    """The agent's speech as ``FullDuplexCommunicateEvaluator`` merges it: chunks that are no tool call, grouped
    while each one's ``utterance_ids`` overlap the group's (a chunk without ids stands alone)."""
    groups: list[tuple[int, list[dict[str, Any]], set[str]]] = []
    for step, item in enumerate(tick_items(ticks)):
        if item.side != "agent" or item.part != "chunk":
            continue
        original = ticks[item.tick].get("agent_chunk")
        if not isinstance(original, dict) or original.get("tool_calls") is not None:
            continue  # tau2 leaves out a chunk that is a tool call
        ids = set(_ids(original))
        if groups and groups[-1][2] and ids and not groups[-1][2].isdisjoint(ids):
            groups[-1][1].append(original)
            groups[-1][2].update(ids)
        else:
            groups.append((step, [original], ids))
    return [Utterance(step, _merge_text(chunks)) for step, chunks, _ in groups]


def _speaks(raw: Any) -> bool:
    """tau2's ``_has_meaningful_content`` of a chunk that is no tool call: its ``contains_speech`` flag (true
    unless it says otherwise), else whether it has text."""
    if not isinstance(raw, dict) or raw.get("tool_calls") is not None:
        return False
    flag = raw.get("contains_speech", True)
    if isinstance(flag, bool):
        return flag
    return bool(raw.get("content"))


@dataclass
class _Segment:
    start: int
    end: int
    chunks: dict[int, dict[str, Any]]

    def between(self, after: int, upto: int | None = None) -> list[dict[str, Any]]:
        return [c for t, c in sorted(self.chunks.items()) if t > after and (upto is None or t <= upto)]


def _segments(ticks: list[Any], side: str) -> list[_Segment]:
    """Runs of consecutive ticks in which ``side`` speaks (tau2's ``integration_ticks=1``)."""
    out: list[_Segment] = []
    for position, tick in enumerate(ticks):
        chunk = tick.get(f"{side}_chunk") if isinstance(tick, dict) else None
        if not isinstance(chunk, dict) or not _speaks(chunk):
            continue
        if out and position - out[-1].end <= 1:
            out[-1].end = position
            out[-1].chunks[position] = chunk
        else:
            out.append(_Segment(position, position, {position: chunk}))
    return out


# tau2's sort priorities at one tick: the user's speech, then the agent's, then a split segment's rest.
_USER, _AGENT, _REST = 0, 1, 3


def _contained(inner: _Segment, outer: _Segment) -> bool:
    return inner.start >= outer.start and inner.end <= outer.end


def _overlap(a: _Segment, b: _Segment) -> bool:
    return not (a.end < b.start or b.end < a.start)


def speech_conversation(ticks: list[Any]) -> list[Message]:
    """The conversation the full-duplex NL judge reads: speech only, in tau2's containment-aware order.

    The agent is tau2's ``self`` and the user its ``other``. A segment that lies inside one of the other
    side's splits it where it ends; overlapping segments go by start, the user first on a tie.
    """
    agent, user = _segments(ticks, "agent"), _segments(ticks, "user")
    out: list[tuple[int, int, str, list[dict[str, Any]]]] = []  # (tick, priority, role, chunks)
    done_agent: set[int] = set()
    done_user: set[int] = set()
    inside_user = {u: [a for a in range(len(agent)) if _contained(agent[a], user[u])] for u in range(len(user))}
    inside_agent = {
        a: [u for u in range(len(user)) if _contained(user[u], agent[a]) and not _contained(agent[a], user[u])]
        for a in range(len(agent))
    }
    for u, held in inside_user.items():
        if not held:
            continue
        done_user.add(u)
        split = user[u].start - 1
        for a in sorted(held, key=lambda i: agent[i].end):
            done_agent.add(a)
            end = agent[a].end
            out.append((end, _USER, "user", user[u].between(split, end)))
            out.append((end, _AGENT, "assistant", agent[a].between(-1)))
            split = end
        out.append((split + 1, _REST, "user", user[u].between(split)))
    for a, held in inside_agent.items():
        if not held or a in done_agent:
            continue
        done_agent.add(a)
        split = agent[a].start - 1
        for u in sorted(held, key=lambda i: user[i].end):
            done_user.add(u)
            end = user[u].end
            out.append((end, _AGENT, "assistant", agent[a].between(split, end)))
            out.append((end, _REST, "user", user[u].between(-1)))
            split = end
        out.append((split + 1, _AGENT, "assistant", agent[a].between(split)))
    for a, segment in enumerate(agent):
        if a in done_agent:
            continue
        for u, other in enumerate(user):
            if u not in done_user and _overlap(segment, other):
                done_user.add(u)
                out.append((other.start, _USER, "user", other.between(-1)))
        out.append((segment.start, _AGENT, "assistant", segment.between(-1)))
    for u, other in enumerate(user):
        if u not in done_user:
            out.append((other.start, _USER, "user", other.between(-1)))
    out.sort(key=lambda entry: (entry[0], entry[1]))
    messages: list[Message] = []
    for _, _, role, chunks in out:
        if chunks:
            text = _consolidated_text(chunks)
            messages.append(AssistantMessage(content=text) if role == "assistant" else UserMessage(content=text))
    return messages


def results_before_calls(messages: list[Message]) -> int:
    """How many tool results of a message list come before any message that makes their call: what tau2's
    replay refuses, and what a consolidated list sorted by timestamp can hold."""
    called: set[str] = set()
    early = 0
    for message in messages:
        if message.role == "tool":
            early += str(getattr(message, "id", "")) not in called
            continue
        for call in getattr(message, "tool_calls", None) or []:
            called.add(call.id)
    return early
