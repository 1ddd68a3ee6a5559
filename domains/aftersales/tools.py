"""Agent tools of the after-sales desk: look-ups, cancellations, returns, refunds, approvals, goodwill.

The tools enforce what the back-office systems enforce (an order must be
delivered to be returned, a refund needs a finished quality check, one refund
per return). What the policy asks of the agent on top of that — identity
checks, return windows, final-sale lines, the approval limit, goodwill rules
— is left to the agent, so a run that breaks the policy shows in the DB.
Every money movement posts ledger entries; the task checks count them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from tau_tui.env import Toolkit, ToolType, as_model, helper, tool

TODAY = "2025-03-14"
RETURN_SHIPPING_FEE = 4.95
MAX_GOODWILL = 50.0
CANCELLATION_REASONS = ("no_longer_needed", "ordered_by_mistake", "found_better_price", "delivery_too_slow")
GOODWILL_REASONS = ("late_delivery", "delayed_refund")
GOODWILL_NOTES = {
    "late_delivery": "goodwill: delivery arrived late",
    "delayed_refund": "goodwill: refund delayed by us",
}


@dataclass(frozen=True)
class Document:
    """One knowledge-base article: id, title, the summary search shows, and the full text."""

    doc_id: str
    title: str
    summary: str
    text: str


def _money(value: float) -> float:
    return round(value + 0.0, 2)


class AftersalesTools(Toolkit):
    """The after-sales desk of Larkfield Home."""

    def __init__(self, db, documents: dict[str, Document]):
        super().__init__(db)
        self.documents = documents

    # --- internals --------------------------------------------------------------
    def _customer(self, customer_id: str) -> dict[str, Any]:
        if customer_id not in self.db.customers:
            raise ValueError(f"Customer {customer_id} not found")
        return self.db.customers[customer_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.db.orders:
            raise ValueError(f"Order {order_id} not found")
        return self.db.orders[order_id]

    def _return(self, return_id: str) -> dict[str, Any]:
        if return_id not in self.db.returns:
            raise ValueError(f"Return {return_id} not found")
        return self.db.returns[return_id]

    def _post(
        self, kind: str, customer_id: str, order_id: Optional[str], amount: float, reference: Optional[str], note: str
    ) -> dict[str, Any]:
        entry_id = f"LG-{len(self.db.ledger) + 1:05d}"
        entry = {
            "entry_id": entry_id,
            "kind": kind,
            "customer_id": customer_id,
            "order_id": order_id,
            "amount": _money(amount),
            "reference": reference,
            "note": note,
            "posted_on": TODAY,
        }
        self.db.set("ledger", entry_id, entry)
        return entry

    def _refundable(self, ret: dict[str, Any]) -> tuple[float, float]:
        """(goods value less the quality-check deduction, shipping fee) of a return whose check allows a refund."""
        if ret["status"] == "refunded":
            raise ValueError(f"Return {ret['return_id']} has already been refunded ({ret['refund_id']})")
        if ret["status"] == "refund_pending_approval":
            raise ValueError(f"Return {ret['return_id']} is waiting for refund approval {ret['approval_id']}")
        if ret["status"] in ("rejected", "cancelled"):
            raise ValueError(f"Return {ret['return_id']} is {ret['status']}")
        if ret["status"] == "awaiting_item" or ret["qc_status"] == "not_received":
            raise ValueError(f"Return {ret['return_id']}: the item has not arrived at the returns centre yet")
        if ret["qc_status"] == "pending":
            raise ValueError(f"Return {ret['return_id']}: the quality check is not finished")
        if ret["qc_status"] == "failed_damage":
            raise ValueError(f"Return {ret['return_id']}: the quality check failed (damage); no refund is due")
        order = self._order(ret["order_id"])
        prices = {line["line_id"]: line["unit_price"] for line in order["lines"]}
        goods = sum(prices[line["line_id"]] * line["quantity"] for line in ret["lines"])
        fee = RETURN_SHIPPING_FEE if ret["reason"] == "changed_mind" else 0.0
        return _money(goods - ret["qc_deduction"]), fee

    # --- look-ups ---------------------------------------------------------------
    @tool(ToolType.READ)
    def find_customer_by_email(self, email: str) -> str:
        """
        Find a customer's id from the email address on their account.

        Args:
            email: The email address the customer gives.

        Returns:
            The customer id.
        """
        wanted = email.strip().lower()
        for customer_id, customer in self.db.customers.items():
            if customer["email"].lower() == wanted:
                return customer_id
        raise ValueError("No customer with that email address")

    @tool(ToolType.READ)
    def find_customer_by_name(self, full_name: str, postcode: str) -> str:
        """
        Find a customer's id from their full name and the postcode of their account address.

        Args:
            full_name: The customer's first and last name.
            postcode: The postcode of the address on the account.

        Returns:
            The customer id.
        """
        name = " ".join(full_name.lower().split())
        code = postcode.replace(" ", "").upper()
        for customer_id, customer in self.db.customers.items():
            if (
                " ".join(customer["full_name"].lower().split()) == name
                and customer["address"]["postcode"].replace(" ", "").upper() == code
            ):
                return customer_id
        raise ValueError("No customer with that name and postcode")

    @tool(ToolType.READ)
    def get_customer(self, customer_id: str) -> dict:
        """
        Get a customer's account: contact details, tier, payment methods, order ids and store credit.

        Args:
            customer_id: The customer id, such as 'cust_amelia_hart'.
        """
        return as_model(self._customer(customer_id))

    @tool(ToolType.READ)
    def get_order(self, order_id: str) -> dict:
        """
        Get an order: status, dates (placed, promised delivery, delivered), lines, payment method and total.

        Args:
            order_id: The order id, such as 'LH-10412'.
        """
        return as_model(self._order(order_id))

    @tool(ToolType.READ)
    def get_return(self, return_id: str) -> dict:
        """
        Get a return: its lines, reason, status, and the returns centre's quality check.

        Args:
            return_id: The return id, such as 'RMA-2003'.
        """
        return as_model(self._return(return_id))

    @tool(ToolType.READ)
    def list_returns(self, customer_id: str) -> list:
        """
        List a customer's returns, with their status and quality check.

        Args:
            customer_id: The customer id.
        """
        self._customer(customer_id)
        return [as_model(r) for r in self.db.returns.values() if r["customer_id"] == customer_id]

    @tool(ToolType.READ)
    def list_ledger_entries(self, customer_id: str) -> list:
        """
        List the money movements posted for a customer (refunds, fees, store credit, goodwill credits).

        Args:
            customer_id: The customer id.
        """
        self._customer(customer_id)
        return [as_model(e) for e in self.db.ledger.values() if e["customer_id"] == customer_id]

    @tool(ToolType.READ)
    def search_knowledge_base(self, query: str) -> list:
        """
        Search the internal knowledge base; returns the id, title and summary of the best matching articles.

        Args:
            query: A few words about what you are looking for.
        """
        words = [w for w in re.findall(r"[a-z0-9]+", query.lower()) if len(w) > 2]
        scored = []
        for doc in self.documents.values():
            haystack = f"{doc.title}\n{doc.text}".lower()
            score = sum(haystack.count(w) for w in words)
            if score:
                scored.append((-score, doc.doc_id, doc))
        return [{"doc_id": doc.doc_id, "title": doc.title, "summary": doc.summary} for _, _, doc in sorted(scored)[:5]]

    @tool(ToolType.READ)
    def read_document(self, doc_id: str) -> str:
        """
        Read a knowledge-base article in full.

        Args:
            doc_id: The article id, such as 'KB-101'.
        """
        doc = self.documents.get(doc_id.strip().upper())
        if doc is None:
            raise ValueError(f"Document {doc_id} not found")
        return doc.text

    # --- changes ----------------------------------------------------------------
    @tool(ToolType.WRITE)
    def cancel_order(self, order_id: str, reason: str) -> dict:
        """
        Cancel an order that is still processing and refund its total to the original payment method.

        Args:
            order_id: The order id.
            reason: One of 'no_longer_needed', 'ordered_by_mistake', 'found_better_price', 'delivery_too_slow'.
        """
        order = self._order(order_id)
        if reason not in CANCELLATION_REASONS:
            raise ValueError(f"Unknown cancellation reason {reason!r}; use one of {', '.join(CANCELLATION_REASONS)}")
        if order["status"] != "processing":
            raise ValueError(f"Order {order_id} is {order['status']}; only orders still processing can be cancelled")
        order = self.db.edit("orders", order_id)
        order["status"], order["cancellation_reason"] = "cancelled", reason
        refund_id = f"RF-{5001 + len(self.db.refunds)}"
        refund = {
            "refund_id": refund_id,
            "return_id": None,
            "order_id": order_id,
            "customer_id": order["customer_id"],
            "amount": order["total"],
            "method": "original_payment",
            "payment_method_id": order["payment_method_id"],
            "issued_on": TODAY,
        }
        self.db.set("refunds", refund_id, refund)
        self._post(
            "cancellation_refund",
            order["customer_id"],
            order_id,
            order["total"],
            refund_id,
            "order cancelled before dispatch",
        )
        return as_model(order)

    @tool(ToolType.WRITE)
    def open_return(self, order_id: str, line_ids: list[str], reason: str) -> dict:
        """
        Open a return for whole lines of a delivered order; the customer then gets a prepaid label.

        Args:
            order_id: The order id.
            line_ids: The ids of the order lines to return, such as ['L1'].
            reason: One of 'changed_mind', 'faulty', 'damaged_in_transit', 'wrong_item'.

        Returns:
            The new return.
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError(f"Order {order_id} is {order['status']}; only delivered orders can be returned")
        if reason not in ("changed_mind", "faulty", "damaged_in_transit", "wrong_item"):
            raise ValueError(f"Unknown return reason {reason!r}")
        if not line_ids:
            raise ValueError("Name at least one order line to return")
        lines = {line["line_id"]: line for line in order["lines"]}
        taken = {
            rl["line_id"]
            for r in self.db.returns.values()
            if r["order_id"] == order_id and r["status"] != "cancelled"
            for rl in r["lines"]
        }
        for line_id in line_ids:
            if line_id not in lines:
                raise ValueError(f"Order {order_id} has no line {line_id}")
            if line_id in taken:
                raise ValueError(f"Line {line_id} of order {order_id} is already in a return")
        return_id = f"RMA-{2001 + len(self.db.returns)}"
        ret = {
            "return_id": return_id,
            "order_id": order_id,
            "customer_id": order["customer_id"],
            "lines": [{"line_id": i, "quantity": lines[i]["quantity"]} for i in line_ids],
            "reason": reason,
            "status": "awaiting_item",
            "opened_on": TODAY,
            "received_on": None,
            "qc_status": "not_received",
            "qc_completed_on": None,
            "qc_note": None,
            "qc_deduction": 0.0,
            "refund_id": None,
            "approval_id": None,
        }
        self.db.set("returns", return_id, ret)
        return as_model(ret)

    @tool(ToolType.WRITE)
    def issue_refund(self, return_id: str, method: str = "original_payment") -> dict:
        """
        Refund a return whose quality check allows it: the goods value less any quality-check deduction,
        less the return shipping fee for change-of-mind returns.

        Args:
            return_id: The return id.
            method: 'original_payment' (default) or 'store_credit'.

        Returns:
            The refund.
        """
        ret = self._return(return_id)
        if method not in ("original_payment", "store_credit"):
            raise ValueError(f"Unknown refund method {method!r}")
        goods, fee = self._refundable(ret)
        order = self._order(ret["order_id"])
        amount = _money(goods - fee)
        refund_id = f"RF-{5001 + len(self.db.refunds)}"
        refund = {
            "refund_id": refund_id,
            "return_id": return_id,
            "order_id": ret["order_id"],
            "customer_id": ret["customer_id"],
            "amount": amount,
            "method": method,
            "payment_method_id": order["payment_method_id"] if method == "original_payment" else None,
            "issued_on": TODAY,
        }
        self.db.set("refunds", refund_id, refund)
        self._post(
            "refund" if method == "original_payment" else "store_credit",
            ret["customer_id"],
            ret["order_id"],
            goods,
            refund_id,
            f"refund of return {return_id}",
        )
        if fee:
            self._post(
                "return_shipping_fee",
                ret["customer_id"],
                ret["order_id"],
                -fee,
                refund_id,
                "return shipping for a change-of-mind return",
            )
        if method == "store_credit":
            customer = self.db.edit("customers", ret["customer_id"])
            customer["store_credit"] = _money(customer["store_credit"] + amount)
        ret = self.db.edit("returns", return_id)
        ret["status"], ret["refund_id"] = "refunded", refund_id
        return as_model(refund)

    @tool(ToolType.WRITE)
    def request_refund_approval(self, return_id: str, method: str = "original_payment") -> dict:
        """
        Ask a team lead to approve the refund of a return; finance pays it out once approved.

        Args:
            return_id: The return id.
            method: 'original_payment' (default) or 'store_credit'.

        Returns:
            The approval request.
        """
        ret = self._return(return_id)
        if method not in ("original_payment", "store_credit"):
            raise ValueError(f"Unknown refund method {method!r}")
        goods, fee = self._refundable(ret)
        approval_id = f"APR-{3001 + len(self.db.approvals)}"
        approval = {
            "approval_id": approval_id,
            "return_id": return_id,
            "amount": _money(goods - fee),
            "method": method,
            "status": "pending",
            "requested_on": TODAY,
        }
        self.db.set("approvals", approval_id, approval)
        ret = self.db.edit("returns", return_id)
        ret["status"], ret["approval_id"] = "refund_pending_approval", approval_id
        return as_model(approval)

    @tool(ToolType.WRITE, discoverable=True)
    def issue_goodwill_credit(self, customer_id: str, amount: float, reason: str, order_id: str) -> dict:
        """
        Add a goodwill credit to a customer's store credit balance (see KB-205 for when and how much).

        Args:
            customer_id: The customer id.
            amount: The credit in pounds.
            reason: 'late_delivery' or 'delayed_refund'.
            order_id: The order the gesture is about.

        Returns:
            The ledger entry.
        """
        self._customer(customer_id)
        if reason not in GOODWILL_REASONS:
            raise ValueError(f"Unknown goodwill reason {reason!r}; use one of {', '.join(GOODWILL_REASONS)}")
        if not isinstance(amount, (int, float)) or isinstance(amount, bool) or amount <= 0:
            raise ValueError("The amount must be a positive number of pounds")
        if amount > MAX_GOODWILL:
            raise ValueError(f"Goodwill credits above {MAX_GOODWILL:.2f} need a manager")
        if self._order(order_id)["customer_id"] != customer_id:
            raise ValueError(f"Order {order_id} does not belong to customer {customer_id}")
        entry = self._post("goodwill_credit", customer_id, order_id, amount, None, GOODWILL_NOTES[reason])
        customer = self.db.edit("customers", customer_id)
        customer["store_credit"] = _money(customer["store_credit"] + amount)
        return as_model(entry)

    @tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """
        Transfer the customer to a human agent, with a summary of the customer's issue.
        Only transfer if the customer explicitly asks for a human agent, or if the
        policy and the available tools cannot solve the customer's issue.

        Args:
            summary: A summary of the customer's issue.
        """
        return "Transfer successful"

    # --- checks for tasks -------------------------------------------------------------
    @helper
    def assert_ledger_count(self, customer_id: str, kind: str, expected: int) -> bool:
        """Whether the customer has exactly ``expected`` ledger entries of ``kind`` posted today."""
        return (
            sum(
                1
                for e in self.db.ledger.values()
                if e["customer_id"] == customer_id and e["kind"] == kind and e["posted_on"] == TODAY
            )
            == expected
        )

    @helper
    def assert_new_ledger_entries(self, customer_id: str, expected: int) -> bool:
        """Whether exactly ``expected`` ledger entries of any kind were posted today for the customer."""
        return (
            sum(1 for e in self.db.ledger.values() if e["customer_id"] == customer_id and e["posted_on"] == TODAY)
            == expected
        )

    @helper
    def assert_return_status(self, return_id: str, expected_status: str) -> bool:
        return self._return(return_id)["status"] == expected_status

    @helper
    def assert_store_credit(self, customer_id: str, expected: float) -> bool:
        return abs(self._customer(customer_id)["store_credit"] - expected) < 0.005
