"""Telecom agent-side data (plans, devices, lines, bills, customers), shaped like tau2's.

Class names, field names, types, defaults and ``extra="forbid"`` follow tau2's
telecom models exactly: validation coerces the TOML data the same way, error
messages name the same classes, and the canonical dump hashes identically.
"""

from __future__ import annotations

import datetime
from enum import Enum
from typing import List, Optional

from pydantic import BaseModel, ConfigDict, Field

# tau2 gives ``Customer.created_at`` a *date* default although the field is a
# datetime; defaults are not validated, so a customer without the field dumps
# (and hashes) as a plain date.
DEFAULT_START_DATE = datetime.date(2025, 1, 1)


class StrictModel(BaseModel):
    """A model that rejects unknown fields (tau2's ``BaseModelNoExtra``)."""

    model_config = ConfigDict(extra="forbid")


class Address(StrictModel):
    street: str
    city: str
    state: str
    zip_code: str


class Plan(StrictModel):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class DeviceType(str, Enum):
    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(StrictModel):
    device_id: str
    device_type: DeviceType
    model: str
    imei: Optional[str] = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: Optional[datetime.datetime] = None
    last_esim_transfer_date: Optional[datetime.datetime] = None


class LineStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(StrictModel):
    line_id: str
    phone_number: str
    status: LineStatus = LineStatus.PENDING_ACTIVATION
    plan_id: str
    device_id: Optional[str] = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: Optional[datetime.date] = None
    last_plan_change_date: Optional[datetime.date] = None
    last_sim_replacement_date: Optional[datetime.date] = None
    suspension_start_date: Optional[datetime.date] = None


class LineItem(StrictModel):
    description: str
    amount: float
    date: datetime.date
    item_type: str


class BillStatus(str, Enum):
    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(StrictModel):
    bill_id: str
    customer_id: str
    period_start: datetime.date
    period_end: datetime.date
    issue_date: datetime.date
    total_due: float
    due_date: datetime.date
    line_items: List[LineItem] = Field(default_factory=list)
    status: BillStatus = BillStatus.DRAFT


class AccountStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(str, Enum):
    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(StrictModel):
    method_type: PaymentMethodType
    account_number_last_4: str
    expiration_date: str


class Customer(StrictModel):
    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: AccountStatus = AccountStatus.PENDING_VERIFICATION
    payment_methods: List[PaymentMethod] = Field(default_factory=list)
    line_ids: List[str] = Field(default_factory=list)
    bill_ids: List[str] = Field(default_factory=list)
    created_at: datetime.datetime = DEFAULT_START_DATE
    last_extension_date: Optional[datetime.date] = None
    goodwill_credit_used_this_year: float = 0.0


class TelecomDB(StrictModel):
    """The carrier's records: the agent's DB."""

    plans: List[Plan] = Field(default_factory=list)
    customers: List[Customer] = Field(default_factory=list)
    lines: List[Line] = Field(default_factory=list)
    bills: List[Bill] = Field(default_factory=list)
    devices: List[Device] = Field(default_factory=list)
