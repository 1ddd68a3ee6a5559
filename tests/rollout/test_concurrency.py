"""``--concurrency N`` means N model calls at once: agent calls and the judge's (blocking) calls alike.

The server holds every request until ``N`` of the same model are in flight (or a few seconds pass) and
counts the most it ever held, so the test checks concurrency without timing anything: a pool of fewer
threads than N (asyncio's default executor has at most 32) keeps the count below N.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.evaluate.judge import LiteLLMJudge
from tau_tui.model.io import open_run
from tau_tui.model.tasks import Task
from tau_tui.rollout import ParticipantSpec, RunConfig, Runner

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

SLOTS = 40  # more than asyncio's default executor ever has threads
HOLD = 5.0  # seconds a request waits for the others before it is answered anyway


class GatheringServer(ThreadingHTTPServer):
    """Answers once ``target`` requests of one model are in flight together; ``peak`` per model."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, target: int):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.target = target
        self.in_flight: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.changed = threading.Condition()

    def hold(self, model: str) -> None:
        with self.changed:
            self.calls[model] += 1
            self.in_flight[model] += 1
            self.peak[model] = max(self.peak[model], self.in_flight[model])
            self.changed.notify_all()
            self.changed.wait_for(lambda: self.peak[model] >= self.target, timeout=HOLD)
            self.in_flight[model] -= 1


def _reply(model: str, body: dict[str, Any]) -> str:
    """The agent closes the conversation; the judge finds every expected outcome met (one per numbered line)."""
    if model != "judge":
        return "Done. Is there anything else I can help you with?"
    prompt = str(body["messages"][-1]["content"])
    outcomes = [line for line in prompt.split("Expected outcomes:")[-1].splitlines() if line[:1].isdigit()]
    return json.dumps({"results": [{"reasoning": "-", "metExpectation": True} for _ in outcomes]})


class _Handler(BaseHTTPRequestHandler):
    server: GatheringServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = str(body.get("model"))
        self.server.hold(model)
        payload = {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": _reply(model, body)}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def judged_task(registry: DomainRegistry) -> Task:
    """The mock domain's NL-assertion task with a reward that needs the judge (its basis is NL_ASSERTION)."""
    task = registry.get("mock").tasks()["create_task_1_nl_eval"]
    assert task.evaluation_criteria is not None
    criteria = task.evaluation_criteria.model_copy(update={"reward_basis": ["NL_ASSERTION"]})
    return task.model_copy(update={"evaluation_criteria": criteria})


def test_concurrency_n_holds_n_agent_calls_and_n_judge_calls_in_flight(
    registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")  # a placeholder the local server ignores
    server = GatheringServer(SLOTS)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        config = RunConfig(
            domain="mock",
            agent=ParticipantSpec("openai/agent", {"api_base": base, "temperature": 0.0}),
            user=ParticipantSpec("scripted/user"),
            tasks=[judged_task(registry)],
            num_trials=SLOTS,
            concurrency=SLOTS,
            judge_llm="openai/judge",
        )
        judge = LiteLLMJudge("openai/judge", api_base=base)
        summary = asyncio.run(Runner(config, tmp_path / "run.json", registry, judge=judge).run())
    finally:
        server.shutdown()
        server.server_close()
    assert summary.completed == SLOTS and summary.unscored == 0
    assert server.calls == {"agent": SLOTS, "judge": SLOTS}
    assert server.peak == {"agent": SLOTS, "judge": SLOTS}
    assert len(open_run(tmp_path / "run.json").raw_sims) == SLOTS
