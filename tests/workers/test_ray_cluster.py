"""A real two-node Ray cluster (``ray start``, one CPU each, own temporary folders): replay, eval and calibrate
over ``RAY_ADDRESS`` as a user runs them, replay and run with ``--ship-data`` where only the command can read
the data folder, and a rollout that loses a node mid-run and is finished by ``--resume`` (last: it leaves the
cluster one node short).

The nodes work in their own folders, so a relative ``TAU2_DATA_DIR`` given to the command means nothing
there: the settings the command resolved must travel to the actors with their folders made absolute.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS, ROOT, corpus_required

pytest.importorskip("ray", reason="the optional extra 'ray' is not installed (pip install 'tau-tui[ray]')")

from benchmarks.latency_server import LatencyServer  # noqa: E402 - after the skip: it needs aiohttp (litellm's)
from tests.ray_cluster import LocalCluster  # noqa: E402
from tests.workers.test_ray_executor import served_by_installed_tau2  # noqa: E402

AIRLINE = CORPUS / "sierra-research__tau2-bench__airline.json"
EXIT_OK, EXIT_FINDINGS = 0, 1
TRIALS = 4  # 40 simulations of the 10 mock tasks
PER_ACTOR = 4  # --concurrency: units at once on each actor


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    corpus_required()
    with LocalCluster(nodes=2, cpus=1) as running:
        yield running


def tau_tui(
    cluster: LocalCluster, *argv: str, ray_address: bool = True, data: DataHere | None = None
) -> subprocess.CompletedProcess[str]:
    """``tau-tui ARGV`` in a new process from the project folder, with only a relative TAU2_DATA_DIR for data
    (``data``: that folder instead, which only this process can read)."""
    env = cluster.env() if ray_address else {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    data_dir = data.path if data is not None else os.path.relpath(CORPUS, ROOT)
    env.update(TAU2_DATA_DIR=data_dir, LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("TAU_TUI_DOMAINS", None)
    command = [sys.executable, "-m", "tau_tui", *argv]
    fds = (data.fd,) if data is not None else ()
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=150, pass_fds=fds)


class DataHere:
    """A tau2 data folder of ``domain`` alone that only the command's own process can read: TAU2_DATA_DIR is
    ``/proc/self/fd/N``, N a descriptor of the folder handed to that process alone. In a Ray worker (on any
    node) the same path is that worker's own descriptor N, not the folder: an actor can read the data only
    from what it was sent."""

    def __init__(self, root: Path, domain: str) -> None:
        shutil.copytree(CORPUS / "domains" / domain, root / "domains" / domain)
        self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        self.path = f"/proc/self/fd/{self.fd}"

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def data_here(tmp_path: Path) -> Iterator[Callable[[str], DataHere]]:
    made: list[DataHere] = []

    def make(domain: str) -> DataHere:
        made.append(DataHere(tmp_path / f"data-{domain}", domain))
        return made[-1]

    yield make
    for data in made:
        data.close()


def _unpacked_on(cluster: LocalCluster, node: int, domain: str) -> list[Any]:
    """The copies of ``domain``'s data node ``node`` unpacked (``parcel.node_cache`` in its TMPDIR)."""
    return sorted(cluster.tmp(node).glob(f"tau-tui-*/shipped/*/domains/{domain}/tasks.json"))


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_only_tau2_data_dir_set_the_cluster_gives_the_local_executors_bytes(
    cluster: LocalCluster, command: str
) -> None:
    local = tau_tui(cluster, command, "--json", str(AIRLINE), ray_address=False)
    remote = tau_tui(cluster, command, "--json", "--executor", "ray", "--workers", "2", str(AIRLINE))
    assert local.returncode in (EXIT_OK, EXIT_FINDINGS), local.stderr
    assert (remote.returncode, remote.stderr.strip()) == (local.returncode, local.stderr.strip())
    assert remote.stdout == local.stdout and local.stdout.count("\n") >= 50  # a JSON line per simulation


