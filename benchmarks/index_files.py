"""Indexing many files: the TUI's loader in this process (sequential) against worker processes, same run.

    python -m benchmarks.index_files [--case 20000x20 5000x50 ...] [--domain airline] [--repeat 3]
                                     [--workers W] [--keep DIR]

For every case ``NxK`` (N simulations over K files), ``benchmarks.make_corpus``
writes the files under a temporary folder; then the TUI (headless
``App.run_test``, 160x45, background replay not measured) is started in a
child process once with ``TAU_TUI_INDEX_WORKERS=0`` (every file indexed in the
app's process, one after the other: what it did before) and once with the
default (worker processes), alternately, ``--repeat`` times each. Reported
per mode: launch → first rows in the runs table, → every file indexed (all
rows in the table), peak memory of the whole process tree (worker processes
included) up to then and of the app's own process, and key presses → cursor moved on the runs table while
the files are being indexed; the ratios sequential / parallel are of the
medians. The rows (ids, order) of both modes are checked equal.

The CLI was measured too: ``replay``/``eval`` indexing the next file on a
thread while the worker processes replay this one gave 0.88–1.65× over three
runs of 3–5 repeats on the shared 2-core machine (load 3.5–7), no consistent
gain, so it was not kept.

The machine's other load counts: parallel indexing can only win by the cores
nobody else is using; the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
PYTHON = sys.executable


async def _probe(paths: list[str], tau2_data: str) -> dict:
    import threading

    from benchmarks.keys import CursorTimer
    from benchmarks.scale import _tree_rss
    from benchmarks.tui_app import build_app, catalog, indexed
    from tau_tui.tui.widgets.run_table import RunTable

    out: dict = {"keys": []}
    peak = [0]
    stop = threading.Event()

    def sample() -> None:  # off the event loop: reading /proc takes a while
        while not stop.wait(0.1):
            peak[0] = max(peak[0], _tree_rss(os.getpid()))

    threading.Thread(target=sample, daemon=True).start()
    start = time.perf_counter()
    app = build_app(paths, tau2_data, workers=1, background_replay=False)  # the replay is not what is measured
    async with app.run_test(size=(160, 45)) as pilot:
        table = app.runs_screen.query_one(RunTable)
        keys = CursorTimer(table)
        while True:
            now = time.perf_counter() - start
            if "first_rows" not in out and table.row_count:
                out["first_rows"] = now
            if indexed(app):
                out["all_indexed"] = now
                break
            if table.row_count:
                took = await keys.press(pilot)
                if took is not None:
                    out["keys"].append(took)
            await pilot.pause(0.02)
        out["rows"] = [(str(r.path), r.sim_id) for r in catalog(app).rows]
        stop.set()
        out["peak_mb"] = max(peak[0], _tree_rss(os.getpid())) / 1024**2
        import resource

        out["main_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        app.workers.cancel_all()
        app.exit()
    return out


def _child(paths: list[str], tau2_data: str, result: str) -> int:
    import asyncio

    Path(result).write_text(json.dumps(asyncio.run(_probe(paths, tau2_data))))
    os._exit(0)  # skip the teardown: not part of what is measured


def _run(paths: list[Path], tau2_data: str, workers: str | None, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONHASHSEED="0")
    env.pop("TAU_TUI_INDEX_WORKERS", None)
    if workers is not None:
        env["TAU_TUI_INDEX_WORKERS"] = workers
    done = subprocess.run(
        [PYTHON, "-m", "benchmarks.index_files", "--child", str(out), "--tau2-data", tau2_data, *map(str, paths)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"the TUI child failed: {done.stderr[-1500:]}")
    result = json.loads(out.read_text())
    out.unlink()
    return result


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="+", default=["20000x20", "5000x50"], help="N simulations x K files")
    parser.add_argument("--domain", default="airline")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default=None, help="TAU_TUI_INDEX_WORKERS of the parallel mode (default: cores)")
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--keep", type=Path, help="write the generated files here and keep them")
    parser.add_argument("--child", metavar="RESULT", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.paths, args.tau2_data, args.child)
    from benchmarks.make_corpus import make

    with tempfile.TemporaryDirectory(prefix="tau-tui-index-") as tmp:
        work = args.keep or Path(tmp)
        for case in args.case:
            n, k = (int(x) for x in case.lower().split("x"))
            folder = work / f"{args.domain}-{n}-{k}"
            if not folder.exists():
                make(args.domain, n, folder, files=k)
            paths = sorted(folder.iterdir())
            size = sum(p.stat().st_size for p in paths) / 1e6
            modes = {"sequential": "0", "parallel": args.workers}
            runs: dict[str, list[dict]] = {m: [] for m in modes}
            for _ in range(args.repeat):
                for mode, workers in modes.items():
                    runs[mode].append(_run(paths, args.tau2_data, workers, work / f"probe-{mode}.json"))
            same = all(r["rows"] == runs["sequential"][0]["rows"] for rs in runs.values() for r in rs)
            print(
                f"\n== {n} simulations over {k} files ({size:.0f} MB), {args.repeat} runs each, "
                f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores =="
            )
            print(f"  {'':<40}{'sequential':>14}{'parallel':>14}   seq/par")
            for key, name, unit in (
                ("first_rows", "launch → first rows", "s"),
                ("all_indexed", "launch → every file indexed", "s"),
                ("peak_mb", "peak memory (process tree)", "MB"),
                ("main_peak_mb", "peak memory (the app's process)", "MB"),
            ):
                a = _median([r[key] for r in runs["sequential"]])
                b = _median([r[key] for r in runs["parallel"]])
                fmt = (lambda v: f"{v:.2f} s") if unit == "s" else (lambda v: f"{v:.0f} MB")
                print(f"  {name:<40}{fmt(a):>14}{fmt(b):>14}   {a / b:.2f}×")
            for mode in modes:
                keys = [t for r in runs[mode] for t in r["keys"]]
                if keys:
                    ordered = sorted(keys)
                    print(
                        f"  key → cursor moved while indexing, {mode}: median {1000 * _median(keys):.0f} ms, "
                        f"max {1000 * ordered[-1]:.0f} ms ({len(keys)} presses)"
                    )
            print(
                f"  rows: {len(runs['sequential'][0]['rows'])}, same ids in the same order in every run: "
                f"{'yes' if same else 'NO'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
