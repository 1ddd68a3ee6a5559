"""``run --workers N`` (no Ray): the episodes run in N local worker processes and save what a one-process run
saves; units in flight reach ``--concurrency``; a worker killed mid-run loses only its units, which
``--resume`` runs again (each unit saved once); a model without its key is refused before anything is
written."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from benchmarks.latency_server import LatencyServer
from tau_tui.cli import main
from tests.conftest import CORPUS, corpus_required
from tests.helpers import GOLD, TOTAL, K, _no_local_episodes, normalised
from tests.helpers import cli_on_corpus as cli

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from tau_tui.config import Settings
    from tau_tui.rollout import RunConfig
    from tau_tui.workers.process_rollout import ProcessRollout, WorkspaceFactory

pytestmark = pytest.mark.corpus


def _agent(server: LatencyServer) -> list[str]:
    args = {"api_base": server.base_url, "api_key": "sk-local"}
    return ["--agent-llm", "openai/latency-server", "--agent-llm-args", json.dumps(args), "--llm-retries", "0"]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mock grid (10 tasks x 2 trials, gold agent) run in one process."""
    corpus_required()
    path = tmp_path_factory.mktemp("local") / "local.json"
    assert main(["run", *GOLD, "-k", str(K), "--out", str(path), "--quiet", "--tau2-data", str(CORPUS)]) == 0
    return path


