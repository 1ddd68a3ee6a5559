"""Rollouts against the latency limit: a model that answers every call after exactly 1 s.

    python -m benchmarks.rollout_latency [-k 16] [--concurrency 32 128] [--workers 1 2] [--delay 1.0]
                                         [--vs-tau2 | --no-vs-tau2] [--through-litellm | --no-through-litellm]
                                         [--tau2-data DIR]

Starts ``benchmarks.latency_server`` on 127.0.0.1 and runs ``tau-tui run --domain mock -k K --concurrency C
--workers W`` in a fresh process for each C and W, with the server as the agent's model and
``scripted/user`` as the user. The server's reply closes the conversation ("anything else?"), so each
simulation makes exactly one agent call: the limit is ``ceil(n / C) × delay`` seconds, and the ratio of the
time taken to it is what the rollout machinery costs on top of the model. Printed per run: the wall time of
the command (start-up included), the time from the first call the server received to the last answer (the
rollout alone), the most calls in flight at once, both ratios, and the command's CPU time. The model is on
an OpenAI-compatible endpoint, so its calls go straight there (``tau_tui.llm.http_transport``); the baseline, in
the same run (``--through-litellm``, the default), is the same command with ``"llm_client": "litellm"``: every
call through litellm, as before. The baseline of the start-up: a process that only imports what a run
imports (and one that imports litellm too). Commands run with bytecode written and read, as an installed
tau-tui does (``PYTHONDONTWRITEBYTECODE`` is dropped from their environment and tau-tui is compiled first).

Beside tau2's runner (``--vs-tau2``, the default when a ``tau2`` command is installed beside this Python;
the optional extra ``tau2``): both runners run the same task (``create_task_1`` of the mock domain) K × 10
times with an LLM user on the same server (named ``…latency-user``: a first request, then ``###STOP###``),
three calls per simulation (user, agent, user), so the limit is ``ceil(n / C) × 3 × delay``; each command's
wall time and rollout are printed against it, and ours over tau2's.
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

from benchmarks.latency_server import USER_MODEL, LatencyServer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
MOCK_TASKS = 10  # tasks in tau2's mock domain: -k K runs 10 × K simulations
TASK = "create_task_1"  # the task both runners run with an LLM user (in every version of the mock domain)


def _env() -> dict[str, str]:
    """The commands' environment: this one with litellm's local price map, and bytecode written and read as in
    an installed tau-tui (pip compiles a package when it installs it; ``PYTHONDONTWRITEBYTECODE`` would make
    every command compile its modules again)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_all() -> None:
    """Compile tau-tui's modules, as installing it does, so no measured command spends time on it."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tau_tui")], env=_env(), check=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_up(modules: str) -> tuple[float, float]:
    """The baseline of a command's start: (wall, CPU) of a process that only imports ``modules``."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {modules}"], cwd=ROOT, env=_env(), check=True)
    return time.perf_counter() - started, _children_cpu() - cpu_before


# What a run's process imports before its first call straight to an endpoint, and what one through litellm adds.
RUN_MODULES = "tau_tui.cli, tau_tui.commands.run, tau_tui.rollout.runner, aiohttp"


def _model_args(server: LatencyServer, client: str = "auto") -> str:
    args = {"api_base": server.base_url, "api_key": "sk-local", "temperature": 0.0}
    return json.dumps(args if client == "auto" else {**args, "llm_client": client})


def ours(
    server: LatencyServer,
    out: Path,
    trials: int,
    concurrency: int,
    workers: int,
    tau2_data: str,
    llm_user: bool = False,
    client: str = "auto",
    protocol: str = "tau2",
) -> list[str]:
    """``tau-tui run`` against the server: the 10 mock tasks × ``trials`` with the scripted user (one agent
    call each), or with ``llm_user`` ``create_task_1`` × ``trials`` with an LLM user on the server (three
    calls each: user, agent, user); ``client`` "litellm" sends every call through litellm."""
    model = _model_args(server, client)
    if llm_user:
        sides = ["--task", TASK, "--agent-llm", "openai/latency-agent", "--agent-llm-args", model]
        sides += ["--user-llm", f"openai/{USER_MODEL}", "--user-llm-args", model]
    else:
        sides = ["--agent-llm", "openai/latency-server", "--agent-llm-args", model, "--user-llm", "scripted/user"]
    argv = [sys.executable, "-m", "tau_tui", "run", "--domain", "mock", *sides, "-k", str(trials)]
    argv += ["--concurrency", str(concurrency), *(["--workers", str(workers)] if workers > 1 else [])]
    # Under tau2 one mock task ends infrastructure_error (tau2's evaluator raises on its env assertion) and tau2
    # runs such a task again 3 times, a second apart: model calls the limit below does not count. Those runs are
    # left out here (as tau2's --max-retries 0), so every simulation makes the calls the limit counts.
    argv += ["--protocol", protocol, *(["--task-retries", "0"] if protocol == "tau2" else [])]
    return argv + ["--llm-retries", "0", "--quiet", "--out", str(out), "--tau2-data", tau2_data]


def tau2s(server: LatencyServer, out: Path, trials: int, concurrency: int, tau2: str) -> list[str]:
    """tau2's ``tau2 run`` of the same task and user on the same server."""
    model = _model_args(server)
    argv = [tau2, "run", "--domain", "mock", "--task-ids", TASK, "--num-trials", str(trials)]
    argv += ["--max-concurrency", str(concurrency), "--agent-llm", "openai/latency-agent", "--agent-llm-args", model]
    argv += ["--user-llm", f"openai/{USER_MODEL}", "--user-llm-args", model, "--max-retries", "0"]
    return argv + ["--log-level", "ERROR", "--save-to", str(out.with_suffix(""))]  # tau2 adds ".json"


