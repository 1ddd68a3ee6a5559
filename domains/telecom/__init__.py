"""The telecom domain: tau2's mobile-carrier support domain with a user-controlled phone.

Reads ``db.toml``, ``user_db.toml``, the policy files and ``tasks.json`` from
the tau2 data folder. Two policy variants exist: the tech-support manual
(domain ``telecom``) and the tech-support workflow (``telecom-workflow``);
solo mode swaps in the solo main policy (and the solo workflow).
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, DomainError, read_data_file
from tau_tui.env import DBSchema, make_store
from tau_tui.env.invariants import Invariant, register_invariant
from tau_tui.evaluate.compliance import PolicyRules, register_policy_rules

from .data_model import TelecomDB
from .environment import TelecomEnvironment
from .invariants import bill_totals, data_not_negative, references_exist
from .tools import TelecomTools
from .user_data_model import TelecomUserDB
from .user_tools import TelecomUserTools

AGENT_SCHEMA = DBSchema(TelecomDB)
USER_SCHEMA = DBSchema(TelecomUserDB)

# (main policy, tech-support policy) per (variant, solo); the manual has no solo edition.
POLICY_FILES = {
    ("manual", False): ("main_policy.md", "tech_support_manual.md"),
    ("workflow", False): ("main_policy.md", "tech_support_workflow.md"),
    ("manual", True): ("main_policy_solo.md", "tech_support_manual.md"),
    ("workflow", True): ("main_policy_solo.md", "tech_support_workflow_solo.md"),
}


def policy_type(variant: str | None) -> str:
    """``None`` (domain ``telecom``) is the manual policy; ``workflow`` is ``telecom-workflow``."""
    kind = "manual" if variant in (None, "manual") else variant
    if kind not in ("manual", "workflow"):
        raise DomainError(f"Invalid policy type: {variant}")
    return kind


class TelecomDomain(Domain):
    name = "telecom"
    toolkits = (TelecomTools, TelecomUserTools)
    variants = ("workflow",)

    def __init__(self, data_dir: Path | None):
        super().__init__(data_dir)
        self._policies: dict[tuple[str, bool], str] = {}

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        """The agent policy of a variant (read once per variant and solo flag)."""
        key = (policy_type(variant), solo)
        text = self._policies.get(key)
        if text is None:
            main_file, support_file = POLICY_FILES[key]
            main, support = self.read_text(main_file), self.read_text(support_file)
            text = self._policies[key] = (
                f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{support}\n</tech_support_policy>"
            )
        return text

    def new_environment(self, solo: bool = False, variant: str | None = None) -> TelecomEnvironment:
        kind = policy_type(variant)
        data = self.require_data()
        agent_tree = self.pristine("db", AGENT_SCHEMA, lambda: read_data_file(data / "db.toml"))
        user_tree = self.pristine("user_db", USER_SCHEMA, lambda: read_data_file(data / "user_db.toml"))
        return TelecomEnvironment(
            domain_name="telecom" if kind == "manual" else "telecom-workflow",
            policy=self.policy(solo, variant),
            agent=TelecomTools(make_store(AGENT_SCHEMA, agent_tree)),
            user=TelecomUserTools(make_store(USER_SCHEMA, user_tree)),
            solo=solo,
        )

    def task_file(self) -> Path:
        """``tasks.json`` (all tasks, splits in ``split_tasks.json``), else an older folder's ``tasks_small.json``."""
        data = self.require_data()
        full = data / "tasks.json"
        return full if full.exists() or not (data / "tasks_small.json").exists() else data / "tasks_small.json"


DOMAIN = TelecomDomain


def create(data_dir: Path | None) -> TelecomDomain:
    return TelecomDomain(data_dir)


# What the policy asks (tau_tui.evaluate.compliance): try to resolve before transferring to a human.
POLICY_RULES = register_policy_rules("telecom", PolicyRules(transfer_only_when_needed=True))

# What the data model promises after every write (domains/telecom/invariants.py); the doctor checks them.
for _invariant in (
    Invariant("telecom-bill-total", "telecom", "a bill's total due is the sum of its line items", bill_totals),
    Invariant(
        "telecom-references", "telecom", "customers' lines and bills, lines' plans and devices exist", references_exist
    ),
    Invariant("telecom-data-used", "telecom", "no line's data used or refuelled is negative", data_not_negative),
):
    register_invariant(_invariant)
