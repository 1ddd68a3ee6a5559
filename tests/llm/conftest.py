"""Fixtures for the model client's tests: a local OpenAI-compatible server."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.rollout.fake_llm import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()
