"""Fixtures for evaluation tests: a tiny OpenAI-compatible server on 127.0.0.1 (no other network)."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

import pytest

from tests.evaluate.support import FakeOpenAI


@pytest.fixture
def server(monkeypatch):
    """(handler class, base URL): set ``handler.content``/``status`` to shape replies; requests are recorded."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")  # a placeholder the local server ignores
    handler = type("Handler", (FakeOpenAI,), {"requests": [], "content": FakeOpenAI.content, "status": 200})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()
