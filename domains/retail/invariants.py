"""What retail's data model promises after every write (``tau_tui.env.invariants``).

- every order item carries the price and options of its own variant in the catalogue (tau2 1.0.1's
  ``modify_pending_order_items`` breaks this when it changes two or more items: tau2-bench#317/#318);
- an order's payment history adds up: payments less refunds equal its items' total, and nothing for a
  cancelled order;
- a gift card's balance is never negative.
"""

from __future__ import annotations

from typing import Any, Iterator

from tau_tui.env.invariants import Scope, Violation, entities

CENT = 0.01


def items_match_their_variants(db: Any, scope: Scope) -> Iterator[Violation]:
    products = db["products"]
    for order_id, order in entities(db, "orders", scope):
        for index, item in enumerate(order["items"]):
            product = products[item["product_id"]] if item["product_id"] in products else None
            variant = (product or {}).get("variants", {}).get(item["item_id"])
            where = f"orders.{order_id}.items[{index}]"
            if variant is None:
                yield Violation(where, f"item {item['item_id']} is no variant of product {item['product_id']}")
                continue
            wrong = [name for name in ("price", "options") if item[name] != variant[name]]
            if wrong:
                shown = ", ".join(f"{name} {item[name]!r} (its variant's: {variant[name]!r})" for name in wrong)
                yield Violation(where, f"item {item['item_id']} has {shown}")


def payments_add_up(db: Any, scope: Scope) -> Iterator[Violation]:
    for order_id, order in entities(db, "orders", scope):
        paid = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
        refunded = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "refund")
        net = paid - refunded
        owed = 0.0 if order["status"] == "cancelled" else sum(item["price"] for item in order["items"])
        if abs(net - owed) > CENT:
            what = "a cancelled order" if order["status"] == "cancelled" else "the items' total"
            yield Violation(
                f"orders.{order_id}.payment_history",
                f"payments less refunds come to {net:.2f}, {what} is {owed:.2f}",
            )


def gift_cards_not_negative(db: Any, scope: Scope) -> Iterator[Violation]:
    for user_id, user in entities(db, "users", scope):
        for method_id, method in user["payment_methods"].items():
            if method.get("source") == "gift_card" and method.get("balance", 0) < 0:
                yield Violation(f"users.{user_id}.payment_methods.{method_id}", f"balance {method['balance']} < 0")
