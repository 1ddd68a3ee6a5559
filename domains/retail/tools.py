"""Agent tools of the retail domain (tau2 ``RetailTools``: same names, types, errors and effects).

Reads come straight from the shared state; every change goes through
``self.db.edit``/``self.db.set``. Each write tool checks and changes things in
the same order as tau2, so a failure half-way leaves the same partial state.
"""

from __future__ import annotations

import json
from typing import Any, List

from tau_tui.env import Toolkit, ToolType, as_model, tool

from .data_model import Order, OrderPayment, Product, User, UserAddress, Variant

CANCEL_REASONS = {"no longer needed", "ordered by mistake"}
EXPRESSION_CHARS = frozenset("0123456789+-*/(). ")


def _is_gift_card(payment_method: dict[str, Any]) -> bool:
    return payment_method["source"] == "gift_card"


def _first_item(order: dict[str, Any], item_id: Any) -> dict[str, Any] | None:
    return next((item for item in order["items"] if item["item_id"] == item_id), None)


def _payment(transaction_type: str, amount: Any, payment_method_id: Any) -> dict[str, Any]:
    return OrderPayment(
        transaction_type=transaction_type, amount=amount, payment_method_id=payment_method_id
    ).model_dump()


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, Any]:
    return UserAddress(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    ).model_dump()


