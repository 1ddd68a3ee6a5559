"""Fixtures for evaluation tests: a tiny OpenAI-compatible server on 127.0.0.1 (no other network)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evaluate.support import Server, fake_openai


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """(handler class, base URL): set ``handler.content``/``status`` to shape replies; requests are recorded."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")  # a placeholder the local server ignores
    with fake_openai() as served:
        yield served
