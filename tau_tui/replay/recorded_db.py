"""The final DB a recording stores, checked against the one our replay ends with.

tau2's own results hold only hashes; an Inspect log of inspect-evals' tau2 port stores the whole final DB
of the agent's (and, for telecom, the user's) tools (``model.inspect_log`` puts it in the simulation's
``info.inspect``). Our replay re-executes the writes on our environment; when both final states are equal
the log's environment and ours agree on every write the run made, which no log viewer checks.

The port stores its DB in pydantic's JSON form without null fields: enums as their values, dates and
times in ISO form, no null-valued keys. Our state is brought to that form (``json_form``) before the
comparison, so a field set to null and a field absent count as the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time
from enum import Enum
from typing import Any

from tau_tui.env.store import state_hash, to_plain
from tau_tui.replay.diff import diff_states

MAX_DIFFERENCES = 10


def _scalar(value: Any) -> Any:
    if isinstance(value, Enum):
        return _scalar(value.value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return value


def json_form(value: Any) -> Any:
    """``value`` as pydantic's JSON mode writes it, null-valued keys left out (lists keep their nulls)."""
    if isinstance(value, dict):
        return {_scalar(k): json_form(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [json_form(v) for v in value]
    return _scalar(value)


@dataclass
class FinalDBComparison:
    """Our final state against the one the recording stores, per side (None: the recording stores none)."""

    source: str
    agent_match: bool | None = None
    user_match: bool | None = None
    differences: list[str] = field(default_factory=list)  # the first paths that differ, "agent: a.b.c (changed)"
    n_differences: int = 0

    @property
    def match(self) -> bool | None:
        checked = [m for m in (self.agent_match, self.user_match) if m is not None]
        return None if not checked else all(checked)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "match": self.match,
            "agent_match": self.agent_match,
            "user_match": self.user_match,
            "n_differences": self.n_differences,
            "differences": self.differences,
        }


def _compare(check: FinalDBComparison, side: str, ours: Any, theirs: Any) -> bool:
    mine, recorded = json_form(to_plain(ours)), json_form(theirs)
    if state_hash(mine) == state_hash(recorded):
        return True
    changes = diff_states(mine, recorded)
    check.n_differences += len(changes)
    for change in changes[: MAX_DIFFERENCES - len(check.differences)]:
        where = change.dotted or "(root)"
        check.differences.append(f"{side}: {where} ({change.kind} in the recording)")
    return False


def recorded_final_db(info: Any) -> tuple[str, Any, Any] | None:
    """(source, agent DB, user DB) a simulation's ``info`` stores, or None."""
    part = info.get("inspect") if isinstance(info, dict) else None
    if not isinstance(part, dict):
        return None
    agent, user = part.get("final_db"), part.get("final_user_db")
    agent = agent if isinstance(agent, dict) else None
    user = user if isinstance(user, dict) else None
    if agent is None and user is None:
        return None
    return "Inspect log", agent, user


def check_recorded_db(info: Any, final: Any) -> FinalDBComparison | None:
    """Check the final DB ``info`` records against ``final`` (an ``EnvState``); None when none is recorded."""
    recorded = recorded_final_db(info)
    if recorded is None:
        return None
    source, agent, user = recorded
    check = FinalDBComparison(source)
    if agent is not None:
        check.agent_match = final.agent is not None and _compare(check, "agent", final.agent, agent)
        if final.agent is None:
            check.differences.append("agent: our replay has no agent DB")
    if user is not None:
        check.user_match = final.user is not None and _compare(check, "user", final.user, user)
        if final.user is None:
            check.differences.append("user: our replay has no user DB")
    return check
