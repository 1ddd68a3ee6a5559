"""The newer fields tau2 records on a simulation: LLM reviews, authentication, hallucination checks, effects.

``tau2 review`` writes ``results_reviewed.json``: the run with ``review`` (agent and user errors) or
``user_only_review`` (user simulator errors) on each simulation, and ``auth_classification``. The
runner adds ``hallucination_check`` and ``hallucination_retries_used`` (user-simulator hallucination
retries); voice runs add ``effect_timeline`` (audio effects with start and end in milliseconds).

All of it is untrusted input read tolerantly: a field of the wrong type is dropped with a line in
``problems``, never an exception. An error's place is a turn (``turn_idx``, the message index of the
trajectory: tau2 renumbers turns 0..n-1) or, for full-duplex runs, a tick range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 4000  # longest reasoning kept per error
MAX_ITEMS = 500  # most errors or effect events kept per simulation

AGENT_SEVERITIES = ("minor", "critical")
USER_SEVERITIES = ("minor", "critical_helped", "critical_hindered", "critical")
AUTH_STATUSES = ("succeeded", "failed", "not_needed")


@dataclass
class ReviewError:
    """One error a review found: who made it, what kind, how bad, where."""

    origin: str  # "review", "user_only_review" or "hallucination_check"
    source: str  # "agent", "user" or "unknown"
    reasoning: str = ""
    error_type: str | None = None
    tags: tuple[str, ...] = ()
    severity: str | None = None
    turn_idx: int | None = None
    tick_start: int | None = None
    tick_end: int | None = None
    correct_behavior: str | None = None
    user_message: str | None = None

    @property
    def critical(self) -> bool:
        return bool(self.severity and self.severity.startswith("critical"))

    @property
    def where(self) -> str:
        """``turn 4``, ``ticks 10-14`` or "" when the error names no place."""
        if self.turn_idx is not None:
            return f"turn {self.turn_idx}"
        if self.tick_start is not None:
            end = self.tick_end if self.tick_end is not None else self.tick_start
            return f"tick {self.tick_start}" if end == self.tick_start else f"ticks {self.tick_start}-{end}"
        return ""

    @property
    def label(self) -> str:
        """``agent · critical · tool_call_argument_error`` (source, severity, tags)."""
        parts = [self.source]
        if self.severity:
            parts.append(self.severity)
        parts.extend(self.tags or ((self.error_type,) if self.error_type else ()))
        return " · ".join(parts)


@dataclass
class EffectEvent:
    """An audio effect of a voice run (``effect_timeline.events``): what, on whose side, when."""

    effect_type: str
    participant: str
    start_ms: int
    end_ms: int | None = None
    params: dict[str, Any] | None = None


@dataclass
class SimReview:
    """Everything the newer fields say about one simulation; ``present`` is False when it has none of them."""

    summary: str = ""
    reviewed: bool = False  # a review or user-only review is recorded
    review_kind: str | None = None  # "full" or "user"
    agent_error: bool | None = None
    user_error: bool | None = None
    critical_user_error: bool | None = None
    errors: list[ReviewError] = field(default_factory=list)
    review_cost: float | None = None
    auth_status: str | None = None
    auth_reasoning: str = ""
    hallucination_found: bool | None = None
    hallucination_summary: str = ""
    hallucination_retries: int = 0
    effects: list[EffectEvent] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def present(self) -> bool:
        return (
            self.reviewed
            or self.auth_status is not None
            or self.hallucination_found is not None
            or self.hallucination_retries > 0
            or bool(self.effects)
        )

    def errors_by(self, source: str) -> list[ReviewError]:
        return [e for e in self.errors if e.source == source]

    @property
    def tags(self) -> list[str]:
        """Every tag of every error, once, in order of first use."""
        seen: dict[str, None] = {}
        for error in self.errors:
            for tag in error.tags:
                seen.setdefault(tag, None)
        return list(seen)

    @property
    def severities(self) -> list[str]:
        seen: dict[str, None] = {}
        for error in self.errors:
            if error.severity:
                seen.setdefault(error.severity, None)
        return list(seen)


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _opt_text(value: Any, limit: int = MAX_TEXT) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # tau2's own parser accepts one tag as a string
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(t[:80] for t in value if isinstance(t, str) and t)[:20]


def _error(origin: str, raw: Any, default_source: str, problems: list[str], where: str) -> ReviewError | None:
    if not isinstance(raw, dict):
        problems.append(f"{where} is not an object: skipped")
        return None
    source = raw.get("source", default_source)
    if source not in ("agent", "user", "unknown"):
        problems.append(f"{where}.source is not agent, user or unknown: read as unknown")
        source = "unknown"
    severity = raw.get("severity")
    allowed = USER_SEVERITIES if source == "user" else AGENT_SEVERITIES + ("critical_helped", "critical_hindered")
    if severity is not None and severity not in allowed:
        problems.append(f"{where}.severity is not a known severity: dropped")
        severity = None
    turn = raw.get("turn_idx")
    if turn is not None and _int(turn) is None:
        problems.append(f"{where}.turn_idx is not a turn number: dropped")
    return ReviewError(
        origin=origin,
        source=source,
        reasoning=_text(raw.get("reasoning")),
        error_type=_opt_text(raw.get("error_type"), 80),
        tags=_tags(raw.get("error_tags")),
        severity=severity,
        turn_idx=_int(turn),
        tick_start=_int(raw.get("tick_start")),
        tick_end=_int(raw.get("tick_end")),
        correct_behavior=_opt_text(raw.get("correct_behavior")),
        user_message=_opt_text(raw.get("user_message")),
    )


def _review(out: SimReview, raw: Any, key: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        out.problems.append(f"{key} is not an object: ignored")
        return
    out.reviewed = True
    out.review_kind = out.review_kind or ("full" if key == "review" else "user")
    if not out.summary:
        out.summary = _text(raw.get("summary"))
    if key == "review":
        out.agent_error = _bool(raw.get("agent_error"))
    out.user_error = _bool(raw.get("user_error")) if out.user_error is None else out.user_error
    if out.critical_user_error is None:
        out.critical_user_error = _bool(raw.get("critical_user_error"))
    cost = _number(raw.get("cost"))
    if cost is not None:
        out.review_cost = (out.review_cost or 0.0) + cost
    errors = raw.get("errors")
    if errors is None:
        return
    if not isinstance(errors, list):
        out.problems.append(f"{key}.errors is not a list: ignored")
        return
    default = "unknown" if key == "review" else "user"
    for i, item in enumerate(errors[:MAX_ITEMS]):
        error = _error(key, item, default, out.problems, f"{key}.errors[{i}]")
        if error is not None:
            out.errors.append(error)


def _hallucination(out: SimReview, raw: Any) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        out.problems.append("hallucination_check is not an object: ignored")
        return
    out.hallucination_found = _bool(raw.get("hallucination_found"))
    out.hallucination_summary = _text(raw.get("summary"))
    errors = raw.get("errors")
    for i, item in enumerate(errors[:MAX_ITEMS] if isinstance(errors, list) else []):
        error = _error("hallucination_check", item, "user", out.problems, f"hallucination_check.errors[{i}]")
        if error is not None:
            error.tags = error.tags or ("hallucination",)
            out.errors.append(error)


def _auth(out: SimReview, raw: Any) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict) or raw.get("status") not in AUTH_STATUSES:
        out.problems.append("auth_classification has no status succeeded, failed or not_needed: ignored")
        return
    out.auth_status = raw["status"]
    out.auth_reasoning = _text(raw.get("reasoning"))


def _effects(out: SimReview, raw: Any) -> None:
    if raw is None:
        return
    events = raw.get("events") if isinstance(raw, dict) else None
    if not isinstance(events, list):
        out.problems.append("effect_timeline has no list of events: ignored")
        return
    for i, item in enumerate(events[:MAX_ITEMS]):
        start = _int(item.get("start_ms")) if isinstance(item, dict) else None
        kind = item.get("effect_type") if isinstance(item, dict) else None
        if start is None or not isinstance(kind, str):
            out.problems.append(f"effect_timeline.events[{i}] has no effect_type and start_ms: skipped")
            continue
        end = _int(item.get("end_ms"))
        participant = item.get("participant") if item.get("participant") in ("user", "agent") else "user"
        params = item.get("params") if isinstance(item.get("params"), dict) else None
        out.effects.append(
            EffectEvent(kind[:80], participant, start, end if end is None or end >= start else None, params)
        )


def read_review(raw_sim: Any) -> SimReview:
    """The review fields of one raw simulation (a dict as recorded), read tolerantly."""
    out = SimReview()
    if not isinstance(raw_sim, dict):
        return out
    _review(out, raw_sim.get("review"), "review")
    _review(out, raw_sim.get("user_only_review"), "user_only_review")
    _auth(out, raw_sim.get("auth_classification"))
    _hallucination(out, raw_sim.get("hallucination_check"))
    retries = raw_sim.get("hallucination_retries_used")
    if retries is not None:
        if _int(retries) is None:
            out.problems.append("hallucination_retries_used is not a count: ignored")
        else:
            out.hallucination_retries = retries
    _effects(out, raw_sim.get("effect_timeline"))
    return out


def error_step(error: ReviewError, messages: list[Any], ticks: Any = None) -> int | None:
    """The trajectory step a review error names, or None.

    A turn is the message recording that ``turn_idx`` (tau2 renumbers turns 0..n-1, so the index when no
    message records one); a tick range lands on the first message of its first tick (``ticks``: a
    ``model.ticks.TickTimeline``); a hallucination check's error on the user message it quotes.
    """
    n = len(messages)
    if error.turn_idx is not None:
        step = next(
            (i for i, m in enumerate(messages) if getattr(m, "turn_idx", None) == error.turn_idx), error.turn_idx
        )
        return step if 0 <= step < n else None
    if error.tick_start is not None and ticks is not None:
        step = ticks.step_of_tick(error.tick_start)
        return step if step is not None and 0 <= step < n else None
    if error.user_message:
        needle = error.user_message.strip().lower()[:200]
        for i, message in enumerate(messages):
            text = getattr(message, "text", "") or ""
            if getattr(message, "role", None) == "user" and needle and needle in text.lower():
                return i
    return None
