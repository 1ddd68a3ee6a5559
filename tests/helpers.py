"""Small builders for hand-made trajectories and run files used across tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import pytest

if TYPE_CHECKING:
    import subprocess

    from tau_tui.model.tasks import EvaluationCriteria, Task
    from tau_tui.rollout import EpisodeOptions

_T = TypeVar("_T")


def greet() -> dict[str, Any]:
    return {"role": "assistant", "content": "Hi! How can I help you today?", "cost": 0.0}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(name: str, arguments: Any, call_id: str = "c1", requestor: str = "assistant") -> dict[str, Any]:
    role = "user" if requestor == "user" else "assistant"
    return {
        "role": role,
        "content": None,
        "tool_calls": [{"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}],
    }


def calls(*items: tuple[str, Any, str], requestor: str = "assistant") -> dict[str, Any]:
    role = "user" if requestor == "user" else "assistant"
    return {
        "role": role,
        "content": None,
        "tool_calls": [{"id": i, "name": n, "arguments": a, "requestor": requestor} for n, a, i in items],
    }


def result(content: Any, call_id: str = "c1", error: bool = False, requestor: str = "assistant") -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content)
    return {"role": "tool", "id": call_id, "content": text, "requestor": requestor, "error": error}


MOCK_TASK = {
    "id": "t_update",
    "user_scenario": {"instructions": "Ask to finish task_1."},
    "evaluation_criteria": {
        "actions": [
            {"action_id": "a1", "name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}
        ],
        "reward_basis": ["DB"],
    },
}


def results_file(
    path: Path,
    messages: list[dict[str, Any]],
    task: dict[str, Any] | None = None,
    domain: str = "mock",
    sim_id: str = "sim-1",
    extra_sims: list[dict[str, Any]] | None = None,
    agent_impl: str = "llm_agent",
) -> Path:
    """Write a minimal tau2 results object with one simulation."""
    task = task or MOCK_TASK
    sim = {
        "id": sim_id,
        "task_id": task["id"],
        "trial": 0,
        "start_time": "2025-01-01T00:00:00",
        "end_time": "2025-01-01T00:00:10",
        "duration": 10.0,
        "termination_reason": "user_stop",
        "messages": messages,
    }
    data = {
        "timestamp": "2025-01-01T00:00:00",
        "info": {
            "num_trials": 1,
            "max_steps": 200,
            "max_errors": 10,
            "agent_info": {"implementation": agent_impl, "llm": "test-model"},
            "user_info": {"implementation": "user_simulator", "llm": "test-user"},
            "environment_info": {"domain_name": domain, "policy": "p"},
        },
        "tasks": [task],
        "simulations": [sim] + (extra_sims or []),
    }
    path.write_text(json.dumps(data, indent=2))
    return path


# orjson reads JSON nested at most this deep; a results object puts tool-call arguments 8 levels down.
READER_DEPTH = 1024
ARGUMENTS_LEVEL = 8  # results object, simulations, simulation, messages, message, tool_calls, call, arguments


def nested_list(depth: int) -> str:
    """JSON text of ``depth`` lists, one inside the other, around "x"."""
    return "[" * depth + '"x"' + "]" * depth


def nested_object(depth: int) -> str:
    return '{"a":' * depth + '"x"' + "}" * depth


def deep_results_file(path: Path, depth: int = READER_DEPTH) -> Path:
    """A run whose tool-call arguments, tool results and message content nest as deep as ``depth`` allows.

    Built as text (no recursive encoder can write it): each placeholder string
    becomes a value nested to the file's limit, ``depth`` levels overall.
    """
    room = depth - ARGUMENTS_LEVEL  # levels left for a value inside the arguments object
    text = json.dumps(nested_list(depth))  # tool result content: JSON text nested to the reader's limit
    messages = [
        greet(),
        user("go"),
        call("update_task_status", {"task_id": "task_1", "status": "@ROOM_LIST@"}, "c1"),
        result(text, "c1"),
        call("create_task", {"user_id": "user_1", "title": "@ROOM_OBJECT@", "description": "@ROOM_LIST@"}, "c2"),
        result(text, "c2"),
        call("get_users", {"x": "@ROOM_LIST@"}, "c3"),
        result("Error: " + text, "c3", error=True),
        call("no_such_tool", {"x": "@ROOM_OBJECT@"}, "c4"),
        result(text, "c4"),
        call("update_task_status", {"task_id": "task_1", "status": "@EDGE@"}, "c5"),
        result("{}", "c5"),
        {"role": "assistant", "content": "@CONTENT@"},
        say("task_1 has been updated."),
    ]
    results_file(path, messages)
    raw = path.read_text()
    for marker, value in (
        ("@ROOM_LIST@", nested_list(room)),
        ("@ROOM_OBJECT@", nested_object(room)),
        ("@EDGE@", nested_list(99)),
        ("@CONTENT@", nested_list(depth - 5)),
    ):
        raw = raw.replace(json.dumps(marker), value)
    path.write_text(raw)
    return path


def stop_process(process: subprocess.Popen[str] | subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Stop a server a test started: terminate, and kill it if it does not exit within ``timeout`` seconds."""
    import subprocess

    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def split_options(kwargs: dict[str, Any]) -> tuple[EpisodeOptions, dict[str, Any]]:
    """The ``EpisodeOptions`` fields of ``kwargs`` as one value, and the rest."""
    from tau_tui.rollout import EpisodeOptions

    names = {"seed", "max_steps", "max_errors", "timeout", "solo", "strict_history"}
    return EpisodeOptions(**{k: v for k, v in kwargs.items() if k in names}), {
        k: v for k, v in kwargs.items() if k not in names
    }


