"""The airline domain: tau2's flight booking domain (flights, users, reservations; no user tools).

Reads ``db.json``, ``policy.md`` and ``tasks.json`` from the tau2 data folder.
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, read_data_file
from tau_tui.env import DBSchema, Environment, make_store
from tau_tui.evaluate.compliance import PolicyRules, register_policy_rules

from .data_model import FlightDB
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
