"""What a run cost and how long it took: the recorded ``agent_cost``, ``user_cost``, ``duration`` and the token
meters of ``agent_usage``, per simulation and summed over a file.

A null (or absent) ``agent_cost`` is *unpriced*, never $0: sums are over the simulations that record a number,
and ``unpriced`` counts the rest. Cost per solved task is left out (None) when any simulation is unpriced,
since a partial sum would understate it. Percentiles are linear between the closest ranks (numpy's default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from tau_tui import formats

TIME_PARTS = (("total", "total_s"), ("mean", "mean_s"), ("p50", "p50_s"), ("p95", "p95_s"))
TOKEN_METERS = ("input_tokens", "output_tokens", "input_cached_tokens", "input_audio_tokens", "output_audio_tokens")
# What tau2 1.0.1 records on each message its LLM wrote (``Message.usage``), summed per side: the agent's
# (assistant messages) and the user simulator's (user messages), apart.
MESSAGE_METERS = ("agent_prompt_tokens", "agent_completion_tokens", "user_prompt_tokens", "user_completion_tokens")
SIDES = {"assistant": "agent", "user": "user"}


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _tokens(usage: Any) -> dict[str, float]:
    """The token meters summed over ``agent_usage.records`` (empty when it records none)."""
    records = usage.get("records") if isinstance(usage, dict) else None
    totals: dict[str, float] = {}
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, dict):
            continue
        for meter in TOKEN_METERS:
            value = _number(record.get(meter))
            if value is not None:
                totals[meter] = totals.get(meter, 0.0) + value
    return totals


def _message_tokens(messages: Any) -> dict[str, float]:
    """The messages' recorded ``usage`` (prompt and completion tokens) summed per side."""
    totals: dict[str, float] = {}
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        side = SIDES.get(message.get("role"))  # type: ignore[arg-type]
        usage = message.get("usage")
        if side is None or not isinstance(usage, dict):
            continue
        for part in ("prompt_tokens", "completion_tokens"):
            value = _number(usage.get(part))
            if value is not None and value >= 0:
                key = f"{side}_{part}"
                totals[key] = totals.get(key, 0.0) + value
    return totals


@dataclass(frozen=True)
class SimCostTime:
    """One simulation's recorded cost, duration and token meters (None: not recorded or not a number)."""

    agent_usd: float | None = None
    user_usd: float | None = None
    duration_s: float | None = None
    tokens: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of_raw(cls, raw: Any) -> SimCostTime:
        """From a raw simulation dict, tolerantly (anything else reads as nothing recorded)."""
        if not isinstance(raw, dict):
            return cls()
        duration = _number(raw.get("duration"))
        return cls(
            _number(raw.get("agent_cost")),
            _number(raw.get("user_cost")),
            duration if duration is not None and duration >= 0 else None,
            {**_tokens(raw.get("agent_usage")), **_message_tokens(raw.get("messages"))},
        )


MAX_PLAUSIBLE_USD = 100.0  # one simulation's cost above this is not dollars (tokens, cents, a counter)
WHOLE_NOT_USD = 10.0  # whole numbers on every simulation, some this large: a count, not dollars


