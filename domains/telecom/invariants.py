"""What telecom's data model promises after every write (``tau_tui.env.invariants``).

Telecom's DB holds lists, not keyed collections, and is small: each check reads the whole of it.

- a bill's total due is the sum of its line items;
- what a customer, a line or a bill refers to exists (lines, bills, plans, devices, the bill's customer);
- no line has used or been refuelled a negative amount of data.
"""

from __future__ import annotations

from typing import Any, Iterator

from tau_tui.env.invariants import Scope, Violation

CENT = 0.01


def bill_totals(db: Any, scope: Scope) -> Iterator[Violation]:
    for index, bill in enumerate(db["bills"]):
        items = sum(item["amount"] for item in bill["line_items"])
        if abs(items - bill["total_due"]) > CENT:
            yield Violation(
                f"bills[{index}]", f"bill {bill['bill_id']} is due {bill['total_due']}, its items {items:.2f}"
            )


def references_exist(db: Any, scope: Scope) -> Iterator[Violation]:
    lines = {line["line_id"] for line in db["lines"]}
    plans = {plan["plan_id"] for plan in db["plans"]}
    devices = {device["device_id"] for device in db["devices"]}
    bills = {bill["bill_id"]: bill for bill in db["bills"]}
    for index, customer in enumerate(db["customers"]):
        for line_id in customer["line_ids"]:
            if line_id not in lines:
                yield Violation(f"customers[{index}].line_ids", f"no line {line_id}")
        for bill_id in customer["bill_ids"]:
            bill = bills.get(bill_id)
            if bill is None or bill["customer_id"] != customer["customer_id"]:
                yield Violation(f"customers[{index}].bill_ids", f"bill {bill_id} is not the customer's")
    for index, line in enumerate(db["lines"]):
        if line["plan_id"] not in plans:
            yield Violation(f"lines[{index}].plan_id", f"no plan {line['plan_id']}")
        if line.get("device_id") is not None and line["device_id"] not in devices:
            yield Violation(f"lines[{index}].device_id", f"no device {line['device_id']}")


def data_not_negative(db: Any, scope: Scope) -> Iterator[Violation]:
    for index, line in enumerate(db["lines"]):
        for name in ("data_used_gb", "data_refueling_gb"):
            if line.get(name, 0) < 0:
                yield Violation(f"lines[{index}].{name}", f"{line[name]} GB")
