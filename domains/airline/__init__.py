"""The airline domain: tau2's flight booking domain (flights, users, reservations; no user tools).

Reads ``db.json``, ``policy.md`` and ``tasks.json`` from the tau2 data folder.
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, read_data_file
from tau_tui.env import DBSchema, Environment, make_store
from tau_tui.env.invariants import Invariant, register_invariant
from tau_tui.evaluate.compliance import PolicyRules, register_policy_rules

from .data_model import FlightDB
from .invariants import (
    balances_not_negative,
    owner_lists_reservation,
    payments_cover_price,
    seats_not_negative,
    segments_exist,
)
from .tools import AirlineTools

AGENT_SCHEMA = DBSchema(FlightDB)


class AirlineDomain(Domain):
    name = "airline"
    toolkits = (AirlineTools,)

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        if solo:
            raise ValueError("Airline domain does not support solo mode")
        return self.read_text("policy.md")

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        if solo:
            raise ValueError("Airline domain does not support solo mode")
        data = self.require_data()
        tree = self.pristine("db", AGENT_SCHEMA, lambda: read_data_file(data / "db.json"))
        return Environment(
            domain_name="airline",
            policy=self.policy(),
            agent=AirlineTools(make_store(AGENT_SCHEMA, tree)),
        )


DOMAIN = AirlineDomain


def create(data_dir: Path | None) -> AirlineDomain:
    return AirlineDomain(data_dir)


# What the policy asks (tau_tui.evaluate.compliance): an explicit yes before every write; transfers only
# for what the agent cannot handle.
POLICY_RULES = register_policy_rules("airline", PolicyRules(confirm_writes=True, transfer_only_when_needed=True))

# What the data model promises after every write (domains/airline/invariants.py); the doctor checks them.
for _invariant in (
    Invariant(
        "airline-payments-cover-price",
        "airline",
        "a reservation's payments cover its price, and come to nothing once cancelled",
        payments_cover_price,
    ),
    Invariant("airline-segments-exist", "airline", "every segment is a flight on that date and route", segments_exist),
    Invariant("airline-owner-lists-reservation", "airline", "a reservation's user lists it", owner_lists_reservation),
    Invariant("airline-balances", "airline", "no gift card or certificate amount is negative", balances_not_negative),
    Invariant("airline-seats", "airline", "no flight has a negative number of free seats", seats_not_negative),
):
    register_invariant(_invariant)
