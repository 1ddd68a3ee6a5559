"""Replay verdicts, structural findings, state per step and the gold state (mock domain)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.model import Task, parse_message
from tau_tui.replay import FindingKind, Verdict, gold_state, replay
from tests.helpers import MOCK_TASK, call, calls, greet, result, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.environment import Environment
    from tau_tui.replay.timeline import Timeline

TASK_1 = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


@pytest.fixture
def new_env(registry: DomainRegistry) -> Callable[..., Environment]:
    domain = registry.get("mock")
    return lambda solo=False: domain.new_environment(solo=solo)


def timeline_of(
    messages: Sequence[object],
    new_env: Callable[..., Environment],
    task: Mapping[str, object] | None = MOCK_TASK,
    solo: bool = False,
) -> Timeline:
    return replay([parse_message(m) for m in messages], Task.model_validate(task) if task else None, new_env, solo)


def kinds(timeline: Timeline) -> list[FindingKind]:
    return [f.kind for f in timeline.findings]


def test_replayed_write_changes_state_at_its_step(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            user("finish it"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}),
            result(TASK_1),
            say("Done."),
        ],
        new_env,
    )
    record = tl.calls[0]
    assert record.verdict is Verdict.REPLAYED and record.result_step == 3 and record.call_step == 2
    assert tl.state_at(2).agent["tasks"]["task_1"]["status"] == "pending"
    assert tl.state_at(3).agent["tasks"]["task_1"]["status"] == "completed"
    agent_changes, user_changes = tl.changes_at(3)
    assert [(c.path, c.before, c.after) for c in agent_changes] == [
        (("tasks", "task_1", "status"), "pending", "completed")
    ]
    assert user_changes == [] and tl.changes_at(4) == ([], [])
    assert tl.strict_ok and tl.findings == []


def test_mismatch_keeps_both_outputs(new_env: Callable[..., Environment]) -> None:
    recorded = dict(TASK_1, title="Something else")
    tl = timeline_of(
        [greet(), call("update_task_status", {"task_id": "task_1", "status": "completed"}), result(recorded)], new_env
    )
    record = tl.calls[0]
    assert record.verdict is Verdict.MISMATCH
    assert record.recorded_value()["title"] == "Something else"
    assert record.replayed_value()["title"] == "Test task"
    assert not tl.strict_ok
    # the write still happened, as in tau2's lenient replay
    assert tl.final.agent["tasks"]["task_1"]["status"] == "completed"


def test_reads_and_hallucinated_tools_are_skipped(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            call("get_users", {}, "r1"),
            result("made up", "r1"),
            call("delete_everything", {"all": True}, "h1"),
            result("Error: Tool 'delete_everything' not found.", "h1", error=True),
        ],
        new_env,
    )
    assert [c.verdict for c in tl.calls] == [Verdict.SKIPPED_READ, Verdict.SKIPPED_UNKNOWN]
    assert tl.calls[1].recorded_error
    assert tl.verdict_counts() == {
        "replayed": 0,
        "mismatch": 0,
        "skipped_read": 1,
        "skipped_unknown": 1,
        "recorded_error": 1,
    }
    assert tl.final.agent is tl.initial.agent and tl.strict_ok


def test_recorded_errors_of_writes_are_re_executed_and_compared(new_env: Callable[..., Environment]) -> None:
    good = timeline_of(
        [
            greet(),
            call("update_task_status", {"task_id": "nope", "status": "completed"}),
            result("Error: Task nope not found", error=True),
        ],
        new_env,
    )
    assert good.calls[0].verdict is Verdict.REPLAYED and good.calls[0].recorded_error and good.calls[0].replayed_error
    bad = timeline_of(
        [
            greet(),
            call("update_task_status", {"task_id": "nope", "status": "completed"}),
            result("Error: something else", error=True),
        ],
        new_env,
    )
    assert bad.calls[0].verdict is Verdict.MISMATCH


def test_private_methods_and_helpers_named_by_a_recording_are_unknown(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            calls(
                ("assert_task_status", {"task_id": "task_1", "expected_status": "x"}, "a"),
                ("__init__", {}, "b"),
                ("_own_shallow", {}, "c"),
            ),
            result("?", "a"),
            result("?", "b"),
            result("?", "c"),
        ],
        new_env,
    )
    assert [c.verdict for c in tl.calls] == [Verdict.SKIPPED_UNKNOWN] * 3


def test_result_without_call(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of([greet(), result("orphan", "zzz"), say("ok")], new_env)
    assert kinds(tl) == [FindingKind.RESULT_WITHOUT_CALL]
    assert tl.findings[0].step == 1 and tl.steps[1].findings == [0]
    assert not tl.strict_ok


def test_ids_that_do_not_pair(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}, "c1"),
            result(TASK_1, "other"),
        ],
        new_env,
    )
    assert kinds(tl) == [FindingKind.ID_MISMATCH]
    assert tl.calls[0].verdict is Verdict.REPLAYED  # paired by position, still replayed


def test_results_out_of_order(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            calls(("get_users", {}, "a"), ("update_task_status", {"task_id": "task_1", "status": "completed"}, "b")),
            result(TASK_1, "b"),
            result("[]", "a"),
        ],
        new_env,
    )
    assert kinds(tl) == [FindingKind.OUT_OF_ORDER]
    assert [c.verdict for c in tl.calls] == [Verdict.SKIPPED_READ, Verdict.REPLAYED]


def test_call_without_result(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [greet(), call("update_task_status", {"task_id": "task_1", "status": "completed"}), say("hm")], new_env
    )
    assert kinds(tl) == [FindingKind.CALL_WITHOUT_RESULT]
    assert tl.calls[0].verdict is Verdict.NO_RESULT
    assert tl.final.agent["tasks"]["task_1"]["status"] == "pending"


def test_broken_content_becomes_findings(new_env: Callable[..., Environment]) -> None:
    messages = [
        greet(),
        {"role": "robot", "content": "beep"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "d", "name": "get_users", "arguments": "not-an-object"},
                {"id": "d", "name": "get_users", "arguments": {}},
            ],
        },
        result("[]", "d"),
        result("[]", "d"),
        {"role": "tool", "content": 5, "error": "maybe"},
        "junk",
    ]
    tl = timeline_of(messages, new_env)
    assert FindingKind.UNREADABLE_MESSAGE in kinds(tl)
    assert FindingKind.DUPLICATE_ID in kinds(tl)
    assert FindingKind.BAD_ARGUMENTS in kinds(tl)
    assert len(tl.steps) == len(messages)


def test_missing_ids_still_pair_in_order(new_env: Callable[..., Environment]) -> None:
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}],
    }
    tl = timeline_of([greet(), msg, {"role": "tool", "content": __import__("json").dumps(TASK_1)}], new_env)
    assert tl.calls[0].verdict is Verdict.REPLAYED and tl.findings == []


def test_user_message_in_solo_run(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of([greet(), user("hello")], new_env, solo=True)
    assert kinds(tl) == [FindingKind.USER_MESSAGE_IN_SOLO]


def test_user_side_tools_use_the_user_db(new_env: Callable[..., Environment]) -> None:
    tl = timeline_of(
        [
            greet(),
            call("dismiss_notification", {"notification_id": "notif_1"}, "u1", requestor="user"),
            result("Notification notif_1 dismissed", "u1", requestor="user"),
        ],
        new_env,
    )
    assert tl.calls[0].verdict is Verdict.REPLAYED and tl.calls[0].side == "user"
    agent_changes, user_changes = tl.changes_at(2)
    assert agent_changes == [] and [c.path for c in user_changes] == [("notifications", "notif_1", "status")]


def test_gold_state_applies_expected_actions_without_the_trajectory(new_env: Callable[..., Environment]) -> None:
    gold = gold_state(Task.model_validate(MOCK_TASK), new_env)
    assert gold.state.agent["tasks"]["task_1"]["status"] == "completed"
    assert gold.action_errors == []
    failing = dict(
        MOCK_TASK, evaluation_criteria={"actions": [{"action_id": "x", "name": "no_such_tool", "arguments": {}}]}
    )
    assert gold_state(Task.model_validate(failing), new_env).action_errors[0][1].startswith("ValueError: Tool")


def test_state_storage_grows_with_changes_only(new_env: Callable[..., Environment]) -> None:
    messages = [greet()]
    for i in range(50):
        messages += [user(f"q{i}"), call("get_users", {}, f"r{i}"), result("[]", f"r{i}")]
    messages += [call("update_task_status", {"task_id": "task_1", "status": "completed"}, "w"), result(TASK_1, "w")]
    tl = timeline_of(messages, new_env)
    distinct_roots = {id(step.state.agent) for step in tl.steps}
    assert len(distinct_roots) == 2  # before and after the single write
    assert tl.state_at(len(messages) - 1).agent["users"] is tl.initial.agent["users"]


def test_initialization_failures_are_findings(new_env: Callable[..., Environment]) -> None:
    task = dict(
        MOCK_TASK,
        initial_state={
            "initialization_actions": [
                {"env_type": "assistant", "func_name": "__class__", "arguments": {}},
                {"env_type": "assistant", "func_name": "create_task", "arguments": {"user_id": "ghost", "title": "x"}},
            ]
        },
    )
    tl = timeline_of([greet()], new_env, task=task)
    assert kinds(tl) == [FindingKind.INIT_FAILED, FindingKind.INIT_FAILED]
    assert "not found" in tl.findings[0].message and "ghost" in tl.findings[1].message


def test_mock_without_user_db_starts_with_an_empty_inbox(tmp_path: Path) -> None:
    from tau_tui.domains import DomainRegistry
    from tests.conftest import CORPUS

    data = tmp_path / "domains" / "mock"
    data.mkdir(parents=True)
    for name in ("db.json", "policy.md", "policy_solo.md", "tasks.json"):
        (data / name).symlink_to(CORPUS / "domains" / "mock" / name)
    domain = DomainRegistry(tmp_path).get("mock")
    env = domain.new_environment()
    assert env.user is not None
    assert env.user.db is not None
    assert env.user.db.root["notifications"] == {}
    assert any("user_db.json is missing" in w for w in domain.warnings)
