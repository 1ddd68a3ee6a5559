"""Small builders for hand-made trajectories and run files used across tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def greet() -> dict[str, Any]:
    return {"role": "assistant", "content": "Hi! How can I help you today?", "cost": 0.0}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(name: str, arguments: Any, call_id: str = "c1", requestor: str = "assistant") -> dict[str, Any]:
    role = "user" if requestor == "user" else "assistant"
    return {"role": role, "content": None,
            "tool_calls": [{"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}]}


def calls(*items: tuple[str, Any, str], requestor: str = "assistant") -> dict[str, Any]:
    role = "user" if requestor == "user" else "assistant"
    return {"role": role, "content": None,
            "tool_calls": [{"id": i, "name": n, "arguments": a, "requestor": requestor} for n, a, i in items]}


def result(content: Any, call_id: str = "c1", error: bool = False, requestor: str = "assistant") -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content)
    return {"role": "tool", "id": call_id, "content": text, "requestor": requestor, "error": error}


MOCK_TASK = {
    "id": "t_update",
    "user_scenario": {"instructions": "Ask to finish task_1."},
    "evaluation_criteria": {
        "actions": [{"action_id": "a1", "name": "update_task_status",
                     "arguments": {"task_id": "task_1", "status": "completed"}}],
        "reward_basis": ["DB"],
    },
}


def results_file(path: Path, messages: list[dict[str, Any]], task: dict[str, Any] | None = None,
                 domain: str = "mock", sim_id: str = "sim-1", extra_sims: list[dict] | None = None,
                 agent_impl: str = "llm_agent") -> Path:
    """Write a minimal tau2 results object with one simulation."""
    task = task or MOCK_TASK
    sim = {"id": sim_id, "task_id": task["id"], "trial": 0, "start_time": "2025-01-01T00:00:00",
           "end_time": "2025-01-01T00:00:10", "duration": 10.0, "termination_reason": "user_stop",
           "messages": messages}
    data = {
        "timestamp": "2025-01-01T00:00:00",
        "info": {"num_trials": 1, "max_steps": 200, "max_errors": 10,
                 "agent_info": {"implementation": agent_impl, "llm": "test-model"},
                 "user_info": {"implementation": "user_simulator", "llm": "test-user"},
                 "environment_info": {"domain_name": domain, "policy": "p"}},
        "tasks": [task],
        "simulations": [sim] + (extra_sims or []),
    }
    path.write_text(json.dumps(data, indent=2))
    return path
