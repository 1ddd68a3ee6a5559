"""``replay --json`` on a real two-node Ray cluster against the local executor, same run, same files.

    python -m benchmarks.ray_cluster [PATH ...] [--nodes 2] [--tau2-data DIR] [--out DIR] [--ship-data [--rounds 3]]

Starts ``tests.ray_cluster.LocalCluster`` (``ray start`` nodes of one CPU each, own temporary folders and
working folders, on this machine) and times that start; then runs ``tau-tui replay --json`` over PATH
(default: the tau2 airline file of the corpus) with the local executor (the baseline) and with
``--executor ray`` over ``RAY_ADDRESS`` (one actor per node), each in a new process with only
``TAU2_DATA_DIR`` set for the data. Prints each wall time, the ratio, the output size, and whether the two
outputs are equal byte for byte. Each output goes to a file in ``--out`` (default: a new temporary folder,
removed after), never into this process's memory, so a million simulations' output compares as well. With ``--ship-data``, ``--executor ray --ship-data`` once cold (each node
unpacks what it is sent), then ``--rounds`` rounds of a plain Ray run and a warm one (the nodes' copies used
again), alternately; the medians' difference is the cost of shipping once the nodes hold the data.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.ray_cluster import LocalCluster

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


_runs = itertools.count(1)


def replay(out: Path, paths: list[str], env: dict[str, str], *extra: str) -> tuple[float, int, str, Path]:
    """(wall seconds, exit code, stderr's last line, the file its stdout went to) of one ``tau-tui replay
    --json``."""
    target = out / f"replay-{next(_runs)}.json"
    started = time.perf_counter()
    with target.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "tau_tui", "replay", "--json", *extra, *paths],
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
        )
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return time.perf_counter() - started, done.returncode, (lines[-1] if lines else ""), target


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def same(a: Path, b: Path) -> bool:
    return a.stat().st_size > 0 and filecmp.cmp(a, b, shallow=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--tau2-data", default=os.environ.get("TAU2_DATA_DIR") or str(CORPUS))
    parser.add_argument("--ship-data", action="store_true", help="also time --ship-data, cold and warm")
    parser.add_argument("--rounds", type=int, default=3, help="with --ship-data: plain and warm runs, alternately")
    parser.add_argument("--out", type=Path, help="a folder for the outputs, kept (default: a temporary one)")
    args = parser.parse_args()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        return run(args, args.out)
    with tempfile.TemporaryDirectory(prefix="tau-tui-ray-cluster-") as out:
        return run(args, Path(out))


def run(args: argparse.Namespace, out: Path) -> int:
    paths = args.paths or [str(CORPUS / "sierra-research__tau2-bench__airline.json")]
    data = {"TAU2_DATA_DIR": args.tau2_data, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with LocalCluster(nodes=args.nodes, cpus=1) as cluster:
        print(f"cluster of {args.nodes} nodes (1 CPU each) up in {time.perf_counter() - started:.1f} s")
        local_env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | data
        local = replay(out, paths, local_env)
        on_ray = ("--executor", "ray", "--workers", str(args.nodes))
        remote = replay(out, paths, cluster.env(**data), *on_ray)
        runs = {"local": local, "ray": remote}
        plain, warm = [remote[0]], []
        if args.ship_data:
            runs["ship cold"] = replay(out, paths, cluster.env(**data), *on_ray, "--ship-data")
            for _ in range(args.rounds):
                plain.append(replay(out, paths, cluster.env(**data), *on_ray)[0])
                runs["ship warm"] = replay(out, paths, cluster.env(**data), *on_ray, "--ship-data")
                warm.append(runs["ship warm"][0])
    for name, (wall, code, last, path) in runs.items():
        size = path.stat().st_size
        print(f"{name:9s}: {wall:7.2f} s, exit {code}, {size:,} bytes (sha256 {sha256(path)[:12]}) {last[:120]}")
    print(f"ray / local: {remote[0] / local[0]:.2f}x; outputs equal: {same(remote[3], local[3])}")
    if warm:
        import statistics

        equal = all(same(runs[name][3], local[3]) for name in ("ship cold", "ship warm"))
        print(f"--ship-data, outputs equal the local executor's: {equal}")
        print(f"ship cold - first ray run: {runs['ship cold'][0] - remote[0]:+.2f} s")
        print(
            f"median of {len(warm)} warm runs - median of {len(plain)} plain ones: "
            f"{statistics.median(warm) - statistics.median(plain):+.2f} s "
            f"(plain {', '.join(f'{t:.2f}' for t in plain)}; warm {', '.join(f'{t:.2f}' for t in warm)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
