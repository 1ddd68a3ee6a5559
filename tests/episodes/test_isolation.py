"""Episode isolation, as four counterexamples.

Each test states a property, shows that our implementation has it, and shows
that a deliberately broken variant (built in the test) does not — so the
test can fail, and would catch that bug.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from tau_tui.domains import read_data_file
from tau_tui.env import AttemptCounter, Environment, EpisodeTools, FaultPlan, LoggedCall, Toolkit, make_store
from tau_tui.model.messages import ToolCall, ToolMessage
from tau_tui.model.tasks import Task
from tau_tui.rollout.scripted import StepAgent
from tests.episodes.conftest import run_episode, tool_results, with_plan

if TYPE_CHECKING:
    from tau_tui.env.domain import Domain

SOUTH = {"warehouse": "south"}


# --- 1. a lookup cache never carries one task's stock into another ------------------------------------


def recount_task(base: Task) -> Task:
    """Task A: this morning's recount left Bristol with 12 valves on hand, 10 of them reserved."""
    data = base.model_dump(mode="json")
    data["id"] = "after_recount"
    data["initial_state"] = {
        "initialization_data": {
            "agent_data": {"stock": {"TRV-15-WH": {"levels": {"south": {"on_hand": 12, "reserved": 10}}}}}
        }
    }
    return Task.model_validate(data)


def seen(warehouse: Domain, kit_class: type[Toolkit], task: Task) -> list[str]:
    """What one episode's agent is told by the cached overview and the live look-up."""
    env = warehouse.new_environment()
    assert env.agent is not None
    env.agent = kit_class(env.agent.db)
    agent = StepAgent(
        [("check_availability", {"sku": "TRV-15-WH"}), ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "south"})]
    )
    sim, _ = run_episode(env, task, agent)
    return [m.content for m in tool_results(sim)]


def isolated(warehouse: Domain, kit_class: type[Toolkit], reset: Callable[[], None]) -> bool:
    """A then B equals a fresh B, and B then A equals a fresh A."""
    base = warehouse.tasks()["quote_available_stock"]
    task_b = with_plan(base, None)
    task_a = recount_task(task_b)
    reset()
    fresh_a = seen(warehouse, kit_class, task_a)
    reset()
    fresh_b = seen(warehouse, kit_class, task_b)
    reset()
    a_then_b = [seen(warehouse, kit_class, task_a), seen(warehouse, kit_class, task_b)]
    reset()
    b_then_a = [seen(warehouse, kit_class, task_b), seen(warehouse, kit_class, task_a)]
    return fresh_a != fresh_b and a_then_b == [fresh_a, fresh_b] and b_then_a == [fresh_b, fresh_a]


def test_a_lookup_cache_never_carries_one_tasks_stock_into_another(warehouse: Domain) -> None:
    kit = warehouse.new_environment().agent
    assert kit is not None
    kit_class = type(kit)

    # The domain's toolkit class is only known at run time: mypy cannot take a variable as a base class.
    class SharedCacheTools(kit_class):  # type: ignore[misc, valid-type]
        """The bug: one availability cache for every environment (a class attribute)."""

        shared: ClassVar[dict[str, Any]] = {}

        def _cache(self) -> dict[str, Any]:
            return self.shared

    assert isolated(warehouse, kit_class, reset=lambda: None)
    assert not isolated(warehouse, SharedCacheTools, reset=SharedCacheTools.shared.clear)


def test_the_cache_follows_writes_and_restored_snapshots_within_an_episode(warehouse: Domain) -> None:
    env = warehouse.new_environment()
    start = env.freeze()

    def available() -> Any:
        return env.make_tool_call("check_availability", arguments={"sku": "TRV-15-WH"})["available"]

    assert available() == {"north": 38, "south": 50}
    env.make_tool_call(
        "allocate_line", arguments={"order_id": "SO-5002", "line_no": 1, "warehouse": "south", "quantity": 40}
    )
    assert available() == {"north": 38, "south": 10}
    env.make_tool_call(
        "allocate_line", arguments={"order_id": "SO-5002", "line_no": 1, "warehouse": "north", "quantity": 5}
    )  # same generation of the store: same objects
    assert available() == {"north": 33, "south": 10}
    env.restore(start)
    assert available() == {"north": 38, "south": 50}


