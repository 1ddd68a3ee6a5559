"""Recorded fields newer than tau2 1.0.1, read tolerantly: absent is normal, a wrong shape is a problem line.

What tau2-bench's main branch and open PRs add to a simulation or a run, and the rules for reading them:

- ``agent_usage`` (PR 454, audio-native agents): a ``SessionUsage`` — usage ``records`` (provider, model,
  component, billable, token and audio meters), ``cost``, ``cost_breakdown`` per record, ``pricing_version``,
  ``num_raw_records``. With it, ``agent_cost: null`` means *unpriced* (some record had no price), never 0; a
  null ``agent_cost`` is read the same way without it (tau2 1.0.1 writes null when a message's cost is null).
- reward provenance (PR 467): ``reward_info.evaluation_mode`` (``live`` | ``replay``), ``state_source``
  (``live`` | ``replayed``), ``replayed_actions`` (``{source: trajectory | reference, tool_call}``) and
  ``warnings``.
- the judge (PR 479): ``judge_llm`` / ``judge_llm_args``, the run config's names, when a run's ``info``
  records them.
- a judge parse failure (PR 469): every NL assertion recorded as not met with the justification
  "Evaluation failed: could not parse LLM response…": the judge failed, not the agent.
- the ``###OUT-OF-SCOPE###`` stop (issue 517): the user simulator gave up on a scenario that lacks what it
  needs, and tau2 records it as ``user_stop``.

Submission-level fields (PR 443 cost/time metrics, PR 444's user-simulator version) are read with the
submission, in ``model/submission.py``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from tau_tui.model.messages import UserMessage
from tau_tui.model.results import RewardInfo, SimulationRun
from tau_tui.model.usage import AgentUsage

PRICED, UNPRICED, NOT_RECORDED = "priced", "unpriced", "not recorded"
JUDGE_FAILURE_PREFIX = "Evaluation failed"  # PR 469's justification of an assertion its judge could not parse
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
MAX_TEXT = 200


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _text(value: Any) -> str | None:
    return value.strip()[:MAX_TEXT] if isinstance(value, str) and value.strip() else None


# --- agent usage and the unpriced rule ------------------------------------------------------------------


def agent_cost_state(sim: SimulationRun) -> str:
    """``PRICED`` (a number), ``UNPRICED`` (``agent_cost`` recorded as null: not 0) or ``NOT_RECORDED``."""
    if sim.agent_cost is not None:
        return PRICED
    return UNPRICED if "agent" in sim.unpriced else NOT_RECORDED


def raw_agent_cost(raw: Any) -> tuple[str, float | None]:
    """(``agent_cost_state``, cost) of a raw simulation, without building its model (the same rule)."""
    value = raw.get("agent_cost") if isinstance(raw, dict) else None
    cost = _number(value)
    if cost is not None:
        return PRICED, cost
    return (UNPRICED if isinstance(raw, dict) and "agent_cost" in raw and value is None else NOT_RECORDED), None


@dataclass(frozen=True)
class CostSummary:
    """The agent costs of some simulations: their mean over the priced ones, unpriced ones counted apart."""

    priced: int = 0
    unpriced: int = 0
    not_recorded: int = 0
    total: float = 0.0

    @classmethod
    def of(cls, costs: list[tuple[str, float | None]]) -> CostSummary:
        """From (state, agent cost) pairs (``agent_cost_state``, ``SimulationRun.agent_cost``)."""
        states = Counter(state for state, _ in costs)
        total = sum(cost for state, cost in costs if state == PRICED and cost is not None)
        return cls(states[PRICED], states[UNPRICED], states[NOT_RECORDED], total)

    @property
    def mean(self) -> float | None:
        return self.total / self.priced if self.priced else None

    def to_json(self) -> dict[str, Any]:
        return {
            "priced": self.priced,
            "unpriced": self.unpriced,
            "not_recorded": self.not_recorded,
            "avg_agent_cost": self.mean,
        }

    def text(self) -> str | None:
        """``agent cost: avg $0.012 over 40 priced; 3 unpriced (left out, not $0)``, None when nothing is known."""
        if not self.priced and not self.unpriced:
            return None
        parts = [f"avg ${self.mean:.4f} over {self.priced} priced" if self.mean is not None else "none priced"]
        if self.unpriced:
            parts.append(f"{self.unpriced} unpriced (left out, not $0)")
        return "agent cost: " + "; ".join(parts)


# --- reward provenance, the judge, judge failures, out-of-scope stops ----------------------------------


@dataclass(frozen=True)
class RewardProvenance:
    """How the recorded reward was computed (PR 467), when the recording says."""

    evaluation_mode: str | None = None
    state_source: str | None = None
    replayed_actions: dict[str, int] = field(default_factory=dict)  # source → count
    warnings: tuple[str, ...] = ()

    @property
    def present(self) -> bool:
        return bool(self.evaluation_mode or self.state_source or self.replayed_actions or self.warnings)

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluation_mode": self.evaluation_mode,
            "state_source": self.state_source,
            "replayed_actions": self.replayed_actions,
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        """``evaluation replay, state replayed, 12 replayed actions (10 trajectory, 2 reference)``."""
        parts = []
        if self.evaluation_mode:
            parts.append(f"evaluation {self.evaluation_mode}")
        if self.state_source:
            parts.append(f"state {self.state_source}")
        if self.replayed_actions:
            n = sum(self.replayed_actions.values())
            by = ", ".join(f"{count} {source}" for source, count in self.replayed_actions.items())
            parts.append(f"{n} replayed action{'s' if n != 1 else ''} ({by})")
        return ", ".join(parts)


def read_provenance(info: RewardInfo | None) -> RewardProvenance:
    """The provenance fields of a recorded ``reward_info`` (empty when it has none)."""
    extra = (info.model_extra or {}) if info is not None else {}
    sources: Counter[str] = Counter()
    replayed = extra.get("replayed_actions")
    for item in replayed if isinstance(replayed, list) else []:
        source = item.get("source") if isinstance(item, dict) else None
        sources[_text(source) or "?"] += 1
    warnings = extra.get("warnings")
    return RewardProvenance(
        evaluation_mode=_text(extra.get("evaluation_mode")),
        state_source=_text(extra.get("state_source")),
        replayed_actions=dict(sources),
        warnings=tuple(w[:MAX_TEXT] for w in (warnings if isinstance(warnings, list) else []) if isinstance(w, str)),
    )


def recorded_judge(run_info: Mapping[str, Any]) -> str | None:
    """The judge model a run's ``info`` records (``judge_llm``, PR 479), with its temperature when given."""
    model = _text(run_info.get("judge_llm"))
    if model is None:
        return None
    args = run_info.get("judge_llm_args")
    temperature = _number(args.get("temperature")) if isinstance(args, dict) else None
    return model if temperature is None else f"{model} (temperature {temperature:g})"


