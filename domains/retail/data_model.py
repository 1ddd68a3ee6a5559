"""Retail domain data, shaped like tau2's so validation, defaults, error texts and hashes agree.

Class names, field names, types, defaults and model configs follow tau2's
retail data model: entity models ignore extra keys, the DB itself forbids them.
"""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict


class Variant(BaseModel):
    """One purchasable variant (item) of a product."""

    item_id: str
    options: Dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    """A product type and its variants, keyed by item id."""

    name: str
    product_id: str
    variants: Dict[str, Variant]


class UserName(BaseModel):
    first_name: str
    last_name: str


class UserAddress(BaseModel):
    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class PaymentMethodBase(BaseModel):
    source: str
    id: str


class CreditCard(PaymentMethodBase):
    source: Literal["credit_card"]
    brand: str
    last_four: str


class Paypal(PaymentMethodBase):
    source: Literal["paypal"]


class GiftCard(PaymentMethodBase):
    source: Literal["gift_card"]
    balance: float
    id: str


PaymentMethod = Union[CreditCard, GiftCard, Paypal]


class User(BaseModel):
    """A customer: name, default address, email, payment methods and order ids."""

    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: Dict[str, PaymentMethod]
    orders: List[str]


class OrderFullfilment(BaseModel):
    """Tracking ids and the items shipped under them (tau2's spelling of the class name)."""

    tracking_id: list[str]
    item_ids: list[str]


class OrderItem(BaseModel):
    name: str
    product_id: str
    item_id: str
    price: float
    options: Dict[str, str]


OrderPaymentType = Literal["payment", "refund"]


class OrderPayment(BaseModel):
    """A payment or refund made on an order."""

    transaction_type: OrderPaymentType
    amount: float
    payment_method_id: str


OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]

CancelReason = Literal["no longer needed", "ordered by mistake"]


class Order(BaseModel):
    """An order: items, status, fulfilments, payments, and any requested change."""

    order_id: str
    user_id: str
    address: UserAddress
    items: List[OrderItem]
    status: OrderStatus
    fulfillments: List[OrderFullfilment]
    payment_history: List[OrderPayment]
    cancel_reason: Optional[CancelReason] = None
    exchange_items: Optional[List[str]] = None
    exchange_new_items: Optional[List[str]] = None
    exchange_payment_method_id: Optional[str] = None
    exchange_price_difference: Optional[float] = None
    return_items: Optional[List[str]] = None
    return_payment_method_id: Optional[str] = None


class RetailDB(BaseModel):
    """The store's products, users and orders (the agent's DB)."""

    model_config = ConfigDict(extra="forbid")
    products: Dict[str, Product]
    users: Dict[str, User]
    orders: Dict[str, Order]
