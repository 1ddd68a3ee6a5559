"""Process diagnostics: how the agent behaved, derived from the replay and never part of the reward.

Each flag points at the step (message index) where it happened. Messages of
the task's own history are not the agent's doing and are skipped. The rules,
kept simple and conservative on purpose:

- ``parallel_calls``: an agent message with two or more tool calls, when the
  policy asks for one tool call at a time.
- ``text_with_calls``: an agent message with both text and tool calls.
- ``repeated_call``: an agent call identical (tool and arguments) to an
  earlier one, with no successful write in between (it could not learn
  anything new; a repeated write did the same thing twice).
- ``write_before_read``: an agent write whose id arguments (``id``, ``*_id``,
  ``*_ids``) never appeared in an earlier successful call: neither in the
  arguments of a read nor in any tool result (so ids the agent looked up, or
  created itself, count as read).
- ``error_ignored``: a write (or unknown-tool) call that returned an error and
  never succeeded later, after which the agent's next text or write neither
  retries that tool, nor transfers, nor asks the user, nor mentions a problem
  (error, sorry, not, insufficient, ...).
- ``unbacked_claim``: an agent sentence stating that something *has been done*
  ("has been cancelled", "I've updated", "successfully booked") with no
  successful write before it; distinctive actions (cancel, book, exchange,
  return, suspend, resume, refuel) need a write of their own tool, other verbs
  (updated, refunded, sent, ...) any write. Questions and sentences with
  conditions, future or negation (if, once, will, not, ...) are never claims.
- ``transfer_to_human``: a call to ``transfer_to_human_agents``.

Each rule is one ``Detector`` in ``DETECTORS`` (kind, letter, description,
function); ``diagnose`` runs them all, and every table of flag kinds (the TUI
letters, legend and flag filter, the CLI and JSON counts) is derived from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tau_tui.env.tools import ToolType
from tau_tui.model.messages import AssistantMessage
from tau_tui.model.tasks import Task
from tau_tui.replay import CallRecord, Timeline, Verdict

ONE_CALL_POLICY = re.compile(r"one tool call at a time", re.IGNORECASE)
ACKNOWLEDGES_PROBLEM = re.compile(
    r"\?|\b(errors?|unable|cannot|fail(ed|s|ure)?|issues?|problems?|invalid|unfortunately|sorry|apologi[sz]e|"
    r"not|no|\w+n['’]t|insufficient|mismatch|exceeds?|only|must|need|instead|however|seems|appears)\b",
    re.IGNORECASE,
)
NOT_A_CLAIM = re.compile(
    r"\?|\b(if|or|once|will|would|shall|should|could|can|may|might|going to|before|after|when|unless|not|no|"
    r"never|yet|cannot|\w+n['’]t|let me|want|wish|like to|need|please)\b",
    re.IGNORECASE,
)
# Participle → tool-name fragments of the writes that would back the claim. Verbs that
# usually describe a side effect of another write (refunded, issued, updated, ...) are
# backed by any successful write; only distinctive actions must match their own tool.
CLAIM_VERBS: dict[str, tuple[str, ...] | None] = {
    "cancelled": ("cancel",),
    "canceled": ("cancel",),
    "booked": ("book",),
    "reserved": ("book",),
    "exchanged": ("exchange",),
    "suspended": ("suspend",),
    "resumed": ("resume",),
    "reactivated": ("resume",),
    "refueled": ("refuel",),
    "refuelled": ("refuel",),
    **{
        verb: None
        for verb in (
            "modified",
            "updated",
            "changed",
            "refunded",
            "upgraded",
            "downgraded",
            "enabled",
            "disabled",
            "activated",
            "deactivated",
            "added",
            "removed",
            "sent",
            "issued",
            "paid",
            "processed",
            "completed",
            "submitted",
            "credited",
            "returned",
        )
    },
}
_VERBS = "|".join(sorted(CLAIM_VERBS, key=len, reverse=True))
CLAIM = re.compile(
    rf"\b(?:(?:has|have)\s+(?:now\s+|just\s+)?been\s+(?:successfully\s+)?|(?:is|are)\s+now\s+|"
    rf"I(?:'ve|\s+have)\s+(?:now\s+|just\s+|also\s+)?(?:successfully\s+)?|successfully\s+)({_VERBS})\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass
class Flag:
    kind: str
    step: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "message": self.message}


def _args_key(call: CallRecord) -> str:
    return json.dumps([call.requestor, call.name, call.call.arguments], sort_keys=True, default=str)


def _successful_write(call: CallRecord) -> bool:
    """A re-executed write that succeeded both in the recording and in the replay."""
    return call.is_write and not call.recorded_error and not call.replayed_error


def _calling_messages(timeline: Timeline, start: int) -> Iterator[tuple[int, AssistantMessage]]:
    for step in timeline.steps[start:]:
        message = step.message
        if isinstance(message, AssistantMessage) and message.tool_calls:
            yield step.index, message


def parallel_calls(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    """Several tool calls in one agent message, when the policy asks for one at a time."""
    if not (policy and ONE_CALL_POLICY.search(policy)):
        return []
    out = []
    for index, message in _calling_messages(timeline, start):
        if len(message.tool_calls or []) > 1:
            calls = message.tool_calls or []
            out.append(
                Flag(
                    "parallel_calls",
                    index,
                    f"{len(calls)} tool calls in one message "
                    f"({', '.join(c.name for c in calls)}); the policy asks for one at a time",
                )
            )
    return out


def text_with_calls(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    return [
        Flag("text_with_calls", index, "text and tool calls in one message")
        for index, message in _calling_messages(timeline, start)
        if isinstance(message.content, str) and message.content.strip()
    ]


def repeated_calls(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    out = []
    last_seen: dict[str, tuple[CallRecord, int]] = {}  # key → (last call, successful writes before it)
    writes = 0
    for call in timeline.calls:
        key = _args_key(call)
        earlier, writes_then = last_seen.get(key, (None, 0))
        last_seen[key] = (call, writes)
        written_since = writes > writes_then + (1 if earlier is not None and _successful_write(earlier) else 0)
        if _successful_write(call):
            writes += 1
        if earlier is None or call.call_step < start or call.requestor != "assistant":
            continue
        if earlier.verdict is Verdict.INJECTED_FAULT:
            continue  # retrying a call a fault kept from running is the right thing to do
        if not written_since:
            out.append(
                Flag(
                    "repeated_call",
                    call.call_step,
                    f"{call.name} called again with the same arguments as at step {earlier.call_step}, "
                    "with no write in between",
                )
            )
    return out


def _id_values(arguments: Any) -> list[str]:
    if not isinstance(arguments, dict):
        return []
    out: list[str] = []
    for key, value in arguments.items():
        if key == "id" or key.endswith("_id") or key.endswith("_ids"):
            values = value if isinstance(value, list) else [value]
            out += [v for v in values if isinstance(v, str) and v]
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


_WORD = re.compile(r"[A-Za-z0-9_]+")


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", text) is not None


class _SeenText:
    """The tool results seen so far, asked whether they mention a value as a whole word.

    Each result is split into words once; a value made of word characters only
    (the usual id) is a set lookup. Other values are searched in the results
    added since they were last asked about, so every (value, result) pair is
    searched at most once and the walk stays linear in the trajectory.
    """

    def __init__(self) -> None:
        self.words: set[str] = set()
        self.texts: list[str] = []
        self._searched: dict[str, int] = {}
        self._found: set[str] = set()

    def add(self, text: str) -> None:
        self.texts.append(text)
        self.words.update(_WORD.findall(text))

    def mentions(self, value: str) -> bool:
        if _WORD.fullmatch(value):
            return value in self.words
        if value in self._found:
            return True
        done = self._searched.get(value, 0)
        self._searched[value] = len(self.texts)
        if any(_mentions(text, value) for text in self.texts[done:]):
            self._found.add(value)
            return True
        return False


def writes_before_reads(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    out = []
    read_args: set[str] = set()
    results = _SeenText()
    for call in sorted(timeline.calls, key=lambda c: c.call_step):
        if call.call_step >= start and call.requestor == "assistant" and call.tool_type is ToolType.WRITE:
            unread = [v for v in _id_values(call.call.arguments) if v not in read_args and not results.mentions(v)]
            if unread:
                out.append(
                    Flag(
                        "write_before_read",
                        call.call_step,
                        f"{call.name} writes to {', '.join(unread)}, never looked up before",
                    )
                )
        if call.result_step is not None and not call.recorded_error:
            if call.tool_type is not ToolType.WRITE:
                read_args.update(_strings(call.call.arguments))
            if call.recorded:
                results.add(call.recorded)
    return out


def _is_agent_move(timeline: Timeline, message: object) -> bool:
    """An agent message that talks to the user or calls a non-read tool."""
    if not isinstance(message, AssistantMessage):
        return False
    if isinstance(message.content, str) and message.content.strip():
        return True
    env = timeline.env
    return any(
        env is None or not env.has_tool(c.name) or env.tool_type(c.name) is not ToolType.READ
        for c in message.tool_calls or []
    )


def _next_agent_moves(timeline: Timeline) -> list[int | None]:
    """For each step position k, the position of the first agent move after k (one backward pass)."""
    nexts: list[int | None] = [None] * len(timeline.steps)
    upcoming = None
    for i in range(len(timeline.steps) - 1, -1, -1):
        nexts[i] = upcoming
        if _is_agent_move(timeline, timeline.steps[i].message):
            upcoming = i
    return nexts


def ignored_errors(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    out = []
    last_success: dict[str, int] = {}  # tool name → index of its last call that returned without error
    for c in timeline.calls:
        if c.result_step is not None and not c.recorded_error:
            last_success[c.name] = c.index
    nexts: list[int | None] | None = None
    for call in timeline.calls:
        if (
            call.requestor != "assistant"
            or not call.recorded_error
            or call.result_step is None
            or call.call_step < start
            or call.tool_type not in (None, ToolType.WRITE)
        ):
            continue
        if last_success.get(call.name, -1) > call.index:
            continue  # the agent got it done after all
        if nexts is None:
            nexts = _next_agent_moves(timeline)
        position = nexts[call.result_step] if call.result_step < len(nexts) else None
        if position is None:
            continue
        step, message = timeline.steps[position].index, timeline.steps[position].message
        moves = message.tool_calls if isinstance(message, AssistantMessage) else None  # an agent move (``nexts``)
        retried = any(c.name == call.name or c.name.startswith("transfer_to_human") for c in moves or [])
        acknowledged = isinstance(message.content, str) and ACKNOWLEDGES_PROBLEM.search(message.content)
        if not retried and not acknowledged:
            what = "answered the user" if message.text.strip() else "made another write"
            out.append(
                Flag(
                    "error_ignored",
                    step,
                    f"{call.name} failed at step {call.result_step} and never succeeded; the agent {what} "
                    "without retrying, asking or mentioning the failure",
                )
            )
    return out


def claims(text: str) -> list[tuple[str, str]]:
    """(participle, the words making the claim) for each completion claim in ``text`` (see the module's rules)."""
    out = []
    for sentence in _SENTENCE.split(text):
        if NOT_A_CLAIM.search(sentence):
            continue
        out += [(m.group(1).lower(), m.group(0)) for m in CLAIM.finditer(sentence)]
    return out


def unbacked_claims(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    """Claims with no backing write before them; the writes so far are gathered in one pass."""
    out = []
    pending = sorted((c for c in timeline.calls if _successful_write(c)), key=lambda c: c.call_step)
    writes: set[str] = set()  # names of the successful writes made at or before the current step
    taken = 0
    for step in timeline.steps:
        while taken < len(pending) and pending[taken].call_step <= step.index:
            writes.add(pending[taken].name)
            taken += 1
        if step.index < start:
            continue
        message = step.message
        if not isinstance(message, AssistantMessage) or not isinstance(message.content, str):
            continue
        for verb, words in claims(message.content):
            fragments = CLAIM_VERBS[verb]
            backed = any(fragments is None or any(f in name for f in fragments) for name in writes)
            if not backed:
                needed = "write" if fragments is None else f"{'/'.join(fragments)} write"
                out.append(
                    Flag(
                        "unbacked_claim",
                        step.index,
                        f"the agent says '{words}', but no successful {needed} came before",
                    )
                )
                break
    return out


def transfers(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    return [
        Flag("transfer_to_human", c.call_step, "transferred to a human agent")
        for c in timeline.calls
        if c.call_step >= start and c.requestor == "assistant" and c.name.startswith("transfer_to_human")
    ]


# ``(timeline, start, policy)``; with ``Detector.uses_task``, ``(timeline, start, policy, task)``
Detect = Callable[..., list[Flag]]


@dataclass(frozen=True)
class Detector:
    """One kind of process flag: its one-letter code (TUI flags column), what it means, and how it is found.

    ``detect(timeline, start, policy)`` returns the flags of its kind, ``start``
    being the first message that is the agent's doing (the task's history is
    skipped).
    """

    kind: str
    letter: str
    description: str
    detect: Detect
    uses_task: bool = False  # ``detect(timeline, start, policy, task)``: it reads the task (None when unknown)


# The registry: every table of flag kinds (the TUI letters, legend and filter, the CLI and JSON counts)
# is derived from it, in this order. A new flag kind is one ``register_detector`` call.
DETECTORS: dict[str, Detector] = {}


def register_detector(detector: Detector) -> Detector:
    """Add a detector (kinds and letters must be new); returns it."""
    if detector.kind in DETECTORS:
        raise ValueError(f"process flag {detector.kind!r} is already registered")
    taken = {d.letter: d.kind for d in DETECTORS.values()}
    if len(detector.letter) != 1 or detector.letter in taken:
        raise ValueError(
            f"process flag {detector.kind!r}: letter {detector.letter!r} must be one character, "
            f"not taken (taken by {taken.get(detector.letter)})"
        )
    DETECTORS[detector.kind] = detector
    return detector


def unregister_detector(kind: str) -> None:
    DETECTORS.pop(kind, None)


class _Letters(Mapping[str, str]):
    """kind → letter, a live view of ``DETECTORS``."""

    def __getitem__(self, kind: str) -> str:
        return DETECTORS[kind].letter

    def __iter__(self) -> Iterator[str]:
        return iter(DETECTORS)

    def __len__(self) -> int:
        return len(DETECTORS)


FLAG_KINDS = DETECTORS.keys()  # live: registered kinds, in registry order
FLAG_LETTERS: Mapping[str, str] = _Letters()

for _detector in (
    Detector(
        "parallel_calls",
        "P",
        "two or more tool calls in one message, when the policy asks for one at a time",
        parallel_calls,
    ),
    Detector("text_with_calls", "T", "text and tool calls in one agent message", text_with_calls),
    Detector(
        "repeated_call", "R", "the same call (tool and arguments) again, with no write in between", repeated_calls
    ),
    Detector("write_before_read", "W", "a write to an id never looked up (nor created) before", writes_before_reads),
    Detector(
        "error_ignored",
        "E",
        "a failed write the agent neither retried, transferred, asked nor mentioned",
        ignored_errors,
    ),
    Detector(
        "unbacked_claim", "C", "the agent says something was done, with no successful write before it", unbacked_claims
    ),
    Detector("transfer_to_human", "H", "a transfer to a human agent", transfers),
):
    register_detector(_detector)


def diagnose(
    timeline: Timeline, history_len: int = 0, policy: str | None = None, task: Task | None = None
) -> list[Flag]:
    """Every process flag of one trajectory (every registered detector), ordered by step, then registry order.
    ``task``: the simulation's task, for the detectors that read it (``Detector.uses_task``)."""
    order = {kind: i for i, kind in enumerate(DETECTORS)}
    flags = [
        flag
        for detector in list(DETECTORS.values())
        for flag in (
            detector.detect(timeline, history_len, policy, task)
            if detector.uses_task
            else detector.detect(timeline, history_len, policy)
        )
    ]
    return sorted(flags, key=lambda f: (f.step, order.get(f.kind, len(order))))
