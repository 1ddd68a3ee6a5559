"""The retail domain agrees with tau2 1.0.1: data, tool outputs and errors, isolation, oracle.

Expected hashes and output texts below were produced by running tau2 1.0.1's own
retail toolkit on the pristine ``db.json`` (they are fixtures, not our output).
"""

from __future__ import annotations

import json
from types import MethodType
from typing import TYPE_CHECKING, Any

import pytest

from domains.retail.tools import RetailTools
from tau_tui.env import ToolType
from tau_tui.model.messages import ToolCall
from tests.evaluate.test_oracle_agreement import agreement
from tests.helpers import loaded_as

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.env.environment import Environment

PRISTINE_HASH = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"

# tau2's RetailTools: tool type and whether replay re-executes it.
TAU2_TOOLS = {
    "calculate": (ToolType.GENERIC, False),
    "cancel_pending_order": (ToolType.WRITE, True),
    "exchange_delivered_order_items": (ToolType.WRITE, True),
    "find_user_id_by_email": (ToolType.READ, False),
    "find_user_id_by_name_zip": (ToolType.READ, False),
    "get_item_details": (ToolType.READ, False),
    "get_order_details": (ToolType.READ, False),
    "get_product_details": (ToolType.READ, False),
    "get_user_details": (ToolType.READ, False),
    "list_all_product_types": (ToolType.READ, False),
    "modify_pending_order_address": (ToolType.WRITE, True),
    "modify_pending_order_items": (ToolType.WRITE, True),
    "modify_pending_order_payment": (ToolType.WRITE, True),
    "modify_user_address": (ToolType.WRITE, True),
    "return_delivered_order_items": (ToolType.WRITE, True),
    "transfer_to_human_agents": (ToolType.GENERIC, False),
}

# A pending order paid with a gift card (balance 35.0) holding a Smart Watch and a Backpack.
PENDING = "#W8955613"
PENDING_USER = "olivia_lopez_9494"
GIFT_CARD = "gift_card_6682391"


@pytest.fixture(scope="module")
def retail(registry: DomainRegistry) -> Domain:
    return registry.get("retail")


@pytest.fixture
def env(retail: Domain) -> Environment:
    return retail.new_environment()


def call(env: Environment, name: str, **arguments: Any) -> tuple[Any, bool]:
    message = env.call(ToolCall(id="c1", name=name, arguments=arguments))
    return message.content, message.error


def test_pristine_db_hash_is_tau2s(env: Environment) -> None:
    assert env.db_hash() == PRISTINE_HASH
    assert env.user_db_hash() is None
    assert env.user is None
    assert env.policy.startswith("# Retail agent policy")


def test_tool_types_and_mutating_flags_match_tau2(env: Environment) -> None:
    assert env.agent is not None
    specs = env.agent.declared_tools
    assert {name: (spec.type, spec.mutates_state) for name, spec in specs.items()} == TAU2_TOOLS
    for name, (tool_type, mutates) in TAU2_TOOLS.items():
        assert env.tool_type(name) == tool_type
        assert env.mutates(name) is mutates


def test_model_result_keeps_numbers_and_booleans(env: Environment) -> None:
    content, error = call(env, "get_item_details", item_id="9612497925")
    assert not error
    assert content == (
        '{"item_id": "9612497925", "options": {"color": "blue", "size": "M", "material": "cotton", '
        '"style": "crew neck"}, "available": true, "price": 50.88}'
    )


