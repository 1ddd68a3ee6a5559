"""The built-in reward components (tau2 1.0.1's evaluators), one registry entry each.

Each entry says how the component is computed (``reward.py``), what it
writes into tau2's ``RewardInfo`` and into our checks record, and which lines
of the explanation it contributes (``explain.py``). ``evaluate``, the CLI and
the TUI's Eval tab iterate ``REWARD_COMPONENTS``; a new component is one
``register_component`` call.
"""

from __future__ import annotations

from typing import Any

from tau_tui.evaluate.explain import (
    action_reasons,
    communicate_reasons,
    env_reasons,
    nl_reasons,
)
from tau_tui.evaluate.reward import (
    Evaluation,
    RewardComponent,
    action_component,
    communicate_component,
    env_component,
    nl_component,
    register_component,
)


def _env_reward_info(ev: Evaluation) -> dict[str, Any]:
    return {
        "db_check": None
        if ev.db_match is None
        else {"db_match": ev.db_match, "db_reward": 1.0 if ev.db_match else 0.0},
        "env_assertions": None
        if ev.env_assertions is None
        else [
            {"env_assertion": c.assertion.model_dump(mode="json"), "met": bool(c.met), "reward": 1.0 if c.met else 0.0}
            for c in ev.env_assertions
        ],
    }


def _env_checks(ev: Evaluation) -> dict[str, Any]:
    db: dict[str, Any] | None = None
    if ev.db_match is not None:
        db = {"db_match": ev.db_match}
        if ev.db is not None:
            db.update(
                pred_db=ev.db.pred_agent,
                pred_user_db=ev.db.pred_user,
                gold_db=ev.db.gold_agent,
                gold_user_db=ev.db.gold_user,
            )
    return {
        "db": db,
        "env_assertions": None
        if ev.env_assertions is None
        else [
            {
                "func_name": c.assertion.func_name,
                "env_type": c.assertion.env_type,
                "arguments": c.assertion.arguments,
                "assert_value": c.assertion.assert_value,
                "met": c.met,
                "error": c.error,
            }
            for c in ev.env_assertions
        ],
    }


def _action_reward_info(ev: Evaluation) -> dict[str, Any]:
    return {
        "action_checks": None
        if ev.actions is None
        else [
            {
                "action": c.action.model_dump(mode="json"),
                "action_match": c.matched,
                "action_reward": 1.0 if c.matched else 0.0,
                "tool_type": c.tool_type,
            }
            for c in ev.actions
        ]
    }


def _action_checks(ev: Evaluation) -> dict[str, Any]:
    return {
        "actions": None
        if ev.actions is None
        else [
            {
                "action_id": c.action.action_id,
                "name": c.action.name,
                "requestor": c.action.requestor,
                "arguments": c.action.arguments,
                "compare_args": c.action.compare_args,
                "matched": c.matched,
                "tool_type": c.tool_type,
                "step": c.step,
            }
            for c in ev.actions
        ]
    }


def _nl_reward_info(ev: Evaluation) -> dict[str, Any]:
    return {
        "nl_assertions": None
        if ev.nl is None
        else [{"nl_assertion": c.assertion, "met": c.met, "justification": c.justification} for c in ev.nl]
    }


def _nl_checks(ev: Evaluation) -> dict[str, Any]:
    return {
        "nl_assertions": None
        if ev.nl is None
        else [{"assertion": c.assertion, "met": c.met, "justification": c.justification} for c in ev.nl]
    }


def _communicate_reward_info(ev: Evaluation) -> dict[str, Any]:
    return {
        "communicate_checks": None
        if ev.communicate is None
        else [{"info": c.info, "met": c.met, "justification": c.justification} for c in ev.communicate]
    }


def _communicate_checks(ev: Evaluation) -> dict[str, Any]:
    return {
        "communicate": None
        if ev.communicate is None
        else [{"info": c.info, "met": c.met, "step": c.step} for c in ev.communicate]
    }


BUILT_IN = (
    RewardComponent(
        "env",
        ("DB", "ENV_ASSERTION"),
        lambda criteria, replayed, basis, judge, ev: env_component(criteria, replayed, basis, ev),
        _env_reward_info,
        _env_checks,
        env_reasons,
    ),
    RewardComponent(
        "action",
        ("ACTION",),
        lambda criteria, replayed, basis, judge, ev: action_component(criteria, replayed, ev),
        _action_reward_info,
        _action_checks,
        action_reasons,
    ),
    RewardComponent(
        "nl",
        ("NL_ASSERTION",),
        lambda criteria, replayed, basis, judge, ev: (
            nl_component(criteria, replayed, judge, ev) if "NL_ASSERTION" in basis else None
        ),
        _nl_reward_info,
        _nl_checks,
        nl_reasons,
    ),
    RewardComponent(
        "communicate",
        ("COMMUNICATE",),
        lambda criteria, replayed, basis, judge, ev: communicate_component(criteria, replayed, ev),
        _communicate_reward_info,
        _communicate_checks,
        communicate_reasons,
    ),
)

for _component in BUILT_IN:
    register_component(_component)
