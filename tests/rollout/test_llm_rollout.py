"""Full rollouts through litellm against a local OpenAI-compatible server (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.llm.credentials import MissingCredentials
from tau_tui.model.io import RunFile, open_run
from tau_tui.model.messages import AssistantMessage
from tau_tui.rollout import LLMRetried, ParticipantSpec, RetryPolicy, RunConfig, Runner, RunSummary, trial_seeds
from tests.rollout.fake_llm import FakeLLM, call, error, no_choices, text

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

FAST = RetryPolicy(max_retries=3, initial=0.01, factor=2.0, max_delay=0.05)
PRICES = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def rollout(
    registry: DomainRegistry,
    tmp_path: Path,
    fake: FakeLLM,
    task_id: str,
    agent_model: str = "openai/agent-model",
    user_model: str = "openai/user-model",
    retry: RetryPolicy = FAST,
    **config: Any,
) -> tuple[RunSummary, RunFile, list[object]]:
    events: list[object] = []
    config.setdefault("task_ids", [task_id])
    cfg = RunConfig(
        domain="mock",
        agent=ParticipantSpec(agent_model, fake.args(**PRICES), retry=retry),
        user=ParticipantSpec(user_model, fake.args(**PRICES), retry=retry),
        **config,
    )
    path = tmp_path / "run.json"
    summary = asyncio.run(Runner(cfg, path, registry, listener=events.append).run())
    run = open_run(path)
    return summary, run, events


def test_llm_agent_and_user_full_rollout_with_a_retried_rate_limit(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        "agent-model",
        [
            error(429, "Rate limit reached for requests"),
            call("update_task_status", {"task_id": "task_1", "status": "completed"}, "call_x"),
            text("task_1 is now completed. Anything else?"),
        ],
    )
    fake_llm.script("user-model", [text("Hi, please mark task_1 as completed."), text("That's all. ###STOP###")])
    summary, run, events = rollout(registry, tmp_path, fake_llm, "update_task_1")

    assert summary.completed == 1 and summary.rewards == [1.0]
    sim = run.simulation(0)
    assert sim.termination_reason == "user_stop"
    assert sim.reward_info is not None and sim.reward_info.db_check is not None and sim.messages is not None
    assert sim.reward_info.reward == 1.0 and sim.reward_info.db_check.db_match is True
    assert [m.role for m in sim.messages] == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    call_msg = sim.messages[2]
    assert isinstance(call_msg, AssistantMessage) and call_msg.tool_calls is not None
    assert call_msg.model_extra is not None
    assert call_msg.tool_calls[0].id == "call_x" and call_msg.tool_calls[0].requestor == "assistant"
    assert call_msg.usage == {"completion_tokens": 5, "prompt_tokens": 10}
    assert call_msg.cost == pytest.approx(10 * 1e-6 + 5 * 2e-6)
    assert call_msg.raw_data["choices"][0]["message"]["tool_calls"][0]["id"] == "call_x"
    assert call_msg.model_extra["generation_time_seconds"] >= 0
    assert sim.agent_cost == pytest.approx(2 * 2e-5) and sim.user_cost == pytest.approx(2 * 2e-5)

    # The rate limit was retried: three agent requests for two agent turns, and one retry event.
    agent_requests = fake_llm.requests_for("agent-model")
    assert len(agent_requests) == 3
    assert agent_requests[0].body == agent_requests[1].body
    retries = [e for e in events if isinstance(e, LLMRetried)]
    assert len(retries) == 1 and retries[0].side == "agent" and retries[0].error.startswith("RateLimitError: ")

    # What went over the wire: seed of the trial, tools, roles.
    seed = trial_seeds(300, 1)[0]
    first = agent_requests[1].body
    assert first["seed"] == seed and sim.seed == seed and sim.trial == 0
    assert first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]] == [
        "create_task",
        "get_users",
        "update_task_status",
        "transfer_to_human_agents",
    ]
    assert first["messages"][0]["role"] == "system" and "<policy>" in first["messages"][0]["content"]
    assert [m["role"] for m in first["messages"][1:]] == ["assistant", "user"]
    after_tool = agent_requests[2].body["messages"]
    assert after_tool[-1] == {"role": "tool", "content": sim.messages[3].content, "tool_call_id": "call_x"}
    user_second = fake_llm.requests_for("user-model")[1].body
    assert [m["role"] for m in user_second["messages"]] == ["system", "user", "assistant", "user"]
    assert user_second["messages"][2]["content"] == "Hi, please mark task_1 as completed."
    assert [t["function"]["name"] for t in user_second["tools"]] == ["check_notifications", "dismiss_notification"]
    assert agent_requests[1].headers["authorization"] == "Bearer sk-test-not-a-real-key-000000"

    # Our replay accepts the recording as it is.
    analysis = Analyzer(registry).analyze(run, 0)
    assert analysis.timeline.strict_ok and analysis.db_match


def test_malformed_tool_call_json_ends_with_agent_error(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    bad = '{"task_id": "task_1", "status": '
    fake_llm.script("agent-model", [call("update_task_status", bad, "call_bad")])
    fake_llm.script("user-model", [text("Please mark task_1 as completed.")])
    summary, run, _ = rollout(registry, tmp_path, fake_llm, "update_task_1")
    sim = run.simulation(0)
    assert sim.termination_reason == "agent_error"
    assert sim.info is not None and sim.messages is not None and sim.reward_info is not None
    assert sim.reward_info.info is not None
    assert sim.info["side"] == "agent" and sim.info["error_type"] == "MalformedToolCall"
    assert sim.info["malformed_reply"]["arguments"] == bad
    assert sim.info["malformed_reply"]["tool"] == "update_task_status"
    assert [m.role for m in sim.messages] == ["assistant", "user"]  # the malformed reply is not a message
    assert sim.reward_info.reward == 0.0 and "agent_error" in sim.reward_info.info["note"]
    assert len(fake_llm.requests_for("agent-model")) == 1  # not retried: the model answered, badly
    assert Analyzer(registry).analyze(run, 0).timeline.strict_ok


def test_tool_arguments_nested_too_deep_end_with_agent_error(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    deep = '{"task_id": "task_1", "status": ' + "[" * 500 + "]" * 500 + "}"
    fake_llm.script("agent-model", [call("update_task_status", deep, "call_deep")])
    fake_llm.script("user-model", [text("Please mark task_1 as completed.")])
    _, run, _ = rollout(registry, tmp_path, fake_llm, "update_task_1")
    sim = run.simulation(0)
    assert sim.info is not None
    assert sim.termination_reason == "agent_error" and sim.info["error_type"] == "MalformedToolCall"
    assert "nested deeper than 100 levels" in sim.info["error"]


def test_tool_arguments_that_are_not_an_object_end_the_user_side_with_user_error(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("user-model", [call("check_notifications", "[1, 2]")])
    _, run, _ = rollout(registry, tmp_path, fake_llm, "update_task_1")
    sim = run.simulation(0)
    assert sim.info is not None
    assert sim.termination_reason == "user_error" and sim.info["side"] == "user"
    assert "not an object" in sim.info["error"]


def test_transient_errors_exhaust_the_retries_as_an_infrastructure_error(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("user-model", [error(503, "overloaded")] * 4)
    summary, run, events = rollout(registry, tmp_path, fake_llm, "update_task_1")
    sim = run.simulation(0)
    assert sim.termination_reason == "infrastructure_error"
    assert sim.info is not None and sim.reward_info is not None
    assert len(fake_llm.requests_for("user-model")) == 4  # 1 + 3 retries
    assert sim.info["details"]["attempts"] == 4 and "after 4 attempts" in sim.info["error"]
    assert [e.attempt for e in events if isinstance(e, LLMRetried)] == [1, 2, 3]
    assert sim.reward_info.reward == 0.0
    assert summary.terminations["infrastructure_error"] == 1


def test_a_reply_without_choices_is_retried_then_an_infrastructure_error_that_resume_reruns(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("user-model", [no_choices()] * 4)
    summary, run, events = rollout(registry, tmp_path, fake_llm, "update_task_1")
    sim = run.simulation(0)
    assert sim.info is not None
    assert sim.termination_reason == "infrastructure_error" and summary.terminations["infrastructure_error"] == 1
    assert sim.info["error_type"] == "EmptyReply" and "no choices" in sim.info["error"]
    assert len(fake_llm.requests_for("user-model")) == 4
    assert [e.attempt for e in events if isinstance(e, LLMRetried)] == [1, 2, 3]

    fake_llm.script("agent-model", [text("Done.")])
    fake_llm.script(
        "user-model",
        [
            no_choices([{"index": 0, "finish_reason": "stop", "message": None}]),
            text("Please complete task_1."),
            text("Bye ###STOP###"),
        ],
    )
    cfg = RunConfig(
        domain="mock",
        task_ids=["update_task_1"],
        agent=ParticipantSpec("openai/agent-model", fake_llm.args(**PRICES), retry=FAST),
        user=ParticipantSpec("openai/user-model", fake_llm.args(**PRICES), retry=FAST),
    )
    asyncio.run(Runner(cfg, tmp_path / "run.json", registry, resume=True).run())
    again = open_run(tmp_path / "run.json")
    assert [s.termination_reason for s in again.to_results().simulations] == ["user_stop"]


@pytest.mark.parametrize("layout", ["json", "dir"])
def test_a_refused_key_stops_the_run_at_its_first_call_and_saves_nothing(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM, layout: str
) -> None:
    fake_llm.script(
        "agent-model",
        [error(401, "Incorrect API key provided: sk-test-not-a-real-key-000000.")],
        then=text("never asked"),
    )
    fake_llm.script("user-model", [], then=text("Please mark task_1 as completed."))
    cfg = RunConfig(
        domain="mock",
        task_ids=["update_task_1", "create_task_1"],
        num_trials=2,
        concurrency=2,
        layout=layout,
        agent=ParticipantSpec("openai/agent-model", fake_llm.args(), retry=FAST),
        user=ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST),
    )
    path = tmp_path / ("run.json" if layout == "json" else "rundir")
    events: list[object] = []
    with pytest.raises(MissingCredentials) as stopped:
        asyncio.run(Runner(cfg, path, registry, listener=events.append).run())
    message = str(stopped.value)
    assert "openai/agent-model: the provider refused the credentials (AuthenticationError" in message
    assert "\n" not in message and "sk-test-not-a-real-key" not in message
    assert len(fake_llm.requests_for("agent-model")) <= 2  # not retried: one call per episode in flight at most
    assert not [e for e in events if isinstance(e, LLMRetried)]
    assert not path.exists() and list(tmp_path.iterdir()) == []  # no results file, no lock, no folder


def test_a_missing_credential_error_from_litellm_names_the_variable_and_is_not_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import litellm
    from litellm.exceptions import InternalServerError

    from tau_tui.llm.client import LLMSettings, complete

    calls = []

    async def refuse(**kwargs: Any) -> None:
        calls.append(kwargs["model"])
        raise InternalServerError(
            "OpenAIException - Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` "
            "environment variable.",
            llm_provider="openai",
            model="gpt-4.1",
        )

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(litellm, "acompletion", refuse)
    with pytest.raises(MissingCredentials) as stopped:
        asyncio.run(complete(LLMSettings("openai/gpt-4.1", {"temperature": 0.0}, retry=FAST), []))
    assert str(stopped.value) == "OPENAI_API_KEY is not set (openai/gpt-4.1 needs it)"
    assert calls == ["openai/gpt-4.1"]


def test_a_model_without_its_key_is_refused_before_the_run_starts(
    registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm

    async def never(**kwargs: Any) -> None:
        raise AssertionError("no model call before the credentials are there")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(litellm, "acompletion", never)
    cfg = RunConfig(
        domain="mock",
        task_ids=["update_task_1"],
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("openai/gpt-4.1", retry=FAST),
    )
    path = tmp_path / "run.json"
    with pytest.raises(MissingCredentials, match=r"^OPENAI_API_KEY is not set \(the user model openai/gpt-4.1 "):
        asyncio.run(Runner(cfg, path, registry).run())
    assert list(tmp_path.iterdir()) == []
    own_server = ParticipantSpec("openai/gpt-4.1", {"api_base": "http://127.0.0.1:9/v1"})
    assert own_server.credentials_problem("user") is None  # a local server needs no key


def test_context_window_overflow_has_its_own_termination(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        "agent-model",
        [
            error(
                400,
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            )
        ],
    )
    fake_llm.script("user-model", [text("hello")])
    _, run, _ = rollout(registry, tmp_path, fake_llm, "update_task_1")
    assert run.simulation(0).termination_reason == "context_window_exceeded"


def test_solo_llm_agent_gets_required_tool_choice_and_done_stops(
    registry: DomainRegistry, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        "agent-model",
        [
            call("update_task_status", {"task_id": "task_1", "status": "completed"}, "c1"),
            call("done", {}, "c2"),
        ],
    )
    summary, run, _ = rollout(registry, tmp_path, fake_llm, "update_task_1", solo=True)
    sim = run.simulation(0)
    assert sim.termination_reason == "agent_stop"
    assert sim.messages is not None and sim.reward_info is not None
    last = sim.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.content == "###STOP###" and last.tool_calls is None
    body = fake_llm.requests_for("agent-model")[0].body
    assert body["tool_choice"] == "required"
    names = [t["function"]["name"] for t in body["tools"]]
    assert names[-1] == "done" and "check_notifications" in names
    ticket = "<ticket>\nUser needs to update the status of task_1 to completed.\n</ticket>"
    assert ticket in body["messages"][0]["content"]
    assert run.user_implementation == "dummy_user" and run.solo
    assert sim.reward_info.reward == 1.0