def run_once(server: LatencyServer, argv: list[str], out: Path, cwd: Path = ROOT) -> dict:
    """One command in a new process against the server; its wall time and the server's counts."""
    env = _env()
    server.reset()
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    ended = time.perf_counter()
    wall = ended - started
    cpu = _children_cpu() - cpu_before
    if done.returncode not in (0, 1) or not out.exists():  # tau-tui: 1 when some task ended infrastructure_error
        raise SystemExit(f"{Path(argv[0]).name} {argv[1]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
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


def _line(name: str, result: dict, limit: float, baseline_cpu: float, n: int, workers: int = 1) -> str:
    cpu = (
        f"CPU {result['cpu']:.2f} s ({1000 * (result['cpu'] - baseline_cpu) / n:.1f} ms per simulation beyond the "
        "baseline)"
        if workers == 1  # worker processes are the forkserver's children, not counted in this process's rusage
        else "CPU of the workers not counted"
    )
    return (
        f"{name}: limit {limit:5.2f} s | command {result['wall']:5.2f} s ({result['wall'] / limit:4.2f}x) | "
        f"first call → last answer {result['rollout']:5.2f} s ({result['rollout'] / limit:4.2f}x; start → first "
        f"call {result['before']:.2f} s, last answer → exit {result['after']:.2f} s) | {result['simulations']} "
        f"simulations, {result['calls']} calls, at most {result['peak']} at once, "
        f"{', '.join(result['terminations'])}; {cpu}"
    )


def tau2_command() -> str | None:
    """tau2's ``tau2`` command beside this Python (the optional extra ``tau2``), if installed."""
    candidate = Path(sys.executable).parent / "tau2"
    return str(candidate) if candidate.exists() else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", type=int, default=16, help="trials of the 10 mock tasks (default 16: 160 simulations)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="tau-tui's --workers (default 1 2)")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per model answer (default 1.0)")
    parser.add_argument("--vs-tau2", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument(
        "--through-litellm",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run each concurrency with every call through litellm (llm_client litellm): the baseline",
    )
    parser.add_argument("--tau2-data", default=os.environ.get("TAU2_DATA_DIR") or str(CORPUS))
    parser.add_argument(
        "--protocol",
        default="tau2",
        choices=("tau2", "own"),
        help="tau-tui's --protocol (default tau2: tau2's prompts and tool schemas, and its task retries)",
    )
    args = parser.parse_args()
    n = MOCK_TASKS * args.k
    tau2 = tau2_command()
    if args.vs_tau2 and tau2 is None:
        raise SystemExit("--vs-tau2: no tau2 command beside this Python (pip install 'tau-tui[tau2]')")
    vs_tau2 = tau2 is not None and args.vs_tau2 is not False
    print(f"{n} simulations, every answer after {args.delay:g} s; {os.cpu_count()} CPUs; protocol {args.protocol}")
    compile_all()
    with LatencyServer(delay=args.delay) as server, tempfile.TemporaryDirectory() as folder:
        start_up(f"{RUN_MODULES}, litellm")  # once unmeasured: litellm's modules and their dependencies compiled
        wall, cpu = start_up(RUN_MODULES)
        with_litellm, litellm_cpu = start_up(f"{RUN_MODULES}, litellm")
        print(
            f"baseline: a process importing what a run imports takes {wall:.2f} s ({cpu:.2f} s CPU); with litellm "
            f"{with_litellm:.2f} s ({litellm_cpu:.2f} s CPU)"
        )
        print("tau-tui, scripted user, one agent call per simulation (straight to the endpoint; through litellm):")
        for concurrency in args.concurrency:
            limit = math.ceil(n / concurrency) * args.delay
            for workers in args.workers:
                out = Path(folder) / f"c{concurrency}-w{workers}.json"
                argv = ours(server, out, args.k, concurrency, workers, args.tau2_data, protocol=args.protocol)
                result = run_once(server, argv, out)
                print("  " + _line(f"concurrency {concurrency:4d} workers {workers}", result, limit, cpu, n, workers))
            if args.through_litellm:
                out = Path(folder) / f"c{concurrency}-litellm.json"
                argv = ours(
                    server, out, args.k, concurrency, 1, args.tau2_data, client="litellm", protocol=args.protocol
                )
                result = run_once(server, argv, out)
                print("  " + _line(f"concurrency {concurrency:4d} litellm  ", result, limit, litellm_cpu, n))
        if not vs_tau2:
            return 0
        assert tau2 is not None
        trials = n  # the one task, as many times as the simulations above
        print(f"beside tau2's runner: {TASK} × {trials}, an LLM user on the same server, three calls per simulation:")
        for concurrency in args.concurrency:
            limit = math.ceil(trials / concurrency) * 3 * args.delay
            theirs_out = Path(folder) / f"tau2-c{concurrency}.json"
            theirs = run_once(server, tau2s(server, theirs_out, trials, concurrency, tau2), theirs_out, Path(folder))
            print("  " + _line(f"tau2    concurrency {concurrency:4d}", theirs, limit, litellm_cpu, trials))
            for workers in args.workers:
                out = Path(folder) / f"llm-c{concurrency}-w{workers}.json"
                mine = run_once(
                    server,
                    ours(
                        server, out, trials, concurrency, workers, args.tau2_data, llm_user=True, protocol=args.protocol
                    ),
                    out,
                )
                line = _line(
                    f"tau-tui concurrency {concurrency:4d} workers {workers}", mine, limit, cpu, trials, workers
                )
                print("  " + line)
                print(
                    f"    tau-tui / tau2: command {mine['wall'] / theirs['wall']:.2f}, rollout "
                    f"{mine['rollout'] / theirs['rollout']:.2f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
