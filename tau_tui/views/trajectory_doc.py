"""A trajectory as the inspector shows it: steps, their events, and jump targets.

Pure Python. Built from the recorded messages plus, when replay could run,
the replay timeline (verdicts, findings) and, when evaluation could run, its
process flags and the step where the run left the gold path. Without replay
(a live session, a domain we do not have) the marks an episode leaves on its
tool messages still say which calls had an injected fault and which results
made a tool known, so those are shown the same way. Each step is one
message; each message yields events (text, tool call, tool result, finding,
flag, discovery, refusal, note) whose ``kind`` picks a renderer in
``render.py``. A live document (a play session) has no replay: its calls were
executed by the environment. Notes (a sidecar's annotations) are added and
replaced with ``set_notes``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from tau_tui.catalog import query_terms, text_matches
from tau_tui.env.discovery import discovered_how, discovered_mark
from tau_tui.env.episode import cassette_mark
from tau_tui.env.faults import InjectedFault, fault_mark
from tau_tui.model.messages import Message, OtherMessage, ParticipantMessage, ToolCall, ToolMessage
from tau_tui.model.results import is_silent
from tau_tui.model.reviews import error_step
from tau_tui.replay.timeline import CallRecord, Finding, MismatchClass, Timeline, Verdict

if TYPE_CHECKING:
    from tau_tui.evaluate import Flag, GoldDivergence
    from tau_tui.model.notes import Note
    from tau_tui.model.reviews import EffectEvent, ReviewError, SimReview
    from tau_tui.model.ticks import TickTimeline

# Jump targets, in the order the help screen lists them.
TARGETS = (
    "call",
    "write",
    "mismatch",
    "hallucinated",
    "error",
    "fault",
    "refusal",
    "discovery",
    "finding",
    "flag",
    "divergence",
    "review",
    "note",
    "match",
)
SLOW_RESPONSE = "slow_response"  # the one injected fault that lets the call run (it only answers late)
# The pill of a mismatch that library text or an upstream fix explains; any other mismatch's is "mismatch".
MISMATCH_PILLS = {MismatchClass.LIBRARY_TEXT: "lib text", MismatchClass.UPSTREAM_FIX: "upstream fix"}


@dataclass
class CallView:
    """One tool call: what the recording holds and what replay made of it."""

    call: ToolCall
    call_step: int
    record: CallRecord | None = None
    result_step: int | None = None
    result: str | None = None
    result_error: bool = False
    live: bool = False  # executed by the environment of a running session, not replayed
    discovered_at: int | None = None  # a discoverable tool: the step that made it known (None: not before)
    fault_marked: dict[str, Any] | None = None  # without replay: the ``injected_fault`` mark of its result
    served: dict[str, Any] | None = None  # the ``cassette`` mark of its result: recorded where (sim, step)

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def by_user(self) -> bool:
        return self.call.requestor == "user"

    @property
    def verdict(self) -> Verdict | None:
        return None if self.record is None else self.record.verdict

    @property
    def fault(self) -> dict[str, Any] | None:
        """The recorded ``injected_fault`` mark (kind, attempt, rule, seconds), if the call was faulted."""
        return self.fault_marked if self.record is None else self.record.fault

    @property
    def withheld(self) -> bool:
        """An injected fault kept the call from being carried out (replay's verdict, else the result's mark)."""
        if self.record is not None:
            return self.record.verdict is Verdict.INJECTED_FAULT
        fault = InjectedFault.from_mark(self.fault_marked, self.name) if self.fault_marked else None
        return fault is not None and fault.withheld

    @property
    def refusal(self) -> dict[str, Any] | None:
        """The recorded ``refused`` mark (reason, by), if the episode's backend refused the call."""
        return None if self.record is None else self.record.refusal

    @property
    def discoverable(self) -> bool:
        return self.record is not None and self.record.discoverable

    @property
    def is_mismatch(self) -> bool:
        """Replay's verdict is a mismatch, whatever its class."""
        return self.verdict is Verdict.MISMATCH

    @property
    def mismatch_note(self) -> str | None:
        """What a library_text or upstream_fix mismatch differs in (None: a divergence, or no mismatch)."""
        return None if self.record is None else self.record.mismatch_note

    @property
    def pill(self) -> str:
        """ok / read / error / mismatch / lib text / upstream fix / hallucinated / fault / slow / refused /
        no result / not replayed."""
        verdict = self.verdict
        if verdict is Verdict.SKIPPED_UNKNOWN:
            return "hallucinated"
        if verdict is Verdict.MISMATCH and self.record is not None:
            return MISMATCH_PILLS.get(self.record.mismatch_class or MismatchClass.DIVERGENCE, "mismatch")
        if verdict is Verdict.REFUSED:
            return "refused"
        if self.withheld:
            return "fault"
        if self.result_step is None:
            return "no result"
        if self.fault is not None and self.fault.get("kind") == SLOW_RESPONSE:
            return "slow"
        if self.result_error:
            return "error"
        if self.live:
            return "done"
        if verdict is Verdict.REPLAYED:
            return "ok"
        if verdict is Verdict.SKIPPED_READ:
            return "read"
        return "not replayed"

    @property
    def kind(self) -> str:
        """Event kind of the call itself."""
        if self.is_mismatch:
            return "mismatch"
        return {"hallucinated": "hallucinated", "fault": "fault", "refused": "refused"}.get(
            self.pill, "write" if self.verdict is Verdict.REPLAYED else "tool_call"
        )

    @property
    def is_write(self) -> bool:
        return self.verdict in (Verdict.REPLAYED, Verdict.MISMATCH)


