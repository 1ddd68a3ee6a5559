"""Agent tools of the telecom domain (tau2 ``TelecomTools``: same names, types, outputs and errors).

Lookups scan the DB lists in order, as tau2 does, and report a missing entity
with tau2's wording. Writes go through ``self.db.edit`` on the one list item
that changes. Values are stored as given (tau2 assigns attributes without
validation), and new entities are built through the pydantic models (tau2
constructs models there, which coerces and validates).
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any, Dict, List

from tau_tui.env import Toolkit, ToolType, as_model, helper, tool

from .data_model import Bill, BillStatus, Customer, LineItem, LineStatus

# tau2's telecom clock is frozen.
TODAY = date(2025, 2, 25)


def today() -> date:
    """The fixed "today" of the telecom world (2025-02-25)."""
    return TODAY


def _indexed(index: dict | None, item_id: Any, fallback: Any, label: str) -> dict:
    """An entity by id from a first-by-id ``index`` of its table (None: no index; a non-string id: the table's
    own lookup ``fallback``), with the tool's own error for a missing one."""
    if index is None or type(item_id) is not str:
        return fallback(item_id)
    item = index.get(item_id)
    if item is None:
        raise ValueError(f"{label} with ID {item_id} not found")
    return item


class TelecomTools(Toolkit):
    """Customer, line, billing and roaming operations of a mobile carrier."""

    # --- lookups (private: used by tools, helpers and sync) -----------------
    def _index(self, field: str, key: str, value: Any, what: str) -> int:
        for i, item in enumerate(self.db.get(field)):
            if item[key] == value:
                return i
        raise ValueError(f"{what} with ID {value} not found")

    def _customer_index(self, customer_id: str) -> int:
        for i, customer in enumerate(self.db.customers):
            if customer["customer_id"] == customer_id:
                return i
        raise ValueError(f"Customer with ID {customer_id} not found")

    def _customer(self, customer_id: str) -> dict:
        return self.db.customers[self._customer_index(customer_id)]

    def _line_index(self, line_id: str) -> int:
        return self._index("lines", "line_id", line_id, "Line")

    def _line(self, line_id: str) -> dict:
        return self.db.lines[self._line_index(line_id)]

    def _line_by_phone(self, phone_number: str) -> dict:
        for line in self.db.lines:
            if line["phone_number"] == phone_number:
                return line
        raise ValueError(f"Line with phone number {phone_number} not found")

    def _plan(self, plan_id: str) -> dict:
        return self.db.plans[self._index("plans", "plan_id", plan_id, "Plan")]

    def _device(self, device_id: str) -> dict:
        return self.db.devices[self._index("devices", "device_id", device_id, "Device")]

    def _bill_index(self, bill_id: str) -> int:
        return self._index("bills", "bill_id", bill_id, "Bill")

    def _bill(self, bill_id: str) -> dict:
        return self.db.bills[self._bill_index(bill_id)]

    def _target_line_index(self, customer_id: str, line_id: str) -> int:
        """The line ``line_id`` if ``customer_id`` owns it."""
        customer = self._customer(customer_id)
        if line_id not in customer["line_ids"]:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._line_index(line_id)

    def _first_by_id(self, field: str, key: str) -> dict[str, dict] | None:
        """The first item of a DB list per id (what ``_index`` finds), for many lookups in one list.

        None when some item's id is not a plain string: then only ``_index``'s scan finds what tau2 finds.
        """
        out: dict[str, dict] = {}
        for item in self.db.get(field):
            value = item.get(key) if type(item) is dict else None
            if type(value) is not str:
                return None
            out.setdefault(value, item)
        return out

    def _customer_by_phone(self, phone_number: str) -> dict:
        lines: dict[str, dict] | None = None
        indexed = False
        for customer in self.db.customers:
            if customer["phone_number"] == phone_number:
                return customer
            for line_id in customer["line_ids"]:
                if not indexed:
                    lines, indexed = self._first_by_id("lines", "line_id"), True
                line = _indexed(lines, line_id, self._line, "Line")
                if line["phone_number"] == phone_number:
                    return customer
        raise ValueError(f"Customer with phone number {phone_number} not found")

    def _bills_awaiting_payment(self, customer: dict) -> list[dict]:
        found = self._first_by_id("bills", "bill_id") if customer["bill_ids"] else None
        bills = [_indexed(found, bill_id, self._bill, "Bill") for bill_id in customer["bill_ids"]]
        return [bill for bill in bills if bill["status"] == BillStatus.AWAITING_PAYMENT]

    def _set_bill_to_paid(self, bill_id: str) -> None:
        index = self._bill_index(bill_id)
        if self.db.bills[index]["status"] is not BillStatus.PAID:
            self.db.edit("bills", index)["status"] = BillStatus.PAID

    # --- customers ------------------------------------------------------------
    @tool(ToolType.READ)
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """
        Look up the customer who owns a phone number, either as their contact number or as one of their lines.

        Args:
            phone_number: The phone number to look up.

        Returns:
            The matching customer record.
        """
        return as_model(self._customer_by_phone(phone_number))

    @tool(ToolType.READ)
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """
        Fetch a customer record by its customer ID.

        Args:
            customer_id: The customer's unique ID.

        Returns:
            The customer record.
        """
        return as_model(self._customer(customer_id))

    @tool(ToolType.READ)
    def get_customer_by_name(self, full_name: str, dob: str) -> List[Customer]:
        """
        Find customers by full name (case-insensitive) and date of birth; several may match.

        Args:
            full_name: The customer's full name.
            dob: The customer's date of birth, formatted YYYY-MM-DD.

        Returns:
            Every customer whose name and date of birth match.
        """
        wanted = full_name.lower()
        return [
            as_model(customer)
            for customer in self.db.customers
            if customer["full_name"].lower() == wanted and customer["date_of_birth"] == dob
        ]

    @tool(ToolType.READ)
    def get_details_by_id(self, id: str) -> Dict[str, Any]:  # noqa: A002 - tau2's parameter name
        """
        Fetch any record by its ID: a line (L...), device (D...), bill (B...), customer (C...) or plan (P...).

        Args:
            id: The ID of the record to fetch.

        Returns:
            The record with that ID.
        """
        if id.startswith("L"):
            return as_model(self._line(id))
        if id.startswith("D"):
            return as_model(self._device(id))
        if id.startswith("B"):
            return as_model(self._bill(id))
        if id.startswith("C"):
            return as_model(self._customer(id))
        if id.startswith("P"):
            return as_model(self._plan(id))
        raise ValueError(f"Unknown ID format or type: {id}")

    # --- lines ------------------------------------------------------------------
    @tool(ToolType.WRITE)
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> Dict[str, Any]:
        """
        Suspend an active line of a customer (for at most 6 months); the suspension starts today.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line to suspend.
            reason: Why the line is being suspended.

        Returns:
            A confirmation message and the updated line.
        """
        index = self._target_line_index(customer_id, line_id)
        if self.db.lines[index]["status"] != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend")
        line = self.db.edit("lines", index)
        line["status"] = LineStatus.SUSPENDED
        line["suspension_start_date"] = today()
        return {
            "message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": as_model(line),
        }

    @tool(ToolType.WRITE)
    def resume_line(self, customer_id: str, line_id: str) -> Dict[str, Any]:
        """
        Reactivate a line that is suspended or pending activation, clearing its suspension date.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line to resume.

        Returns:
            A confirmation message and the updated line.
        """
        index = self._target_line_index(customer_id, line_id)
        if self.db.lines[index]["status"] not in [LineStatus.SUSPENDED, LineStatus.PENDING_ACTIVATION]:
            raise ValueError("Line must be suspended to resume")
        line = self.db.edit("lines", index)
        line["status"] = LineStatus.ACTIVE
        line["suspension_start_date"] = None
        return {"message": "Line resumed successfully", "line": as_model(line)}

    # --- billing ------------------------------------------------------------------
    @tool(ToolType.READ)
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> List[Bill]:
        """
        List a customer's bills, newest issue date first.

        Args:
            customer_id: The ID of the customer.
            limit: The largest number of bills to return.

        Returns:
            The customer's bills, newest first.
        """
        customer = self._customer(customer_id)
        bills = [self._bill(bill_id) for bill_id in customer["bill_ids"]]
        newest_first = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)
        return [as_model(bill) for bill in newest_first[:limit]]

    @tool(ToolType.WRITE)
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """
        Ask the customer to pay one of their bills; the bill then awaits payment.
        Only one bill per customer may await payment at a time. This does not check
        whether the bill is already paid, so check the bill's status first.

        Args:
            customer_id: The ID of the customer who owns the bill.
            bill_id: The ID of the bill to request payment for.

        Returns:
            A confirmation that the request was sent.
        """
        customer = self._customer(customer_id)
        if self._bills_awaiting_payment(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"]:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        index = self._bill_index(bill_id)
        bill = self.db.edit("bills", index)
        bill["status"] = BillStatus.AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill['bill_id']}"

    def _apply_one_time_charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a charge (or a credit, if negative) to the customer's draft bill, opening one if needed."""
        customer_index = self._customer_index(customer_id)
        customer = self.db.customers[customer_index]
        draft_index = None
        for bill_id in customer["bill_ids"]:
            index = self._bill_index(bill_id)
            if self.db.bills[index]["status"] == BillStatus.DRAFT:
                draft_index = index
                break
        if draft_index is None:
            # A fresh draft bill for next month, with a random id as in tau2.
            next_month = (today().replace(day=1) + timedelta(days=32)).replace(day=1)
            following = next_month.replace(
                month=next_month.month + 1 if next_month.month < 12 else 1,
                year=next_month.year if next_month.month < 12 else next_month.year + 1,
            )
            new_bill_id = f"B{uuid.uuid4().hex[:8]}"
            draft = Bill(
                bill_id=new_bill_id,
                customer_id=customer_id,
                period_start=next_month,
                period_end=following - timedelta(days=1),
                issue_date=next_month,
                total_due=0,
                due_date=next_month + timedelta(days=14),
                status=BillStatus.DRAFT,
            ).model_dump()
            self.db.append("bills", draft)
            draft_index = len(self.db.bills) - 1
            self.db.edit("customers", customer_index)["bill_ids"].append(new_bill_id)
        item = LineItem(
            description=description,
            amount=amount,
            date=today(),
            item_type="Credit" if amount < 0 else "Charge",
        ).model_dump()
        bill = self.db.edit("bills", draft_index)
        bill["line_items"].append(item)
        bill["total_due"] += amount

    # --- usage and roaming ----------------------------------------------------------
    @tool(ToolType.READ)
    def get_data_usage(self, customer_id: str, line_id: str) -> Dict[str, Any]:
        """
        Show a line's data usage in the current billing cycle: data used, plan limit, data refuelled and cycle end.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line.

        Returns:
            The line's usage figures and the cycle's end date.
        """
        line = self.db.lines[self._target_line_index(customer_id, line_id)]
        plan = self._plan(line["plan_id"])
        now = today()
        cycle_end_date = date(now.year, now.month + 1 if now.month < 12 else 1, 1) - timedelta(days=1)
        return {
            "line_id": line_id,
            "data_used_gb": line["data_used_gb"],
            "data_limit_gb": plan["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"],
            "cycle_end_date": cycle_end_date,
        }

    @helper
    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set how much data a line has used this cycle (for task set-up)."""
        index = self._target_line_index(customer_id, line_id)
        self.db.edit("lines", index)["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    @tool(ToolType.WRITE)
    def enable_roaming(self, customer_id: str, line_id: str) -> Dict[str, Any]:
        """
        Turn on international roaming for a line.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line.

        Returns:
            Whether roaming was enabled or already on.
        """
        index = self._target_line_index(customer_id, line_id)
        if self.db.lines[index]["roaming_enabled"]:
            return "Roaming was already enabled"
        self.db.edit("lines", index)["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @tool(ToolType.WRITE)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """
        Turn off international roaming for a line.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line.

        Returns:
            Whether roaming was disabled or already off.
        """
        index = self._target_line_index(customer_id, line_id)
        if not self.db.lines[index]["roaming_enabled"]:
            return "Roaming was already disabled"
        self.db.edit("lines", index)["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """
        Hand the customer over to a human agent, passing a summary of their issue.
        Transfer only when the customer explicitly asks for a human, or when the
        policy and the available tools cannot resolve the issue.

        Args:
            summary: A short summary of the customer's issue.

        Returns:
            A confirmation of the transfer.
        """
        return "Transfer successful"

    @tool(ToolType.WRITE)
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> Dict[str, Any]:
        """
        Add extra data to a line for the current billing cycle.

        The plan's per-GB refuel price is charged to the customer's draft bill.

        Args:
            customer_id: The ID of the customer who owns the line.
            line_id: The ID of the line to add data to.
            gb_amount: How many gigabytes to add (must be positive).

        Returns:
            A confirmation message, the line's total refuelled data and the charge.
        """
        index = self._target_line_index(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._plan(self.db.lines[index]["plan_id"])
        price = plan["data_refueling_price_per_gb"]
        charge_amount = gb_amount * price
        line = self.db.edit("lines", index)
        line["data_refueling_gb"] += gb_amount
        self._apply_one_time_charge(customer_id, charge_amount, f"Data refueling: {gb_amount} GB at ${price}/GB")
        return {
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge_amount:.2f}",
            "new_data_refueling_gb": self.db.lines[index]["data_refueling_gb"],
            "charge": charge_amount,
        }

    # --- task set-up and assertions (helpers, not tools) ------------------------------
    @helper
    def get_available_plan_ids(self) -> List[str]:
        """The IDs of all plans."""
        return [plan["plan_id"] for plan in self.db.plans]

    @helper
    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        """Give the customer an overdue bill for last month's plan charge and suspend the line (task set-up)."""
        line_index = self._line_index(line_id)
        line = self.db.lines[line_index]
        if line["status"] != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        plan = self._plan(line["plan_id"])
        amount = plan["price_per_month"]
        description = f"Charge for line {line['line_id']}"
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer_index = self._customer_index(customer_id)
        customer = self.db.customers[customer_index]
        overdue = [bill_id for bill_id in customer["bill_ids"] if self._bill(bill_id)["status"] == BillStatus.OVERDUE]
        if overdue:
            raise ValueError("Customer already has an overdue bill")
        last_of_last_month = today().replace(day=1) - timedelta(days=1)
        first_of_last_month = last_of_last_month.replace(day=1)
        bill = Bill(
            bill_id=new_bill_id,
            customer_id=customer_id,
            period_start=first_of_last_month,
            period_end=last_of_last_month,
            issue_date=first_of_last_month,
            total_due=0,
            due_date=first_of_last_month + timedelta(days=14),
            status=BillStatus.OVERDUE,
        ).model_dump()
        item = LineItem(
            description=description,
            amount=amount,
            date=today(),
            item_type="Charge" if amount > 0 else "Credit",
        ).model_dump()
        bill["line_items"].append(item)
        bill["total_due"] += amount
        self.db.append("bills", bill)
        self.db.edit("customers", customer_index)["bill_ids"].append(new_bill_id)
        line = self.db.edit("lines", line_index)
        line["status"] = LineStatus.SUSPENDED
        line["suspension_start_date"] = today()
        if contract_ended:
            line["contract_end_date"] = last_of_last_month
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    @helper
    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """Whether the line's refuelled data equals ``expected_amount`` (within 1e-6 GB)."""
        line = self.db.lines[self._target_line_index(customer_id, line_id)]
        return abs(line["data_refueling_gb"] - expected_amount) < 1e-6

    @helper
    def assert_line_status(self, customer_id: str, line_id: str, expected_status: LineStatus) -> bool:
        """Whether the line has the expected status."""
        line = self.db.lines[self._target_line_index(customer_id, line_id)]
        return line["status"] == expected_status

    @helper
    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        """True if the customer has this bill and it is overdue; raises otherwise."""
        customer = self._customer(customer_id)
        if overdue_bill_id not in customer["bill_ids"]:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._bill(overdue_bill_id)["status"] != BillStatus.OVERDUE:
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    @helper
    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """Whether the bill is gone or paid."""
        try:
            bill = self._bill(overdue_bill_id)
        except ValueError:
            return True
        return bill["status"] == BillStatus.PAID
