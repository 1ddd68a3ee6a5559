"""A provider's reply may carry a key (content, raw data, error bodies): no key of the environment or of the
model arguments reaches the results file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.llm.credentials import MissingCredentials
from tau_tui.rollout import ParticipantSpec, RetryPolicy, RunConfig, Runner
from tests.rollout.fake_llm import FakeLLM, error, text

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

FAST = RetryPolicy(max_retries=1, initial=0.01, factor=2.0, max_delay=0.02)
# Not key-shaped (no sk- prefix): only knowing the environment's values can blank them.
ENV_KEY = "EnvProviderKeyValue0123456789"
ENV_TOKEN = "plain-token-value-abcdefgh"
ARG_KEY = "ArgumentKeyValue9876543210"


def test_keys_in_replies_contents_and_error_bodies_are_not_written(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPROVIDER_API_KEY", ENV_KEY)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", ENV_TOKEN)
    monkeypatch.setenv("TINY_KEY", "abc123")  # too short to be a key: left alone
    fake_llm.script(
        "agent-model",
        [text(f"Your key is {ENV_KEY} and {ARG_KEY}. Anything else? abc123")],
        then=text("Anything else?"),
    )
    fake_llm.script(
        "user-model", [text(f"Please mark task_1 as completed; token {ENV_TOKEN}."), text("That's all. ###STOP###")]
    )
    agent = ParticipantSpec("openai/agent-model", {**fake_llm.args(), "api_key": ARG_KEY}, retry=FAST)
    user = ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST)
    path = tmp_path / "run.json"
    asyncio.run(
        Runner(RunConfig(domain="mock", agent=agent, user=user, task_ids=["update_task_1"]), path, registry).run()
    )
    written = path.read_text()
    assert "Your key is *** and ***. Anything else? abc123" in written  # the reply was recorded, keys blanked
    for secret in (ENV_KEY, ENV_TOKEN, ARG_KEY):
        assert secret not in written, secret


def test_a_key_echoed_in_an_error_body_is_not_written(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPROVIDER_API_KEY", ENV_KEY)
    fake_llm.script("agent-model", [error(400, f"Request rejected for caller {ENV_KEY}")])
    fake_llm.script("user-model", [text("hello")])
    agent = ParticipantSpec("openai/agent-model", fake_llm.args(), retry=FAST)
    user = ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST)
    path = tmp_path / "run.json"
    asyncio.run(
        Runner(RunConfig(domain="mock", agent=agent, user=user, task_ids=["update_task_1"]), path, registry).run()
    )
    written = path.read_text()
    assert "Request rejected for caller ***" in written and ENV_KEY not in written


def test_a_key_echoed_by_a_refusal_is_blanked_in_the_one_line_that_stops_the_run(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPROVIDER_API_KEY", ENV_KEY)
    fake_llm.script("agent-model", [error(401, f"Invalid credentials: {ENV_KEY} {ARG_KEY}")])
    fake_llm.script("user-model", [text("hello")])
    agent = ParticipantSpec("openai/agent-model", {**fake_llm.args(), "api_key": ARG_KEY}, retry=FAST)
    user = ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST)
    path = tmp_path / "run.json"
    with pytest.raises(MissingCredentials) as stopped:
        asyncio.run(
            Runner(RunConfig(domain="mock", agent=agent, user=user, task_ids=["update_task_1"]), path, registry).run()
        )
    assert "Invalid credentials: *** ***" in str(stopped.value)
    assert ENV_KEY not in str(stopped.value) and ARG_KEY not in str(stopped.value) and not path.exists()