class RetailTools(Toolkit):
    """Look up customers, orders and products; cancel, modify, return and exchange orders."""

    # --- lookups shared by the tools (reads only: never mutate what they return) ---
    def _order(self, order_id: Any) -> dict[str, Any]:
        if order_id not in self.db.orders:
            raise ValueError("Order not found")
        return self.db.orders[order_id]

    def _user(self, user_id: Any) -> dict[str, Any]:
        if user_id not in self.db.users:
            raise ValueError("User not found")
        return self.db.users[user_id]

    def _product(self, product_id: Any) -> dict[str, Any]:
        if product_id not in self.db.products:
            raise ValueError("Product not found")
        return self.db.products[product_id]

    def _variant(self, product_id: Any, item_id: Any) -> dict[str, Any]:
        variants = self._product(product_id)["variants"]
        if item_id not in variants:
            raise ValueError("Variant not found")
        return variants[item_id]

    def _payment_method(self, user_id: Any, payment_method_id: Any) -> dict[str, Any]:
        methods = self._user(user_id)["payment_methods"]
        if payment_method_id not in methods:
            raise ValueError("Payment method not found")
        return methods[payment_method_id]

    def _add_to_gift_card(self, user_id: str, payment_method_id: str, amount: float) -> None:
        """Change a gift card's balance by ``amount``, rounded to cents as tau2 does."""
        card = self.db.edit("users", user_id)["payment_methods"][payment_method_id]
        card["balance"] = round(card["balance"] + amount, 2)

    # --- tools ----------------------------------------------------------------
    @tool(ToolType.GENERIC)
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and return the result rounded to 2 decimals.

        Args:
            expression: The expression to evaluate, for example '(19.99 + 5) * 2'. Only digits,
                spaces, parentheses, the decimal point and the operators +, -, * and / are allowed.
        """
        if not all(char in EXPRESSION_CHARS for char in expression):
            raise ValueError("Invalid characters in expression")
        # The characters are restricted to arithmetic above, and no builtins are reachable.
        return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))  # noqa: S307

    @tool(ToolType.WRITE)
    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        """Cancel an order whose status is 'pending' and refund every payment made on it.

        Gift card payments are refunded to the card at once; other refunds take 5-7 business days.
        Explain the cancellation to the user and get an explicit yes before calling this.
        Returns the order after cancellation.

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            reason: Why the order is cancelled: 'no longer needed' or 'ordered by mistake'.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            method_id = payment["payment_method_id"]
            refunds.append(_payment("refund", payment["amount"], method_id))
            user = self._user(order["user_id"])
            if _is_gift_card(self._payment_method(user["user_id"], method_id)):
                self._add_to_gift_card(user["user_id"], method_id, payment["amount"])
        order = self.db.edit("orders", order_id)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return as_model(order)

    @tool(ToolType.WRITE)
    def exchange_delivered_order_items(
        self,
        order_id: str,
        item_ids: List[str],
        new_item_ids: List[str],
        payment_method_id: str,
    ) -> Order:
        """Request an exchange of items of a delivered order for other variants of the same products.

        A delivered order can be returned or exchanged only once. Explain the exchange and the
        price difference to the user and get an explicit yes before calling this. Returns the
        order with the exchange recorded (status 'exchange requested').

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            item_ids: Ids of the items to exchange; an id may repeat if the order holds it more than once.
            new_item_ids: Ids of the replacement items, position by position: each must be an
                available variant of the same product as the item it replaces.
            payment_method_id: The payment method that pays or receives the price difference,
                for example 'gift_card_0000000' or 'credit_card_0000000' (see the user's details).
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        held = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > held.count(item_id):
                raise ValueError(f"Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match.")
        diff_price = 0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = _first_item(order, item_id)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff_price += variant["price"] - item["price"]
        diff_price = round(diff_price, 2)
        method = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order = self.db.edit("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff_price
        return as_model(order)

    @tool(ToolType.READ)
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a user id from the customer's first name, last name and zip code (names ignore case).

        Prefer find_user_id_by_email; use this when the user cannot give an email or it is not found.

        Args:
            first_name: The customer's first name, for example 'John'.
            last_name: The customer's last name, for example 'Doe'.
            zip: The zip code of the customer's address, for example '12345'.
        """
        for user_id, user in self.db.users.items():
            if (
                user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ValueError("User not found")

    @tool(ToolType.READ)
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user id from the customer's email address (case does not matter).

        Args:
            email: The customer's email address, for example 'someone@example.com'.
        """
        for user_id, user in self.db.users.items():
            if user["email"].lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    @tool(ToolType.READ)
    def get_order_details(self, order_id: str) -> Order:
        """Get an order's status, items, address, fulfilments and payments.

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
        """
        return as_model(self._order(order_id))

    @tool(ToolType.READ)
    def get_product_details(self, product_id: str) -> Product:
        """Get a product type and all its variants (items) with their options, price and availability.

        Args:
            product_id: The product id, for example '6086499569' (a product id, not an item id).
        """
        return as_model(self._product(product_id))

    @tool(ToolType.READ)
    def get_item_details(self, item_id: str) -> Variant:
        """Get one item (a product variant): its options, price and availability.

        Args:
            item_id: The item id, for example '1008292230' (an item id, not a product id).
        """
        for product in self.db.products.values():
            if item_id in product["variants"]:
                return as_model(product["variants"][item_id])
        raise ValueError("Item not found")

    @tool(ToolType.READ)
    def get_user_details(self, user_id: str) -> User:
        """Get a user's profile: name, address, email, payment methods and order ids.

        Args:
            user_id: The user id, for example 'sara_doe_496'.
        """
        return as_model(self._user(user_id))

    @tool(ToolType.READ)
    def list_all_product_types(self) -> str:
        """List every product type (there are 50) as a JSON object mapping product name to product id.

        Each product type has several items (variants) with their own item ids and options;
        use get_product_details to see them.
        """
        names = {product["name"]: product["product_id"] for product in self.db.products.values()}
        return json.dumps(names, sort_keys=True)

    @tool(ToolType.WRITE)
    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Order:
        """Change the shipping address of a pending order.

        Explain the change to the user and get an explicit yes before calling this.
        Returns the order with its new address.

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            address1: First address line, for example '123 Main St'.
            address2: Second address line, for example 'Apt 1', or '' if none.
            city: City, for example 'San Francisco'.
            state: State, for example 'CA'.
            country: Country, for example 'USA'.
            zip: Zip code, for example '12345'.
        """
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        address = _address(address1, address2, city, state, country, zip)
        order = self.db.edit("orders", order_id)
        order["address"] = address
        return as_model(order)

    @tool(ToolType.WRITE)
    def modify_pending_order_items(
        self,
        order_id: str,
        item_ids: List[str],
        new_item_ids: List[str],
        payment_method_id: str,
    ) -> Order:
        """Swap items of a pending order for other variants of the same products (allowed once per order).

        The price difference is charged to, or refunded to, the given payment method. Explain the
        change and the price difference to the user and get an explicit yes before calling this.
        Returns the order with the new items (status 'pending (item modified)').

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            item_ids: Ids of the items to change; an id may repeat if the order holds it more than once.
            new_item_ids: Ids of the new items, position by position: each must be a different,
                available variant of the same product as the item it replaces.
            payment_method_id: The payment method that pays or receives the price difference,
                for example 'gift_card_0000000' or 'credit_card_0000000' (see the user's details).
        """
        return self._modify_items(order_id, item_ids, new_item_ids, payment_method_id, own_variant=False)

    def _modify_items(
        self, order_id: str, item_ids: List[str], new_item_ids: List[str], payment_method_id: str, own_variant: bool
    ) -> Order:
        """The body of ``modify_pending_order_items``: tau2 1.0.1's (every changed item takes the price and
        options of the LAST new variant looked up) or, ``own_variant``, each its own (the upstream fix)."""
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be modified")
        held = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > held.count(item_id):
                raise ValueError(f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match")
        diff_price = 0
        variant = None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if item_id == new_item_id:
                raise ValueError("The new item id should be different from the old item id")
            item = _first_item(order, item_id)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff_price += variant["price"] - item["price"]
        method = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        payment = _payment("payment" if diff_price > 0 else "refund", abs(diff_price), payment_method_id)
        self.db.edit("orders", order_id)["payment_history"].append(payment)
        if _is_gift_card(method):
            self._add_to_gift_card(order["user_id"], payment_method_id, -diff_price)
        order = self.db.edit("orders", order_id)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = _first_item(order, item_id)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            new = self._variant(item["product_id"], new_item_id) if own_variant else variant
            item["item_id"] = new_item_id
            item["price"] = new["price"]
            item["options"] = dict(new["options"])
        order["status"] = "pending (item modified)"
        return as_model(order)

    @tool(ToolType.WRITE)
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        """Pay a pending order with another payment method; the original payment is refunded.

        Explain the change to the user and get an explicit yes before calling this.
        Returns the order with the new payment and the refund recorded.

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            payment_method_id: The new payment method, for example 'gift_card_0000000' or
                'credit_card_0000000' (see the user's details); it must differ from the current one.
        """
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        method = self._payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        old_method_id = history[0]["payment_method_id"]
        if old_method_id == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if _is_gift_card(method) and method["balance"] < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        self.db.edit("orders", order_id)["payment_history"].extend(
            [_payment("payment", amount, payment_method_id), _payment("refund", amount, old_method_id)]
        )
        if _is_gift_card(method):
            self._add_to_gift_card(order["user_id"], payment_method_id, -amount)
        if _is_gift_card(self._payment_method(order["user_id"], old_method_id)):
            self._add_to_gift_card(order["user_id"], old_method_id, amount)
        return as_model(self.db.orders[order_id])

    @tool(ToolType.WRITE)
    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> User:
        """Change a user's default address (existing orders keep their shipping address).

        Explain the change to the user and get an explicit yes before calling this.
        Returns the user's details with the new address.

        Args:
            user_id: The user id, for example 'sara_doe_496'.
            address1: First address line, for example '123 Main St'.
            address2: Second address line, for example 'Apt 1', or '' if none.
            city: City, for example 'San Francisco'.
            state: State, for example 'CA'.
            country: Country, for example 'USA'.
            zip: Zip code, for example '12345'.
        """
        self._user(user_id)
        address = _address(address1, address2, city, state, country, zip)
        user = self.db.edit("users", user_id)
        user["address"] = address
        return as_model(user)

    @tool(ToolType.WRITE)
    def return_delivered_order_items(self, order_id: str, item_ids: List[str], payment_method_id: str) -> Order:
        """Request a return of items of a delivered order (status becomes 'return requested').

        The refund goes to the original payment method or to a gift card of the user; the user
        then gets an email explaining how to send the items back. Explain the return to the user
        and get an explicit yes before calling this. Returns the order with the return recorded.

        Args:
            order_id: The order id, starting with '#', for example '#W0000000'.
            item_ids: Ids of the items to return; an id may repeat if the order holds it more than once.
            payment_method_id: Where the refund goes: the order's original payment method or one of
                the user's gift cards, for example 'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        user = self._user(order["user_id"])
        method = self._payment_method(user["user_id"], payment_method_id)
        if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
            raise ValueError("Payment method should be the original payment method")
        held = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > held.count(item_id):
                raise ValueError("Some item not found")
        order = self.db.edit("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return as_model(order)

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, with a summary of the user's issue.

        Transfer only when the user explicitly asks for a human agent, or when the policy and
        the available tools cannot resolve the user's issue.

        Args:
            summary: A short summary of the user's issue.
        """
        return "Transfer successful"


def modify_pending_order_items_fixed(
    tools: RetailTools, order_id: str, item_ids: List[str], new_item_ids: List[str], payment_method_id: str
) -> Order:
    """``modify_pending_order_items`` as tau2-bench PR #322 fixes it: each changed item takes the price and options
    of its own new variant (issues #317, #318)."""
    return tools._modify_items(order_id, item_ids, new_item_ids, payment_method_id, own_variant=True)


# An argument error names the method, as tau2's does ("RetailTools.modify_pending_order_items() missing ...").
modify_pending_order_items_fixed.__qualname__ = RetailTools.modify_pending_order_items.__qualname__