def judge_failures(info: RewardInfo | None) -> list[str]:
    """The NL assertions recorded as not met because the judge's reply could not be parsed (PR 469)."""
    out = []
    for check in (info.nl_assertions or []) if info is not None else []:
        justification = check.get("justification") if isinstance(check, dict) else None
        if (
            isinstance(check, dict)
            and check.get("met") is False
            and isinstance(justification, str)
            and justification.startswith(JUDGE_FAILURE_PREFIX)
        ):
            out.append(str(check.get("nl_assertion") or "?"))
    return out


def out_of_scope_stop(sim: SimulationRun) -> bool:
    """The user simulator ended the run with ``###OUT-OF-SCOPE###`` (tau2 records a ``user_stop``, issue 517)."""
    last = next((m for m in reversed(sim.trajectory) if isinstance(m, UserMessage) and m.text.strip()), None)
    return last is not None and OUT_OF_SCOPE in last.text


@dataclass(frozen=True)
class RecordedExtras:
    """Everything newer than 1.0.1 that one simulation records, for the Reward tab and ``eval``."""

    agent_cost: float | None
    cost_state: str
    usage: AgentUsage | None
    provenance: RewardProvenance
    judge_failures: list[str]
    out_of_scope: bool

    @classmethod
    def of(cls, sim: SimulationRun) -> RecordedExtras:
        return cls(
            agent_cost=sim.agent_cost,
            cost_state=agent_cost_state(sim),
            usage=sim.usage,
            provenance=read_provenance(sim.reward_info),
            judge_failures=judge_failures(sim.reward_info),
            out_of_scope=out_of_scope_stop(sim),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "agent_cost": self.agent_cost,
            "agent_cost_state": self.cost_state,
            "agent_usage": self.usage.to_json() if self.usage is not None else None,
            "provenance": self.provenance.to_json() if self.provenance.present else None,
            "judge_failures": self.judge_failures,
            "out_of_scope_stop": self.out_of_scope,
        }

    def lines(self) -> list[str]:
        """What ``eval`` prints of the costs and provenance: nothing when the simulation records none of it."""
        out = []
        if self.cost_state == UNPRICED:
            out.append("recorded agent cost: unpriced (agent_cost null: not $0)")
        if self.usage is not None:
            out.append(f"recorded agent usage: {usage_text(self.usage)}")
        if self.provenance.present:
            out.append(f"recorded reward provenance: {self.provenance.text() or 'warnings only'}")
            out += [f"  provenance warning: {w}" for w in self.provenance.warnings]
        return out  # a judge failure is a recording note and an out-of-scope stop a process flag (evaluate/)


def usage_text(usage: AgentUsage) -> str:
    """``2 records (realtime:openai/gpt-realtime, …), cost $0.0123, pricing 2026-05-01``."""
    labels = [line.label for line in usage.lines]
    keys = ", ".join(labels[:3]) + (" …" if len(labels) > 3 else "")
    parts = [f"{len(labels)} record{'s' if len(labels) != 1 else ''}" + (f" ({keys})" if keys else "")]
    parts.append(f"cost ${usage.cost:.4f}" if usage.cost is not None else "cost unpriced")
    if usage.pricing_version:
        parts.append(f"pricing {usage.pricing_version}")
    return ", ".join(parts + list(usage.problems))
