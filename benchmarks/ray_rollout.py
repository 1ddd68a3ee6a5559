"""``tau-tui run`` on Ray against the local executor, in the same run: a gold-scripted grid, wall time.

    python -m benchmarks.ray_rollout [--domain airline] [-k 8] [--format dir] [--actors 1 2] [--tau2-data DIR]

Starts one local Ray instance (``--cpus``, default every core) and times ``Runner.run()`` for the same grid
(``scripted/gold`` agent, ``scripted/user``) with the local executor (the baseline) and with ``RayRollout`` on
1 and 2 actors; Ray's own start is timed apart (a command that starts Ray pays it once). The Ray times include
starting the actors (each imports tau_tui and loads the domain). Prints each wall time, its ratio to the local
one and whether every mode saved the same simulations (uuids and clock readings aside).

``--format json`` rewrites the whole results file after each simulation (tau2's layout; the one writer's cost
grows with the file), ``dir`` writes one file per simulation: it shows what the episodes cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
VOLATILE_SIM = ("id", "timestamp", "start_time", "end_time", "duration")


def _saved(path: Path) -> dict:
    """The simulations of a results file or folder by (trial, task, seed), without uuids and clock readings."""
    from tau_tui.model.io import open_run

    run = open_run(path)
    out = {}
    for raw in run.raw_sims:
        sim = {k: v for k, v in raw.items() if k not in VOLATILE_SIM}
        sim["messages"] = [
            {k: v for k, v in m.items() if k not in ("id", "timestamp") and k != "tool_calls"}
            | {"calls": [{k: v for k, v in c.items() if k != "id"} for c in m.get("tool_calls") or []]}
            for m in raw.get("messages") or []
        ]
        out[(raw["trial"], raw["task_id"], raw["seed"])] = json.dumps(sim, sort_keys=True)
    return out


def _run(workspace, config, path: Path, remote) -> tuple[float, float, float]:
    """(wall time of ``Runner.run()``, the part of it spent starting the remote's actors, this process's CPU
    time: with Ray, what the one writer and the dispatch cost)."""
    from tau_tui.rollout import Runner

    runner = Runner(config, path, workspace.registry, judge=workspace.judge())
    runner.remote = remote
    start_time = [0.0]
    if remote is not None:
        start = remote.start

        async def timed_start(the_runner):
            began = time.perf_counter()
            await start(the_runner)
            start_time[0] = time.perf_counter() - began

        remote.start = timed_start
    started, cpu = time.perf_counter(), time.process_time()
    summary = asyncio.run(runner.run())
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.completed == summary.total, summary
    return elapsed, start_time[0], cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="airline")
    parser.add_argument("-k", type=int, default=8, help="trials per task (default 8)")
    parser.add_argument("--tasks", type=int, metavar="N", help="only the domain's first N tasks (default: all)")
    parser.add_argument("--format", choices=("json", "dir"), default="dir")
    parser.add_argument("--concurrency", type=int, default=3, help="--concurrency of every mode (default 3)")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2, help="CPUs of the local Ray instance")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds of every mode, interleaved; the median is printed (default 3: the disk and the cores are shared)",
    )
    parser.add_argument("--tau2-data", default=str(CORPUS))
    args = parser.parse_args(argv)

    import ray

    from tau_tui.config import Settings
    from tau_tui.rollout import ParticipantSpec, RunConfig
    from tau_tui.workers.pool import RayRollout
    from tau_tui.workspace import Workspace

    workspace = Workspace(Settings(tau2_data=args.tau2_data))
    task_ids = list(workspace.registry.get(args.domain).tasks())[: args.tasks] if args.tasks else None
    config = RunConfig(
        args.domain,
        ParticipantSpec("scripted/gold"),
        ParticipantSpec("scripted/user"),
        task_ids=task_ids,
        num_trials=args.k,
        concurrency=args.concurrency,
        layout=args.format,
    )
    started = time.perf_counter()
    ray.init(
        num_cpus=args.cpus,
        logging_level="ERROR",
        log_to_driver=False,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}},
    )
    ray_start = time.perf_counter() - started
    modes = [("local", None)] + [(f"ray, {n} actor{'s' if n > 1 else ''}", n) for n in args.actors]
    rounds: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in modes}
    same: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="tau-tui-ray-bench-") as tmp:
        suffix = ".json" if args.format == "json" else ""
        for number in range(args.repeat):
            paths = {}
            for name, actors in modes:
                path = paths[name] = Path(tmp) / f"{number}-{actors or 0}{suffix}"
                if actors is None:
                    rounds[name].append(_run(workspace, config, path, None))
                    continue
                with RayRollout(workspace.settings, Workspace, workers=actors) as remote:
                    rounds[name].append(_run(workspace, config, path, remote))
            baseline = _saved(paths["local"])
            for name, _ in modes[1:]:
                same[name] = same.get(name, True) and _saved(paths[name]) == baseline
    ray.shutdown()
    results = [(name, sorted(rounds[name])[len(rounds[name]) // 2]) for name, _ in modes]
    units = len(baseline)
    print(
        f"{args.domain}: {units} simulations (gold agent, -k {args.k}, --format {args.format}, --concurrency "
        f"{args.concurrency}); {os.cpu_count()} cores; Ray start {ray_start:.1f} s (not in the times below); "
        f"median of {args.repeat}"
    )
    local_time = results[0][1][0]
    for name, (elapsed, actors_start, cpu) in results:
        check = "" if name == "local" else ("; same simulations" if same[name] else "; DIFFERENT simulations")
        start = f" (actors' start {actors_start:.1f} s)" if name != "local" else ""
        print(
            f"  {name:<16} {elapsed:7.2f} s{start:<22} {units / elapsed:7.1f} sim/s  this process's CPU "
            f"{cpu:6.2f} s  {elapsed / local_time:5.2f}x local's time{check}"
        )
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
