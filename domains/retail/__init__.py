"""The retail domain: tau2's online store (products, customers, orders; no user-side tools).

Reads ``db.json``, ``policy.md`` and ``tasks.json`` from the tau2 data folder.
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, read_data_file
from tau_tui.env import DBSchema, Environment, make_store
from tau_tui.env.invariants import Invariant, register_invariant
from tau_tui.env.upstream import UpstreamFix, register_upstream_fix
from tau_tui.evaluate.compliance import PolicyRules, register_policy_rules

from .data_model import RetailDB
from .invariants import gift_cards_not_negative, items_match_their_variants, payments_add_up
from .tools import RetailTools, modify_pending_order_items_fixed

SCHEMA = DBSchema(RetailDB)


class RetailDomain(Domain):
    name = "retail"
    toolkits = (RetailTools,)

    def __init__(self, data_dir: Path | None):
        super().__init__(data_dir)
        self._policy: str | None = None

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        """The agent policy (read once); retail has no solo policy, as in tau2."""
        if solo:
            raise ValueError("Retail domain does not support solo mode")
        if self._policy is None:
            self._policy = self.read_text("policy.md")
        return self._policy

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        policy = self.policy(solo)
        data = self.require_data()
        tree = self.pristine("db", SCHEMA, lambda: read_data_file(data / "db.json"))
        return Environment(
            domain_name="retail",
            policy=policy,
            agent=RetailTools(make_store(SCHEMA, tree)),
        )


DOMAIN = RetailDomain


def create(data_dir: Path | None) -> RetailDomain:
    return RetailDomain(data_dir)


# What the policy asks (tau_tui.evaluate.compliance): authenticate by email or name + zip first, an explicit
# yes before every write, transfers only for what the agent cannot handle.
POLICY_RULES = register_policy_rules(
    "retail",
    PolicyRules(
        confirm_writes=True,
        auth_tools=frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"}),
        transfer_only_when_needed=True,
    ),
)

# tau2 1.0.1's modify_pending_order_items gives every changed item the price and options of the last new variant;
# replay classes a recording made with the fix as an upstream_fix, and replays with it on --upstream-fixes.
MODIFY_ITEMS_FIX = register_upstream_fix(
    UpstreamFix(
        name="retail-modify-items-own-variant",
        domain="retail",
        tool="modify_pending_order_items",
        issue="tau2-bench#317",
        refs=("#318", "fix #322"),
        summary="each changed item takes its own new variant's price and options (1.0.1 gives every one the last's)",
        fixed=modify_pending_order_items_fixed,
    )
)

# What the data model promises after every write (domains/retail/invariants.py); the doctor checks them.
for _invariant in (
    Invariant(
        "retail-item-own-variant",
        "retail",
        "every order item has the price and options of its own variant in the catalogue",
        items_match_their_variants,
    ),
    Invariant(
        "retail-payments-add-up",
        "retail",
        "payments less refunds equal the items' total (nothing for a cancelled order)",
        payments_add_up,
    ),
    Invariant("retail-gift-card-balance", "retail", "no gift card balance is negative", gift_cards_not_negative),
):
    register_invariant(_invariant)
