"""The telecom environment: after each step, the carrier's records flow to the user's surroundings.

tau2's ``TelecomEnvironment.sync_tools``: once the user's phone number is
known, the user's line decides whether the line is active, whether roaming is
allowed and whether the data quota is used up; a paid payment request marks
its bill paid (and is cleared); and a bill awaiting payment becomes the user's
payment request.

Syncing twice in a row changes nothing the second time, and sync never reads the
phone (``device``), so a sync is skipped when nothing else was written since the
last one that went through (``Store.writes``, ``Store.key_writes``).
"""

from __future__ import annotations

from tau_tui.env import Environment

from .data_model import LineStatus
from .tools import TelecomTools
from .user_data_model import PaymentRequest
from .user_tools import TelecomUserTools


class TelecomEnvironment(Environment):
    agent: TelecomTools
    user: TelecomUserTools

    # (agent store, user store, their write counts) after the last sync that went through.
    _synced: tuple[object, object, tuple[int, int]] | None = None

    def _writes(self, agent_db, user_db) -> tuple[int, int]:
        """Write counts of what sync reads: the carrier's records, and the user's DB but for the phone."""
        if agent_db is user_db:  # the sides share one DB (set up by initialisation data): any write counts
            return agent_db.writes, 0
        return agent_db.writes, user_db.writes - user_db.key_writes.get("device", 0)

    def sync(self) -> None:
        agent_db, user_db = self.agent.db, self.user.db
        synced = self._synced
        if (
            synced is not None
            and synced[0] is agent_db
            and synced[1] is user_db
            and synced[2] == self._writes(agent_db, user_db)
        ):
            return  # nothing sync reads was written since: syncing again writes nothing and raises nothing
        self._sync()
        self._synced = (agent_db, user_db, self._writes(agent_db, user_db))

    def _sync(self) -> None:
        # Each step is written before the next lookup that may fail, as in tau2.
        phone_number = self.user.db.surroundings["phone_number"]
        if phone_number is None:
            return
        carrier, phone = self.agent, self.user
        line = carrier._line_by_phone(phone_number)
        phone._set_surroundings(
            line_active=line["status"] == LineStatus.ACTIVE,
            roaming_allowed=bool(line["roaming_enabled"]),
        )
        plan = carrier._plan(line["plan_id"])
        used_up = line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
        phone._set_surroundings(mobile_data_usage_exceeded=used_up)
        request = phone.db.surroundings["payment_request"]
        if request is not None and request["paid"]:
            carrier._set_bill_to_paid(request["bill_id"])
            phone._set_surroundings(payment_request=None)
            request = None
        if request is None:
            customer = carrier._customer_by_phone(phone_number)
            awaiting = carrier._bills_awaiting_payment(customer)
            if awaiting:
                bill = awaiting[0]
                new_request = PaymentRequest(bill_id=bill["bill_id"], amount_due=bill["total_due"])
                phone._set_surroundings(payment_request=new_request.model_dump())