def test_plain_string_results_are_not_quoted(env: Environment) -> None:
    assert call(env, "find_user_id_by_email", email="NOAH.BROWN7922@example.com") == ("noah_brown_6181", False)
    assert call(env, "calculate", expression="(19.99 + 5) * 2") == ("49.98", False)
    assert call(env, "transfer_to_human_agents", summary="help") == ("Transfer successful", False)
    listing, error = call(env, "list_all_product_types")
    assert not error
    assert listing.startswith('{"Action Camera": "3377618313", "Air Purifier": "3821016478", ')
    assert len(json.loads(listing)) == 50


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("get_order_details", {"order_id": "W8955613"}, "Error: Order not found"),
        (
            "get_order_details",
            {},
            "Error: RetailTools.get_order_details() missing 1 required positional argument: 'order_id'",
        ),
        ("get_item_details", {"item_id": "6945232052"}, "Error: Item not found"),
        (
            "find_user_id_by_name_zip",
            {"first_name": "Olivia", "last_name": "Lopez", "zip": "00000"},
            "Error: User not found",
        ),
        ("cancel_pending_order", {"order_id": PENDING, "reason": "changed my mind"}, "Error: Invalid reason"),
        (
            "return_delivered_order_items",
            {"order_id": PENDING, "item_ids": [], "payment_method_id": GIFT_CARD},
            "Error: Non-delivered order cannot be returned",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": PENDING,
                "item_ids": ["2554056026"],
                "new_item_ids": ["2554056026"],
                "payment_method_id": GIFT_CARD,
            },
            "Error: The new item id should be different from the old item id",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": PENDING,
                "item_ids": ["6309044598"],
                "new_item_ids": ["8030558068"],
                "payment_method_id": GIFT_CARD,
            },
            "Error: New item 8030558068 not found or available",
        ),
        (
            "modify_pending_order_payment",
            {"order_id": PENDING, "payment_method_id": GIFT_CARD},
            "Error: The new payment method should be different from the current one",
        ),
        ("calculate", {"expression": "2 ** x"}, "Error: Invalid characters in expression"),
        ("lookup_everything", {}, "Error: Tool 'lookup_everything' not found."),
    ],
)
def test_error_texts(env: Environment, name: str, arguments: dict[str, Any], expected: str) -> None:
    assert call(env, name, **arguments) == (expected, True)
    assert env.db_hash() == PRISTINE_HASH


def test_pydantic_validation_error_names_the_model(env: Environment) -> None:
    content, error = call(
        env,
        "modify_user_address",
        user_id=PENDING_USER,
        address1="1 Main St",
        address2="",
        city="Austin",
        state="TX",
        country="USA",
        zip=78701,
    )
    assert error
    assert content.startswith("Error: 1 validation error for UserAddress\nzip\n  Input should be a valid string")
    assert env.db_hash() == PRISTINE_HASH


def test_modify_items_gives_every_item_the_last_new_variant(env: Environment) -> None:
    """tau2 prices every changed item with the last variant it looked up (a tau2 quirk we keep)."""
    content, error = call(
        env,
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=["2554056026", "6309044598"],
        new_item_ids=["2860956907", "3928046918"],
        payment_method_id="credit_card_6044108",
    )
    assert not error
    order = json.loads(content)
    backpack_options = {"color": "black", "size": "large", "material": "nylon", "compartment": "camera"}
    assert [(i["item_id"], i["price"], i["options"]) for i in order["items"]] == [
        ("2860956907", 198.0, backpack_options),
        ("3928046918", 198.0, backpack_options),
    ]
    assert order["status"] == "pending (item modified)"
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 72.35999999999999,
        "payment_method_id": "credit_card_6044108",
    }
    assert env.db_hash() == "c12824e5467dfbff100287fcd88099a00906fb7d16095da0706580df3cd6670b"


