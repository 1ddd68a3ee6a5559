"""Environment core: tool declaration, calling, JSON-ification, hashing, isolation."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from tau_tui.env import (
    Collection,
    DBSchema,
    Environment,
    Store,
    Toolkit,
    ToolType,
    as_model,
    canonical_json,
    helper,
    make_store,
    state_hash,
    to_json_str,
    tool,
)
from tau_tui.env.jsonify import ModelDict
from tau_tui.model import ToolCall

if TYPE_CHECKING:
    from tau_tui.model.messages import ToolMessage


class Item(BaseModel):
    item_id: str
    price: float
    tags: list[str] = []


class Shop(BaseModel):
    items: dict[str, Item]
    counter: int = 0


SCHEMA = DBSchema(Shop)


class ShopTools(Toolkit):
    cache: dict[str, Any]

    def __init__(self, db: Store | None) -> None:
        super().__init__(db)
        self.cache = {}
        self.calls_made = 0

    @tool(ToolType.READ)
    def get_item(self, item_id: str) -> ModelDict:
        """Look up an item."""
        self.calls_made += 1
        if item_id not in self.cache:
            assert self.db is not None
            self.cache[item_id] = self.db.items[item_id]
        return as_model(self.cache[item_id])

    @tool(ToolType.WRITE)
    def set_price(self, item_id: str, price: float) -> ModelDict:
        """Change a price."""
        assert self.db is not None
        item = self.db.edit("items", item_id)
        item["price"] = price
        return as_model(item)

    @tool(ToolType.WRITE)
    def add_item(self, item_id: str, price: float) -> ModelDict:
        """Add an item."""
        item = Item(item_id=item_id, price=price).model_dump()
        assert self.db is not None
        self.db.set("items", item_id, item)
        return as_model(item)

    @tool(ToolType.GENERIC)
    def echo(self, value: object) -> object:
        """Return what it was given."""
        return value

    @tool(ToolType.WRITE, mutates_state=False)
    def notify(self, text: str) -> str:
        """A write-typed tool that changes nothing."""
        return "sent"

    @tool(ToolType.READ, mutates_state=True)
    def touch(self) -> str:
        """A read-typed tool declared as mutating."""
        return "ok"

    @helper
    def assert_price(self, item_id: str, price: float) -> bool:
        assert self.db is not None
        return bool(self.db.items[item_id]["price"] == price)

    def _secret(self) -> str:
        return "never"

    def helper_not_declared(self) -> str:
        return "never"


PRISTINE = SCHEMA.tree({"items": {"a": {"item_id": "a", "price": 1}, "b": {"item_id": "b", "price": 2.5}}})


def new_env() -> Environment:
    return Environment("shop", "policy", ShopTools(make_store(SCHEMA, PRISTINE)))


def run(env: Environment, name: str, arguments: object, call_id: str = "x") -> ToolMessage:
    return env.call(ToolCall(id=call_id, name=name, arguments=arguments))


def test_decorator_defaults_and_overrides() -> None:
    specs = ShopTools.declared_tools
    assert specs["set_price"].mutates_state is True
    assert specs["get_item"].mutates_state is False
    assert specs["echo"].type is ToolType.GENERIC and specs["echo"].mutates_state is False
    assert specs["notify"].type is ToolType.WRITE and specs["notify"].mutates_state is False
    assert specs["touch"].mutates_state is True


@pytest.mark.parametrize(
    "name",
    [
        "_secret",
        "__init__",
        "__class__",
        "helper_not_declared",
        "assert_price",
        "db",
        "use_tool",
        "cache",
        "",
        "run_function",
    ],
)
def test_only_declared_tools_are_callable(name: str) -> None:
    env = new_env()
    message = run(env, name, {})
    assert message.error is True
    assert message.content == f"Error: Tool '{name}' not found."
    assert not env.has_tool(name)


def test_helpers_run_for_task_definitions_only() -> None:
    from tau_tui.model import EnvAssertion

    env = new_env()
    assert env.run_assertion(
        EnvAssertion(env_type="assistant", func_name="assert_price", arguments={"item_id": "a", "price": 1.0})
    )
    with pytest.raises(ValueError):
        env.run_assertion(EnvAssertion(env_type="assistant", func_name="_secret", arguments={}))


def test_model_validation_coerces_like_tau2() -> None:
    # price declared float: the pristine int 1 becomes 1.0, as tau2's model_dump would give
    assert PRISTINE["items"]["a"]["price"] == 1.0 and isinstance(PRISTINE["items"]["a"]["price"], float)
    assert isinstance(PRISTINE["items"], Collection)


@pytest.mark.parametrize(
    "value, text",
    [
        ("s", "s"),
        (5, '"5"'),
        (2.5, '"2.5"'),
        (True, '"True"'),
        (None, "null"),
        ([1, "a"], '["1", "a"]'),
        ((1, 2), '["1", "2"]'),
        ({"a": 1, "b": [2.0, None]}, '{"a": "1", "b": ["2.0", null]}'),
        (date(2025, 2, 25), '"2025-02-25"'),
        ([datetime(2025, 2, 25, 12, 8)], '["2025-02-25T12:08:00"]'),
        (as_model({"n": 1, "when": datetime(2025, 2, 25, 12, 8)}), '{"n": 1, "when": "2025-02-25 12:08:00"}'),
        ([as_model({"n": 1})], '[{"n": 1}]'),
        (Item(item_id="z", price=3), '{"item_id": "z", "price": 3.0, "tags": []}'),
        ({"k": "\u00e9"}, '{"k": "\\u00e9"}'),
    ],
)
def test_json_ification_matches_tau2(value: object, text: str) -> None:
    assert to_json_str(value) == text


def test_unsupported_result_type_raises() -> None:
    from tau_tui.env.jsonify import UnsupportedResult

    with pytest.raises(UnsupportedResult):
        to_json_str({1, 2})


def test_errors_become_error_messages_with_python_wording() -> None:
    env = new_env()
    missing = run(env, "set_price", {"item_id": "a"})
    assert (
        missing.error
        and missing.content == "Error: ShopTools.set_price() missing 1 required positional argument: 'price'"
    )
    unknown_key = run(env, "set_price", {"item_id": "nope", "price": 1})
    assert unknown_key.error and unknown_key.content == "Error: 'nope'"
    extra = run(env, "get_item", {"item_id": "a", "zzz": 1})
    assert extra.content == "Error: ShopTools.get_item() got an unexpected keyword argument 'zzz'"
    not_object = run(env, "get_item", ["a"])
    assert not_object.error and "arguments must be an object" in not_object.content


def test_call_copies_id_and_requestor_and_result_text() -> None:
    env = new_env()
    message = env.call(ToolCall(id="abc", name="set_price", arguments={"item_id": "b", "price": 7}))
    assert (message.id, message.requestor, message.error) == ("abc", "assistant", False)
    assert json.loads(message.content) == {"item_id": "b", "price": 7, "tags": []}


def test_hash_is_tau2_canonical_sha256() -> None:
    plain: dict[str, Any] = {
        "items": {"a": {"item_id": "a", "price": 1.0, "tags": []}, "b": {"item_id": "b", "price": 2.5, "tags": []}},
        "counter": 0,
    }
    expected = hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()
    assert state_hash(PRISTINE) == expected
    env = new_env()
    run(env, "set_price", {"item_id": "a", "price": 9.5})
    run(env, "add_item", {"item_id": "0first", "price": 4})
    plain["items"]["a"]["price"] = 9.5
    plain["items"]["0first"] = {"item_id": "0first", "price": 4.0, "tags": []}
    assert env.agent is not None
    assert env.agent.db is not None
    assert canonical_json(env.agent.db.root) == json.dumps(plain, sort_keys=True, default=str)
    assert env.db_hash() == hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()


def test_hash_of_dates_enums_and_unicode_follows_default_str() -> None:
    from enum import Enum

    class Color(str, Enum):
        RED = "red"

    tree = {
        "when": datetime(2025, 2, 25, 12, 8),
        "day": date(2025, 1, 2),
        "color": Color.RED,
        "keyed": {Color.RED: 1.5},
        "name": "Zoë",
    }
    expected = json.dumps(tree, sort_keys=True, default=str)
    assert '"2025-02-25 12:08:00"' in expected and '"red"' in expected
    assert state_hash(tree) == hashlib.sha256(expected.encode()).hexdigest()


def test_returned_objects_are_copies() -> None:
    env = new_env()
    result = env.make_tool_call("get_item", "assistant", {"item_id": "a"})
    result["price"] = 1000
    result["tags"].append("mutated")
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.items["a"]["price"] == 1.0 and env.agent.db.items["a"]["tags"] == []
    written = env.make_tool_call("set_price", "assistant", {"item_id": "b", "price": 3})
    written["price"] = -1
    assert env.agent.db.items["b"]["price"] == 3
    assert PRISTINE["items"]["b"]["price"] == 2.5


def test_episode_isolation_a_then_b_equals_b_alone() -> None:
    def episode_a(env: Environment) -> None:
        run(env, "get_item", {"item_id": "a"})
        run(env, "set_price", {"item_id": "a", "price": 50})
        run(env, "add_item", {"item_id": "c", "price": 1})

    def episode_b(env: Environment) -> tuple[list[object], str | None, int]:
        out = [
            run(env, "get_item", {"item_id": "a"}).content,
            run(env, "add_item", {"item_id": "d", "price": 2}).content,
        ]
        assert isinstance(env.agent, ShopTools)
        return out, env.db_hash(), env.agent.calls_made

    alone = episode_b(new_env())
    first = new_env()
    episode_a(first)
    after_a = episode_b(new_env())
    assert after_a == alone
    assert state_hash(PRISTINE) == state_hash(
        SCHEMA.tree({"items": {"a": {"item_id": "a", "price": 1}, "b": {"item_id": "b", "price": 2.5}}})
    )


def test_snapshots_never_change_after_freeze() -> None:
    env = new_env()
    before = env.freeze()
    h0 = before.agent_hash()
    run(env, "set_price", {"item_id": "a", "price": 2})
    middle = env.freeze()
    run(env, "set_price", {"item_id": "a", "price": 3})
    after = env.freeze()
    assert before.agent_hash() == h0
    assert middle.agent["items"]["a"]["price"] == 2 and after.agent["items"]["a"]["price"] == 3
    # untouched entities are shared, not copied
    assert middle.agent["items"]["b"] is before.agent["items"]["b"] is PRISTINE["items"]["b"]


def test_store_write_paths() -> None:
    store = Store({"top": {"list": [1, 2], "map": {"k": {"v": 1}}}}, kind="Thing")
    root0 = store.freeze()
    store.edit("top", "map", "k")["v"] = 2
    store.append("top", "list", 3)
    store.set("top", "new", {"x": 1})
    store.delete("top", "list")
    assert root0 == {"top": {"list": [1, 2], "map": {"k": {"v": 1}}}}
    assert store.root == {"top": {"map": {"k": {"v": 2}}, "new": {"x": 1}}}
    with pytest.raises(AttributeError, match="'Thing' object has no attribute 'nope'"):
        _ = store.nope


def test_an_argument_called_name_reaches_the_tool() -> None:
    class Named(Toolkit):
        @tool(ToolType.READ)
        def greet(self, name: str) -> str:
            """Greet someone."""
            return f"hi {name}"

        @helper
        def set_name(self, name: str) -> str:
            return name

    kit = Named()
    assert kit.use_tool("greet", name="Ada") == "hi Ada"
    assert kit.run_function("set_name", name="Bo") == "Bo"
    env = Environment("n", "p", Named())
    message = env.call(ToolCall(id="1", name="greet", arguments={"name": "x", "tool_name": 1}))
    assert message.content.endswith("Named.greet() got an unexpected keyword argument 'tool_name'")


def test_canonical_bytes_splice_matches_a_full_dump_for_any_edit_mix() -> None:
    import random

    rng = random.Random(7)
    base = {f"k{i:03d}": {"v": i, "s": "x" * (i % 5)} for i in range(0, 200, 2)}
    schema_tree = {"things": Collection(base), "meta": {"n": 1}}
    for trial in range(60):
        store = Store(schema_tree)
        plain = {k: dict(v) for k, v in base.items()}
        for _ in range(rng.randint(0, 8)):
            op = rng.random()
            key = f"k{rng.randrange(0, 210):03d}"
            if op < 0.4 and key in plain:
                store.edit("things", key)["v"] = -1
                plain[key]["v"] = -1
            elif op < 0.7:
                store.set("things", key, {"v": trial})
                plain[key] = {"v": trial}
            elif key in plain:
                store.delete("things", key)
                del plain[key]
        expected = json.dumps({"things": plain, "meta": {"n": 1}}, sort_keys=True, default=str)
        assert canonical_json(store.root) == expected
        assert state_hash(store.root) == hashlib.sha256(expected.encode()).hexdigest()


def test_a_patch_for_a_side_without_a_db_names_the_side() -> None:
    from tau_tui.model.tasks import InitializationData

    env = Environment("shop", "policy", ShopTools(make_store(SCHEMA, PRISTINE)), user=ShopTools(None))
    with pytest.raises(ValueError, match="No user DB in this domain to patch"):
        env.apply_initialization_data(InitializationData(user_data={"counter": 1}))
    env.apply_initialization_data(InitializationData(agent_data={"counter": 2}))
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.root["counter"] == 2
