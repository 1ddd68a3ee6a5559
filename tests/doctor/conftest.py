"""Fixtures for the doctor's tests: the local OpenAI-compatible server, for the judge."""

from tests.evaluate.conftest import server  # noqa: F401 - the local OpenAI-compatible server, for the judge