def _calibration_rows(stdout: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    for row in rows:
        for cell in row["cells"]:
            del cell["file"], cell["sim"]  # the trials file and a uuid4
    return rows


def test_calibrate_over_the_cluster_gives_the_local_verdicts(cluster: LocalCluster, tmp_path: Path) -> None:
    argv = ["calibrate", "--domain", "mock", "--agent-llm", "scripted/flaky:0.5", "--user-llm", "scripted/user"]
    argv += ["-k", "2", "--json", "--quiet"]
    local = tau_tui(cluster, *argv, "--out", str(tmp_path / "local.json"), ray_address=False)
    remote = tau_tui(cluster, *argv, "--out", str(tmp_path / "ray.json"), "--executor", "ray", "--workers", "2")
    assert (local.returncode, remote.returncode) == (EXIT_OK, EXIT_OK), remote.stderr
    rows = _calibration_rows(local.stdout)
    assert len(rows) == 10 and _calibration_rows(remote.stdout) == rows


def test_ship_data_replays_on_nodes_that_cannot_read_the_data_with_the_local_executors_bytes(
    cluster: LocalCluster, data_here: Callable[[str], DataHere]
) -> None:
    data = data_here("airline")
    argv = ["replay", "--json", str(AIRLINE)]
    local = tau_tui(cluster, *argv, "--workers", "1", ray_address=False, data=data)
    assert local.returncode in (EXIT_OK, EXIT_FINDINGS) and local.stdout.count("\n") >= 50, local.stderr
    unshipped = tau_tui(cluster, *argv, "--executor", "ray", "--workers", "2", data=data)
    if not served_by_installed_tau2("airline"):  # else the nodes' installed tau2 would serve its own airline data
        assert unshipped.returncode == 2 and (
            f"no tau2 data for domain 'airline' (tried: TAU2_DATA_DIR={data.path})" in unshipped.stderr
        )  # the actors cannot read the command's data folder
    shipped = tau_tui(cluster, *argv, "--executor", "ray", "--workers", "2", "--ship-data", data=data)
    assert (shipped.returncode, shipped.stderr, shipped.stdout) == (local.returncode, local.stderr, local.stdout)
    copies = [_unpacked_on(cluster, node, "airline") for node in (0, 1)]
    assert [len(found) for found in copies] == [1, 1]  # each node unpacked it once, for its own actor
    assert all(found[0].read_bytes() == (CORPUS / "domains/airline/tasks.json").read_bytes() for found in copies)


def test_ship_data_runs_a_rollout_whose_data_only_the_command_can_read(
    cluster: LocalCluster, data_here: Callable[[str], DataHere], tmp_path: Path
) -> None:
    """The actors' domain fingerprints (tools, DB, policy) are those of the data they were sent: the run starts."""
    data = data_here("mock")
    out = tmp_path / "run.json"
    with LatencyServer(delay=0.2) as server:
        agent_args = json.dumps({"api_base": server.base_url, "api_key": "sk-local", "temperature": 0.0})
        argv = ["run", "--domain", "mock", "-k", "1", "--agent-llm", "openai/latency-server"]
        argv += ["--agent-llm-args", agent_args, "--user-llm", "scripted/user", "--llm-retries", "0"]
        argv += ["--concurrency", str(PER_ACTOR), "--executor", "ray", "--workers", "2", "--ship-data"]
        done = tau_tui(cluster, *argv, "--out", str(out), data=data)
    assert done.returncode == EXIT_OK, done.stderr
    assert re.search(r"simulations per node: \S+/[0-9a-f]{8} \d+, \S+/[0-9a-f]{8} \d+\n", done.stderr), done.stderr
    assert set(_keys(out).values()) == {1} and len(_keys(out)) == 10
    assert {s["termination_reason"] for s in json.loads(out.read_text())["simulations"]} == {"user_stop"}
    assert all(_unpacked_on(cluster, node, "mock") for node in (0, 1))


def _keys(path: Path) -> Counter[tuple[int, str, int]]:
    sims = json.loads(path.read_text())["simulations"]
    return Counter((s["trial"], s["task_id"], s["seed"]) for s in sims)


def test_a_rollout_that_loses_a_node_mid_run_is_finished_by_resume(cluster: LocalCluster, tmp_path: Path) -> None:
    """Node 1 is killed (every process of it) once the first simulations are saved: the units it held are
    saved as infrastructure errors, the other node finishes the rest, and ``--resume`` on what is left of
    the cluster runs only what is missing: every simulation once, none lost."""
    out = tmp_path / "run.json"
    with LatencyServer(delay=1.0) as server:
        agent_args = json.dumps({"api_base": server.base_url, "api_key": "sk-local", "temperature": 0.0})
        argv = ["run", "--domain", "mock", "-k", str(TRIALS), "--agent-llm", "openai/latency-server"]
        argv += ["--agent-llm-args", agent_args, "--user-llm", "scripted/user", "--llm-retries", "0"]
        argv += ["--concurrency", str(PER_ACTOR), "--executor", "ray", "--quiet", "--out", str(out)]
        env = cluster.env(TAU2_DATA_DIR=os.path.relpath(CORPUS, ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
        first = subprocess.Popen(  # with the progress display (no --quiet): what it says of the dead node
            [sys.executable, "-m", "tau_tui", *[a for a in argv if a != "--quiet"], "--workers", "2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 90
        while server.requests <= 2 * PER_ACTOR:  # the second round of calls has begun on both actors
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the rollout made no second round of calls"
            time.sleep(0.05)
        cluster.kill_node(1)
        stdout, stderr = first.communicate(timeout=150)
        assert first.returncode == EXIT_FINDINGS, stderr
        saved = json.loads(out.read_text())["simulations"]
        lost = [s for s in saved if s["termination_reason"] == "infrastructure_error"]
        assert len(saved) == 10 * TRIALS and 0 < len(lost) < len(saved)
        assert all("Ray worker died" in s["info"]["error"] for s in lost)
        # the progress display (drawn once at the end, stderr being no terminal) marks the dead node
        assert re.search(r"the Ray worker on \S+/[0-9a-f]{8} died", stderr), stderr
        assert re.search(rf"on \S+/[0-9a-f]{{8}}: died · \d+ done · {len(lost)} lost\n", stderr), stderr
        assert re.search(r"on \S+/[0-9a-f]{8}: \d+ done\n", stderr), stderr  # the node that lived
        calls_before = server.requests

        shown = [a for a in argv if a != "--quiet"]  # with the progress display: which node ran what
        again = tau_tui(cluster, *shown, "--workers", "1", "--resume")
        assert again.returncode == EXIT_OK, again.stderr
        assert re.search(rf"simulations per node: \S+/[0-9a-f]{{8}} {len(lost)}\n", again.stderr), again.stderr
    keys = _keys(out)
    assert len(keys) == 10 * TRIALS and set(keys.values()) == {1}  # every unit once
    final = json.loads(out.read_text())["simulations"]
    assert {s["termination_reason"] for s in final} == {"user_stop"}
    assert server.requests - calls_before == len(lost)  # only what was lost ran again
