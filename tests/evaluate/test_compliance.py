"""Policy-compliance flags and the user-simulator hint: hand-made trajectories where each fires and where it must not."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.evaluate import DETECTORS, FLAG_KINDS, diagnose
from tau_tui.evaluate.compliance import POLICY_RULES, SUGGESTED_SOURCE, PolicyRules, is_affirmative
from tests.conftest import CORPUS
from tests.evaluate.support import TASK_1_DONE, UPDATE, mock_task, replayed
from tests.helpers import call, greet, result, say, user

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry

USERS = [{"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}]


@pytest.fixture()
def mock_rules(monkeypatch: pytest.MonkeyPatch) -> Callable[[PolicyRules], None]:
    """The mock domain declares no rules of its own: give it a table for the test."""

    def use(rules: PolicyRules) -> None:
        monkeypatch.setitem(POLICY_RULES, "mock", rules)

    return use


def kinds(registry: DomainRegistry, messages: list[dict[str, Any]], kind: str) -> list[tuple[int, str]]:
    rp = replayed(registry, messages, mock_task())
    return [(f.step, f.message) for f in diagnose(rp.timeline, 0, None) if f.kind == kind]


def write_after(text: str) -> list[dict[str, Any]]:
    return [greet(), user(text), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]


def test_registered_once_each_with_a_letter_and_a_suggested_source() -> None:
    for kind in ("unconfirmed_write", "write_before_auth", "transfer_against_policy", "user_stopped_early"):
        assert kind in FLAG_KINDS and DETECTORS[kind].letter
        assert SUGGESTED_SOURCE[kind] in ("agent", "user", "task")
    assert SUGGESTED_SOURCE["user_stopped_early"] == "user"


def test_affirmative() -> None:
    text: str | None
    for text in ("Yes, please.", "yeah go ahead", "Sure, do it.", "That's right", "OK ###STOP###", "I confirm"):
        assert is_affirmative(text), text
    for text in ("No, wait.", "Please use gift card 1.", "Actually, yes... no", "", None, "Don't do that"):
        assert not is_affirmative(text), text


def test_unconfirmed_write(registry: DomainRegistry, mock_rules: Callable[[PolicyRules], None]) -> None:
    mock_rules(PolicyRules(confirm_writes=True))
    assert [s for s, _ in kinds(registry, write_after("finish task_1"), "unconfirmed_write")] == [2]
    assert kinds(registry, write_after("Yes, go ahead."), "unconfirmed_write") == []
    assert [s for s, _ in kinds(registry, write_after("No, wait."), "unconfirmed_write")] == [2]
    # reads are never flagged, and a domain that does not ask for confirmation flags nothing
    read = [greet(), user("who am I"), call("get_users", {}), result(USERS)]
    assert kinds(registry, read, "unconfirmed_write") == []
    mock_rules(PolicyRules())
    assert kinds(registry, write_after("finish task_1"), "unconfirmed_write") == []


def test_write_before_auth(registry: DomainRegistry, mock_rules: Callable[[PolicyRules], None]) -> None:
    mock_rules(PolicyRules(auth_tools=frozenset({"get_users"})))
    assert [s for s, _ in kinds(registry, write_after("finish task_1"), "write_before_auth")] == [2]
    authed = [
        greet(),
        user("finish task_1"),
        call("get_users", {}, "a"),
        result(USERS, "a"),
        call("update_task_status", UPDATE, "b"),
        result(TASK_1_DONE, "b"),
    ]
    assert kinds(registry, authed, "write_before_auth") == []
    failed_auth = [
        greet(),
        user("finish task_1"),
        call("get_users", {}, "a"),
        result("Error: down", "a", error=True),
        call("update_task_status", UPDATE, "b"),
        result(TASK_1_DONE, "b"),
    ]
    assert [s for s, _ in kinds(registry, failed_auth, "write_before_auth")] == [4]


def test_transfer_against_policy(registry: DomainRegistry, mock_rules: Callable[[PolicyRules], None]) -> None:
    mock_rules(PolicyRules(transfer_only_when_needed=True))
    transfer = [call("transfer_to_human_agents", {"summary": "x"}), result("Transfer successful")]
    assert [s for s, _ in kinds(registry, [greet(), user("finish task_1"), *transfer], "transfer_against_policy")] == [
        2
    ]
    asked = [greet(), user("I want to speak to a human."), *transfer]
    assert kinds(registry, asked, "transfer_against_policy") == []
    tried = [
        greet(),
        user("finish task_1"),
        call("get_users", {}, "a"),
        result(USERS, "a"),
        call("transfer_to_human_agents", {"summary": "x"}, "b"),
        result("Transfer successful", "b"),
    ]
    assert kinds(registry, tried, "transfer_against_policy") == []


def test_user_stopped_early(registry: DomainRegistry) -> None:
    asked = [greet(), user("finish task_1"), say("Shall I mark task_1 as completed?"), user("Yes please. ###STOP###")]
    assert [s for s, m in kinds(registry, asked, "user_stopped_early")] == [3]
    assert "suggested source: user" in kinds(registry, asked, "user_stopped_early")[0][1]
    thanked = [*write_after("Yes."), user("Thanks! ###STOP###")]
    assert kinds(registry, thanked, "user_stopped_early") == []
    no_question = [greet(), user("finish task_1"), say("Task_1 is open."), user("OK ###STOP###")]
    assert kinds(registry, no_question, "user_stopped_early") == []


def test_the_retail_and_airline_packages_declare_their_tables(registry: DomainRegistry) -> None:
    registry.get("retail")
    registry.get("airline")
    assert POLICY_RULES["retail"].confirm_writes and "find_user_id_by_email" in POLICY_RULES["retail"].auth_tools
    assert POLICY_RULES["airline"].confirm_writes and not POLICY_RULES["airline"].auth_tools


@pytest.mark.corpus
def test_a_corpus_write_whose_preceding_user_turn_is_no_yes(analyzer: Analyzer) -> None:
    from tau_tui.model.io import open_run

    path = CORPUS / "sierra-research__tau2-bench__airline.json"
    run = open_run(path)
    index = run.find("c767ac4e")
    assert index is not None
    report = analyzer.evaluate(run, index)
    flagged = [f for f in report.flags if f.kind == "unconfirmed_write"]
    assert flagged and report.evaluation.reward == 1.0  # passed, but broke the confirmation rule on the way
    raw = json.loads(path.read_text())["simulations"]
    messages = next(s for s in raw if s["id"].startswith("c767ac4e"))["messages"]
    step = flagged[0].step
    before = next(m for m in reversed(messages[:step]) if m["role"] == "user")
    assert (
        "yes" not in before["content"].lower()
        and messages[step]["tool_calls"][0]["name"] == "update_reservation_passengers"
    )


def task_kinds(
    registry: DomainRegistry, messages: list[dict[str, Any]], task: dict[str, Any] | None, kind: str
) -> list[tuple[int, str]]:
    rp = replayed(registry, messages, task)
    return [(f.step, f.message) for f in diagnose(rp.timeline, 0, None, rp.task) if f.kind == kind]


def test_user_contradicts_scenario(registry: DomainRegistry) -> None:
    task = mock_task()
    task["user_scenario"] = {"instructions": "You are user_1. Ask the agent to complete task_1."}
    made_up = [
        greet(),
        user("I am user_1 and I want task_9 completed by the 19th, 10am, a 24-hour job"),
        say("Let me check."),
    ]
    found = task_kinds(registry, made_up, task, "user_contradicts_scenario")
    assert [s for s, _ in found] == [1] and "task_9" in found[0][1] and "user_1" not in found[0][1]
    assert not {"19th", "10am", "24-hour"} & set(found[0][1].replace(",", " ").split())  # not identifiers
    assert "suggested source: user" in found[0][1]
    # what the scenario gives, or what was said before (by the agent, or in a call), is never flagged
    faithful = [
        greet(),
        user("I am user_1, please complete task_1"),
        call("get_users", {}),
        result(USERS),
        say("I see task_1 and ref_77 on file."),
        user("Yes, ref_77 is mine"),
    ]
    assert task_kinds(registry, faithful, task, "user_contradicts_scenario") == []
    # a scenario with no identifiers of its own gives no basis, and no task at all gives none either
    task["user_scenario"] = {"instructions": "Ask the agent for help."}
    assert task_kinds(registry, made_up, task, "user_contradicts_scenario") == []
    assert [
        f
        for f in diagnose(replayed(registry, made_up, mock_task()).timeline, 0, None, None)
        if f.kind == "user_contradicts_scenario"
    ] == []


def test_user_asked_beyond_task(registry: DomainRegistry) -> None:
    update = {"action_id": "a1", "name": "update_task_status", "arguments": UPDATE}
    other = {"action_id": "a1", "name": "create_task", "arguments": {"user_id": "user_1", "title": "x"}}
    messages = write_after("Please update the status of task_1")
    beyond = task_kinds(registry, messages, mock_task(actions=[other]), "user_asked_beyond_task")
    assert [s for s, _ in beyond] == [1] and "update_task_status" in beyond[0][1]
    # a user turn that does not ask for what the tool does leaves it to the agent
    assert task_kinds(registry, write_after("Thanks, bye"), mock_task(actions=[other]), "user_asked_beyond_task") == []
    assert task_kinds(registry, messages, mock_task(actions=[update]), "user_asked_beyond_task") == []
    assert task_kinds(registry, messages, mock_task(actions=None), "user_asked_beyond_task") == []  # no actions


def test_the_new_hints_are_registered_with_letters_and_a_user_source() -> None:
    for kind in ("user_contradicts_scenario", "user_asked_beyond_task"):
        assert kind in FLAG_KINDS and DETECTORS[kind].uses_task and SUGGESTED_SOURCE[kind] == "user"
