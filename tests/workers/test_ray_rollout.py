"""``run`` / ``calibrate --executor ray``: the simulations the local executor saves, on a local Ray instance with
2 CPUs; an interrupted Ray run resumes with only what is missing; the one writer stays in this process."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tests.conftest import CORPUS, corpus_required
from tests.helpers import GOLD, TOTAL, K, _no_local_episodes, normalised
from tests.helpers import cli_on_corpus as cli

ray = pytest.importorskip("ray", reason="the optional extra 'ray' is not installed (pip install 'tau-tui[ray]')")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mock grid (10 tasks x 2 trials, gold agent) run by the local executor."""
    corpus_required()
    path = tmp_path_factory.mktemp("local") / "local.json"
    assert main(["run", *GOLD, "-k", str(K), "--out", str(path), "--quiet", "--tau2-data", str(CORPUS)]) == 0
    return path


@pytest.mark.corpus
def test_run_on_ray_saves_what_the_local_run_saves(
    local_ray: None,
    local_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_local_episodes(monkeypatch)
    out = tmp_path / "ray.json"
    code, stdout, stderr = cli(
        capsys, "run", *GOLD, "-k", K, "--out", out, "--executor", "ray", "--workers", 2, "--quiet"
    )
    assert code == 0, stderr
    assert (
        stdout.strip() == f"{out}: {TOTAL}/{TOTAL} simulations ({TOTAL} this run); average reward 0.800; "
        f"terminations: user_stop {TOTAL}; protocol own"
    )
    local_head, local_sims = normalised(local_run)
    ray_head, ray_sims = normalised(out)
    assert len(ray_sims) == TOTAL
    assert ray_head == local_head
    assert ray_sims == local_sims
    assert ray.is_initialized()  # the executor left the instance it did not start running


@pytest.mark.corpus
def test_ray_events_are_whole_simulations_in_order(local_ray: None, tmp_path: Path) -> None:
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
        WorkersStarted,
    )
    from tau_tui.rollout.progress import RunTally
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig(
        "mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), num_trials=1, concurrency=2
    )
    events: list[Any] = []
    runner = Runner(config, tmp_path / "run.json", workspace.registry, listener=events.append)
    with RayRollout(workspace.settings, Workspace, workers=2) as remote:
        runner.remote = remote
        summary = asyncio.run(runner.run())
        assert remote.slots == 4  # 2 actors x --concurrency 2: never more units in flight
    kinds = Counter(type(e) for e in events)
    assert kinds == {
        WorkersStarted: 1,
        RunStarted: 1,
        SimulationStarted: 10,
        SimulationPlaced: 10,
        SimulationFinished: 10,
        RunFinished: 1,
    }
    assert isinstance(events[0], WorkersStarted) and len(events[0].nodes) == 2  # one node per actor, first
    for placed in (e for e in events if isinstance(e, SimulationPlaced)):  # after its start, before its finish
        key = (placed.trial, placed.task_id)
        order = [type(e) for e in events if getattr(e, "task_id", None) == key[1] and getattr(e, "trial", None) == 0]
        assert order == [SimulationStarted, SimulationPlaced, SimulationFinished]
        assert placed.node in events[0].nodes
    tally = RunTally()
    for event in events:
        tally.apply(event)
    assert sum(node.done for node in tally.nodes.values()) == 10 and not any(n.running for n in tally.nodes.values())
    assert SimulationMessage not in kinds  # per-message events stay on the actors
    assert [e.completed for e in events if isinstance(e, SimulationFinished)] == list(range(1, 11))
    assert summary.completed == 10 and len(summary.rewards) == 10
    saved = {(s["trial"], s["task_id"]) for s in json.loads((tmp_path / "run.json").read_text())["simulations"]}
    assert saved == {(e.trial, e.task_id) for e in events if isinstance(e, SimulationFinished)}


class Interrupted(Exception):
    pass


