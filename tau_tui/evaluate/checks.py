"""The single checks behind a tau2 reward: DB, env assertions, actions, communicate.

Each function follows tau2 1.0.1's evaluator rules (tau2-facts §4-§5) and
keeps, next to the verdict, where in the trajectory it was decided, so an
explanation can point at the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.model.messages import AssistantMessage, Message
from tau_tui.model.tasks import Action, EnvAssertion
from tau_tui.replay import CallRecord, GoldResult, Timeline, Verdict


@dataclass
class DBCheck:
    """Predicted vs gold DB hashes (agent and user side), as the replay computed them."""

    pred_agent: str | None
    pred_user: str | None
    gold_agent: str | None
    gold_user: str | None

    @property
    def match(self) -> bool:
        return self.pred_agent == self.gold_agent and self.pred_user == self.gold_user

    @property
    def reward(self) -> float:
        return 1.0 if self.match else 0.0


@dataclass
class EnvAssertionCheck:
    assertion: EnvAssertion
    met: bool | None  # None: the assertion function failed (tau2 would raise)
    error: str | None = None


@dataclass
class ActionCheck:
    """One expected action and the first recorded call that satisfies it."""

    action: Action
    matched: bool
    tool_type: str | None
    call_index: int | None = None  # index into Timeline.calls
    step: int | None = None  # the message holding that call


@dataclass
class CommunicateCheck:
    info: str
    met: bool
    step: int | None  # the assistant message that said it
    justification: str


@dataclass
class NLCheck:
    assertion: str
    met: bool
    justification: str


def db_check(timeline: Timeline, gold: GoldResult) -> DBCheck:
    """The DB verdict from the replay's final state and the gold state (never re-hashed another way)."""
    return DBCheck(timeline.final.agent_hash(), timeline.final.user_hash(), gold.agent_hash, gold.user_hash)


def env_assertion_checks(results: list[tuple[Any, bool | None, str | None]]) -> list[EnvAssertionCheck]:
    """Wrap the replay's assertion results (run on the predicted environment after hashing)."""
    return [EnvAssertionCheck(assertion, met, error) for assertion, met, error in results]


def compared_keys(action: Action, arguments: dict[str, Any]) -> list[str]:
    """tau2: ``compare_args`` when given, else the keys of the *recorded call's* arguments."""
    return list(action.compare_args) if action.compare_args is not None else list(arguments)


def action_matches(action: Action, name: str, arguments: Any) -> bool:
    """tau2's ``compare_with_tool_call``: same name and equal values on the compared keys.

    An empty key list matches on the name alone. Requestor is not compared.
    Arguments that are not an object never match (tau2 could not load them).
    """
    if action.name != name or not isinstance(arguments, dict):
        return False
    keys = compared_keys(action, arguments)
    if not keys:
        return True
    recorded = {k: v for k, v in arguments.items() if k in keys}
    expected = {k: v for k, v in action.arguments.items() if k in keys}
    return recorded == expected


def action_checks(actions: list[Action], calls: list[CallRecord], timeline: Timeline) -> list[ActionCheck]:
    """Each expected action against every assistant and user call, in any order and multiplicity.

    Calls that never reached the environment — withheld by an injected fault or
    refused by a cassette — do not count as done.
    """
    env = timeline.env
    calls = [c for c in calls if c.verdict not in (Verdict.INJECTED_FAULT, Verdict.REFUSED)]
    out = []
    for action in actions:
        tool_type = env.tool_type(action.name) if env is not None and env.has_tool(action.name) else None
        hit = next((c for c in calls if action_matches(action, c.name, c.call.arguments)), None)
        out.append(
            ActionCheck(
                action=action,
                matched=hit is not None,
                tool_type=tool_type.value if tool_type is not None else None,
                call_index=hit.index if hit else None,
                step=hit.call_step if hit else None,
            )
        )
    return out


def agent_texts(messages: list[Message]) -> list[tuple[int, str]]:
    """(step, text) of every assistant message with non-blank text."""
    return [
        (i, m.content)
        for i, m in enumerate(messages)
        if isinstance(m, AssistantMessage) and isinstance(m.content, str) and m.content.strip()
    ]


def communicate_checks(required: list[str], messages: list[Message]) -> list[CommunicateCheck]:
    """Case-insensitive substring search in the agent's texts, commas removed from the text only."""
    return communicated(required, agent_texts(messages))


def communicated(required: list[str], said: list[tuple[int, str]]) -> list[CommunicateCheck]:
    """``communicate_checks`` over (step, text) pairs: the agent's messages, or a voice run's utterances
    (blank ones never count, as tau2 skips a message without text)."""
    texts = [(step, text.lower().replace(",", ""), text) for step, text in said if text.strip()]
    out = []
    for info in required:
        hit = next(((step, original) for step, folded, original in texts if info.lower() in folded), None)
        # justifications in tau2's words, so a saved reward_info reads as tau2's (the step is kept beside them)
        if hit is None:
            out.append(CommunicateCheck(info, False, None, f"Information '{info}' not communicated."))
        else:
            text = f"Information '{info}' communicated in the message:\n '{hit[1]}'"
            out.append(CommunicateCheck(info, True, hit[0], text))
    return out