@dataclass
class Event:
    kind: str
    step: int
    text: str = ""
    call: CallView | None = None
    finding: Finding | None = None
    note: Note | None = None  # kind "note"
    how: str = "read"  # a discovery: read about, unlocked (by the agent) or given (to the user)
    review: ReviewError | None = None  # kind "review"
    effect: EffectEvent | None = None  # kind "effect": an audio effect of a voice run


@dataclass
class StepView:
    index: int
    message: Message
    events: list[Event] = field(default_factory=list)
    searchable: str = ""

    @property
    def role(self) -> str:
        return self.message.role

    @property
    def user_side_tool(self) -> bool:
        """A tool call or result of the user's own tools (dual-control domains)."""
        message = self.message
        if isinstance(message, ToolMessage):
            return message.requestor == "user"
        return isinstance(message, ParticipantMessage) and message.role == "user" and bool(message.tool_calls)


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _message_errors(message: Message) -> list[str]:
    """Errors a recording attached to a message (newer tau2 keeps rejected agent output this way)."""
    errors = (message.model_extra or {}).get("errors")
    if isinstance(errors, str):
        return [errors]
    if isinstance(errors, list):
        return [str(e) for e in errors if e]
    return []


class TrajectoryDoc:
    """The steps of one simulation and where each kind of event happens."""

    def __init__(
        self, messages: list[Message], timeline: Timeline | None = None, *, live: bool = False, voice: bool = False
    ):
        """``voice``: fold silent chunks as a voice run's trajectory does, without its tick timeline."""
        self.timeline = timeline
        self.voice = voice
        self.steps = [StepView(i, m) for i, m in enumerate(messages)]
        self.calls: list[CallView] = self._calls(messages, timeline)
        for call in self.calls if live else []:
            call.live = True
        self.general_findings: list[Finding] = []
        self.run_notes: list[Note] = []  # notes on the whole simulation (step notes are events)
        self.review: SimReview | None = None  # the recorded review fields, when there are any
        self.run_reviews: list[ReviewError] = []  # review errors that name no step
        self.ticks: TickTimeline | None = None  # the tick timeline of a full-duplex run
        self.n_flags = 0  # process flags of the assessment (a step may carry several)
        self._build_events(timeline)
        self.targets: dict[str, list[int]] = self._targets()

    def add_assessment(self, flags: list[Flag], divergence: GoldDivergence | None) -> None:
        """Process flags and the step where the run left the gold path, as events and jump targets."""
        self.n_flags = len(flags)
        for flag in flags:
            if 0 <= flag.step < len(self.steps):
                self.steps[flag.step].events.append(Event("flag", flag.step, f"{flag.kind}: {flag.message}"))
        if divergence is not None and divergence.step is not None and 0 <= divergence.step < len(self.steps):
            text = divergence.message.removeprefix(f"step {divergence.step}: ")
            self.steps[divergence.step].events.append(Event("divergence", divergence.step, text))
        self.targets = self._targets()

    def add_reviews(self, review: SimReview | None, ticks: TickTimeline | None = None) -> None:
        """The recorded review at its steps, and the tick timeline of a voice run.

        Each error lands on the step ``model.reviews.error_step`` names (or in ``run_reviews``); audio effects
        on the first step of the tick they start in.
        """
        self.review, self.ticks = review, ticks
        messages = [step.message for step in self.steps]
        for error in review.errors if review is not None else []:
            step = error_step(error, messages, ticks)
            if step is None:
                self.run_reviews.append(error)
            else:
                self.steps[step].events.append(Event("review", step, error.reasoning, review=error))
        if ticks is not None and review is not None and len(ticks):
            for effect in review.effects:
                position = ticks.position_at_ms(effect.start_ms)
                step = ticks.rows[position].step if position is not None else -1
                if 0 <= step < len(self.steps):
                    self.steps[step].events.append(Event("effect", step, effect.effect_type, effect=effect))
        self.targets = {**self._targets(), "match": self.targets.get("match", [])}

    def set_notes(self, notes: list[Note]) -> list[int]:
        """Show ``notes`` instead of the ones shown so far; returns the steps that changed.

        A note with a step becomes an event of that step; one without is kept in ``run_notes``.
        """
        changed = {e.step for s in self.steps for e in s.events if e.kind == "note"}
        for step in self.steps:
            step.events = [e for e in step.events if e.kind != "note"]
        self.run_notes = []
        for note in notes:
            if note.step is not None and 0 <= note.step < len(self.steps):
                self.steps[note.step].events.append(Event("note", note.step, note.text, note=note))
                changed.add(note.step)
            else:
                self.run_notes.append(note)
        self.targets = {**self._targets(), "match": self.targets.get("match", [])}
        return sorted(changed)

    # --- construction -----------------------------------------------------------
    @staticmethod
    def _calls(messages: list[Message], timeline: Timeline | None) -> list[CallView]:
        views: list[CallView] = []
        if timeline is not None:
            for record in timeline.calls:
                result = messages[record.result_step] if record.result_step is not None else None
                views.append(
                    CallView(
                        record.call,
                        record.call_step,
                        record,
                        record.result_step,
                        record.recorded if result is not None else None,
                        record.recorded_error,
                        discovered_at=timeline.discovered_at(record.via or record.name)
                        if record.discoverable
                        else None,
                        served=cassette_mark(result) if result is not None else None,
                    )
                )
            return views
        # Without replay: pair results to calls by id, as tau2 does (first pending call otherwise).
        pending: list[CallView] = []
        for index, message in enumerate(messages):
            if isinstance(message, ToolMessage):
                match = next((v for v in pending if v.call.id == message.id), pending[0] if pending else None)
                if match is not None:
                    pending.remove(match)
                    match.result_step, match.result, match.result_error = index, message.text, bool(message.error)
                    match.fault_marked, match.served = fault_mark(message), cassette_mark(message)
                continue
            pending = []
            if isinstance(message, ParticipantMessage):
                for call in message.tool_calls or []:
                    view = CallView(call, index)
                    views.append(view)
                    pending.append(view)
        return views

    def _build_events(self, timeline: Timeline | None) -> None:
        by_call_step: dict[int, list[CallView]] = {}
        by_result_step: dict[int, CallView] = {}
        for view in self.calls:
            by_call_step.setdefault(view.call_step, []).append(view)
            if view.result_step is not None:
                by_result_step[view.result_step] = view
        for step in self.steps:
            message = step.message
            events = step.events
            words = [message.text]
            if isinstance(message, OtherMessage):
                events.append(Event("unreadable", step.index, message.problem or "unreadable message"))
            elif isinstance(message, ToolMessage):
                kind = "tool_error" if message.error else "tool_result"
                events.append(Event(kind, step.index, message.text, call=by_result_step.get(step.index)))
            else:
                if message.text:
                    kind = {"system": "system", "user": "user_text"}.get(message.role, "assistant_text")
                    events.append(Event(kind, step.index, message.text))
                for view in by_call_step.get(step.index, []):
                    events.append(Event(view.kind, step.index, call=view))
                    words += [view.name, _json(view.call.arguments)]
            for problem in _message_errors(message):
                events.append(Event("message_error", step.index, problem))
                words.append(problem)
            step.searchable = "\n".join(words).lower()
        if timeline is None:
            for step in self.steps:
                how = discovered_how(step.message)
                step.events += [
                    Event("discovery", step.index, tool, how=how.get(tool, "read"))
                    for tool in discovered_mark(step.message)
                ]
        else:
            for discovery in timeline.discoveries:
                if 0 <= discovery.step < len(self.steps):
                    self.steps[discovery.step].events.append(
                        Event("discovery", discovery.step, discovery.tool, how=discovery.how)
                    )
            first_refusal = True
            for view in self.calls:
                if view.pill == "refused" and view.result_step is not None:
                    self.steps[view.result_step].events.append(
                        Event("refusal", view.result_step, "first" if first_refusal else "", call=view)
                    )
                    first_refusal = False
            for finding in timeline.findings:
                if finding.step is not None and 0 <= finding.step < len(self.steps):
                    self.steps[finding.step].events.append(
                        Event("finding", finding.step, finding.message, finding=finding)
                    )
                else:
                    self.general_findings.append(finding)

    def _targets(self) -> dict[str, list[int]]:
        targets: dict[str, set[int]] = {name: set() for name in TARGETS}
        for view in self.calls:
            targets["call"].add(view.call_step)
            landing = view.result_step if view.result_step is not None else view.call_step
            if view.is_write:
                targets["write"].add(landing)
            if view.is_mismatch:
                targets["mismatch"].add(landing)
            if view.pill == "hallucinated":
                targets["hallucinated"].add(view.call_step)
            if view.fault is not None:
                targets["fault"].add(landing)
            if view.pill == "refused":
                targets["refusal"].add(landing)
        for step in self.steps:
            for event in step.events:
                if event.kind in ("tool_error", "message_error"):
                    targets["error"].add(step.index)
                elif event.kind in ("finding", "unreadable"):
                    targets["finding"].add(step.index)
                elif event.kind in ("flag", "divergence", "discovery", "note", "review"):
                    targets[event.kind].add(step.index)
        return {name: sorted(steps) for name, steps in targets.items()}

    # --- navigation ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def next(self, target: str, step: int) -> int | None:
        """The first step of ``target`` after ``step`` (None when there is none)."""
        steps = self.targets.get(target, [])
        pos = bisect_right(steps, step)
        return steps[pos] if pos < len(steps) else None

    def previous(self, target: str, step: int) -> int | None:
        steps = self.targets.get(target, [])
        pos = bisect_left(steps, step)
        return steps[pos - 1] if pos > 0 else None

    def search(self, query: str) -> list[int]:
        """Steps whose text holds every term of ``query``; also the "match" jump target."""
        terms = query_terms(query)
        hits = [s.index for s in self.steps if terms and text_matches(s.searchable, terms)]
        self.targets["match"] = hits
        return hits

    def call_views_at(self, step: int) -> list[CallView]:
        """The calls a step makes, or the call whose result it carries (each once)."""
        found: list[CallView] = []
        for event in self.steps[step].events:
            if event.call is not None and all(event.call is not seen for seen in found):
                found.append(event.call)
        return found

    def folds(self, step: int) -> bool:
        """Whether a voice run's trajectory folds ``step`` by default: a chunk that says nothing, calls no tool and
        carries no event (a flag, review error, effect or note keeps it shown)."""
        view = self.steps[step]
        return (self.ticks is not None or self.voice) and is_silent(view.message) and not view.events

    def counts(self) -> dict[str, int]:
        """How many of each the footer shows: steps per jump target, except ``flag`` (process flags, as the runs
        table's flags* column counts them), ``error`` (recorded tool errors, as its err column) and
        ``message_error`` (errors a recording attached to messages, which err does not count)."""
        counts = {name: len(steps) for name, steps in self.targets.items()}
        kinds = [event.kind for step in self.steps for event in step.events]
        counts.update(flag=self.n_flags, error=kinds.count("tool_error"), message_error=kinds.count("message_error"))
        return counts
