"""A real Ray cluster of separate nodes on this machine: ``ray start`` processes on loopback, for tests and benchmarks.

    with LocalCluster(nodes=2) as cluster:
        env = cluster.env()          # RAY_ADDRESS for a command that joins it
        cluster.kill_node(1)         # every process of the second node, mid-run

Each node is one ``ray start --block`` in a session of its own, with its own temporary folders (Ray's, and
``TMPDIR``) and free loopback ports, and one CPU, working in that folder (as another machine would: nothing relative to the command's
folder means the same there). Its processes (the raylet, the workers it starts; the head's GCS too) stay in
that process group, so a node is stopped by signalling its group: nothing outside this cluster is touched
(``ray stop`` would end every Ray process on the machine, other users' clusters included).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY_PORT_FLAGS = (
    "--node-manager-port",
    "--object-manager-port",
    "--runtime-env-agent-port",
    "--dashboard-agent-grpc-port",
    "--dashboard-agent-listen-port",
    "--metrics-export-port",
)

WORKER_PORTS = 100


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free right now (held open together so none repeats)."""
    probes = []
    try:
        for _ in range(count):
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            probes.append(probe)
        return [p.getsockname()[1] for p in probes]
    finally:
        for probe in probes:
            probe.close()


def ray_executable() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else (shutil.which("ray") or "ray")


class ClusterError(RuntimeError):
    """A node that would not start, with the end of its log."""


class LocalCluster:
    """``nodes`` Ray nodes of ``cpus`` CPUs each on 127.0.0.1 (see the module docstring)."""

    def __init__(self, nodes: int = 2, cpus: int = 1, start_timeout: float = 90.0) -> None:
        self.nodes = nodes
        self.cpus = cpus
        self.start_timeout = start_timeout
        self.root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths have a limit
        self.address = ""
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        self._worker_ranges: list[int] = []

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment with RAY_ADDRESS set to the cluster (and ``extra``)."""
        return {**os.environ, "RAY_ADDRESS": self.address, "RAY_AUTH_MODE": "disabled", **extra}

    def _start_node(self, index: int) -> None:
        taken = self._worker_ranges  # the workers' ports of every node: a port and the WORKER_PORTS after it
        workers = next(p for p in free_ports(20) if all(abs(p - other) > WORKER_PORTS for other in taken))
        taken.append(workers)
        ports = [p for p in free_ports(4 * len(RAY_PORT_FLAGS)) if all(not w <= p <= w + WORKER_PORTS for w in taken)]
        ports = ports[: len(RAY_PORT_FLAGS) + 1]
        if len(ports) < len(RAY_PORT_FLAGS) + 1:
            raise ClusterError("no free loopback ports outside the workers' range")
        argv = [ray_executable(), "start", "--block", "--num-cpus", str(self.cpus), "--disable-usage-stats"]
        argv += ["--node-ip-address", "127.0.0.1", "--temp-dir", str(self.root / f"n{index}")]
        for flag, port in zip(RAY_PORT_FLAGS, ports, strict=False):
            argv += [flag, str(port)]
        argv += ["--min-worker-port", str(workers), "--max-worker-port", str(workers + WORKER_PORTS)]
        if index == 0:
            head_port = ports[-1]
            argv += ["--head", "--port", str(head_port), "--include-dashboard", "false"]
            self.address = f"127.0.0.1:{head_port}"
        else:
            argv += ["--address", self.address]
        log = self.root / f"node{index}.log"
        self.logs.append(log)
        with log.open("wb") as out:
            env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
            env["RAY_AUTH_MODE"] = "disabled"  # a throw-away cluster on this machine: no token to hand around
            env["TMPDIR"] = str(self.tmp(index))  # its workers' temporary files, as another machine's: go with it
            self.tmp(index).mkdir(parents=True)
            self.processes.append(
                subprocess.Popen(
                    argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env, cwd=self.root
                )
            )

    def tmp(self, index: int) -> Path:
        """Node ``index``'s temporary folder (``TMPDIR`` of its processes)."""
        return self.root / f"t{index}"

    def _wait_started(self, index: int) -> None:
        """Until node ``index``'s ``ray start`` says its runtime started (``ClusterError`` if it exits first)."""
        deadline = time.monotonic() + self.start_timeout
        while "Ray runtime started" not in self.logs[index].read_text(errors="replace"):
            if self.processes[index].poll() is not None:
                raise ClusterError(f"ray node {index} exited: {self.log_tail(index)}")
            if time.monotonic() > deadline:
                raise ClusterError(f"ray node {index} did not start: {self.log_tail(index)}")
            time.sleep(0.2)

    def _wait_for_nodes(self, alive: int) -> None:
        """Until the cluster reports ``alive`` live nodes (asked in a fresh process, as a command would)."""
        probe = (
            "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))"
        )
        deadline = time.monotonic() + self.start_timeout
        while True:
            for index, process in enumerate(self.processes):
                if process.poll() is not None and index < alive:
                    raise ClusterError(f"ray node {index} exited: {self.log_tail(index)}")
            answer = subprocess.run(
                [sys.executable, "-c", probe, self.address], capture_output=True, text=True, timeout=120, env=self.env()
            )
            if answer.returncode == 0 and answer.stdout.strip().splitlines()[-1:] == [str(alive)]:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the cluster did not reach {alive} nodes: {answer.stderr.strip()[-500:]}")
            time.sleep(1.0)

    def log_tail(self, index: int, size: int = 800) -> str:
        return self.logs[index].read_text(errors="replace")[-size:].strip()

    def start(self) -> LocalCluster:
        for index in range(self.nodes):
            self._start_node(index)
            self._wait_started(index)
        self._wait_for_nodes(self.nodes)
        return self

    def kill_node(self, index: int) -> None:
        """Every process of node ``index`` at once (SIGKILL to its process group), as a machine that dies."""
        process = self.processes[index]
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(30)

    def stop(self) -> None:
        """Every node, the head last: SIGTERM to each group, then SIGKILL to what is left; the folders go."""
        for process in reversed(self.processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 3
        for process in reversed(self.processes):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # workers of the group that outlived its ray start
            except ProcessLookupError:
                pass
        for _ in range(10):  # a process of a killed group may still be writing its last log lines
            shutil.rmtree(self.root, ignore_errors=True)
            if not self.root.exists():
                break
            time.sleep(0.5)

    def __enter__(self) -> LocalCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
