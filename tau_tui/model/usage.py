"""A voice agent's recorded usage (tau2 after 1.0.1, PR 454: ``SimulationRun.agent_usage``), read tolerantly.

tau2 writes a ``SessionUsage``: ``records`` (``UsageRecord``: provider, model, component realtime | llm |
stt | tts, semantics delta | cumulative, scope_id, tick_number, billable, token meters, audio_input_seconds,
characters, raw), ``cost`` (USD, null when any record could not be priced), ``cost_breakdown``,
``pricing_version`` and ``num_raw_records``. Delta records sum; cumulative ones are running totals, so the
last one per ``scope_id`` counts (tau2's ``aggregate_usage``). The same goes for ``agent_cost``: null means
nobody priced the run, never that it cost nothing.

Untrusted input: a missing field is no usage, a wrong one a problem line, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

TOKEN_METERS = (
    "input_tokens",
    "output_tokens",
    "input_text_tokens",
    "input_audio_tokens",
    "input_cached_tokens",
    "input_cached_text_tokens",
    "input_cached_audio_tokens",
    "output_text_tokens",
    "output_audio_tokens",
)
OTHER_METERS = ("audio_input_seconds", "characters")


def _number(value: Any) -> float | None:
    """A count or an amount: a finite number ≥ 0 (a bool, NaN or 1e999 is not one)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class UsageLine:
    """One record's meters: who billed what."""

    provider: str
    model: str
    component: str
    billable: bool
    meters: dict[str, float]

    @property
    def label(self) -> str:
        return f"{self.component}:{self.provider}/{self.model}"


@dataclass
class AgentUsage:
    """A simulation's ``agent_usage``: its records summed as tau2 sums them, and the recorded cost."""

    lines: list[UsageLine] = field(default_factory=list)
    cost: float | None = None  # None: not priced
    cost_breakdown: dict[str, float] = field(default_factory=dict)
    pricing_version: str | None = None
    raw_records: int | None = None
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "records": [
                {
                    "component": line.component,
                    "provider": line.provider,
                    "model": line.model,
                    "billable": line.billable,
                    "meters": line.meters,
                }
                for line in self.lines
            ],
            "tokens": self.tokens,
            "cost": self.cost,
            "cost_breakdown": self.cost_breakdown,
            "pricing_version": self.pricing_version,
            "num_raw_records": self.raw_records,
            "problems": list(self.problems),
        }

    def total(self, meter: str, billable_only: bool = True) -> float | None:
        """A meter summed over the records that have it (None when none does)."""
        values = [
            line.meters[meter] for line in self.lines if meter in line.meters and (line.billable or not billable_only)
        ]
        return sum(values) if values else None

    @property
    def tokens(self) -> int | None:
        """Input plus output tokens of the billable records."""
        parts = [self.total("input_tokens"), self.total("output_tokens")]
        known = [p for p in parts if p is not None]
        return int(sum(known)) if known else None

    @property
    def audio_seconds(self) -> float | None:
        return self.total("audio_input_seconds")

    def summary(self) -> str:
        """One line: tokens, audio seconds, characters, and the cost or that it is unpriced."""
        parts = []
        if self.tokens is not None:
            tokens = f"{self.tokens:,} tokens"
            audio = [self.total("input_audio_tokens"), self.total("output_audio_tokens")]
            if any(a is not None for a in audio):
                tokens += f" ({int(sum(a for a in audio if a is not None)):,} audio)"
            parts.append(tokens)
        if self.audio_seconds is not None:
            parts.append(f"{self.audio_seconds:g} s audio in")
        characters = self.total("characters")
        if characters is not None:
            parts.append(f"{int(characters):,} characters spoken")
        parts.append("unpriced" if self.cost is None else f"${self.cost:.4f}")
        return ", ".join(parts)


def _lines(records: list[Any], problems: list[str]) -> list[UsageLine]:
    """The records summed per (provider, model, component, billable); cumulative ones last-value per scope."""
    groups: dict[tuple[str, str, str, bool], dict[str, Any]] = {}
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            problems.append(f"agent_usage.records[{i}] is not an object: skipped")
            continue
        provider, model = _text(record.get("provider")) or "?", _text(record.get("model")) or "?"
        component = _text(record.get("component")) or "realtime"
        billable = record.get("billable", True) is not False
        group = groups.setdefault((provider, model, component, billable), {"delta": [], "scopes": {}})
        if record.get("semantics") == "cumulative":
            group["scopes"][str(record.get("scope_id"))] = record
        else:
            group["delta"].append(record)
    out = []
    for (provider, model, component, billable), group in groups.items():
        meters: dict[str, float] = {}
        for record in [*group["delta"], *group["scopes"].values()]:
            for meter in TOKEN_METERS + OTHER_METERS:
                value = _number(record.get(meter))
                if value is not None:
                    meters[meter] = meters.get(meter, 0.0) + value
                elif record.get(meter) is not None:
                    problems.append(f"agent_usage: {meter} of {component}:{provider}/{model} is not a count: ignored")
        out.append(UsageLine(provider, model, component, billable, meters))
    return out


def read_agent_usage(raw: Any) -> AgentUsage | None:
    """The ``agent_usage`` of a raw simulation (None when it has none)."""
    value = raw.get("agent_usage") if isinstance(raw, dict) else None
    if value is None:
        return None
    usage = AgentUsage()
    if not isinstance(value, dict):
        usage.problems.append(f"agent_usage is a {type(value).__name__}, not an object: ignored")
        return usage
    records = value.get("records")
    if isinstance(records, list):
        usage.lines = _lines(records, usage.problems)
    elif records is not None:
        usage.problems.append("agent_usage.records is not a list: ignored")
    usage.cost = _number(value.get("cost"))
    if value.get("cost") is not None and usage.cost is None:
        usage.problems.append("agent_usage.cost is not a number: taken as unpriced")
    breakdown = value.get("cost_breakdown")
    if isinstance(breakdown, dict):
        usage.cost_breakdown = {str(k): n for k, v in breakdown.items() if (n := _number(v)) is not None}
    elif breakdown is not None:
        usage.problems.append("agent_usage.cost_breakdown is not an object: ignored")
    usage.pricing_version = _text(value.get("pricing_version"))
    count = value.get("num_raw_records")
    usage.raw_records = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
    return usage
