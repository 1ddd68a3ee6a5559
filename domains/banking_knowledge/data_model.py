"""The bank's transactional DB: 23 tables, each ``{data: {id: record}, notes}`` (tau2 ``TransactionalDB``).

Only this DB is hashed. The knowledge base (documents) and the in-memory
unlock and give state of an episode are not part of it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class DatabaseTable(BaseModel):
    """One table: records by id, and the free-text notes that describe its fields."""

    data: dict[str, dict[str, Any]] = Field(default_factory=dict)
    notes: str = ""


TABLES = (
    "users",
    "accounts",
    "debit_cards",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "agent_discoverable_tools",
    "task_config",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "debit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "credit_limit_increase_requests",
    "payment_history",
    "debit_card_disputes",
)


class TransactionalDB(BaseModel):
    """Everything the bank's tools read and write (both sides share one instance)."""

    users: DatabaseTable = Field(default_factory=DatabaseTable)
    accounts: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_cards: DatabaseTable = Field(default_factory=DatabaseTable)
    referrals: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_applications: DatabaseTable = Field(default_factory=DatabaseTable)
    user_discoverable_tools: DatabaseTable = Field(default_factory=DatabaseTable)
    user_discoverable_tool_calls: DatabaseTable = Field(default_factory=DatabaseTable)
    verification_history: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_transaction_history: DatabaseTable = Field(default_factory=DatabaseTable)
    cash_back_disputes: DatabaseTable = Field(default_factory=DatabaseTable)
    bank_account_transaction_history: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_accounts: DatabaseTable = Field(default_factory=DatabaseTable)
    agent_discoverable_tools: DatabaseTable = Field(default_factory=DatabaseTable)
    task_config: DatabaseTable = Field(default_factory=DatabaseTable)
    human_transfer_requests: DatabaseTable = Field(default_factory=DatabaseTable)
    transaction_disputes: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_orders: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_card_orders: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_closure_reasons: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_account_flags: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_limit_increase_requests: DatabaseTable = Field(default_factory=DatabaseTable)
    payment_history: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_card_disputes: DatabaseTable = Field(default_factory=DatabaseTable)
