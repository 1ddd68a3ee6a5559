"""Northgate Trade Supplies: stock in two warehouses from a fixed snapshot, trade accounts, sales orders, transfers."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict

WarehouseId = Literal["north", "south"]
OrderStatus = Literal["open", "part_allocated", "allocated", "backordered", "cancelled"]
CancellationReason = Literal["customer_request", "duplicate_order", "credit_hold"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Snapshot(Strict):
    taken_at: str
    note: str


class Warehouse(Strict):
    warehouse_id: WarehouseId
    name: str
    site: str
    trade_counter: bool


class Delivery(Strict):
    warehouse: WarehouseId
    date: str
    quantity: int


class Product(Strict):
    sku: str
    name: str
    unit: str
    category: str
    status: Literal["active", "discontinued"] = "active"
    replacement_sku: Optional[str] = None
    safety_stock: Dict[str, int]
    next_delivery: Optional[Delivery] = None


class Level(Strict):
    on_hand: int
    reserved: int


class StockRecord(Strict):
    sku: str
    levels: Dict[str, Level]


class Account(Strict):
    account_id: str
    name: str
    contact_name: str
    contact_email: str
    home_warehouse: WarehouseId
    allow_split: bool
    priority: Literal["standard", "critical"] = "standard"


class Staff(Strict):
    staff_id: str
    name: str
    role: Literal["stock_controller", "sales"]
    site: WarehouseId


class Allocation(Strict):
    warehouse: WarehouseId
    quantity: int


class OrderLine(Strict):
    line_no: int
    sku: str
    quantity: int
    allocations: List[Allocation] = []
    backordered: int = 0


class SalesOrder(Strict):
    order_id: str
    account_id: str
    status: OrderStatus
    created_on: str
    required_by: str
    lines: List[OrderLine]
    cancellation_reason: Optional[CancellationReason] = None


class Transfer(Strict):
    transfer_id: str
    sku: str
    from_warehouse: WarehouseId
    to_warehouse: WarehouseId
    quantity: int
    status: Literal["in_transit", "received"]
    created_on: str
    eta: str
    requested_by: str


class WarehouseDB(Strict):
    """The sales desk's view of stock (as counted at the snapshot) and of the orders placed against it."""

    snapshot: Snapshot
    warehouses: Dict[str, Warehouse]
    products: Dict[str, Product]
    stock: Dict[str, StockRecord]
    accounts: Dict[str, Account]
    staff: Dict[str, Staff]
    orders: Dict[str, SalesOrder]
    transfers: Dict[str, Transfer]