def test_the_upstream_fix_gives_each_item_its_own_new_variant(retail: Domain, env: Environment) -> None:
    """tau2-bench#317/#318 (fix #322), registered by the retail package and applied on request only."""
    from tau_tui.env.upstream import set_fix, upstream_fixes

    (fix,) = upstream_fixes("retail")
    assert (fix.tool, fix.issue, env.upstream_fixes) == ("modify_pending_order_items", "tau2-bench#317", ())
    assert set_fix(env, fix, True) and env.upstream_fixes == (fix.name,)
    content, error = call(
        env,
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=["2554056026", "6309044598"],
        new_item_ids=["2860956907", "3928046918"],
        payment_method_id="credit_card_6044108",
    )
    assert not error
    order = json.loads(content)
    assert [(i["item_id"], i["price"], i["options"]) for i in order["items"]] == [
        ("2860956907", 315.61, {"color": "black", "band material": "silicone", "display": "LCD"}),
        ("3928046918", 198.0, {"color": "black", "size": "large", "material": "nylon", "compartment": "camera"}),
    ]
    assert order["payment_history"][-1]["amount"] == 72.35999999999999  # the price difference is 1.0.1's
    assert call(env, "modify_pending_order_items", order_id=PENDING)[0] == (
        "Error: RetailTools.modify_pending_order_items() missing 3 required positional arguments: 'item_ids', "
        "'new_item_ids', and 'payment_method_id'"
    )
    none: tuple[str, ...] = ()  # a bare () here: mypy keeps env.upstream_fixes narrowed to the one fix above
    assert set_fix(env, fix, False) and env.upstream_fixes == none
    assert env.agent is not None
    kit = loaded_as(env.agent, RetailTools)
    bound = kit.bound("modify_pending_order_items")
    assert isinstance(bound, MethodType) and bound.__func__ is type(kit).modify_pending_order_items
    assert retail.new_environment().upstream_fixes == ()
    with pytest.raises(ValueError, match="Tool 'no_such_tool' not found"):
        env.agent.replace_tool("no_such_tool", fix.fixed)


def test_cancel_refunds_gift_card_at_once(env: Environment) -> None:
    content, error = call(env, "cancel_pending_order", order_id=PENDING, reason="no longer needed")
    assert not error
    assert '"status": "cancelled"' in content and '"cancel_reason": "no longer needed"' in content
    assert '{"transaction_type": "refund", "amount": 585.97, "payment_method_id": "gift_card_6682391"}' in content
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.users[PENDING_USER]["payment_methods"][GIFT_CARD]["balance"] == 620.97
    assert env.db_hash() == "741da3ea663cbe00f479d8e4825a80d06f6fd7ed4d381ec0dafc64a1e78804ec"


def test_empty_exchange_stores_an_integer_difference(env: Environment) -> None:
    """tau2 assigns round(0, 2), an int, without validation: the hash sees 0, not 0.0."""
    content, error = call(
        env,
        "exchange_delivered_order_items",
        order_id="#W4817420",
        item_ids=[],
        new_item_ids=[],
        payment_method_id="gift_card_8168843",
    )
    assert not error
    assert '"exchange_price_difference": 0, ' in content
    assert env.db_hash() == "d2c55899e22c0003ea27bfa27c877ec31cdfc62367302732bbe53fba44749542"


def test_writes_never_touch_the_shared_pristine_tree(retail: Domain) -> None:
    first = retail.new_environment()
    assert first.agent is not None
    assert first.agent.db is not None
    pristine_order = first.agent.db.orders[PENDING]
    pristine_user = first.agent.db.users[PENDING_USER]
    before = json.dumps([pristine_order, pristine_user], sort_keys=True)
    assert call(first, "cancel_pending_order", order_id=PENDING, reason="ordered by mistake")[1] is False
    assert (
        call(
            first,
            "modify_user_address",
            user_id=PENDING_USER,
            address1="1 Main St",
            address2="",
            city="Austin",
            state="TX",
            country="USA",
            zip="78701",
        )[1]
        is False
    )
    assert first.db_hash() != PRISTINE_HASH
    assert json.dumps([pristine_order, pristine_user], sort_keys=True) == before
    second = retail.new_environment()
    assert second.db_hash() == PRISTINE_HASH
    assert second.agent is not None
    assert second.agent.db is not None
    assert second.agent.db.orders[PENDING]["status"] == "pending"
    assert second.agent.db.users[PENDING_USER]["payment_methods"][GIFT_CARD]["balance"] == 35.0


def test_solo_mode_is_refused(retail: Domain) -> None:
    with pytest.raises(ValueError, match="does not support solo mode"):
        retail.new_environment(solo=True)


def test_oracle_agreement_retail(
    oracle_rows: list[dict[str, Any]], analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    agree, total, problems = agreement("retail", oracle_rows, analyzer)
    with capsys.disabled():
        counts = ", ".join(f"{f} {n}/{total}" for f, n in agree.items())
        print(f"\n[oracle] retail: {total} simulations; {counts}")
    assert total > 0
    assert not problems, "\n".join(problems[:20])