@pytest.mark.corpus
def test_an_interrupted_ray_run_resumes_with_only_the_missing_units(
    local_ray: None, local_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tau_tui.config import Settings
    from tau_tui.rollout import ParticipantSpec, RunConfig, Runner, SimulationFinished
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    out = tmp_path / "ray.json"
    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig(
        "mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), num_trials=K, concurrency=1
    )

    def stop_after_five(event: object) -> None:
        if isinstance(event, SimulationFinished) and event.completed == 5:
            raise Interrupted

    with RayRollout(workspace.settings, Workspace, workers=2) as remote:
        runner = Runner(config, out, workspace.registry, listener=stop_after_five)
        runner.remote = remote
        with pytest.raises(Interrupted):
            asyncio.run(runner.run())
    before = json.loads(out.read_text())["simulations"]
    assert 5 <= len(before) < TOTAL

    code, stdout, stderr = cli(
        capsys, "run", *GOLD, "-k", K, "--out", out, "--resume", "--executor", "ray", "--workers", 2, "--quiet"
    )
    assert code == 0, stderr
    assert f"{TOTAL}/{TOTAL} simulations ({TOTAL - len(before)} this run)" in stdout
    after = json.loads(out.read_text())["simulations"]
    assert after[: len(before)] == before  # what was saved stays as it was
    local_head, local_sims = normalised(local_run)
    ray_head, ray_sims = normalised(out)
    assert ray_sims == local_sims


def _rows(stdout: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    for row in rows:
        for cell in row["cells"]:
            del cell["file"], cell["sim"]  # the trials file and a uuid4
    return rows


@pytest.mark.corpus
def test_calibrate_on_ray_equals_local(
    local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [
        "calibrate",
        "--domain",
        "mock",
        "--agent-llm",
        "scripted/flaky:0.5",
        "--user-llm",
        "scripted/user",
        "-k",
        3,
        "--json",
        "--quiet",
    ]
    code, local, err = cli(capsys, *args, "--out", tmp_path / "local.json")
    assert code == 0, err
    _no_local_episodes(monkeypatch)
    code, on_ray, err = cli(capsys, *args, "--out", tmp_path / "ray.json", "--executor", "ray", "--workers", 2)
    assert code == 0, err
    rows = _rows(local)
    assert len(rows) == 10 and len({row["band"] for row in rows}) > 1  # flaky: not every row in one band
    assert _rows(on_ray) == rows
    assert normalised(tmp_path / "ray.json")[1] == normalised(tmp_path / "local.json")[1]


def test_workers_below_one_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli(capsys, "run", *GOLD, "--out", tmp_path / "x.json", "--workers", 0)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith("argument --workers: expected a whole number of at least 1, got '0'")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.corpus
def test_a_worker_with_other_domain_data_is_refused_before_anything_is_saved(local_ray: None, tmp_path: Path) -> None:
    import shutil

    from tau_tui.config import Settings
    from tau_tui.rollout import ParticipantSpec, RunConfig, RunError, Runner
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    other = tmp_path / "data"
    shutil.copytree(CORPUS / "domains" / "mock", other / "domains" / "mock")
    policy = other / "domains" / "mock" / "policy.md"
    policy.chmod(0o644)
    policy.write_text(policy.read_text() + "\nAlways say hello twice.\n")
    here = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig("mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"))
    out = tmp_path / "run.json"
    runner = Runner(config, out, here.registry)
    with RayRollout(
        Settings(tau2_data=other, protocol="own"), Workspace, workers=1
    ) as remote:  # the actors read the edited copy
        runner.remote = remote
        with pytest.raises(RunError, match=r"other data for domain 'mock' \(its policy differs"):
            asyncio.run(runner.run())
    assert not out.exists()


@pytest.mark.corpus
def test_a_worker_that_dies_loses_only_its_unit_and_resume_runs_it_again(
    local_ray: None,
    local_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tau_tui.config import Settings
    from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
    from tau_tui.rollout.progress import RunTally
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    out = tmp_path / "ray.json"
    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig(
        "mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), num_trials=K, concurrency=1
    )
    with RayRollout(workspace.settings, Workspace, workers=2) as remote:
        start = remote.start

        async def start_then_kill_one(runner: Runner) -> None:
            await start(runner)
            ray.kill(remote._actors[0])  # it gets the first unit (all are idle), then nothing more

        monkeypatch.setattr(remote, "start", start_then_kill_one)
        tally = RunTally()

        def count(event: object) -> None:
            tally.apply(event)

        runner = Runner(config, out, workspace.registry, listener=count)
        runner.remote = remote
        summary = asyncio.run(runner.run())
    assert summary.terminations == {"infrastructure_error": 1, "user_stop": TOTAL - 1}
    # the node of the dead actor is told (one lost unit); both actors share this machine's one node
    ((name, node),) = tally.nodes.items()
    assert (node.workers, node.workers_lost, node.lost, node.done, node.running) == (2, 1, 1, TOTAL - 1, 0)
    assert not node.dead  # its other worker ran the rest
    lost = [s for s in json.loads(out.read_text())["simulations"] if s["termination_reason"] == "infrastructure_error"]
    error = lost[0]["info"]["error"]
    assert error.startswith("RuntimeError: the Ray worker died (The actor died") and "\n" not in error

    code, stdout, stderr = cli(
        capsys, "run", *GOLD, "-k", K, "--out", out, "--resume", "--executor", "ray", "--workers", 2, "--quiet"
    )
    assert code == 0, stderr
    assert f"{TOTAL}/{TOTAL} simulations (1 this run)" in stdout
    assert normalised(out)[1] == normalised(local_run)[1]


def test_more_workers_than_the_cluster_has_cpus_is_one_line(
    local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "run", *GOLD, "--out", tmp_path / "x.json", "--executor", "ray", "--workers", 3)
    assert code == 2 and err.count("\n") == 1 and "--workers 3: the Ray cluster has 2 CPU(s)" in err
    assert not (tmp_path / "x.json").exists()
    assert ray.is_initialized()


@pytest.mark.corpus
def test_an_error_inside_an_actor_is_one_line_not_its_traceback(local_ray: None, tmp_path: Path) -> None:
    from tau_tui.config import Settings
    from tau_tui.model.tasks import Task
    from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own"))
    config = RunConfig("mock", ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"), concurrency=1)
    runner = Runner(config, tmp_path / "x.json", workspace.registry)
    runner.load()

    async def ask_for_a_task_the_actor_was_not_given() -> None:
        await remote.start(runner)
        await remote.finish(Task(id="no-such-task"), 0, 1)

    with RayRollout(workspace.settings, Workspace, workers=1) as remote:
        with pytest.raises(RuntimeError) as caught:
            asyncio.run(ask_for_a_task_the_actor_was_not_given())
    assert str(caught.value) == "on the Ray worker: KeyError: 'no-such-task'"
