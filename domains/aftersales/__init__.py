"""After-sales at Larkfield Home, a home-goods retailer: cancellations, returns, refunds and goodwill.

Our own domain (no tau2 data): everything lives in ``data/`` beside this file —
``db.json`` (customers, orders, returns with the returns centre's quality
check, refunds, approvals, the ledger), ``policy.md``, ``tasks.json`` and the
knowledge base ``documents/KB-*.md``. ``issue_goodwill_credit`` is a
discoverable tool: the agent is not told about it until it reads KB-205.
"""

from __future__ import annotations

import re
from pathlib import Path

from tau_tui.domains import Domain, DomainError, read_data_file
from tau_tui.env import DBSchema, Environment, make_store
from tau_tui.evaluate.compliance import PolicyRules, register_policy_rules

from .data_model import AftersalesDB
from .tools import AftersalesTools, Document

SCHEMA = DBSchema(AftersalesDB)
_TITLE = re.compile(r"^# (KB-\d+): (.+)$")


def read_documents(folder: Path) -> dict[str, Document]:
    """The knowledge base: ``# KB-nnn: Title``, then a ``> summary`` line, then the article."""
    docs: dict[str, Document] = {}
    for path in sorted(folder.glob("KB-*.md")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        match = _TITLE.match(lines[0]) if lines else None
        summary = next((line[2:].strip() for line in lines if line.startswith("> ")), "")
        if match is None:
            raise DomainError(f"{path}: a knowledge-base article starts with '# KB-nnn: Title'")
        docs[match.group(1)] = Document(match.group(1), match.group(2).strip(), summary, text)
    return docs


class AftersalesDomain(Domain):
    name = "aftersales"
    toolkits = (AftersalesTools,)
    uses_tau2_data = False

    def __init__(self, data_dir: Path | None):
        super().__init__(data_dir)
        self._documents: dict[str, Document] | None = None

    def documents(self) -> dict[str, Document]:
        if self._documents is None:
            self._documents = read_documents(self.require_data() / "documents")
        return self._documents

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        if solo:
            raise ValueError("the aftersales domain has no solo mode")
        data = self.require_data()
        tree = self.pristine("db", SCHEMA, lambda: read_data_file(data / "db.json"))
        return Environment(
            domain_name="aftersales",
            policy=self.read_text("policy.md"),
            agent=AftersalesTools(make_store(SCHEMA, tree), self.documents()),
        )


DOMAIN = AftersalesDomain


def create(data_dir: Path | None) -> AftersalesDomain:
    return AftersalesDomain(data_dir)


# What the policy asks (tau_tui.evaluate.compliance): confirm the customer with the look-up tools first.
POLICY_RULES = register_policy_rules(
    "aftersales", PolicyRules(auth_tools=frozenset({"find_customer_by_email", "find_customer_by_name"}))
)