def served_address(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The address ``tau-tui serve`` prints on its stdout (a text pipe), token included; fails if it exits first."""
    import re
    import selectors
    import time

    deadline = time.monotonic() + timeout
    seen: list[str] = []
    stdout = process.stdout
    assert stdout is not None, "served_address reads the server's stdout: start it with stdout=PIPE"
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=0.5):
                continue
            line = stdout.readline()
            if not line:
                raise AssertionError(f"tau-tui serve exited ({process.wait()}) before its address: {''.join(seen)}")
            seen.append(line)
            found = re.search(r"Serving tau-tui on (\S+)", line)
            if found:
                return found.group(1)
    raise AssertionError(f"tau-tui serve printed no address within {timeout} s: {''.join(seen)}")


def wait_for_port(port: int, server: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Wait until a server process a test started accepts connections on loopback ``port``."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            said = server.stdout.read() if server.stdout is not None else ""
            raise AssertionError(f"tau-tui serve exited with {server.returncode}: {said}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"tau-tui serve did not listen on port {port} within {timeout} s")


# --- the mock grid that rollouts run elsewhere (Ray actors, worker processes) are checked against ---------------
GOLD = ["--domain", "mock", "--agent-llm", "scripted/gold", "--user-llm", "scripted/user"]
K = 2
TOTAL = 10 * K  # tau2 1.0.1's 10 mock tasks
# What differs between two local runs of the same grid (found by diffing two of them): ids made with uuid4 and
# clock readings. Everything else (messages, tool calls and results, rewards, reward_info, fingerprints) is equal.
VOLATILE_SIM = ("id", "timestamp", "start_time", "end_time", "duration")
VOLATILE_MESSAGE = ("id", "timestamp")


def normalised_sim(sim: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in sim.items() if k not in VOLATILE_SIM}
    messages = []
    for message in sim.get("messages") or []:
        message = {k: v for k, v in message.items() if k not in VOLATILE_MESSAGE}
        if message.get("tool_calls"):
            message["tool_calls"] = [{k: v for k, v in call.items() if k != "id"} for call in message["tool_calls"]]
        messages.append(message)
    out["messages"] = messages
    return out


def normalised(path: Path) -> tuple[dict[str, Any], dict[tuple[int, str, int], dict[str, Any]]]:
    """(the file without its timestamp and simulations, its simulations by (trial, task, seed), normalised)."""
    data = json.loads(path.read_text())
    sims = data.pop("simulations")
    data.pop("timestamp")
    keys = Counter((s["trial"], s["task_id"], s["seed"]) for s in sims)
    assert set(keys.values()) == {1}, keys  # each unit saved once
    return data, {(s["trial"], s["task_id"], s["seed"]): normalised_sim(s) for s in sims}


def _no_local_episodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """An episode run in this process fails loudly: what a Ray run saves must come from its actors."""
    from tau_tui.rollout.runner import Runner

    async def refuse(self: Runner, *args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError("an episode ran in the driver process")

    monkeypatch.setattr(Runner, "finish_unit", refuse)


def cli_on_corpus(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """``tau-tui ARGS --tau2-data CORPUS`` in this process: (exit code, stdout, stderr)."""
    from tau_tui.cli import main
    from tests.conftest import CORPUS

    code = main([*map(str, args), "--tau2-data", str(CORPUS)])
    out, err = capsys.readouterr()
    return code, out, err


def tau2_101_python() -> Path | None:
    """tau2 1.0.1's own Python (another interpreter, 3.12): ``$TAU2_101_PYTHON``, else the project's ``.tau2-101``
    venv (``make tau2-101``); None when neither is there."""
    import os

    named = os.environ.get("TAU2_101_PYTHON", "").strip()
    candidate = Path(named) if named else Path(__file__).resolve().parents[1] / ".tau2-101" / "bin" / "python"
    return candidate if candidate.is_file() else None


def tau2_101_data(folder: Path) -> Path:
    """A ``TAU2_DATA_DIR`` for tau2 itself (``tau2/domains``, ``tau2/user_simulator``) linking to the corpus."""
    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "tau2-corpus"
    root = folder / "tau2-data"
    (root / "tau2").mkdir(parents=True, exist_ok=True)
    for name in ("domains", "user_simulator"):
        link = root / "tau2" / name
        if not link.exists():
            link.symlink_to(corpus / name, target_is_directory=True)
    return root


def loaded_as(value: object, kind: type[_T]) -> _T:
    """``value``, checked to be a ``kind``: a class of a domain folder (``domains/<name>/...``) as the test imports it.

    The registry imports each domain folder as a package of its own (``tau_tui_domains.<name>``), so what it builds
    is an instance of a twin of the class the test imports: the same qualified name in the same module below the
    package. An instance of either counts."""

    def key(klass: type[object]) -> tuple[str, str]:
        return klass.__module__.partition(".")[2], klass.__qualname__

    assert isinstance(value, kind) or key(kind) in {key(c) for c in type(value).__mro__}, f"{value!r} is no {kind}"
    return cast(_T, value)


def criteria_of(task: Task) -> EvaluationCriteria:
    """The task's evaluation criteria, which a test relies on being there."""
    assert task.evaluation_criteria is not None, f"task {task.id} has no evaluation criteria"
    return task.evaluation_criteria