# --- 2. a returned object mutated by the caller changes neither the environment nor its log ------------


def private_environment(warehouse: Domain, environment_class: type[Environment] = Environment) -> Environment:
    """An environment over its own copy of the data (a broken variant must not spoil the shared one)."""
    env = warehouse.new_environment()
    assert env.agent is not None
    assert env.agent.db is not None
    schema = env.agent.db.schema
    assert warehouse.data_dir is not None
    tree = schema.tree(read_data_file(warehouse.data_dir / "db.json"))
    return environment_class("warehouse", env.policy, type(env.agent)(make_store(schema, tree)))


def state_of(env: Environment) -> str:
    assert env.agent is not None
    assert env.agent.db is not None
    return json.dumps(env.agent.db.plain(), sort_keys=True, default=str)


def mutate_result(env: Environment) -> None:
    order = env.make_tool_call("get_order", arguments={"order_id": "SO-5006"})
    order["status"] = "shipped"
    order["lines"][0]["allocations"][0]["quantity"] = 999
    order["lines"].pop()


class NoCopyEnvironment(Environment):
    """The bug: tool results are handed out as the toolkit returned them, sharing the DB's objects."""

    def make_tool_call(self, name: str, requestor: str = "assistant", arguments: Any = None) -> Any:
        assert self.agent is not None
        return self.agent.use_tool(name, **(arguments or {}))


class SharingLogTools(EpisodeTools):
    """The bug: the log keeps the caller's own objects."""

    def call(self, tool_call: ToolCall) -> ToolMessage:
        message = self.env.call(tool_call)
        # The log entry holds the ToolMessage itself where a str copy belongs: that is the bug shown.
        entry = LoggedCall(
            len(self.log),
            tool_call.id,
            tool_call.name,
            tool_call.requestor,
            tool_call.arguments,
            1,
            message,  # type: ignore[arg-type]
            False,
        )
        self.log.append(entry)
        return message


def log_of(tools: EpisodeTools) -> str:
    return repr([(e.tool, repr(e.arguments), repr(e.content)) for e in tools.log])


def log_survives(tools: EpisodeTools) -> bool:
    call = ToolCall(id="c1", name="get_order", arguments={"order_id": "SO-5006"})
    message = tools.call(call)
    before = log_of(tools)
    call.arguments["order_id"] = "SO-0000"
    message.content = "tampered"
    return log_of(tools) == before


def test_a_returned_object_mutated_by_the_caller_changes_neither_the_environment_nor_its_log(warehouse: Domain) -> None:
    env = private_environment(warehouse)
    before, hash_before = state_of(env), env.db_hash()
    mutate_result(env)
    assert state_of(env) == before and env.db_hash() == hash_before
    assert log_survives(EpisodeTools(private_environment(warehouse)))

    broken = private_environment(warehouse, NoCopyEnvironment)
    before = state_of(broken)
    mutate_result(broken)
    assert state_of(broken) != before  # the caller just edited the DB
    assert not log_survives(SharingLogTools(private_environment(warehouse)))


# --- 3. the fault on an operation is the same whatever the order of the calls --------------------------

PLAN = {
    "seed": 3,
    "faults": [
        {"tool": "lookup_stock", "where": SOUTH, "attempt": 1, "fault": "timeout"},
        {"tool": "lookup_stock", "attempt": None, "fault": "transient_error", "rate": 0.4},
    ],
}
OPERATIONS = [
    ("CP-15-3M", "south"),
    ("TRV-15-WH", "south"),
    ("CP-15-3M", "north"),
    ("PTFE-12", "north"),
    ("CP-15-3M", "south"),
    ("BLR-CMB-30", "north"),
    ("TRV-15-WH", "north"),
    ("PTFE-12", "south"),
]


