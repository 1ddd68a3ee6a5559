"""Explanations: DB diff, where the run left the gold path, missed actions, recording vs its task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau_tui.evaluate import evaluate, explain
from tau_tui.model import Task
from tests.evaluate.support import TASK_1_DONE, UPDATE, action, mock_task, replayed
from tests.helpers import call, greet, result, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.evaluate.explain import Explanation, RecordingIssue
    from tau_tui.evaluate.reward import Evaluation

UPDATE_TASK = mock_task(actions=[action("update_task_status", UPDATE)])
ARCHIVED = {"task_id": "task_1", "status": "archived"}
DONE = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
WRONG = [
    greet(),
    user("finish task_1"),
    call("update_task_status", ARCHIVED),
    result(dict(TASK_1_DONE, status="archived")),
    say("Done."),
]
NOTHING = [greet(), user("finish task_1"), say("Sorry, no.")]


def explained(
    registry: DomainRegistry, messages: list[dict[str, Any]], task: dict[str, Any] | None = UPDATE_TASK, **kwargs: Any
) -> tuple[Evaluation, Explanation]:
    explain_args = {k: kwargs.pop(k) for k in ("task_in_recording", "known_tasks") if k in kwargs}
    rp = replayed(registry, messages, task, **kwargs)
    evaluation = evaluate(rp)
    return evaluation, explain(rp, evaluation, **explain_args)


def test_db_diff_is_path_level_predicted_vs_gold(registry: DomainRegistry) -> None:
    _, ex = explained(registry, WRONG)
    assert ex.db_diff is not None
    [change] = ex.db_diff.agent
    assert change.path == ("tasks", "task_1", "status") and (change.before, change.after) == ("archived", "completed")
    assert ex.db_diff.user == []
    assert ex.db_diff.to_json()["agent"] == [
        {"path": "tasks.task_1.status", "kind": "differs", "predicted": "archived", "gold": "completed"}
    ]


def test_first_wrong_write_is_the_divergence(registry: DomainRegistry) -> None:
    _, ex = explained(registry, WRONG)
    div = ex.divergence
    assert div is not None
    assert div.kind == "wrong_write" and div.step == 2 and div.tool == "update_task_status"
    assert div.path == "agent:tasks.task_1.status" and (div.written, div.gold) == ("archived", "completed")


def test_missing_write_points_after_the_last_good_write(registry: DomainRegistry) -> None:
    _, ex = explained(registry, NOTHING)
    assert ex.divergence is not None
    assert ex.divergence.kind == "missing_write" and ex.divergence.step is None
    assert ex.divergence.missing == ["update_task_status(task_id='task_1', status='completed') never done"]
    create = {"user_id": "user_1", "title": "New"}
    task = mock_task(actions=[action("create_task", create, "a1"), action("update_task_status", UPDATE, "a2")])
    half = [
        greet(),
        call("create_task", create),
        result({"task_id": "task_2", "title": "New", "description": None, "status": "pending"}),
        say("Created."),
    ]
    _, ex = explained(registry, half, task)
    assert ex.divergence is not None
    assert ex.divergence.kind == "missing_write" and ex.divergence.step == 2
    assert "update_task_status" in ex.divergence.missing[0]


def test_expected_write_whose_matching_call_failed_is_named(registry: DomainRegistry) -> None:
    task = mock_task(actions=[action("update_task_status", UPDATE, compare_args=["status"])])
    messages = [
        greet(),
        call("update_task_status", {"task_id": "task_9", "status": "completed"}),
        result("Error: Task task_9 not found", error=True),
        say("Hmm."),
    ]
    ev, ex = explained(registry, messages, task)
    assert ev.actions is not None
    assert ev.actions[0].matched and ev.db_match is False  # the action check passes, the DB does not
    assert ex.divergence is not None
    assert ex.divergence.kind == "missing_write"
    assert ex.divergence.missing == ["update_task_status(task_id='task_1', status='completed') failed at step 2"]


def test_no_divergence_when_the_db_matches(registry: DomainRegistry) -> None:
    ev, ex = explained(registry, DONE)
    assert ex.db_diff is not None
    assert ev.reward == 1.0 and ex.divergence is None and ex.db_diff.empty and ex.failed == [] and ex.missed == []


def test_closest_call_and_differing_arguments(registry: DomainRegistry) -> None:
    _, ex = explained(registry, WRONG)
    [missed] = ex.missed
    assert missed.closest_step == 2
    assert [(d.name, d.expected, d.actual) for d in missed.differing] == [("status", "completed", "archived")]
    assert "closest call at step 2 differs in status: expected 'completed', got 'archived'" in missed.message
    _, ex = explained(registry, NOTHING)
    assert ex.missed[0].closest_step is None and ex.missed[0].message.endswith("never called")


def test_failure_reasons_name_the_cause(registry: DomainRegistry) -> None:
    _, ex = explained(registry, WRONG)
    assert ex.failed[0] == "DB differs from gold at 1 agent path(s) and 0 user path(s)"
    assert ex.failed[1].startswith("left the gold path: step 2: update_task_status")
    _, ex = explained(
        registry,
        DONE,
        mock_task(
            actions=[action("update_task_status", UPDATE)], communicate=["finished"], basis=["DB", "COMMUNICATE"]
        ),
    )
    assert ex.failed == ["agent never said 'finished'"]
    _, ex = explained(registry, DONE, termination="max_steps")
    assert ex.failed == ["terminated by 'max_steps': tau2 gives 0"]


# --- the recording against its own task -------------------------------------------------------------


def own_reward_info(
    registry: DomainRegistry, messages: list[dict[str, Any]], task: dict[str, Any] | None = UPDATE_TASK
) -> dict[str, Any]:
    return evaluate(replayed(registry, messages, task)).to_reward_info()


def issues(
    registry: DomainRegistry,
    messages: list[dict[str, Any]],
    reward_info: dict[str, Any] | None,
    task: dict[str, Any] | None = UPDATE_TASK,
    **kwargs: Any,
) -> tuple[dict[str, RecordingIssue], Explanation]:
    _, ex = explained(registry, messages, task, reward_info=reward_info, **kwargs)
    return {i.kind: i for i in ex.recording}, ex


def test_a_faithful_recording_has_no_issues(registry: DomainRegistry) -> None:
    for messages in (DONE, WRONG):
        found, ex = issues(registry, messages, own_reward_info(registry, messages))
        assert found == {} and not ex.inconsistent_recording


def test_reward_that_termination_forbids(registry: DomainRegistry) -> None:
    found, ex = issues(registry, DONE, {"reward": 1.0}, termination="max_steps")
    assert "reward_despite_termination" in found and ex.inconsistent_recording


def test_recorded_checks_the_task_does_not_have(registry: DomainRegistry) -> None:
    info = own_reward_info(registry, DONE)
    info["action_checks"].append(
        {"action": {"action_id": "x", "name": "get_users", "arguments": {}}, "action_match": True, "action_reward": 1.0}
    )
    info["communicate_checks"] = [{"info": "hello", "met": True, "justification": ""}]
    info["env_assertions"] = [
        {
            "env_assertion": {
                "env_type": "assistant",
                "func_name": "assert_task_status",
                "arguments": {"task_id": "task_1", "expected_status": "x"},
            },
            "met": True,
            "reward": 1.0,
        }
    ]
    info["reward_basis"] = ["DB", "COMMUNICATE"]
    found, _ = issues(registry, DONE, info)
    assert {
        "unknown_action",
        "unknown_communicate",
        "unknown_assertion",
        "basis_differs",
        "match_without_call",
        "communicated_without_text",
    } <= set(found)
    assert (
        found["unknown_action"].message == "1 recorded action check(s) name actions task t does not have: get_users()"
    )


def test_recorded_checks_of_another_task_mean_a_wrong_task_id(registry: DomainRegistry) -> None:
    other = Task.model_validate(
        mock_task(actions=[action("create_task", {"user_id": "user_1", "title": "T"})], task_id="other")
    )
    info = own_reward_info(registry, DONE)
    info["action_checks"] = [
        {
            "action": {"action_id": "a", "name": "create_task", "arguments": {"user_id": "user_1", "title": "T"}},
            "action_match": False,
            "action_reward": 0.0,
        }
    ]
    found, _ = issues(registry, DONE, info, known_tasks={"other": other})
    assert "task other, not of task t" in found["mislabelled_task"].message
    assert "unchecked_actions" in found


def test_reward_against_its_own_breakdown_and_checks(registry: DomainRegistry) -> None:
    info = own_reward_info(registry, WRONG)
    info["reward"] = 1.0
    found, _ = issues(registry, WRONG, info)
    assert {"reward_vs_breakdown", "reward_vs_checks"} <= set(found)


def test_recorded_db_match_against_an_exact_replay(registry: DomainRegistry) -> None:
    info = own_reward_info(registry, WRONG)
    info["db_check"] = {"db_match": True, "db_reward": 1.0}
    found, ex = issues(registry, WRONG, info)
    assert found["db_match_contradicts_replay"].inconsistent and ex.inconsistent_recording


def test_task_from_a_data_folder_only_gives_notes(registry: DomainRegistry) -> None:
    info = own_reward_info(registry, WRONG)
    info["db_check"] = {"db_match": True, "db_reward": 1.0}
    found, ex = issues(registry, WRONG, info, task_in_recording=False)
    assert "task_version" in found and not ex.inconsistent_recording


def test_replay_differences_are_notes(registry: DomainRegistry) -> None:
    messages = [greet(), call("update_task_status", UPDATE), result(dict(TASK_1_DONE, title="Old")), say("Done.")]
    found, ex = issues(registry, messages, own_reward_info(registry, messages))
    assert not found["replay_differs"].inconsistent and not ex.inconsistent_recording
