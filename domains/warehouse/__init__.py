"""Northgate Trade Supplies, a plumbing and heating wholesaler with two warehouses (Leeds and Bristol).

Our own domain (no tau2 data): ``data/`` beside this file holds ``db.json``
(stock of both warehouses as counted at the 06:00 snapshot, products, trade
accounts, staff, sales orders, transfers), ``policy.md`` and ``tasks.json``.
The Bristol (south) stock service is being migrated: tasks that touch it carry
a fault plan (timeouts, temporary errors) the agent must ride out.
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, read_data_file
from tau_tui.env import DBSchema, Environment, make_store

from .data_model import WarehouseDB
from .tools import WarehouseTools

SCHEMA = DBSchema(WarehouseDB)


class WarehouseDomain(Domain):
    name = "warehouse"
    toolkits = (WarehouseTools,)
    uses_tau2_data = False

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        if solo:
            raise ValueError("the warehouse domain has no solo mode")
        data = self.require_data()
        tree = self.pristine("db", SCHEMA, lambda: read_data_file(data / "db.json"))
        return Environment(
            domain_name="warehouse", policy=self.read_text("policy.md"), agent=WarehouseTools(make_store(SCHEMA, tree))
        )


DOMAIN = WarehouseDomain


def create(data_dir: Path | None) -> WarehouseDomain:
    return WarehouseDomain(data_dir)
