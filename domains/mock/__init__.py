"""The mock domain: tau2's smallest domain (tasks for users, a user-side inbox).

Reads ``db.json``, ``user_db.json``, ``policy.md``, ``policy_solo.md`` and
``tasks.json`` from the tau2 data folder.
"""

from __future__ import annotations

from pathlib import Path

from tau_tui.domains import Domain, read_data_file
from tau_tui.env import DBSchema, Environment, make_store

from .data_model import MockDB, MockUserDB
from .tools import MockTools
from .user_tools import MockUserTools

AGENT_SCHEMA = DBSchema(MockDB)
USER_SCHEMA = DBSchema(MockUserDB)


class MockDomain(Domain):
    name = "mock"
    toolkits = (MockTools, MockUserTools)

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        return self.read_text("policy_solo.md" if solo else "policy.md")

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        data = self.require_data()
        agent_tree = self.pristine("db", AGENT_SCHEMA, lambda: read_data_file(data / "db.json"))
        user_tree = self.pristine("user_db", USER_SCHEMA, lambda: self._user_data(data))
        return Environment(
            domain_name="mock",
            policy=self.policy(solo),
            agent=MockTools(make_store(AGENT_SCHEMA, agent_tree)),
            user=MockUserTools(make_store(USER_SCHEMA, user_tree)),
            solo=solo,
        )

    def _user_data(self, data: Path) -> dict:
        """The user inbox; data folders from before tau2 1.0.1 have none, so it starts empty."""
        path = data / "user_db.json"
        if not path.exists():
            self.warnings.append(
                f"{path} is missing: the user inbox starts empty (user-DB hashes will differ from tau2 1.0.1's)"
            )
            return {"notifications": {}}
        return read_data_file(path)


DOMAIN = MockDomain


def create(data_dir: Path | None) -> MockDomain:
    return MockDomain(data_dir)
