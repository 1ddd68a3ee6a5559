"""Fixtures for rollout tests: a local model server, fast retries, and episode helpers."""

from __future__ import annotations

import pytest

from tests.rollout.fake_llm import FakeLLM


@pytest.fixture
def fake_llm():
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture(scope="session")
def mock_domain(registry):
    return registry.get("mock")


@pytest.fixture(scope="session")
def mock_tasks(mock_domain):
    return mock_domain.tasks()