def not_dollars(name: str, values: Sequence[float]) -> str | None:
    """Why recorded costs ``values`` of field ``name`` cannot be dollars (None: they can): every one a whole
    number and some ≥ ``WHOLE_NOT_USD`` (a tau-bench v1 file's integer ``user_cost``), or one above
    ``MAX_PLAUSIBLE_USD``."""
    if not values:
        return None
    top = max(values)
    if top > MAX_PLAUSIBLE_USD:
        return f"{name} up to {top:,.0f} for one simulation cannot be dollars"
    if top >= WHOLE_NOT_USD and all(float(v).is_integer() for v in values):
        return f"{name} is a whole number on every simulation (up to {top:,.0f}): not dollars"
    return None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values``, linear between the closest ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class CostTime:
    """The cost and time of some simulations of one file (``eval --json``'s ``cost``, ``duration``, ``tokens``)."""

    simulations: int
    priced: int
    agent_usd: float | None
    user_usd: float | None
    durations: tuple[float, ...]
    tokens: dict[str, float]
    token_simulations: int  # how many simulations record token meters
    solved: int | None  # successes by the rewards given (None: no reward known)
    not_dollars: tuple[str, ...] = ()  # why the recorded costs are no dollar amounts (then no total is given)

    @classmethod
    def of(cls, sims: Iterable[SimCostTime], solved: int | None = None) -> CostTime:
        """Sums over ``sims``; ``solved``: how many of them passed (for the cost per solved task)."""
        items = list(sims)
        agent = [s.agent_usd for s in items if s.agent_usd is not None]
        user = [s.user_usd for s in items if s.user_usd is not None]
        odd = tuple(why for why in (not_dollars("agent_cost", agent), not_dollars("user_cost", user)) if why)
        tokens: dict[str, float] = {}
        for s in items:
            for meter, value in s.tokens.items():
                tokens[meter] = tokens.get(meter, 0.0) + value
        return cls(
            len(items),
            len(agent),
            math.fsum(agent) if agent else None,
            math.fsum(user) if user else None,
            tuple(s.duration_s for s in items if s.duration_s is not None),
            {meter: tokens[meter] for meter in (*MESSAGE_METERS, *TOKEN_METERS) if meter in tokens},
            sum(1 for s in items if s.tokens),
            solved,
            odd,
        )

    @property
    def unpriced(self) -> int:
        """Simulations with no agent cost recorded (null or absent): not $0."""
        return self.simulations - self.priced

    @property
    def total_usd(self) -> float | None:
        if self.not_dollars or (self.agent_usd is None and self.user_usd is None):
            return None
        return (self.agent_usd or 0.0) + (self.user_usd or 0.0)

    @property
    def per_simulation_usd(self) -> float | None:
        """Agent and user cost per priced simulation."""
        total = self.total_usd
        return total / self.priced if total is not None and self.priced else None

    @property
    def per_solved_usd(self) -> float | None:
        """Agent and user cost per solved task; None when nothing is solved or some simulation is unpriced."""
        total = self.total_usd
        if total is None or not self.solved or self.unpriced:
            return None
        return total / self.solved

    def cost_json(self) -> dict[str, Any]:
        dollars = not self.not_dollars
        return {
            "agent_usd": self.agent_usd if dollars else None,
            "user_usd": self.user_usd if dollars else None,
            "not_dollars": list(self.not_dollars),
            "total_usd": self.total_usd,
            "unpriced": self.unpriced,
            "per_simulation_usd": self.per_simulation_usd,
            "per_solved_task_usd": self.per_solved_usd,
            "solved": self.solved,
        }

    def duration_json(self) -> dict[str, Any]:
        total = math.fsum(self.durations) if self.durations else None
        return {
            "total_s": total,
            "mean_s": total / len(self.durations) if total is not None else None,
            "p50_s": percentile(self.durations, 0.5),
            "p95_s": percentile(self.durations, 0.95),
            "timed": len(self.durations),
        }

    @property
    def total_tokens(self) -> float | None:
        """Every token the run's models read and wrote: the messages' usage, or a voice agent's meters."""
        messages = [self.tokens[m] for m in MESSAGE_METERS if m in self.tokens]
        if messages:
            return math.fsum(messages) + math.fsum(self.tokens.get(m, 0.0) for m in ("input_tokens", "output_tokens"))
        voice = [self.tokens[m] for m in ("input_tokens", "output_tokens") if m in self.tokens]
        return math.fsum(voice) if voice else None

    @property
    def per_solved_tokens(self) -> float | None:
        """Tokens per solved task; None when nothing is solved or some simulation records no tokens."""
        total = self.total_tokens
        if total is None or not self.solved or self.token_simulations < self.simulations:
            return None
        return total / self.solved

    def tokens_json(self) -> dict[str, Any] | None:
        """The summed token meters (the messages' usage per side, a voice agent's meters), their total, tokens
        per solved task and how many simulations record any; None when none does."""
        if not self.token_simulations:
            return None
        return {
            **self.tokens,
            "total_tokens": self.total_tokens,
            "per_solved_task": self.per_solved_tokens,
            "simulations": self.token_simulations,
        }

    def text(self) -> str:
        """One line: ``cost $1.23 (agent $1.20, user $0.03; 2 unpriced) · $0.05/solved · time 12.0 s mean, …``."""
        if self.not_dollars:
            line = f"cost not given ({'; '.join(self.not_dollars)})"
        else:
            money = "cost " + formats.money(self.total_usd, "n/a")
            parts = [f"agent {formats.money(self.agent_usd, 'n/a')}", f"user {formats.money(self.user_usd, 'n/a')}"]
            if self.unpriced:
                parts.append(f"{self.unpriced} unpriced, not $0")
            line = f"{money} ({'; '.join(parts)})"
        if self.per_solved_usd is not None:
            line += f" · {formats.money(self.per_solved_usd)}/solved task"
        d = self.duration_json()
        if d["total_s"] is not None:
            spans = ", ".join(f"{name} {formats.seconds(d[key])}" for name, key in TIME_PARTS)
            line += f" · time {spans}"
        if self.token_simulations:
            line += " · " + self.tokens_text()
        return line

    def tokens_text(self) -> str:
        """``tokens agent 1,234 in / 56 out, user 789 in / 12 out (2,091; 1,045/solved task)``."""
        parts = []
        for side in ("agent", "user"):
            read, wrote = self.tokens.get(f"{side}_prompt_tokens"), self.tokens.get(f"{side}_completion_tokens")
            if read is not None or wrote is not None:
                parts.append(f"{side} {read or 0:,.0f} in / {wrote or 0:,.0f} out")
        parts += [f"{k.removesuffix('_tokens')} {v:,.0f}" for k, v in self.tokens.items() if k in TOKEN_METERS]
        extra = []
        if self.total_tokens is not None:
            extra.append(f"{self.total_tokens:,.0f}")
        if self.per_solved_tokens is not None:
            extra.append(f"{self.per_solved_tokens:,.0f}/solved task")
        if self.token_simulations < self.simulations:
            extra.append(f"{self.simulations - self.token_simulations} without usage")
        return "tokens " + ", ".join(parts) + (f" ({'; '.join(extra)})" if extra else "")
