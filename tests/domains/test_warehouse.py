"""The warehouse domain (ours): a fixed stock snapshot over two warehouses, a cached look-up, fault plans on south."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.domains import DomainRegistry
from tau_tui.env import FaultPlan
from tau_tui.model.tasks import StructuredInstructions
from tau_tui.rollout.scripted import Step, StepAgent
from tests.conftest import ROOT
from tests.episodes.support import gold_rewards, needs_something_done, scored_episode
from tests.helpers import criteria_of

if TYPE_CHECKING:
    from tau_tui.env.domain import Domain
    from tau_tui.env.environment import Environment

PRISTINE_HASH = "7308ebd7835ba48dce3a74217583c91a40c836f838f01f7866d5aca0c0695b35"


@pytest.fixture(scope="module")
def registry() -> DomainRegistry:
    return DomainRegistry(None, use_tau2=False)


@pytest.fixture(scope="module")
def domain(registry: DomainRegistry) -> Domain:
    return registry.get("warehouse")


@pytest.fixture
def env(domain: Domain) -> Environment:
    return domain.new_environment()


def call(env: Environment, name: str, **arguments: Any) -> Any:
    return env.make_tool_call(name, arguments=arguments)


def reserved(env: Environment, sku: str, warehouse: str) -> int:
    assert env.agent is not None
    assert env.agent.db is not None
    count: int = env.agent.db.stock[sku]["levels"][warehouse]["reserved"]
    return count


# --- data and tasks ------------------------------------------------------------------------------


def test_the_domain_reads_its_own_folder_and_needs_no_tau2_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "nothing-here"))
    domain = DomainRegistry(tmp_path / "nor-here", use_tau2=False).get("warehouse")
    assert type(domain).uses_tau2_data is False
    assert domain.data_dir == ROOT / "domains" / "warehouse" / "data"
    env = domain.new_environment()
    assert env.db_hash() == PRISTINE_HASH
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.snapshot["taken_at"] == "2025-03-14T06:00:00"
    assert sorted(env.agent.db.warehouses) == ["north", "south"]


def test_reservations_in_the_snapshot_match_the_orders_holding_them(env: Environment) -> None:
    held: dict[tuple[str, str], int] = {}
    assert env.agent is not None
    assert env.agent.db is not None
    for order in env.agent.db.orders.values():
        for line in order["lines"]:
            for allocation in line["allocations"]:
                key = (line["sku"], allocation["warehouse"])
                held[key] = held.get(key, 0) + allocation["quantity"]
    for sku, record in env.agent.db.stock.items():
        for warehouse, level in record["levels"].items():
            assert level["reserved"] == held.get((sku, warehouse), 0), (sku, warehouse)


def test_tasks_have_full_user_scenarios_and_faults_only_in_south(domain: Domain) -> None:
    tasks = domain.tasks()
    assert len(tasks) >= 12
    with_plans = 0
    for task in tasks.values():
        assert task.user_scenario is not None
        instructions = task.user_scenario.instructions
        assert task.user_scenario.persona and isinstance(instructions, StructuredInstructions), task.id
        assert all(
            p and len(p) > 20
            for p in (
                instructions.reason_for_call,
                instructions.known_info,
                instructions.unknown_info,
                instructions.task_instructions,
            )
        )
        plan = FaultPlan.of_task(task)
        if plan is None:
            continue
        with_plans += 1
        for rule in plan.rules:
            if rule.fault.value in ("timeout", "transient_error"):
                where = dict(rule.where or ())
                assert where.get("warehouse") == '"south"' or '"warehouse": "south"' in (rule.arguments or ""), task.id
    assert with_plans >= 8
    bases = [set(criteria_of(t).reward_basis) for t in tasks.values()]
    for kind in ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"):
        assert sum(kind in b for b in bases) >= 4, kind


def test_gold_agent_scores_one_on_every_task(registry: DomainRegistry, domain: Domain, tmp_path: Path) -> None:
    rewards = gold_rewards(registry, "warehouse", tmp_path / "gold.json")
    assert rewards == {task_id: ("user_stop", 1.0) for task_id in domain.tasks()}


def test_the_checks_bite_an_agent_that_does_nothing(domain: Domain) -> None:
    env = domain.new_environment()
    writes = lambda name: env.mutates(name)  # noqa: E731
    for task in domain.tasks().values():
        _, reward = scored_episode(domain, task, StepAgent([]))
        assert reward == (0.0 if needs_something_done(task, writes) else 1.0), task.id


def test_an_agent_that_gives_up_on_a_fault_fails(domain: Domain) -> None:
    """The gold steps without retries: the allocation the south service turned away never happens."""
    task = domain.tasks()["south_times_out_twice"]
    steps: list[Step] = [(a.name, a.arguments) for a in task.expected_actions]
    _, patient = scored_episode(domain, task, StepAgent(steps, retry_faults=True))
    sim, hasty = scored_episode(domain, task, StepAgent(steps))
    assert patient == 1.0 and hasty == 0.0
    assert sim.reward_info is not None
    assert sim.reward_info.db_check is not None
    assert sim.reward_info.db_check.db_match is False


# --- tools ------------------------------------------------------------------------------------------


def test_lookups_and_the_availability_overview(env: Environment) -> None:
    assert call(env, "lookup_stock", sku="TRV-15-WH", warehouse="south") == {
        "sku": "TRV-15-WH",
        "warehouse": "south",
        "on_hand": 60,
        "reserved": 10,
        "available": 50,
        "safety_stock": 10,
    }
    overview = call(env, "check_availability", sku="RAD-600x1000")
    assert overview["available"] == {"north": 8, "south": 4}
    assert overview["in_transit"] == [
        {"transfer_id": "TR-7001", "to_warehouse": "south", "quantity": 10, "eta": "2025-03-17"}
    ]
    assert overview["next_delivery"] == {"warehouse": "south", "date": "2025-03-19", "quantity": 20}
    assert [p["sku"] for p in call(env, "search_products", query="copper pipe")] == ["CP-15-3M", "CP-22-3M"]
    with pytest.raises(ValueError, match="Unknown warehouse"):
        call(env, "lookup_stock", sku="TRV-15-WH", warehouse="east")


def test_allocation_backorder_release_and_status(env: Environment) -> None:
    part = call(env, "allocate_line", order_id="SO-5008", line_no=1, warehouse="north", quantity=4)
    assert part["status"] == "part_allocated" and reserved(env, "RAD-600x1000", "north") == 21
    done = call(env, "backorder_line", order_id="SO-5008", line_no=1, quantity=6)
    assert done["status"] == "backordered"
    with pytest.raises(ValueError, match="needs only 0 more"):
        call(env, "allocate_line", order_id="SO-5008", line_no=1, warehouse="south", quantity=1)
    with pytest.raises(ValueError, match="Only 38 unit"):
        call(env, "allocate_line", order_id="SO-5002", line_no=1, warehouse="north", quantity=39)
    moved = call(env, "release_allocation", order_id="SO-5010", line_no=1, warehouse="north")
    assert moved["status"] == "open" and reserved(env, "PF-15-ELB", "north") == 0
    cancelled = call(env, "cancel_order", order_id="SO-5006", reason="customer_request")
    assert cancelled["status"] == "cancelled" and reserved(env, "RAD-600x1000", "north") == 9
    with pytest.raises(ValueError, match="is cancelled"):
        call(env, "allocate_line", order_id="SO-5006", line_no=1, warehouse="north", quantity=1)


def test_substitution_and_transfers(env: Environment) -> None:
    with pytest.raises(ValueError, match="already has stock reserved"):
        call(env, "substitute_product", order_id="SO-5010", line_no=1, new_sku="CP-15-3M")
    order = call(env, "substitute_product", order_id="SO-5007", line_no=1, new_sku="FLX-15-300B")
    assert order["lines"][0]["sku"] == "FLX-15-300B"
    transfer = call(
        env,
        "create_transfer",
        sku="CP-22-3M",
        from_warehouse="north",
        to_warehouse="south",
        quantity=40,
        requested_by="NG-0417",
    )
    assert transfer["transfer_id"] == "TR-7002" and transfer["eta"] == "2025-03-18"
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.stock["CP-22-3M"]["levels"]["north"]["on_hand"] == 50
    assert call(env, "check_availability", sku="CP-22-3M")["in_transit"][0]["transfer_id"] == "TR-7002"
    with pytest.raises(ValueError, match="one warehouse to the other"):
        call(
            env,
            "create_transfer",
            sku="CP-22-3M",
            from_warehouse="south",
            to_warehouse="south",
            quantity=1,
            requested_by="NG-0417",
        )
