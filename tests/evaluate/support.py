"""Builders for evaluation tests: replayed mock simulations from hand-made parts, and a fake judge server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, cast

from tau_tui.model import SimulationRun, Task
from tau_tui.replay import GoldResult, Timeline, gold_state, replay, run_assertions

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.environment import Environment

TASK_1_DONE = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}
UPDATE = {"task_id": "task_1", "status": "completed"}


@dataclass
class Replayed:
    """The shape ``tau_tui.evaluate`` needs (what ``SimAnalysis`` provides)."""

    sim: SimulationRun
    task: Task | None
    timeline: Timeline
    gold: GoldResult | None
    assertions: list[tuple[Any, bool | None, str | None]]


def mock_task(
    actions: list[dict[str, Any]] | None = None,
    env_assertions: list[dict[str, Any]] | None = None,
    communicate: list[str] | None = None,
    nl: list[str] | None = None,
    basis: Sequence[str] | None = ("DB",),
    task_id: str = "t",
    history: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    criteria: dict[str, Any] = {
        "actions": actions,
        "env_assertions": env_assertions,
        "communicate_info": communicate,
        "nl_assertions": nl,
    }
    if basis is not None:
        criteria["reward_basis"] = list(basis)
    task: dict[str, Any] = {"id": task_id, "user_scenario": {"instructions": "x"}, "evaluation_criteria": criteria}
    if history:
        task["initial_state"] = {"message_history": history}
    return task


def action(name: str, arguments: dict[str, Any], action_id: str = "a1", **extra: Any) -> dict[str, Any]:
    return {"action_id": action_id, "name": name, "arguments": arguments, **extra}


def replayed(
    registry: DomainRegistry,
    messages: list[dict[str, Any]],
    task: dict[str, Any] | None,
    termination: str | None = "user_stop",
    reward_info: dict[str, Any] | None = None,
    domain: str = "mock",
) -> Replayed:
    dom = registry.get(domain)

    def new_env(solo: bool = False) -> Environment:
        return dom.new_environment(solo=solo)

    sim = SimulationRun.model_validate(
        {
            "id": "sim-1",
            "task_id": task["id"] if task else "missing",
            "trial": 0,
            "termination_reason": termination,
            "messages": messages,
            "reward_info": reward_info,
        }
    )
    task_model = Task.model_validate(task) if task is not None else None
    timeline = replay(sim.trajectory, task_model, new_env)
    gold = gold_state(task_model, new_env) if task_model is not None else None
    return Replayed(sim, task_model, timeline, gold, run_assertions(timeline, task_model))


ASSERTIONS = ["The agent was polite", "The agent cancelled the order"]
REPLY = {
    "results": [
        {"expectedOutcome": ASSERTIONS[0], "reasoning": "said please", "metExpectation": True},
        {"expectedOutcome": ASSERTIONS[1], "reasoning": "no cancel call", "metExpectation": False},
    ]
}


class FakeOpenAI(BaseHTTPRequestHandler):
    """Answers /chat/completions with the configured content and records each request body."""

    content = json.dumps(REPLY)
    status = 200
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body})
        payload = {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": type(self).content}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(payload if type(self).status == 200 else {"error": {"message": "boom"}}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


# what ``fake_openai`` (and the ``server`` fixture) gives: (handler class, base URL)
Server = tuple[type[FakeOpenAI], str]


@contextmanager
def fake_openai(content: str | None = None, name: str = "Handler") -> Iterator[Server]:
    """(handler class, base URL) of a local OpenAI-compatible server on 127.0.0.1; requests are recorded."""
    handler = cast(
        "type[FakeOpenAI]",
        type(name, (FakeOpenAI,), {"requests": [], "content": content or FakeOpenAI.content, "status": 200}),
    )
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield handler, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
