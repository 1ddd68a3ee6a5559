"""Agent tools of the Northgate sales desk: stock look-ups, allocation, backorders, transfers, cancellations.

``check_availability`` answers from a cache that belongs to this toolkit, so
to one environment and one episode: it is dropped whenever the state it was
computed from is replaced (a restored snapshot) and whenever one of this
toolkit's writes changes stock or transfers. Nothing is cached on the class
or the module, so one episode's stock can never show up in another's.

Like the back-office system, the tools refuse what cannot be done (reserving
more than is available, allocating more than a line needs); the policy's
rules on top of that (home warehouse first, safety stock, split shipments,
who may ask for a transfer) are the agent's to follow.
"""

from __future__ import annotations

from typing import Any

from tau_tui.env import Toolkit, ToolType, as_model, helper, tool

TODAY = "2025-03-14"
TRANSFER_ETA = "2025-03-18"
WAREHOUSES = ("north", "south")
CANCELLATION_REASONS = ("customer_request", "duplicate_order", "credit_hold")


def order_status(order: dict[str, Any]) -> str:
    """An order's status from its lines: allocated, backordered (covered, some on backorder), part_allocated, open."""
    allocated = [sum(a["quantity"] for a in line["allocations"]) for line in order["lines"]]
    covered = all(
        a + line["backordered"] == line["quantity"] for a, line in zip(allocated, order["lines"], strict=True)
    )
    if covered and all(a == line["quantity"] for a, line in zip(allocated, order["lines"], strict=True)):
        return "allocated"
    if covered:
        return "backordered"
    if any(allocated) or any(line["backordered"] for line in order["lines"]):
        return "part_allocated"
    return "open"


