"""Each evaluator rule of tau2-facts §5 (and the env rules of §4) on hand-made mock trajectories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.evaluate import NLCheck, evaluate
from tau_tui.evaluate.judge import JudgeError
from tests.evaluate.support import TASK_1_DONE, UPDATE, action, mock_task, replayed
from tests.helpers import call, calls, greet, result, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.environment import Environment
    from tau_tui.evaluate.reward import Evaluation
    from tau_tui.model import Message

DONE = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
NOTHING = [greet(), user("finish task_1"), say("Sorry, no.")]
UPDATE_TASK = mock_task(actions=[action("update_task_status", UPDATE)])
ASSERT_DONE = {
    "env_type": "assistant",
    "func_name": "assert_task_status",
    "arguments": {"task_id": "task_1", "expected_status": "completed"},
}


# --- early termination and missing criteria ---------------------------------------------


@pytest.mark.parametrize("termination", ["max_steps", "too_many_errors", "agent_error", "infrastructure_error"])
def test_premature_termination_gives_zero_with_tau2_note(registry: DomainRegistry, termination: str) -> None:
    ev = evaluate(replayed(registry, DONE, UPDATE_TASK, termination=termination))
    assert ev.reward == 0.0 and ev.status == "premature" and ev.reward_basis is None
    assert ev.info == {"note": f"Simulation terminated prematurely. Termination reason: {termination}"}
    info = ev.to_reward_info()
    assert info["db_check"] is info["action_checks"] is info["communicate_checks"] is info["reward_breakdown"] is None


@pytest.mark.parametrize("termination", ["user_stop", "agent_stop"])
def test_stops_are_scored(registry: DomainRegistry, termination: str) -> None:
    ev = evaluate(replayed(registry, DONE, UPDATE_TASK, termination=termination))
    assert ev.status == "scored" and ev.reward == 1.0


def test_no_criteria_gives_one(registry: DomainRegistry) -> None:
    task = {"id": "free", "user_scenario": {"instructions": "x"}}
    ev = evaluate(replayed(registry, NOTHING, task))
    assert ev.reward == 1.0 and ev.status == "no_criteria" and ev.info == {"note": "No evaluation criteria"}


def test_missing_task_is_not_computable(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, None))
    assert ev.reward is None and ev.status == "no_task"


def test_missing_termination_is_not_guessed(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, UPDATE_TASK, termination=None))
    assert ev.reward is None and ev.status == "not_computable"


# --- env component: DB and env assertions ------------------------------------------------------


def test_db_match_and_mismatch_use_replay_hashes(registry: DomainRegistry) -> None:
    good = replayed(registry, DONE, UPDATE_TASK)
    ev = evaluate(good)
    assert ev.db_match is True and ev.breakdown == {"DB": 1.0}
    assert ev.db is not None
    assert good.gold is not None
    assert ev.db.pred_agent == good.timeline.final.agent_hash() and ev.db.gold_agent == good.gold.agent_hash
    bad = evaluate(replayed(registry, NOTHING, UPDATE_TASK))
    assert bad.db_match is False and bad.reward == 0.0 and bad.breakdown["DB"] == 0.0


def test_db_check_compares_user_side_too(registry: DomainRegistry) -> None:
    dismiss = {"notification_id": "notif_1"}
    task = mock_task(actions=[action("dismiss_notification", dismiss, requestor="user")])
    messages = [
        greet(),
        call("dismiss_notification", dismiss, "u1", requestor="user"),
        result("Notification notif_1 dismissed", "u1", requestor="user"),
    ]
    rp = replayed(registry, messages, task)
    ev = evaluate(rp)
    assert ev.db is not None
    assert rp.gold is not None
    assert ev.db.pred_user == rp.gold.user_hash and ev.db_match is True
    assert evaluate(replayed(registry, NOTHING, task)).db_match is False


def test_no_actions_and_no_assertions_skip_the_db_check(registry: DomainRegistry) -> None:
    task = mock_task(actions=None, env_assertions=None, basis=["DB"])
    ev = evaluate(replayed(registry, DONE, task))  # the DB changed, yet tau2 does not compare
    assert ev.reward == 1.0 and ev.db_match is True and ev.db is None
    assert ev.info is not None
    assert ev.breakdown == {} and ev.info["env"] == {"note": "No expected actions or env assertions"}


def test_empty_action_list_still_compares_the_db(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, mock_task(actions=[], basis=["DB"])))
    assert ev.db_match is False and ev.reward == 0.0


def test_env_assertions_run_on_the_predicted_state(registry: DomainRegistry) -> None:
    task = mock_task(env_assertions=[ASSERT_DONE], basis=["ENV_ASSERTION"])
    ev = evaluate(replayed(registry, DONE, task))
    assert ev.env_assertions is not None
    assert ev.reward == 1.0 and [c.met for c in ev.env_assertions] == [True]
    ev = evaluate(replayed(registry, NOTHING, task))
    assert ev.reward == 0.0 and ev.breakdown == {"ENV_ASSERTION": 0.0}


def test_assert_value_false_inverts_the_assertion(registry: DomainRegistry) -> None:
    task = mock_task(env_assertions=[dict(ASSERT_DONE, assert_value=False)], basis=["ENV_ASSERTION"])
    assert evaluate(replayed(registry, NOTHING, task)).reward == 1.0


def test_assertions_outside_the_basis_are_reported_but_not_counted(registry: DomainRegistry) -> None:
    task = mock_task(actions=[], env_assertions=[ASSERT_DONE], basis=["DB"])
    ev = evaluate(replayed(registry, NOTHING, task))
    assert ev.env_assertions is not None
    assert [c.met for c in ev.env_assertions] == [False]
    assert ev.breakdown == {"DB": 1.0} and ev.reward == 1.0


def test_failing_assertion_function_makes_the_reward_not_computable(registry: DomainRegistry) -> None:
    broken = dict(ASSERT_DONE, arguments={"task_id": "nope", "expected_status": "completed"})
    ev = evaluate(replayed(registry, DONE, mock_task(env_assertions=[broken], basis=["ENV_ASSERTION"])))
    assert ev.reward is None and ev.not_evaluated == ["ENV_ASSERTION"]
    assert ev.env_assertions is not None
    assert ev.env_assertions[0].error is not None
    assert ev.env_assertions[0].met is None and "Task nope not found" in ev.env_assertions[0].error


# --- action component ---------------------------------------------------------------


def action_reward(
    registry: DomainRegistry, actions: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> Evaluation:
    return evaluate(replayed(registry, messages, mock_task(actions=actions, basis=["ACTION"])))


def test_actions_match_in_any_order_and_multiplicity(registry: DomainRegistry) -> None:
    actions = [
        action("update_task_status", UPDATE, "a1"),
        action("get_users", {}, "a2"),
        action("update_task_status", UPDATE, "a3"),
    ]
    messages = [
        greet(),
        call("update_task_status", UPDATE, "c1"),
        result(TASK_1_DONE, "c1"),
        call("get_users", {}, "c2"),
        result([], "c2"),
    ]
    ev = action_reward(registry, actions, messages)
    assert ev.actions is not None
    assert ev.reward == 1.0 and [c.step for c in ev.actions] == [1, 3, 1]
    assert [c.tool_type for c in ev.actions] == ["write", "read", "write"]


def test_user_calls_count_and_requestor_is_not_compared(registry: DomainRegistry) -> None:
    dismiss = {"notification_id": "notif_1"}
    messages = [
        greet(),
        call("dismiss_notification", dismiss, "u1", requestor="user"),
        result("Notification notif_1 dismissed", "u1", requestor="user"),
    ]
    ev = action_reward(registry, [action("dismiss_notification", dismiss)], messages)  # requestor: assistant
    assert ev.reward == 1.0


def test_compared_keys_default_to_the_calls_arguments(registry: DomainRegistry) -> None:
    expected = [action("create_task", {"user_id": "user_1", "title": "T", "description": "D"})]
    fewer = [greet(), call("create_task", {"user_id": "user_1", "title": "T"}), result("{}")]
    assert action_reward(registry, expected, fewer).reward == 1.0  # the call's keys only
    extra = [
        greet(),
        call("create_task", {"user_id": "user_1", "title": "T", "description": "D", "x": 1}),
        result("{}"),
    ]
    assert action_reward(registry, expected, extra).reward == 0.0  # 'x' is compared and the action lacks it
    wrong = [greet(), call("create_task", {"user_id": "user_1", "title": "Other"}), result("{}")]
    assert action_reward(registry, expected, wrong).reward == 0.0


def test_call_without_arguments_matches_on_the_name(registry: DomainRegistry) -> None:
    expected = [action("create_task", {"user_id": "user_1", "title": "T"})]
    assert (
        action_reward(registry, expected, [greet(), call("create_task", {}), result("Error: x", error=True)]).reward
        == 1.0
    )


def test_compare_args_restricts_and_empty_list_matches_on_name(registry: DomainRegistry) -> None:
    expected = [action("create_task", {"user_id": "user_1", "title": "T"}, compare_args=["user_id"])]
    messages = [
        greet(),
        call("create_task", {"user_id": "user_1", "title": "Anything", "description": "z"}),
        result("{}"),
    ]
    assert action_reward(registry, expected, messages).reward == 1.0
    by_name = [action("transfer_to_human_agents", {"summary": "exact words"}, compare_args=[])]
    transfer = [greet(), call("transfer_to_human_agents", {"summary": "other words"}), result("Transfer successful")]
    assert action_reward(registry, by_name, transfer).reward == 1.0


def test_values_compare_with_python_equality(registry: DomainRegistry) -> None:
    expected = [action("update_task_status", {"task_id": "task_1", "status": "completed"})]
    wrong_type = [greet(), call("update_task_status", {"task_id": "task_1", "status": ["completed"]}), result("{}")]
    assert action_reward(registry, expected, wrong_type).reward == 0.0


def test_no_expected_actions_gives_one_with_tau2_note(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, NOTHING, mock_task(actions=[], basis=["ACTION"])))
    assert ev.info is not None
    assert ev.reward == 1.0 and ev.actions is None and ev.info["action"] == {"note": "No actions to evaluate"}


def test_unmatched_action_fails(registry: DomainRegistry) -> None:
    ev = action_reward(registry, [action("update_task_status", UPDATE)], NOTHING)
    assert ev.actions is not None
    assert ev.reward == 0.0 and ev.actions[0].matched is False and ev.actions[0].step is None


# --- communicate component ---------------------------------------------------------------


def communicate_reward(registry: DomainRegistry, required: list[str], messages: list[dict[str, Any]]) -> Evaluation:
    return evaluate(replayed(registry, messages, mock_task(communicate=required, basis=["COMMUNICATE"])))


def test_communicate_is_case_insensitive_substring_of_agent_text(registry: DomainRegistry) -> None:
    ev = communicate_reward(registry, ["Refund Of 100"], [greet(), user("?"), say("Your refund of 100 dollars.")])
    assert ev.communicate is not None
    assert ev.reward == 1.0 and ev.communicate[0].step == 2


def test_commas_are_stripped_from_the_agent_text_only(registry: DomainRegistry) -> None:
    assert communicate_reward(registry, ["1000"], [greet(), say("It costs 1,000 dollars")]).reward == 1.0
    assert communicate_reward(registry, ["1,000"], [greet(), say("It costs 1,000 dollars")]).reward == 0.0


def test_only_assistant_text_counts(registry: DomainRegistry) -> None:
    ev = communicate_reward(registry, ["magic word"], [greet(), user("the magic word"), say("ok")])
    assert ev.communicate is not None
    assert ev.reward == 0.0 and ev.communicate[0].met is False


def test_every_required_info_must_be_said(registry: DomainRegistry) -> None:
    ev = communicate_reward(registry, ["alpha", "beta"], [greet(), say("alpha only")])
    assert ev.communicate is not None
    assert ev.reward == 0.0 and [c.met for c in ev.communicate] == [True, False]


def test_empty_communicate_info_gives_one(registry: DomainRegistry) -> None:
    ev = communicate_reward(registry, [], NOTHING)
    assert ev.reward == 1.0 and ev.communicate is None


# --- NL assertions --------------------------------------------------------------------


class FakeJudge:
    def __init__(self, verdicts: list[bool], error: str | None = None) -> None:
        self.verdicts, self.error, self.calls = verdicts, error, 0

    def __call__(self, messages: list[Message], assertions: list[str]) -> list[NLCheck]:
        self.calls += 1
        if self.error:
            raise JudgeError(self.error)
        return [NLCheck(a, v, "because") for a, v in zip(assertions, self.verdicts, strict=False)]


NL_TASK = mock_task(nl=["The agent was polite", "The agent finished"], basis=["NL_ASSERTION"])


def test_nl_without_judge_is_not_evaluated_and_not_guessed(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, NL_TASK))
    assert ev.reward is None and ev.nl_evaluated is False and ev.not_evaluated == ["NL_ASSERTION"]
    assert ev.status == "not_computable"


def test_nl_with_judge(registry: DomainRegistry) -> None:
    ok = FakeJudge([True, True])
    ev = evaluate(replayed(registry, DONE, NL_TASK), ok)
    assert ev.reward == 1.0 and ev.nl_evaluated and ok.calls == 1
    ev = evaluate(replayed(registry, DONE, NL_TASK), FakeJudge([True, False]))
    assert ev.reward == 0.0 and ev.breakdown == {"NL_ASSERTION": 0.0}


def test_judge_failure_is_reported_as_not_evaluated(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, NL_TASK), FakeJudge([], error="no JSON"))
    assert ev.reward is None and not ev.nl_evaluated and any("no JSON" in n for n in ev.notes)


# --- decided rewards: a non-NL component at 0 needs no judge ------------------------------------

DB_AND_NL = mock_task(
    actions=[action("update_task_status", UPDATE)], nl=["The agent was polite"], basis=["DB", "NL_ASSERTION"]
)


def test_a_failed_db_check_decides_the_reward_without_a_judge(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, NOTHING, DB_AND_NL))  # the task was never updated: DB at 0
    assert ev.reward == 0.0 and ev.status == "scored" and ev.decided_by == ["DB"]
    assert ev.not_evaluated == ["NL_ASSERTION"] and not ev.nl_evaluated
    assert any("reward 0 whatever a judge would say: DB at 0" in n for n in ev.notes)
    assert ev.breakdown == {"DB": 0.0}


@pytest.mark.parametrize(
    ("basis", "task_args", "decider"),
    [
        (["ACTION", "NL_ASSERTION"], {"actions": [action("update_task_status", UPDATE)]}, "ACTION"),
        (["ENV_ASSERTION", "NL_ASSERTION"], {"env_assertions": [ASSERT_DONE]}, "ENV_ASSERTION"),
        (["COMMUNICATE", "NL_ASSERTION"], {"communicate": ["finished"]}, "COMMUNICATE"),
    ],
)
def test_each_non_nl_component_at_zero_decides(
    registry: DomainRegistry, basis: list[str], task_args: dict[str, Any], decider: str
) -> None:
    ev = evaluate(replayed(registry, NOTHING, mock_task(nl=["polite"], basis=basis, **task_args)))
    assert ev.reward == 0.0 and ev.decided_by == [decider]


def test_a_judge_failure_does_not_matter_when_the_db_decides(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, NOTHING, DB_AND_NL), FakeJudge([], error="no JSON"))
    assert ev.reward == 0.0 and ev.decided_by == ["DB"]


def test_passing_components_leave_the_reward_to_the_judge(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, DB_AND_NL))  # DB at 1: the judge decides
    assert ev.reward is None and ev.status == "not_computable" and ev.decided_by == []


def test_an_assertion_that_cannot_run_is_never_decided_around(registry: DomainRegistry) -> None:
    """tau2 raises when an env assertion cannot run: no reward at all, even with another component at 0."""
    broken = {**ASSERT_DONE, "func_name": "no_such_assertion"}
    task = mock_task(
        actions=[action("update_task_status", UPDATE)], env_assertions=[broken], basis=["ENV_ASSERTION", "ACTION"]
    )
    ev = evaluate(replayed(registry, NOTHING, task))
    assert ev.reward is None and ev.decided_by == []


def test_nl_outside_the_basis_is_not_judged(registry: DomainRegistry) -> None:
    judge = FakeJudge([False, False])
    ev = evaluate(
        replayed(
            registry, DONE, mock_task(actions=[action("update_task_status", UPDATE)], nl=["never judged"], basis=["DB"])
        ),
        judge,
    )
    assert judge.calls == 0 and ev.nl is None and ev.nl_evaluated and ev.reward == 1.0


def test_empty_nl_list_needs_no_judge(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, mock_task(nl=[], basis=["NL_ASSERTION"])))
    assert ev.reward == 1.0 and ev.nl == [] and ev.nl_evaluated


# --- aggregation over the basis --------------------------------------------------------------


def test_reward_is_the_product_over_the_basis(registry: DomainRegistry) -> None:
    task = mock_task(
        actions=[action("update_task_status", UPDATE)], communicate=["done"], basis=["DB", "ACTION", "COMMUNICATE"]
    )
    ev = evaluate(replayed(registry, DONE, task))
    assert ev.reward == 1.0 and list(ev.breakdown) == ["DB", "ACTION", "COMMUNICATE"]
    silent = DONE[:-1] + [say("Finished.")]
    ev = evaluate(replayed(registry, silent, task))
    assert ev.reward == 0.0 and ev.breakdown == {"DB": 1.0, "ACTION": 1.0, "COMMUNICATE": 0.0}


def test_default_basis_is_db_and_communicate(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, mock_task(actions=[action("update_task_status", UPDATE)], basis=None)))
    assert ev.reward_basis == ["DB", "COMMUNICATE"] and ev.breakdown == {"DB": 1.0, "COMMUNICATE": 1.0}


def test_components_outside_the_basis_do_not_count(registry: DomainRegistry) -> None:
    task = mock_task(actions=[action("update_task_status", UPDATE)], communicate=["never said"], basis=["DB"])
    ev = evaluate(replayed(registry, DONE, task))
    assert ev.communicate is not None
    assert ev.reward == 1.0 and ev.communicate[0].met is False and ev.breakdown == {"DB": 1.0}


def test_unknown_basis_component_is_reported_not_crashed_on(registry: DomainRegistry) -> None:
    ev = evaluate(replayed(registry, DONE, mock_task(actions=[], basis=["DB", "VIBES"])))
    assert ev.reward is None and ev.not_evaluated == ["VIBES"] and any("VIBES" in n for n in ev.notes)


def test_reward_info_dump_has_tau2_shape(registry: DomainRegistry) -> None:
    task = mock_task(actions=[action("update_task_status", UPDATE)], communicate=["done"], basis=["DB", "COMMUNICATE"])
    info = evaluate(replayed(registry, DONE, task)).to_reward_info()
    assert set(info) == {
        "reward",
        "db_check",
        "env_assertions",
        "action_checks",
        "nl_assertions",
        "communicate_checks",
        "reward_basis",
        "reward_breakdown",
        "info",
    }
    assert info["db_check"] == {"db_match": True, "db_reward": 1.0}
    assert info["action_checks"][0]["action"]["name"] == "update_task_status"
    assert info["action_checks"][0]["action_match"] is True and info["action_checks"][0]["tool_type"] == "write"
    assert info["communicate_checks"][0]["met"] is True and info["nl_assertions"] is None
    assert set(info["info"]) == {"env", "nl", "communicate", "action"}


def test_mismatching_replay_is_noted_and_scored_leniently(registry: DomainRegistry) -> None:
    messages = [greet(), call("update_task_status", UPDATE), result(dict(TASK_1_DONE, title="Other")), say("Done.")]
    ev = evaluate(replayed(registry, messages, UPDATE_TASK))
    assert ev.strict_ok is False and ev.reward == 1.0
    assert any("differs from the replay" in n for n in ev.notes)


def test_task_history_messages_count_for_actions(registry: DomainRegistry) -> None:
    history = [greet(), call("update_task_status", UPDATE, "h1"), result(TASK_1_DONE, "h1")]
    task = mock_task(actions=[action("update_task_status", UPDATE)], basis=["ACTION"], history=history)
    ev = evaluate(replayed(registry, history + [say("all set")], task))
    assert ev.actions is not None
    assert ev.reward == 1.0 and ev.actions[0].step == 1


def test_calls_in_one_message_all_count(registry: DomainRegistry) -> None:
    messages = [
        greet(),
        calls(("get_users", {}, "c1"), ("update_task_status", UPDATE, "c2")),
        result([], "c1"),
        result(TASK_1_DONE, "c2"),
    ]
    ev = action_reward(registry, [action("update_task_status", UPDATE)], messages)
    assert ev.actions is not None
    assert ev.reward == 1.0 and ev.actions[0].step == 1


def test_structure_tau2_cannot_replay_is_noted(registry: DomainRegistry) -> None:
    messages = [greet(), result("orphan", "ghost"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("ok")]
    ev = evaluate(replayed(registry, messages, UPDATE_TASK))
    assert ev.reward == 1.0 and not ev.strict_ok
    assert any(n.startswith("tau2 cannot replay this trajectory (result_without_call at step 1") for n in ev.notes)


def test_the_gold_cache_tells_apart_tasks_that_differ_only_by_a_null(registry: DomainRegistry) -> None:
    """A null in initialization data sets a field: the two tasks have different gold states."""
    from tau_tui.evaluate.scoring import GoldCache
    from tau_tui.model import Task

    mock = registry.get("mock")
    base = {
        "id": "t",
        "user_scenario": {"instructions": "x"},
        "evaluation_criteria": {"actions": [], "reward_basis": ["DB"]},
    }

    def with_update(update: dict[str, Any]) -> Task:
        return Task.model_validate(
            {**base, "initial_state": {"initialization_data": {"agent_data": {"tasks": {"task_1": update}}}}}
        )

    plain, with_null = with_update({}), with_update({"description": None})

    def new_env(solo: bool = False) -> Environment:
        return mock.new_environment(solo=solo)

    cache = GoldCache()
    first = cache.get(plain, new_env)
    second = cache.get(with_null, new_env)
    assert first.agent_hash != second.agent_hash
