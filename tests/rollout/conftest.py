"""Fixtures for rollout tests: a local model server, fast retries, and episode helpers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.rollout.fake_llm import FakeLLM

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain
    from tau_tui.model.tasks import Task


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture(scope="session")
def mock_domain(registry: DomainRegistry) -> Domain:
    return registry.get("mock")


@pytest.fixture(scope="session")
def mock_tasks(mock_domain: Domain) -> dict[str, Task]:
    return mock_domain.tasks()
