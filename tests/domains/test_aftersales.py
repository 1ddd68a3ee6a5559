"""The aftersales domain (ours): data in its own folder, tools, the ledger, the discoverable tool, tasks, gold 1.0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from domains.aftersales import AftersalesDomain
from tau_tui.domains import DomainRegistry
from tau_tui.env import ToolType
from tau_tui.model.tasks import StructuredInstructions
from tau_tui.rollout.participants import agent_brief
from tau_tui.rollout.scripted import StepAgent
from tests.conftest import ROOT
from tests.episodes.support import gold_rewards, needs_something_done, scored_episode
from tests.helpers import criteria_of, loaded_as

if TYPE_CHECKING:
    from tau_tui.env.environment import Environment

PRISTINE_HASH = "e28bc1a2ef0a9bf82ec74f22d2876f1baf343c5e40310432d78743e18c8afe24"


@pytest.fixture(scope="module")
def registry() -> DomainRegistry:
    return DomainRegistry(None, use_tau2=False)


@pytest.fixture(scope="module")
def domain(registry: DomainRegistry) -> AftersalesDomain:
    return loaded_as(registry.get("aftersales"), AftersalesDomain)


@pytest.fixture
def env(domain: AftersalesDomain) -> Environment:
    return domain.new_environment()


def call(env: Environment, name: str, **arguments: Any) -> Any:
    return env.make_tool_call(name, arguments=arguments)


# --- data and tasks ------------------------------------------------------------------------------


def test_the_domain_reads_its_own_folder_and_needs_no_tau2_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "nothing-here"))
    domain = loaded_as(DomainRegistry(tmp_path / "nor-here", use_tau2=False).get("aftersales"), AftersalesDomain)
    assert type(domain).uses_tau2_data is False
    assert domain.data_dir == ROOT / "domains" / "aftersales" / "data"
    env = domain.new_environment()
    assert env.db_hash() == PRISTINE_HASH  # the fixed snapshot
    assert env.policy.startswith("# Larkfield Home") and "250.00" in env.policy
    assert sorted(domain.documents()) == ["KB-101", "KB-120", "KB-150", "KB-205", "KB-310", "KB-402"]
    assert env.user is None
    with pytest.raises(ValueError, match="solo"):
        domain.new_environment(solo=True)


def test_tasks_have_full_user_scenarios(domain: AftersalesDomain) -> None:
    tasks = domain.tasks()
    assert len(tasks) >= 12
    for task in tasks.values():
        scenario = task.user_scenario
        assert scenario is not None
        assert scenario.persona and isinstance(scenario.instructions, StructuredInstructions), task.id
        instructions = scenario.instructions
        for part in (
            instructions.reason_for_call,
            instructions.known_info,
            instructions.unknown_info,
            instructions.task_instructions,
        ):
            assert part and len(part) > 20, task.id
        assert task.description is not None
        assert instructions.domain == "aftersales" and task.description.purpose


def test_tasks_exercise_every_kind_of_check(domain: AftersalesDomain) -> None:
    tasks = list(domain.tasks().values())
    bases = [set(criteria_of(t).reward_basis) for t in tasks]
    for kind in ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"):
        assert sum(kind in b for b in bases) >= 4, kind
    assert sum(bool(criteria_of(t).env_assertions) for t in tasks) >= 10
    ledger_checks = [
        a
        for t in tasks
        for a in criteria_of(t).env_assertions or []
        if a.func_name in ("assert_ledger_count", "assert_new_ledger_entries")
    ]
    assert len(ledger_checks) >= 12  # the evaluator counts the ledger's side effects
    uses_hidden = [t.id for t in tasks if any(a.name == "issue_goodwill_credit" for a in t.expected_actions)]
    assert len(uses_hidden) == 2


def test_gold_agent_scores_one_on_every_task(
    registry: DomainRegistry, domain: AftersalesDomain, tmp_path: Path
) -> None:
    rewards = gold_rewards(registry, "aftersales", tmp_path / "gold.json")
    assert set(rewards) == set(domain.tasks())
    assert rewards == {task_id: ("user_stop", 1.0) for task_id in domain.tasks()}


def test_the_checks_bite_an_agent_that_does_nothing(domain: AftersalesDomain) -> None:
    """Doing nothing fails every task that needs an action or a message, and passes the ones that need neither."""
    env = domain.new_environment()
    writes = lambda name: env.mutates(name)  # noqa: E731
    for task in domain.tasks().values():
        _, reward = scored_episode(domain, task, StepAgent([]))
        assert reward == (0.0 if needs_something_done(task, writes) else 1.0), task.id


def test_breaking_the_authorisation_limit_fails_db_and_ledger(domain: AftersalesDomain) -> None:
    """Owen's 449.00 refund must go to a team lead; issuing it directly is a run worth explaining."""
    task = domain.tasks()["large_refund_needs_approval"]
    agent = StepAgent(
        [
            ("find_customer_by_email", {"email": "owen.parry@example.com"}),
            ("list_returns", {"customer_id": "cust_owen_parry"}),
            ("issue_refund", {"return_id": "RMA-2006"}),
            "Your refund of 449.00 is on its way. Your approval reference is APR-3001.",
        ]
    )
    sim, reward = scored_episode(domain, task, agent)
    info = sim.reward_info
    assert info is not None
    assert info.db_check is not None
    assert reward == 0.0 and info.db_check.db_match is False
    assert info.env_assertions is not None
    assert [a["met"] for a in info.env_assertions] == [False, False]  # a refund posted; no approval pending


# --- tools ------------------------------------------------------------------------------------------


