"""The bank's fixed clock, its deterministic record ids, table access and the record listing format.

Every id is a sha256 prefix of a seed string made of the record's inputs, so
a replay produces the same ids as the recording. The clock never moves:
2025-11-14 03:40 EST.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

TODAY = "11/14/2025"
NOW = datetime(2025, 11, 14, 3, 40, 0)
CURRENT_TIME = "2025-11-14 03:40:00 EST"


def hex_id(seed: str, length: int = 16) -> str:
    """The first ``length`` hex digits of sha256(seed)."""
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: str, card_type: str, merchant: str, amount: float, category: str) -> str:
    return "txn_" + hex_id(":".join(["transaction", user_id, card_type, merchant, f"{amount:.2f}", category]), 12)


def referral_id(referrer_id: str, account_type: str) -> str:
    return hex_id(f"referral:{referrer_id}:{account_type}")


def application_id(card_type: str, name: str, income: float, subscription: bool) -> str:
    return hex_id(f"credit_card:{card_type}:{name}:{income}:{subscription}")


def verification_id(user_id: str, time_verified: str) -> str:
    return f"{user_id}_" + time_verified.replace(" ", "_").replace(":", "").replace("-", "")


def user_tool_id(name: str) -> str:
    return hex_id(f"user_discoverable_tool:{name}")


def user_tool_call_id(name: str, arguments: dict[str, Any]) -> str:
    return hex_id(f"user_discoverable_tool_call:{name}:{json.dumps(arguments, sort_keys=True)}")


def agent_tool_id(name: str) -> str:
    return hex_id(f"agent_discoverable_tool:{name}")


def dispute_id(user_id: str, txn_id: str) -> str:
    return "dsp_" + hex_id(f"dispute:{user_id}:{txn_id}", 12)


def referral_link_id(user_id: str, card_name: str) -> str:
    return hex_id(f"referral_link:{user_id}:{card_name}")


def card_order_id(cc_account_id: str, user_id: str, reason: str) -> str:
    return "ccord_" + hex_id(f"credit_card_order:{cc_account_id}:{user_id}:{reason}", 12)


def closure_reason_id(cc_account_id: str, user_id: str) -> str:
    return "clsr_" + hex_id(f"closure_reason:{cc_account_id}:{user_id}", 12)


def account_flag_id(cc_account_id: str, flag_type: str, expiration: str) -> str:
    return "ccflag_" + hex_id(f"account_flag:{cc_account_id}:{flag_type}:{expiration}", 12)


def limit_request_id(cc_account_id: str, user_id: str, amount: float) -> str:
    return "cli_" + hex_id(f"cli_request:{cc_account_id}:{user_id}:{amount:.2f}", 12)


def debit_order_id(account_id: str, user_id: str, delivery: str) -> str:
    return "dcord_" + hex_id(f"debit_card_order:{account_id}:{user_id}:{delivery}", 12)


def debit_card_id(account_id: str, user_id: str, issued: str) -> str:
    return "dbc_" + hex_id(f"debit_card:{account_id}:{user_id}:{issued}", 12)


def title(code: str) -> str:
    """'goods_not_received' -> 'Goods Not Received' (how the bank prints a code)."""
    return code.replace("_", " ").title()


def money(value: Any) -> float:
    """A balance that may be a number or text such as '$2,850.00'."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def listing(table: str, rows: list[tuple[str, dict[str, Any]]]) -> str:
    """The bank's record listing: a count line, then each record's id and fields."""
    if not rows:
        return f"No records found in '{table}'."
    lines = [f"Found {len(rows)} record(s) in '{table}':\n"]
    for number, (rid, record) in enumerate(rows, 1):
        lines.append(f"{number}. Record ID: {rid}")
        lines.extend(f"   {field}: {value}" for field, value in record.items())
        lines.append("")
    return "\n".join(lines)


def found(text: str) -> bool:
    """Whether a listing found anything (the bank's tools test the text)."""
    return "No records found" not in text and "No results found" not in text


class Tables:
    """Table access over a banking store: read rows, add without overwriting, edit a record in place."""

    db: Any

    def rows(self, table: str) -> Any:
        return self.db.root[table]["data"]

    def add(self, table: str, rid: str, record: dict[str, Any]) -> bool:
        """Add a record; False (and nothing changes) if the table is unknown or the id exists."""
        if table not in self.db.root or rid in self.rows(table):
            return False
        self.db.set(table, "data", rid, record)
        return True

    def record(self, table: str, rid: str) -> dict[str, Any]:
        """A private, writable copy of a record, linked into the state."""
        return self.db.edit(table, "data", rid)

    def update(self, table: str, rid: str, **changes: Any) -> bool:
        if table not in self.db.root or rid not in self.rows(table):
            return False
        self.record(table, rid).update(changes)
        return True

    def lookup(self, table: str, field: str, value: Any) -> str:
        """Records whose ``field`` equals ``value``, as a listing.

        The bank builds the constraint as JSON text around the raw value, so a
        value with a quote in it gives the JSON parser's error, as in tau2.
        """
        try:
            constraint = json.loads(f'{{"{field}": "{value}"}}')
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON: {exc}"
        return self.select(table, constraint)

    def select(self, table: str, constraint: dict[str, Any]) -> str:
        try:
            matches = []
            for rid, record in self.rows(table).items():
                if all(_equal(record.get(k), v) for k, v in constraint.items()):
                    matches.append((rid, record))
            return listing(table, matches)
        except Exception as exc:  # noqa: BLE001 - the bank reports any query failure as text
            return f"Error querying database: {exc}"


def _equal(actual: Any, expected: Any) -> bool:
    try:
        return bool(actual == expected)
    except (TypeError, ValueError):
        return False
