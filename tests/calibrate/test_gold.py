"""Gold sanity check over mock, retail, airline and telecom: exactly these tasks fail, for these reasons.

(a) the scripted gold agent (with the scripted user) must reach reward 1.0;
(b) the evaluator's gold state (reference actions applied directly, no sync) must equal the state the same
    actions reach through the live environment (with sync after each call).
Telecom's gold path skips the sync that copies the agent's line state to the user's device, so most telecom
tasks fail (b); none of them has DB in its reward basis, so their rewards are not affected.

Mock's two failing tasks are tau2 1.0.1's own: ``update_task_with_history_and_env_assertions`` has no
reference actions (its env assertion needs task_2 completed), and ``update_task_with_user_tools`` asks for a
notification the user dismisses, which no reference action does, while DB is in its basis: tau2's own gold
trajectory of it scores env_assertions [false] in ORACLE.jsonl, and dismissing makes the user DB differ
from the gold one (``test_user_tools_task_cannot_reach_one`` shows both sides).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.calibrate import GoldChecker
from tau_tui.calibrate.gold import GoldCheck, failure_kind
from tau_tui.calibrate.render import gold_summary, render_gold_check

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

pytestmark = pytest.mark.corpus

EXPECTED = {
    "mock": {
        "tasks": 10,
        "failing": {
            "update_task_with_history_and_env_assertions": "gold agent: reward 0 (env assertion assert_task_status(task_id='task_2', "
            "expected_status='completed') is not True after the rollout); reference solution incomplete: "
            "the task has no reference actions and the gold state fails env assertion "
            "assert_task_status(task_id='task_2', expected_status='completed')",
            "update_task_with_user_tools": "gold agent: reward 0 (env assertion assert_notification_status(notification_id='notif_1', "
            "expected_status='read') is not True after the rollout); unreachable task: the gold state fails "
            "env assertion assert_notification_status(notification_id='notif_1', expected_status='read'), "
            "and DB is in the reward basis, so no trajectory can both match the gold DB and meet it",
        },
        "kinds": {
            "reference solution incomplete; gold agent below 1.0 (ENV_ASSERTION)": 1,
            "unreachable (gold state fails an env assertion, DB in basis); gold agent below 1.0 (ENV_ASSERTION)": 1,
        },
    },
    "retail": {"tasks": 114, "failing": {}, "kinds": {}},
    "airline": {"tasks": 50, "failing": {}, "kinds": {}},
    "banking_knowledge": {"tasks": 97, "failing": {}, "kinds": {}},
    "telecom": {
        "tasks": 2285,
        "failing": 1688,
        "kinds": {
            "gold ≠ live: user surroundings.roaming_allowed": 560,
            "gold ≠ live: user surroundings.mobile_data_usage_exceeded": 560,
            "gold ≠ live: user surroundings.mobile_data_usage_exceeded, user surroundings.roaming_allowed": 560,
            "gold ≠ live: agent bills[].status, user device.network_connection_status, "
            "user device.network_signal_strength, user device.network_technology_connected, "
            "user surroundings.line_active": 8,
        },
    },
}


@pytest.fixture(scope="module")
def results(registry: DomainRegistry) -> dict[str, tuple[list[GoldCheck], float]]:
    out = {}
    for domain in EXPECTED:
        checker = GoldChecker.for_name(registry, domain)
        started = time.perf_counter()
        checks = checker.run(list(checker.domain.tasks().values()))
        out[domain] = (checks, time.perf_counter() - started)
    return out


@pytest.mark.parametrize("domain", list(EXPECTED))
def test_exactly_these_tasks_fail_the_gold_check(
    results: dict[str, tuple[list[GoldCheck], float]], domain: str
) -> None:
    checks, seconds = results[domain]
    expected = EXPECTED[domain]
    failing = {c.task_id: c for c in checks if not c.ok}
    assert len(checks) == expected["tasks"]
    if isinstance(expected["failing"], dict):
        assert {t: c.reason for t, c in failing.items()} == expected["failing"]
    else:
        assert len(failing) == expected["failing"]
    assert dict(Counter(failure_kind(c) for c in failing.values())) == expected["kinds"]
    assert all(not c.setup_problems for c in checks)
    print(f"\n{gold_summary(domain, checks)}\n  ({seconds:.1f}s, {1000 * seconds / len(checks):.1f} ms/task)")


def test_telecom_fails_only_the_consistency_check_and_never_where_the_reward_compares_dbs(
    results: dict[str, tuple[list[GoldCheck], float]],
) -> None:
    checks, seconds = results["telecom"]
    assert all(c.gold_agent_ok and c.gold_reward == 1.0 for c in checks)
    inconsistent = [c for c in checks if not c.gold_consistent]
    assert len(inconsistent) == 1688
    assert not any(c.inconsistency_matters for c in checks)
    assert seconds < 120, f"the telecom gold check took {seconds:.0f}s"


def test_a_failing_task_says_which_paths_differ_and_how(results: dict[str, tuple[list[GoldCheck], float]]) -> None:
    checks, _ = results["telecom"]
    check = next(c for c in checks if c.task_id == "[service_issue]overdue_bill_suspension[PERSONA:Easy]")
    diff = {(d["side"], d["path"]): (d["gold"], d["live"]) for d in check.to_json()["diff"]}
    assert diff == {
        ("agent", "bills[6].status"): ("Awaiting Payment", "Paid"),  # the user paid; only sync marks the bill
        ("user", "device.network_signal_strength"): ("none", "excellent"),
        ("user", "device.network_technology_connected"): ("none", "5G"),
        ("user", "device.network_connection_status"): ("no_service", "connected"),
        ("user", "surroundings.line_active"): (False, True),
    }
    assert check.gold_hashes[0] != check.live_hashes[0] and check.gold_hashes[1] != check.live_hashes[1]
    text = render_gold_check(check)
    assert text.startswith("FAIL [service_issue]overdue_bill_suspension")
    assert 'agent bills[6].status: gold "Awaiting Payment" → live "Paid"' in text


def test_gold_check_json_has_the_contract_fields(results: dict[str, tuple[list[GoldCheck], float]]) -> None:
    checks, _ = results["mock"]
    for check in checks:
        data = check.to_json()
        for key in ("task", "gold_reward", "gold_consistent", "reason"):
            assert key in data
        assert data["gold_reward"] == 1.0 or data["reason"]


def test_a_check_can_be_stopped_between_tasks_and_reports_each_result(registry: DomainRegistry) -> None:
    checker = GoldChecker.for_name(registry, "retail")
    seen: list[GoldCheck] = []
    checks = checker.run(list(checker.domain.tasks().values()), seen.append, cancelled=lambda: len(seen) >= 3)
    assert [c.task_id for c in checks] == [c.task_id for c in seen] == ["0", "1", "2"]


def test_user_tools_task_cannot_reach_one(registry: DomainRegistry) -> None:
    """Either side of the trade-off loses: dismissing breaks DB, not dismissing breaks ENV_ASSERTION."""
    from tau_tui.evaluate import evaluate
    from tests.evaluate.support import replayed

    task = registry.get("mock").tasks()["update_task_with_user_tools"].model_dump(mode="json", exclude_none=True)
    update: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}
            ],
        },
        {"role": "tool", "id": "c1", "content": "{}"},
    ]
    dismiss: list[dict[str, Any]] = [
        {
            "role": "user",
            "tool_calls": [
                {
                    "id": "u1",
                    "name": "dismiss_notification",
                    "requestor": "user",
                    "arguments": {"notification_id": "notif_1"},
                }
            ],
        },
        {"role": "tool", "id": "u1", "requestor": "user", "content": "Notification notif_1 dismissed"},
    ]
    plain = evaluate(replayed(registry, update, task))
    dismissed = evaluate(replayed(registry, update + dismiss, task))
    assert plain.breakdown == {"DB": 1.0, "ACTION": 1.0, "ENV_ASSERTION": 0.0}
    assert dismissed.breakdown == {"DB": 0.0, "ACTION": 1.0, "ENV_ASSERTION": 1.0}