def test_run_on_worker_processes_saves_what_one_process_saves(
    local_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_local_episodes(monkeypatch)  # the workers are forked from a server that never saw this patch
    out = tmp_path / "workers.json"
    code, stdout, stderr = cli(capsys, "run", *GOLD, "-k", K, "--out", out, "--workers", 2, "--quiet")
    assert code == 0, stderr
    assert stdout.strip() == (
        f"{out}: {TOTAL}/{TOTAL} simulations ({TOTAL} this run); average reward 0.800; terminations: user_stop {TOTAL}; "
        "protocol own"
    )
    assert normalised(out) == normalised(local_run)


def test_units_in_flight_reach_the_concurrency_over_the_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus_required()
    out = tmp_path / "run.json"
    with LatencyServer(delay=0.4) as server:
        argv = ["run", "--domain", "mock", *_agent(server), "--user-llm", "scripted/user", "-k", K]
        code, _, stderr = cli(capsys, *argv, "--concurrency", 8, "--workers", 2, "--out", out, "--quiet")
        assert code == 0, stderr
        assert server.peak == 8  # not one unit per worker: the runner's limit counts the workers' slots
    sims = json.loads(out.read_text())["simulations"]
    assert len(sims) == TOTAL and {s["termination_reason"] for s in sims} == {"user_stop"}


def test_a_killed_worker_loses_only_its_units_and_resume_runs_them_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tau_tui.config import Settings
    from tau_tui.rollout import SimulationFinished, WorkerLost
    from tau_tui.rollout.progress import lost_text
    from tau_tui.workers.process_rollout import ProcessRollout
    from tau_tui.workspace import RunRequest, Workspace

    corpus_required()
    out = tmp_path / "run.json"
    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    with LatencyServer(delay=0.5) as server:
        agent_args = {"api_base": server.base_url, "api_key": "sk-local"}
        request = RunRequest(
            "mock",
            "openai/latency-server",
            "scripted/user",
            agent_args=agent_args,
            num_trials=K,
            concurrency=4,
            out=out,
            llm_retries=0,
        )
        plan = workspace.run_plan(request)
        remote = ProcessRollout(workspace.settings, Workspace, 2)
        killed: list[int] = []
        lost: list[Any] = []

        def kill_one(event: object) -> None:
            if isinstance(event, WorkerLost):
                lost.append(event)
            if isinstance(event, SimulationFinished) and not killed:
                victim = remote._workers[0].process
                killed.append(victim.pid)
                os.kill(victim.pid, signal.SIGKILL)

        runner = workspace.runner(plan, kill_one, remote)
        with remote:
            summary = asyncio.run(runner.run())
        assert [(e.node, e.error, e.local) for e in lost] == [(f"local/{killed[0]}", "exit code -9", True)]
        assert lost_text(lost[0]).startswith(f"the worker process local/{killed[0]} died (exit code -9): its units")
        sims = json.loads(out.read_text())["simulations"]
        lost = [s for s in sims if s["termination_reason"] == "infrastructure_error"]
        assert killed and len(sims) == TOTAL == summary.completed
        assert 1 <= len(lost) <= 2  # at most the units the killed worker had (4 at once over 2 workers)
        assert all("the worker process died" in s["info"]["error"] for s in lost)
        assert len({(s["trial"], s["task_id"]) for s in sims}) == TOTAL

        argv = ["run", "--domain", "mock", *_agent(server), "--user-llm", "scripted/user", "-k", K, "--resume"]
        code, stdout, stderr = cli(capsys, *argv, "--workers", 2, "--concurrency", 4, "--out", out, "--quiet")
        assert code == 0, stderr
        assert f"{TOTAL}/{TOTAL} simulations ({len(lost)} this run)" in stdout
    after = json.loads(out.read_text())["simulations"]
    keys = Counter((s["trial"], s["task_id"], s["seed"]) for s in after)
    assert len(keys) == TOTAL and set(keys.values()) == {1}
    assert {s["termination_reason"] for s in after} == {"user_stop"}


def test_a_model_without_its_key_is_refused_by_the_workers_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus_required()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run.json"
    argv = ["run", "--domain", "mock", "--agent-llm", "openai/gpt-4.1", "--user-llm", "scripted/user", "-k", 1]
    code, _, stderr = cli(capsys, *argv, "--workers", 2, "--out", out, "--quiet")
    assert code == 2
    assert stderr.strip().splitlines() == [
        "tau-tui: OPENAI_API_KEY is not set (the agent model openai/gpt-4.1 needs it)"
    ]
    assert not out.exists()


def test_the_workers_episode_events_reach_the_listener_as_in_one_process(tmp_path: Path) -> None:
    from tau_tui.config import Settings
    from tau_tui.rollout import (
        ParticipantSpec,
        RunConfig,
        RunFinished,
        Runner,
        RunStarted,
        SimulationFinished,
        SimulationMessage,
        SimulationPlaced,
        SimulationStarted,
        WorkerLost,
        WorkersStarted,
    )
    from tau_tui.rollout.progress import RunTally
    from tau_tui.workers.process_rollout import ProcessRollout
    from tau_tui.workspace import Workspace

    corpus_required()
    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig(
        "mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), num_trials=1, concurrency=4
    )

    def events_of(remote: ProcessRollout | None) -> list[Any]:
        events: list[Any] = []
        runner = Runner(config, tmp_path / f"{remote is not None}.json", workspace.registry, listener=events.append)
        runner.remote = remote
        asyncio.run(runner.run())
        return events

    alone = events_of(None)
    with ProcessRollout(workspace.settings, Workspace, 2) as remote:
        spread = events_of(remote)
    progress_kinds = (WorkersStarted, SimulationPlaced)
    kinds = Counter(type(e) for e in spread if not isinstance(e, progress_kinds))
    assert kinds == Counter(type(e) for e in alone)
    assert kinds[RunStarted] == kinds[RunFinished] == 1 and kinds[SimulationStarted] == kinds[SimulationFinished] == 10
    assert kinds[SimulationMessage] > 20

    def messages(events: list[Any]) -> Counter[tuple[str, int, str]]:
        return Counter((e.task_id, e.trial, e.message.role) for e in events if isinstance(e, SimulationMessage))

    assert messages(spread) == messages(alone)
    finished = [e for e in spread if isinstance(e, SimulationFinished)]
    assert [e.completed for e in finished] == list(range(1, 11)) and {e.node for e in alone if hasattr(e, "node")} == {
        None
    }
    # each worker process is a node of the progress: named once started, every unit placed on one of them
    (started,) = [e for e in spread if isinstance(e, WorkersStarted)]
    assert len(started.nodes) == 2 and all(n.startswith("local/") for n in started.nodes)
    placed = [e for e in spread if isinstance(e, SimulationPlaced)]
    assert len(placed) == 10 and {e.node for e in placed} <= set(started.nodes)
    assert Counter(e.node for e in finished) == Counter(e.node for e in placed)
    assert not [e for e in spread if isinstance(e, WorkerLost)]  # the run's end loses no worker
    progress = RunTally()
    for event in spread:
        progress.apply(event)
    assert sum(n.done for n in progress.nodes.values()) == 10 and not any(n.running for n in progress.nodes.values())


def test_a_worker_that_dies_while_loading_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker gone before it answered (here: its process exits at once) stops the run in one line, with
    nothing written."""
    import tau_tui.workers.process_rollout as process_rollout

    corpus_required()
    monkeypatch.setattr(process_rollout, "_serve", _exit_at_once)
    monkeypatch.setattr(process_rollout, "_context", lambda runner: __import__("multiprocessing").get_context("spawn"))
    out = tmp_path / "run.json"
    code, _, stderr = cli(capsys, "run", *GOLD, "-k", 1, "--workers", 2, "--out", out, "--quiet")
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tau-tui: a worker process did not start: the worker process")
    assert not out.exists()


def _exit_at_once(conn: Connection, settings: Settings, factory: WorkspaceFactory, config: RunConfig) -> None:
    os._exit(3)
