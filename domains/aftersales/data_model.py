"""After-sales data of Larkfield Home: customers, orders, returns with quality checks, refunds, approvals, a ledger."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

Tier = Literal["standard", "plus"]
PaymentKind = Literal["card", "paypal", "gift_card"]
OrderStatus = Literal["processing", "shipped", "delivered", "cancelled"]
ReturnReason = Literal["changed_mind", "faulty", "damaged_in_transit", "wrong_item"]
ReturnStatus = Literal["awaiting_item", "received", "refunded", "refund_pending_approval", "rejected", "cancelled"]
QCStatus = Literal["not_received", "pending", "passed", "failed_damage", "failed_incomplete"]
RefundMethod = Literal["original_payment", "store_credit"]
LedgerKind = Literal["refund", "cancellation_refund", "return_shipping_fee", "store_credit", "goodwill_credit"]
CancellationReason = Literal["no_longer_needed", "ordered_by_mistake", "found_better_price", "delivery_too_slow"]
GoodwillReason = Literal["late_delivery", "delayed_refund"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(Strict):
    line1: str
    city: str
    postcode: str
    country: str = "GB"


class PaymentMethod(Strict):
    payment_method_id: str
    kind: PaymentKind
    label: str


class Customer(Strict):
    customer_id: str
    full_name: str
    email: str
    phone: str
    tier: Tier
    address: Address
    payment_methods: Dict[str, PaymentMethod]
    order_ids: List[str]
    store_credit: float = 0.0


class OrderLine(Strict):
    line_id: str
    sku: str
    name: str
    category: str
    unit_price: float
    quantity: int
    final_sale: bool = False


class Order(Strict):
    order_id: str
    customer_id: str
    status: OrderStatus
    placed_on: str
    promised_by: str
    delivered_on: Optional[str] = None
    lines: List[OrderLine]
    shipping_fee: float = 0.0
    payment_method_id: str
    total: float
    cancellation_reason: Optional[CancellationReason] = None


class ReturnLine(Strict):
    line_id: str
    quantity: int


class Return(Strict):
    return_id: str
    order_id: str
    customer_id: str
    lines: List[ReturnLine]
    reason: ReturnReason
    status: ReturnStatus
    opened_on: str
    received_on: Optional[str] = None
    qc_status: QCStatus = "not_received"
    qc_completed_on: Optional[str] = None
    qc_note: Optional[str] = None
    qc_deduction: float = 0.0
    refund_id: Optional[str] = None
    approval_id: Optional[str] = None


class Refund(Strict):
    refund_id: str
    return_id: Optional[str] = None
    order_id: str
    customer_id: str
    amount: float
    method: RefundMethod
    payment_method_id: Optional[str] = None
    issued_on: str


class Approval(Strict):
    approval_id: str
    return_id: str
    amount: float
    method: RefundMethod
    status: Literal["pending", "approved", "declined"]
    requested_on: str


class LedgerEntry(Strict):
    entry_id: str
    kind: LedgerKind
    customer_id: str
    order_id: Optional[str] = None
    amount: float
    reference: Optional[str] = None
    note: str = ""
    posted_on: str


class AftersalesDB(Strict):
    """Everything the after-sales team's tools read and write."""

    customers: Dict[str, Customer]
    orders: Dict[str, Order]
    returns: Dict[str, Return] = Field(default_factory=dict)
    refunds: Dict[str, Refund] = Field(default_factory=dict)
    approvals: Dict[str, Approval] = Field(default_factory=dict)
    ledger: Dict[str, LedgerEntry] = Field(default_factory=dict)
