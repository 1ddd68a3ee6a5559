"""What banking's data model promises after every write (``tau_tui.env.invariants``).

The DB is tables of records keyed by id (``{"data": {key: record}}``).

- a record's own id field is its key (``users.data[k].user_id == k``, ...);
- an account, card, card order or card payment names a user (``user_id``) that exists (transactions may
  name someone outside the bank: a friend paid is no user of it).
"""

from __future__ import annotations

from typing import Any, Iterator

from tau_tui.env.invariants import Scope, Violation

ID_FIELDS = {
    "users": "user_id",
    "accounts": "account_id",
    "debit_cards": "card_id",
    "referrals": "referral_id",
    "credit_card_applications": "application_id",
    "credit_card_transaction_history": "transaction_id",
    "bank_account_transaction_history": "transaction_id",
    "credit_card_accounts": "account_id",
    "transaction_disputes": "dispute_id",
    "credit_card_orders": "order_id",
    "credit_card_closure_reasons": "record_id",
    "payment_history": "payment_id",
}


def _records(db: Any, table: str) -> dict[str, Any]:
    value = db.get(table) if isinstance(db, dict) else None
    data = value.get("data") if isinstance(value, dict) else None
    return data if isinstance(data, dict) else {}


def ids_are_keys(db: Any, scope: Scope) -> Iterator[Violation]:
    for table, name in ID_FIELDS.items():
        for key, record in _records(db, table).items():
            if isinstance(record, dict) and name in record and record[name] != key:
                yield Violation(f"{table}.data.{key}.{name}", f"is {record[name]!r}, its key is {key!r}")


OWNED = ("accounts", "debit_cards", "credit_card_accounts", "credit_card_orders", "payment_history")


def users_exist(db: Any, scope: Scope) -> Iterator[Violation]:
    users = _records(db, "users")
    for table in OWNED:
        for key, record in _records(db, table).items():
            if isinstance(record, dict) and record.get("user_id") is not None and record["user_id"] not in users:
                yield Violation(f"{table}.data.{key}.user_id", f"no user {record['user_id']!r}")
