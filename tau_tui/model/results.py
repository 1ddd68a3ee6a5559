"""Recorded runs: ``Results`` (the run file) and ``SimulationRun`` (one episode)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import Field, SerializeAsAny, field_validator

from tau_tui.model.duplex import TICKS, GradedFrom, graded_from, tick_messages
from tau_tui.model.messages import Loose, Message, ParticipantMessage, parse_message
from tau_tui.model.tasks import Task
from tau_tui.model.usage import AgentUsage, read_agent_usage

TERMINATION_REASONS = (
    "user_stop",
    "agent_stop",
    "max_steps",
    "timeout",
    "too_many_errors",
    "agent_error",
    "user_error",
    "infrastructure_error",
    "context_window_exceeded",
    "unexpected_error",
    # Ours, not tau2's: a cassette run stopped at a request the recording holds no result for.
    "no_recorded_result",
)
NO_RECORDED_RESULT = "no_recorded_result"
INFRASTRUCTURE_ERROR = "infrastructure_error"  # left out of the metrics, as tau2 leaves it out
SCORED_TERMINATIONS = ("user_stop", "agent_stop")


RUN_INFO_ABOUT_PARTICIPANTS = ("agent_info", "user_info", "environment_info")  # prompts and policies, not verdicts


def _placeholder_in(value: Any, depth: int = 0) -> str | None:
    """Where ``value`` says "placeholder": a key naming it with a true value, or a text mentioning it (cut)."""
    if depth > 3:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if "placeholder" in str(key).lower() and item not in (None, False, "", 0):
                return f"{key}: {str(item)[:60]}"
            found = _placeholder_in(item, depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value[:20]:
            found = _placeholder_in(item, depth + 1)
            if found is not None:
                return found
    elif isinstance(value, str) and "placeholder" in value.lower():
        return value if len(value) <= 100 else value[:99] + "…"
    return None


def placeholder_reward(sim: dict[str, Any], run_info: dict[str, Any]) -> str | None:
    """What the file's own ``info`` says of a recorded reward being a placeholder (the simulation's ``info``, its
    ``reward_info.info``, or the run's ``info`` outside the participants' prompts); None when it says nothing."""
    reward_info = sim.get("reward_info")
    own = [sim.get("info"), reward_info.get("info") if isinstance(reward_info, dict) else None]
    run = {k: v for k, v in run_info.items() if k not in RUN_INFO_ABOUT_PARTICIPANTS}
    for part in (*own, run):
        found = _placeholder_in(part) if isinstance(part, dict) else None
        if found is not None:
            return found
    return None


class RecordedDBCheck(Loose):
    """The DB check a recording holds (recorded by tau2, not computed here)."""

    db_match: bool | None = None
    db_reward: float | None = None


class RewardInfo(Loose):
    """A simulation's recorded reward and the checks it came from."""

    reward: float | None = None
    db_check: RecordedDBCheck | None = None
    env_assertions: list[dict[str, Any]] | None = None
    action_checks: list[dict[str, Any]] | None = None
    nl_assertions: list[dict[str, Any]] | None = None
    communicate_checks: list[dict[str, Any]] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float] | None = None
    info: dict[str, Any] | None = None


class SimulationRun(Loose):
    """One recorded simulation: a task's conversation, how it ended, its recorded reward."""

    id: str = ""
    task_id: str = ""
    timestamp: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration: float | None = None
    termination_reason: str | None = None
    agent_cost: float | None = None
    user_cost: float | None = None
    reward_info: RewardInfo | None = None
    messages: list[SerializeAsAny[Message]] | None = None
    trial: int | None = None
    seed: int | None = None
    mode: str | None = None
    info: dict[str, Any] | None = None

    @field_validator("id", "task_id", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("messages", mode="before")
    @classmethod
    def _messages(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [m if isinstance(m, Message) else parse_message(m) for m in value]
        return value

    @property
    def raw_ticks(self) -> list[Any] | None:
        """A full-duplex run's recorded ``ticks`` as read (None when there is no list)."""
        ticks = (self.model_extra or {}).get("ticks")
        return ticks if isinstance(ticks, list) else None

    @property
    def graded_from(self) -> GradedFrom:
        """The recorded view tau2 grades: ``ticks`` for a full-duplex run that has them, else ``messages``."""
        return graded_from(self.mode, self.messages, self.raw_ticks)

    @property
    def trajectory(self) -> list[Message]:
        """The graded trajectory: the messages, or a full-duplex run's ticks flattened in tau2's order."""
        if self.graded_from == TICKS:
            return self.tick_trajectory
        return self.messages if self.messages is not None else []

    @cached_property
    def tick_trajectory(self) -> list[Message]:
        """The trajectory from ticks (``model.duplex.tick_messages``), built once."""
        return flatten_ticks(self.raw_ticks or [])

    @property
    def usage(self) -> AgentUsage | None:
        """A voice agent's recorded ``agent_usage`` (tau2 PR 454), read tolerantly; None when there is none."""
        return read_agent_usage(self.model_extra or {})

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The sides ("agent", "user") whose cost is recorded as null: not priced, which is not 0."""
        return tuple(
            side
            for side in ("agent", "user")
            if f"{side}_cost" in self.model_fields_set and getattr(self, f"{side}_cost") is None
        )

    @property
    def consolidated(self) -> list[Message] | None:
        """The recorded ``messages`` of a run graded from its ticks: the second view (None when there is none)."""
        if self.graded_from == TICKS and self.messages:
            return self.messages
        return None


def flatten_ticks(ticks: list[Any]) -> list[Message]:
    """Turn full-duplex ticks into a message list in tau2's order (user side first per tick)."""
    return [parse_message(raw) for raw in tick_messages(ticks)]


def is_silent(message: Message) -> bool:
    """A user or agent message that says nothing and calls no tool: most chunks of a full-duplex run."""
    return isinstance(message, ParticipantMessage) and _says_nothing(message.content, message.tool_calls)


def is_silent_raw(raw: Any) -> bool:
    """``is_silent`` of a raw message, without building its model (the index counts a voice run's messages)."""
    return (
        isinstance(raw, dict)
        and raw.get("role") in ("user", "assistant")
        and _says_nothing(raw.get("content"), raw.get("tool_calls"))
    )


def _says_nothing(content: Any, tool_calls: Any) -> bool:
    text = "" if content is None else content if isinstance(content, str) else str(content)
    return not text.strip() and not tool_calls


class RunInfo(Loose):
    """How a run was made: trials, limits, agent, user and environment settings."""

    git_commit: str | None = None
    num_trials: int | None = None
    max_steps: int | None = None
    max_errors: int | None = None
    user_info: dict[str, Any] | None = None
    agent_info: dict[str, Any] | None = None
    environment_info: dict[str, Any] | None = None
    seed: int | None = None


class Results(Loose):
    """A tau2 results file: run info, the tasks it ran and their simulations."""

    timestamp: str | None = None
    info: RunInfo = Field(default_factory=RunInfo)
    tasks: list[Task] = Field(default_factory=list)
    simulations: list[SimulationRun] = Field(default_factory=list)