def test_identity_look_ups(env: Environment) -> None:
    assert call(env, "find_customer_by_email", email="  Amelia.Hart@Example.com ") == "cust_amelia_hart"
    assert call(env, "find_customer_by_name", full_name="hannah  lee", postcode="ox41hu") == "cust_hannah_lee"
    with pytest.raises(ValueError, match="No customer"):
        call(env, "find_customer_by_name", full_name="Hannah Lee", postcode="OX4 1HA")


def test_refunds_follow_the_quality_check(env: Environment) -> None:
    passed = call(env, "issue_refund", return_id="RMA-2001")
    assert passed["amount"] == 74.5 and passed["payment_method_id"] == "pm_visa_4417"
    incomplete = call(env, "issue_refund", return_id="RMA-2004")
    assert incomplete["amount"] == 121.0
    credit = call(env, "issue_refund", return_id="RMA-2002", method="store_credit")
    assert env.agent is not None
    assert env.agent.db is not None
    assert credit["amount"] == 55.05 and env.agent.db.customers["cust_ines_silva"]["store_credit"] == 55.05
    ledger = [(e["kind"], e["amount"]) for e in env.agent.db.ledger.values() if e["posted_on"] == "2025-03-14"]
    assert ledger == [("refund", 74.5), ("refund", 121.0), ("store_credit", 60.0), ("return_shipping_fee", -4.95)]
    for return_id, problem in [
        ("RMA-2001", "already been refunded"),
        ("RMA-2003", "failed \\(damage\\)"),
        ("RMA-2005", "not finished"),
        ("RMA-2008", "not arrived"),
    ]:
        with pytest.raises(ValueError, match=problem):
            call(env, "issue_refund", return_id=return_id)


def test_approvals_hold_the_refund(env: Environment) -> None:
    approval = call(env, "request_refund_approval", return_id="RMA-2006")
    assert approval == {
        "approval_id": "APR-3001",
        "return_id": "RMA-2006",
        "amount": 449.0,
        "method": "original_payment",
        "status": "pending",
        "requested_on": "2025-03-14",
    }
    with pytest.raises(ValueError, match="waiting for refund approval APR-3001"):
        call(env, "issue_refund", return_id="RMA-2006")
    assert env.agent is not None and env.agent.db is not None
    assert not [e for e in env.agent.db.ledger.values() if e["customer_id"] == "cust_owen_parry"]


def test_cancellations_and_returns(env: Environment) -> None:
    cancelled = call(env, "cancel_order", order_id="LH-10452", reason="found_better_price")
    assert cancelled["status"] == "cancelled" and cancelled["cancellation_reason"] == "found_better_price"
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.ledger["LG-00004"]["amount"] == 169.95
    with pytest.raises(ValueError, match="only orders still processing"):
        call(env, "cancel_order", order_id="LH-10448", reason="no_longer_needed")
    with pytest.raises(ValueError, match="Unknown cancellation reason"):
        call(env, "cancel_order", order_id="LH-10448", reason="changed my mind")
    opened = call(env, "open_return", order_id="LH-10426", line_ids=["L1"], reason="faulty")
    assert opened["return_id"] == "RMA-2009" and opened["lines"] == [{"line_id": "L1", "quantity": 1}]
    with pytest.raises(ValueError, match="already in a return"):
        call(env, "open_return", order_id="LH-10426", line_ids=["L1"], reason="faulty")
    with pytest.raises(ValueError, match="only delivered orders"):
        call(env, "open_return", order_id="LH-10452", line_ids=["L1"], reason="faulty")


def test_the_goodwill_tool_is_hidden_until_kb_205_is_read(domain: AftersalesDomain, env: Environment) -> None:
    task = domain.tasks()["goodwill_for_late_delivery"]
    listed = agent_brief(task, env).tool_names
    assert "issue_goodwill_credit" not in listed and "read_document" in listed
    assert env.agent is not None
    spec = env.agent.spec("issue_goodwill_credit")
    assert spec.discoverable and spec.type is ToolType.WRITE
    article = call(env, "read_document", doc_id="kb-205")
    assert "`issue_goodwill_credit`" in article
    others = [d.text for doc_id, d in domain.documents().items() if doc_id != "KB-205"]
    assert not any("issue_goodwill_credit" in text for text in others) and "issue_goodwill_credit" not in env.policy
    found = call(env, "search_knowledge_base", query="late delivery compensation goodwill")
    assert found[0]["doc_id"] == "KB-205" and "issue_goodwill_credit" not in json.dumps(found)
    with pytest.raises(ValueError, match="need a manager"):
        call(
            env,
            "issue_goodwill_credit",
            customer_id="cust_rohan_mehta",
            amount=75,
            reason="late_delivery",
            order_id="LH-10433",
        )
    with pytest.raises(ValueError, match="does not belong"):
        call(
            env,
            "issue_goodwill_credit",
            customer_id="cust_rohan_mehta",
            amount=20,
            reason="late_delivery",
            order_id="LH-10402",
        )


def test_ledger_assertions_count_side_effects(env: Environment) -> None:
    assert env.agent is not None
    assert env.agent.run_function("assert_new_ledger_entries", customer_id="cust_amelia_hart", expected=0)
    call(env, "issue_refund", return_id="RMA-2001")
    call(env, "issue_refund", return_id="RMA-2007")
    assert env.agent.run_function("assert_ledger_count", customer_id="cust_amelia_hart", kind="refund", expected=2)
    assert not env.agent.run_function("assert_ledger_count", customer_id="cust_amelia_hart", kind="refund", expected=1)
    assert env.agent.run_function("assert_new_ledger_entries", customer_id="cust_amelia_hart", expected=2)
