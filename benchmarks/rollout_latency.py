"""Rollouts against the latency limit: a model that answers every call after exactly 1 s.

    python -m benchmarks.rollout_latency [-k 16] [--concurrency 32 128] [--delay 1.0] [--tau2-data DIR]

Starts ``benchmarks.latency_server`` on 127.0.0.1 and runs ``tau-tui run --domain mock -k K
--concurrency C`` in a fresh process for each C, with the server as the agent's model and
``scripted/user`` as the user. The server's reply closes the conversation ("anything else?"), so each
simulation makes exactly one agent call: the limit is ``ceil(n / C) × delay`` seconds, and the ratio
of the wall time to it is what the rollout machinery costs on top of the model. Printed per run: the
wall time of the command (start-up included), the time from the first call the server received to the
last answer (the rollout alone), the most calls in flight at once, both ratios, and the command's CPU
time. The baseline, in the same run: a process that only imports tau-tui's CLI and litellm (most of a
command's start).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.latency_server import LatencyServer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
MOCK_TASKS = 10  # tasks in tau2's mock domain: -k K runs 10 × K simulations


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_up(tau2_data: str) -> tuple[float, float]:
    """The baseline of a command's start: (wall, CPU) of a process that only imports tau-tui's CLI and litellm."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tau_tui.cli, litellm"], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - started, _children_cpu() - cpu_before


def run_once(server: LatencyServer, out: Path, trials: int, concurrency: int, tau2_data: str) -> dict:
    """One ``tau-tui run`` in a new process against the server; its wall time and the server's counts."""
    agent_args = {"api_base": server.base_url, "api_key": "sk-local", "temperature": 0.0}
    argv = [
        sys.executable,
        "-m",
        "tau_tui",
        "run",
        "--domain",
        "mock",
        "-k",
        str(trials),
        "--concurrency",
        str(concurrency),
        "--agent-llm",
        "openai/latency-server",
        "--agent-llm-args",
        json.dumps(agent_args),
        "--user-llm",
        "scripted/user",
        "--llm-retries",
        "0",
        "--quiet",
        "--out",
        str(out),
        "--tau2-data",
        tau2_data,
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    server.reset()
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    ended = time.perf_counter()
    wall = ended - started
    cpu = _children_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"tau-tui run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    sims = json.loads(out.read_text())["simulations"]
    return {
        "wall": wall,
        "cpu": cpu,
        "rollout": server.last_answer - server.first_request,
        "before": server.first_request - started,
        "after": ended - server.last_answer,
        "simulations": len(sims),
        "calls": server.requests,
        "peak": server.peak,
        "terminations": sorted({s["termination_reason"] for s in sims}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", type=int, default=16, help="trials of the 10 mock tasks (default 16: 160 simulations)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per model answer (default 1.0)")
    parser.add_argument("--tau2-data", default=os.environ.get("TAU2_DATA_DIR") or str(CORPUS))
    args = parser.parse_args()
    n = MOCK_TASKS * args.k
    print(f"{n} simulations, one agent call each, every answer after {args.delay:g} s; {os.cpu_count()} CPUs")
    with LatencyServer(delay=args.delay) as server, tempfile.TemporaryDirectory() as folder:
        wall, cpu = start_up(args.tau2_data)
        print(f"baseline: a process importing tau-tui's CLI and litellm takes {wall:.2f} s ({cpu:.2f} s CPU)")
        for concurrency in args.concurrency:
            result = run_once(server, Path(folder) / f"c{concurrency}.json", args.k, concurrency, args.tau2_data)
            limit = math.ceil(n / concurrency) * args.delay
            print(
                f"concurrency {concurrency:4d}: limit {limit:5.2f} s | command {result['wall']:5.2f} s "
                f"({result['wall'] / limit:4.2f}x) | first call → last answer {result['rollout']:5.2f} s "
                f"({result['rollout'] / limit:4.2f}x; start → first call {result['before']:.2f} s, last answer → "
                f"exit {result['after']:.2f} s) | {result['simulations']} simulations, "
                f"{result['calls']} calls, at most {result['peak']} at once, {', '.join(result['terminations'])}; "
                f"CPU {result['cpu']:.2f} s ({1000 * (result['cpu'] - cpu) / n:.1f} ms per simulation beyond the "
                "baseline)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