class StreamFaults(EpisodeTools):
    """The bug: rate-based faults drawn from one random stream, one draw per call, in call order."""

    def __init__(self, env: Environment, plan: FaultPlan) -> None:
        super().__init__(env, plan)
        self.rng = random.Random(plan.seed)

    def call(self, tool_call: ToolCall) -> ToolMessage:
        attempt = self.attempts.next(tool_call.name, tool_call.arguments)
        if self.rng.random() < 0.4 or attempt == 1 and tool_call.arguments.get("warehouse") == "south":
            return ToolMessage(id=tool_call.id, content="Error: fault", error=True)
        return self.env.call(tool_call)


def faults_by_operation(
    warehouse: Domain, tools_class: Callable[[Environment, FaultPlan], EpisodeTools], order: list[tuple[str, str]]
) -> dict[tuple[str, str, int], bool]:
    tools = tools_class(warehouse.new_environment(), FaultPlan.parse(PLAN))
    counts: dict[tuple[str, str], int] = {}
    out: dict[tuple[str, str, int], bool] = {}
    for i, (sku, where) in enumerate(order):
        counts[(sku, where)] = counts.get((sku, where), 0) + 1
        message = tools.call(ToolCall(id=f"c{i}", name="lookup_stock", arguments={"sku": sku, "warehouse": where}))
        out[(sku, where, counts[(sku, where)])] = bool(message.error)
    return out


def test_the_fault_on_an_operation_stays_the_same_under_another_call_order(warehouse: Domain) -> None:
    shuffled = list(reversed(OPERATIONS))
    ours = faults_by_operation(warehouse, EpisodeTools, OPERATIONS)
    assert ours == faults_by_operation(warehouse, EpisodeTools, shuffled)
    assert ours[("CP-15-3M", "south", 1)] and ours[("TRV-15-WH", "south", 1)]  # the first look-up in south fails
    assert not all(ours.values()) and sum(ours.values()) > 2

    broken = faults_by_operation(warehouse, StreamFaults, OPERATIONS)
    assert broken != faults_by_operation(warehouse, StreamFaults, shuffled)


# --- 4. a new episode zeroes the attempt counters --------------------------------------------------------


class CarriedCounters(EpisodeTools):
    """The bug: attempt counters kept across episodes (one counter for every instance)."""

    counter: ClassVar[AttemptCounter] = AttemptCounter()

    def __init__(self, env: Environment, plan: FaultPlan | None = None) -> None:
        super().__init__(env, plan)
        self.attempts = self.counter


def first_lookup_faults(
    warehouse: Domain, tools_class: Callable[[Environment, FaultPlan | None], EpisodeTools] | None
) -> list[bool]:
    """Two episodes of the same task in a row: does the first look-up of each meet the planned timeout?"""
    task = warehouse.tasks()["quote_available_stock"]  # its plan: the first look-up in south fails
    out: list[bool] = []
    for _ in range(2):
        env = warehouse.new_environment()
        tools = None if tools_class is None else tools_class(env, FaultPlan.of_task(task))
        agent = StepAgent([("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "south"})])
        sim, _ = run_episode(env, task, agent, tools=tools)
        out.append(tool_results(sim)[0].error)
    return out


def test_a_new_episode_zeroes_the_attempt_counters(warehouse: Domain) -> None:
    assert first_lookup_faults(warehouse, None) == [True, True]  # the orchestrator's own EpisodeTools
    assert first_lookup_faults(warehouse, EpisodeTools) == [True, True]
    CarriedCounters.counter.reset()
    assert first_lookup_faults(warehouse, CarriedCounters) == [True, False]  # attempt 2, then 3: no fault left