class WarehouseTools(Toolkit):
    """The sales desk of Northgate Trade Supplies."""

    def __init__(self, db):
        super().__init__(db)
        self._availability: dict[str, dict[str, Any]] = {}
        self._cached_root: Any = None

    # --- internals --------------------------------------------------------------
    def _warehouse(self, warehouse: str) -> str:
        if warehouse not in WAREHOUSES:
            raise ValueError(f"Unknown warehouse {warehouse!r}; use 'north' or 'south'")
        return warehouse

    def _product(self, sku: str) -> dict[str, Any]:
        if sku not in self.db.products:
            raise ValueError(f"Product {sku} not found")
        return self.db.products[sku]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.db.orders:
            raise ValueError(f"Order {order_id} not found")
        return self.db.orders[order_id]

    def _line(self, order: dict[str, Any], line_no: int) -> tuple[int, dict[str, Any]]:
        for index, line in enumerate(order["lines"]):
            if line["line_no"] == line_no:
                return index, line
        raise ValueError(f"Order {order['order_id']} has no line {line_no}")

    def _open(self, order_id: str) -> dict[str, Any]:
        order = self._order(order_id)
        if order["status"] == "cancelled":
            raise ValueError(f"Order {order_id} is cancelled")
        return order

    def _level(self, sku: str, warehouse: str) -> dict[str, int]:
        return self.db.stock[sku]["levels"][warehouse]

    def _invalidate(self) -> None:
        self._availability.clear()

    def _cache(self) -> dict[str, dict[str, Any]]:
        """The availability cache, emptied when the state it was computed from is no longer the store's."""
        if self._cached_root is not self.db.root:
            self._availability.clear()
            self._cached_root = self.db.root
        return self._availability

    # --- look-ups ---------------------------------------------------------------
    @tool(ToolType.READ)
    def get_account(self, account_id: str) -> dict:
        """
        Get a trade account: company, contact person and email, home warehouse, whether split shipments
        are allowed, and its priority.

        Args:
            account_id: The account id, such as 'ACC-1001'.
        """
        if account_id not in self.db.accounts:
            raise ValueError(f"Account {account_id} not found")
        return as_model(self.db.accounts[account_id])

    @tool(ToolType.READ)
    def get_staff_member(self, staff_id: str) -> dict:
        """
        Get a Northgate staff member: name, role and site.

        Args:
            staff_id: The staff id, such as 'NG-0417'.
        """
        if staff_id not in self.db.staff:
            raise ValueError(f"Staff member {staff_id} not found")
        return as_model(self.db.staff[staff_id])

    @tool(ToolType.READ)
    def get_order(self, order_id: str) -> dict:
        """
        Get a sales order: account, status, dates, and each line with its allocations and backorder.

        Args:
            order_id: The order id, such as 'SO-5001'.
        """
        return as_model(self._order(order_id))

    @tool(ToolType.READ)
    def get_product(self, sku: str) -> dict:
        """
        Get a product: name, unit, status (a discontinued product names its replacement), safety stock
        per warehouse and the next supplier delivery.

        Args:
            sku: The product code, such as 'CP-15-3M'.
        """
        return as_model(self._product(sku))

    @tool(ToolType.READ)
    def search_products(self, query: str) -> list:
        """
        Find products whose code or name contains every word of the query.

        Args:
            query: Words of the product name or code, such as 'copper 15'.
        """
        words = query.lower().split()
        return [
            {"sku": p["sku"], "name": p["name"], "status": p["status"]}
            for p in self.db.products.values()
            if all(w in f"{p['sku']} {p['name']}".lower() for w in words)
        ]

    @tool(ToolType.READ)
    def lookup_stock(self, sku: str, warehouse: str) -> dict:
        """
        Ask a warehouse's stock service for the live figures of one product: on hand, reserved for
        orders, available (on hand less reserved) and the warehouse's safety stock.

        Args:
            sku: The product code.
            warehouse: 'north' (Leeds) or 'south' (Bristol).
        """
        self._product(sku)
        level = self._level(sku, self._warehouse(warehouse))
        return as_model(
            {
                "sku": sku,
                "warehouse": warehouse,
                "on_hand": level["on_hand"],
                "reserved": level["reserved"],
                "available": level["on_hand"] - level["reserved"],
                "safety_stock": self.db.products[sku]["safety_stock"][warehouse],
            }
        )

    @tool(ToolType.READ)
    def check_availability(self, sku: str) -> dict:
        """
        An overview of one product across both warehouses: available stock in each, transfers on the
        way, and the next supplier delivery. Quote and allocate from lookup_stock, not from this overview.

        Args:
            sku: The product code.
        """
        cache = self._cache()
        hit = cache.get(sku)
        if hit is None:
            product = self._product(sku)
            levels = self.db.stock[sku]["levels"]
            hit = {
                "sku": sku,
                "name": product["name"],
                "status": product["status"],
                "available": {w: levels[w]["on_hand"] - levels[w]["reserved"] for w in WAREHOUSES},
                "in_transit": [
                    {
                        "transfer_id": t["transfer_id"],
                        "to_warehouse": t["to_warehouse"],
                        "quantity": t["quantity"],
                        "eta": t["eta"],
                    }
                    for t in self.db.transfers.values()
                    if t["sku"] == sku and t["status"] == "in_transit"
                ],
                "next_delivery": product["next_delivery"],
                "as_of": self.db.snapshot["taken_at"],
            }
            cache[sku] = hit
        return as_model(hit)

    # --- changes ----------------------------------------------------------------
    @tool(ToolType.WRITE)
    def allocate_line(self, order_id: str, line_no: int, warehouse: str, quantity: int) -> dict:
        """
        Reserve stock in one warehouse for (part of) an order line.

        Args:
            order_id: The order id.
            line_no: The line number on the order.
            warehouse: 'north' or 'south'.
            quantity: How many units to reserve.

        Returns:
            The updated order.
        """
        order = self._open(order_id)
        index, line = self._line(order, line_no)
        self._warehouse(warehouse)
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity <= 0:
            raise ValueError("The quantity must be a positive whole number")
        open_units = line["quantity"] - line["backordered"] - sum(a["quantity"] for a in line["allocations"])
        if quantity > open_units:
            raise ValueError(f"Line {line_no} of {order_id} needs only {open_units} more unit(s)")
        level = self._level(line["sku"], warehouse)
        if quantity > level["on_hand"] - level["reserved"]:
            raise ValueError(
                f"Only {level['on_hand'] - level['reserved']} unit(s) of {line['sku']} available in {warehouse}"
            )
        self._invalidate()
        self.db.edit("stock", line["sku"])["levels"][warehouse]["reserved"] += quantity
        order = self.db.edit("orders", order_id)
        allocations = order["lines"][index]["allocations"]
        same = next((a for a in allocations if a["warehouse"] == warehouse), None)
        if same is None:  # one allocation per warehouse, kept in warehouse order (north, south)
            allocations.append({"warehouse": warehouse, "quantity": quantity})
            allocations.sort(key=lambda a: WAREHOUSES.index(a["warehouse"]))
        else:
            same["quantity"] += quantity
        order["status"] = order_status(order)
        return as_model(order)

    @tool(ToolType.WRITE)
    def backorder_line(self, order_id: str, line_no: int, quantity: int) -> dict:
        """
        Put (part of) an order line on backorder: it ships when the next supplier delivery arrives.

        Args:
            order_id: The order id.
            line_no: The line number on the order.
            quantity: How many units go on backorder.

        Returns:
            The updated order.
        """
        order = self._open(order_id)
        index, line = self._line(order, line_no)
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity <= 0:
            raise ValueError("The quantity must be a positive whole number")
        open_units = line["quantity"] - line["backordered"] - sum(a["quantity"] for a in line["allocations"])
        if quantity > open_units:
            raise ValueError(f"Line {line_no} of {order_id} needs only {open_units} more unit(s)")
        order = self.db.edit("orders", order_id)
        order["lines"][index]["backordered"] += quantity
        order["status"] = order_status(order)
        return as_model(order)

    @tool(ToolType.WRITE)
    def release_allocation(self, order_id: str, line_no: int, warehouse: str) -> dict:
        """
        Give back the stock reserved in one warehouse for an order line.

        Args:
            order_id: The order id.
            line_no: The line number on the order.
            warehouse: 'north' or 'south'.

        Returns:
            The updated order.
        """
        order = self._open(order_id)
        index, line = self._line(order, line_no)
        self._warehouse(warehouse)
        held = next((a for a in line["allocations"] if a["warehouse"] == warehouse), None)
        if held is None:
            raise ValueError(f"Line {line_no} of {order_id} has nothing reserved in {warehouse}")
        self._invalidate()
        self.db.edit("stock", line["sku"])["levels"][warehouse]["reserved"] -= held["quantity"]
        order = self.db.edit("orders", order_id)
        order["lines"][index]["allocations"] = [
            a for a in order["lines"][index]["allocations"] if a["warehouse"] != warehouse
        ]
        order["status"] = order_status(order)
        return as_model(order)

    @tool(ToolType.WRITE)
    def substitute_product(self, order_id: str, line_no: int, new_sku: str) -> dict:
        """
        Replace the product of an order line that has nothing reserved yet (for a discontinued product).

        Args:
            order_id: The order id.
            line_no: The line number on the order.
            new_sku: The product code that replaces it.

        Returns:
            The updated order.
        """
        order = self._open(order_id)
        index, line = self._line(order, line_no)
        self._product(new_sku)
        if line["allocations"] or line["backordered"]:
            raise ValueError(f"Line {line_no} of {order_id} already has stock reserved or on backorder")
        order = self.db.edit("orders", order_id)
        order["lines"][index]["sku"] = new_sku
        return as_model(order)

    @tool(ToolType.WRITE)
    def cancel_order(self, order_id: str, reason: str) -> dict:
        """
        Cancel a sales order and give back everything reserved for it.

        Args:
            order_id: The order id.
            reason: 'customer_request', 'duplicate_order' or 'credit_hold'.

        Returns:
            The cancelled order.
        """
        order = self._open(order_id)
        if reason not in CANCELLATION_REASONS:
            raise ValueError(f"Unknown cancellation reason {reason!r}; use one of {', '.join(CANCELLATION_REASONS)}")
        self._invalidate()
        for line in order["lines"]:
            for held in line["allocations"]:
                self.db.edit("stock", line["sku"])["levels"][held["warehouse"]]["reserved"] -= held["quantity"]
        order = self.db.edit("orders", order_id)
        for line in order["lines"]:
            line["allocations"] = []
        order["status"], order["cancellation_reason"] = "cancelled", reason
        return as_model(order)

    @tool(ToolType.WRITE)
    def create_transfer(
        self, sku: str, from_warehouse: str, to_warehouse: str, quantity: int, requested_by: str
    ) -> dict:
        """
        Move stock from one warehouse to the other; it leaves at once and arrives on the transfer's eta.

        Args:
            sku: The product code.
            from_warehouse: The sending warehouse.
            to_warehouse: The receiving warehouse.
            quantity: How many units to move.
            requested_by: The staff id of the person asking for the transfer.

        Returns:
            The transfer.
        """
        self._product(sku)
        if self._warehouse(from_warehouse) == self._warehouse(to_warehouse):
            raise ValueError("A transfer goes from one warehouse to the other")
        if requested_by not in self.db.staff:
            raise ValueError(f"Staff member {requested_by} not found")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity <= 0:
            raise ValueError("The quantity must be a positive whole number")
        level = self._level(sku, from_warehouse)
        if quantity > level["on_hand"] - level["reserved"]:
            raise ValueError(
                f"Only {level['on_hand'] - level['reserved']} unit(s) of {sku} available in {from_warehouse}"
            )
        self._invalidate()
        self.db.edit("stock", sku)["levels"][from_warehouse]["on_hand"] -= quantity
        transfer_id = f"TR-{7001 + len(self.db.transfers)}"
        transfer = {
            "transfer_id": transfer_id,
            "sku": sku,
            "from_warehouse": from_warehouse,
            "to_warehouse": to_warehouse,
            "quantity": quantity,
            "status": "in_transit",
            "created_on": TODAY,
            "eta": TRANSFER_ETA,
            "requested_by": requested_by,
        }
        self.db.set("transfers", transfer_id, transfer)
        return as_model(transfer)

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """
        Transfer the caller to a human agent, with a summary of the request.
        Only transfer if the caller explicitly asks for a human agent, or if the
        policy and the available tools cannot solve the request.

        Args:
            summary: A summary of the caller's request.
        """
        return "Transfer successful"

    # --- checks for tasks -------------------------------------------------------------
    @helper
    def assert_reserved(self, sku: str, warehouse: str, expected: int) -> bool:
        return self._level(sku, warehouse)["reserved"] == expected

    @helper
    def assert_on_hand(self, sku: str, warehouse: str, expected: int) -> bool:
        return self._level(sku, warehouse)["on_hand"] == expected

    @helper
    def assert_line_allocation(self, order_id: str, line_no: int, warehouse: str, expected: int) -> bool:
        _, line = self._line(self._order(order_id), line_no)
        return sum(a["quantity"] for a in line["allocations"] if a["warehouse"] == warehouse) == expected

    @helper
    def assert_backordered(self, order_id: str, line_no: int, expected: int) -> bool:
        _, line = self._line(self._order(order_id), line_no)
        return line["backordered"] == expected

    @helper
    def assert_transfer_count(self, sku: str, expected: int) -> bool:
        """Whether exactly ``expected`` transfers of ``sku`` were created today."""
        return sum(1 for t in self.db.transfers.values() if t["sku"] == sku and t["created_on"] == TODAY) == expected
