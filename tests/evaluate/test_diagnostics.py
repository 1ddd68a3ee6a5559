"""Process flags: for each one a trajectory where it fires and one where it must not."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau_tui.evaluate import diagnose
from tau_tui.evaluate.diagnostics import claims
from tests.evaluate.support import TASK_1_DONE, UPDATE, mock_task, replayed
from tests.helpers import call, calls, greet, result, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

ONE_AT_A_TIME = "You should only make one tool call at a time, and not respond to the user at the same time."
USERS = [{"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}]


def flags(
    registry: DomainRegistry,
    messages: list[dict[str, Any]],
    kind: str,
    policy: str | None = ONE_AT_A_TIME,
    task: dict[str, Any] | None = None,
) -> list[tuple[int, str]]:
    rp = replayed(registry, messages, task or mock_task())
    history = len(rp.task.history) if rp.task else 0
    return [(f.step, f.message) for f in diagnose(rp.timeline, history, policy) if f.kind == kind]


def text_and_call(text: str, name: str, arguments: Any, call_id: str = "c1") -> dict[str, Any]:
    message = call(name, arguments, call_id)
    message["content"] = text
    return message


def test_parallel_calls_fire_only_when_the_policy_asks_for_one_at_a_time(registry: DomainRegistry) -> None:
    messages = [
        greet(),
        calls(("get_users", {}, "a"), ("get_users", {"x": 1}, "b")),
        result(USERS, "a"),
        result(USERS, "b"),
    ]
    assert [s for s, _ in flags(registry, messages, "parallel_calls")] == [1]
    assert flags(registry, messages, "parallel_calls", policy="Be helpful.") == []
    single = [greet(), call("get_users", {}), result(USERS)]
    assert flags(registry, single, "parallel_calls") == []


def test_text_with_calls(registry: DomainRegistry) -> None:
    mixed = [greet(), text_and_call("Let me look that up.", "get_users", {}), result(USERS)]
    assert [s for s, _ in flags(registry, mixed, "text_with_calls")] == [1]
    separate = [greet(), say("Let me look that up."), call("get_users", {}), result(USERS)]
    assert flags(registry, separate, "text_with_calls") == []


def test_repeated_call_without_a_write_in_between(registry: DomainRegistry) -> None:
    twice = [greet(), call("get_users", {}, "a"), result(USERS, "a"), call("get_users", {}, "b"), result(USERS, "b")]
    assert [s for s, _ in flags(registry, twice, "repeated_call")] == [3]
    write_between = [
        greet(),
        call("get_users", {}, "a"),
        result(USERS, "a"),
        call("update_task_status", UPDATE, "w"),
        result(TASK_1_DONE, "w"),
        call("get_users", {}, "b"),
        result(USERS, "b"),
    ]
    assert flags(registry, write_between, "repeated_call") == []
    other_args = [
        greet(),
        call("get_users", {}, "a"),
        result(USERS, "a"),
        call("get_users", {"x": 1}, "b"),
        result(USERS, "b"),
    ]
    assert flags(registry, other_args, "repeated_call") == []


def test_repeated_identical_write(registry: DomainRegistry) -> None:
    messages = [
        greet(),
        call("update_task_status", UPDATE, "a"),
        result(TASK_1_DONE, "a"),
        call("update_task_status", UPDATE, "b"),
        result(TASK_1_DONE, "b"),
    ]
    assert [s for s, _ in flags(registry, messages, "repeated_call")] == [3]


def test_write_to_an_entity_never_read(registry: DomainRegistry) -> None:
    blind = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE)]
    [(step, message)] = flags(registry, blind, "write_before_read")
    assert step == 2 and "task_1" in message
    looked_up = [
        greet(),
        call("get_users", {}, "r"),
        result(USERS, "r"),
        call("update_task_status", UPDATE, "w"),
        result(TASK_1_DONE, "w"),
    ]
    assert flags(registry, looked_up, "write_before_read") == []


def test_ids_with_punctuation_count_as_read_once_a_later_result_names_them(registry: DomainRegistry) -> None:
    odd = {"task_id": "#T-1", "status": "completed"}
    messages = [
        greet(),
        call("update_task_status", odd, "w1"),
        result("Error: Task #T-1 not found", "w1", error=True),
        call("update_task_status", odd, "w2"),
        result("Error: Task #T-1 not found", "w2", error=True),
        call("get_users", {}, "r"),
        result({"note": "see #T-1, #T-10"}, "r"),
        call("update_task_status", odd, "w3"),
        result("Error: Task #T-1 not found", "w3", error=True),
        call("update_task_status", dict(odd, task_id="#T-10x"), "w4"),
        result("Error: Task #T-10x not found", "w4", error=True),
    ]
    assert [s for s, _ in flags(registry, messages, "write_before_read")] == [1, 3, 9]


def test_error_the_agent_carried_on_past(registry: DomainRegistry) -> None:
    failed = [
        greet(),
        call("update_task_status", UPDATE),
        result("Error: database locked", error=True),
        say("All set, your task is complete!"),
    ]
    [(step, message)] = flags(registry, failed, "error_ignored")
    assert step == 3 and "update_task_status failed at step 2" in message
    told = failed[:-1] + [say("Sorry, I was unable to update the task.")]
    assert flags(registry, told, "error_ignored") == []
    retried = failed[:-1] + [call("update_task_status", UPDATE, "c2"), result(TASK_1_DONE, "c2")]
    assert flags(registry, retried, "error_ignored") == []


def test_claim_without_a_successful_write(registry: DomainRegistry) -> None:
    claim = [greet(), user("finish task_1"), say("Your task has been updated to completed.")]
    [(step, message)] = flags(registry, claim, "unbacked_claim")
    assert step == 2 and "'has been updated'" in message
    backed = [
        greet(),
        call("update_task_status", UPDATE),
        result(TASK_1_DONE),
        say("Your task has been updated to completed."),
    ]
    assert flags(registry, backed, "unbacked_claim") == []
    failed_write = [
        greet(),
        call("update_task_status", UPDATE),
        result("Error: locked", error=True),
        say("I've updated your task."),
    ]
    assert [s for s, _ in flags(registry, failed_write, "unbacked_claim")] == [3]


def test_distinctive_claims_need_their_own_tool(registry: DomainRegistry) -> None:
    cancel_claim = [
        greet(),
        call("update_task_status", UPDATE),
        result(TASK_1_DONE),
        say("Your task has been cancelled."),
    ]
    [(_, message)] = flags(registry, cancel_claim, "unbacked_claim")
    assert "no successful cancel write" in message
    side_effect = [
        greet(),
        call("update_task_status", UPDATE),
        result(TASK_1_DONE),
        say("A confirmation has been sent to you."),
    ]
    assert flags(registry, side_effect, "unbacked_claim") == []


def test_claim_detector_is_conservative() -> None:
    assert claims("Your order has been cancelled. Anything else?") == [("cancelled", "has been cancelled")]
    assert claims("I've successfully booked the flight") == [("booked", "I've successfully booked")]
    assert claims("Once your order has been cancelled, you will get a refund.") == []
    assert claims("Has the order been cancelled?") == []
    assert claims("The order has not been cancelled.") == []
    assert claims("Your order was cancelled last week.") == []
    assert claims("The payment method on file is a card.") == []


def test_transfer_to_human(registry: DomainRegistry) -> None:
    transfer = [greet(), call("transfer_to_human_agents", {"summary": "s"}), result("Transfer successful")]
    assert [s for s, _ in flags(registry, transfer, "transfer_to_human")] == [1]
    assert flags(registry, [greet(), say("I can help.")], "transfer_to_human") == []


def test_task_history_is_not_the_agents_doing(registry: DomainRegistry) -> None:
    history = [greet(), text_and_call("Updating.", "update_task_status", UPDATE, "h1"), result(TASK_1_DONE, "h1")]
    task = mock_task(history=history)
    messages = history + [say("Anything else?")]
    assert flags(registry, messages, "text_with_calls", task=task) == []
    assert flags(registry, messages, "write_before_read", task=task) == []
