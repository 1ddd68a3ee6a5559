"""Leaderboard-size corpora: the TUI and the CLI on N generated simulations, against a baseline tree.

    python -m benchmarks.scale [-n 1600 5000 20000] [--domain airline] [--base DIR] [--workers W]
                               [--only tui,replay,eval] [--files K] [--keep DIR]
                               [--layout indented|compact|both]

For every N and layout, ``benchmarks.make_corpus`` writes N real simulations
(new ids) under a temporary folder, indented as tau2 writes them and/or on one
line (``compact``, as other tools re-save them; ``both``, the default, measures
the two in the same run), then each code tree (this one, and ``--base``, a
checkout of an older commit: ``git worktree add --detach ../base <commit>``)
is measured in child processes, one after the other, in the same run:

  * TUI (headless ``App.run_test``, 160x45): launch → first rows in the runs
    table, → every file indexed, → background replay done; key press → cursor
    moved on the runs table during and after the background replay; the
    app's work for the failed-only filter, a sort by task and a text search
    after it; peak memory (the child's max RSS);
  * ``tau-tui replay --json`` and ``tau-tui eval --json``: wall time and peak
    memory, and whether the output equals the base tree's byte for byte;
  * ``--only ...,ray`` (the extra ``ray``): ``replay --json --executor ray``
    on 1 and on 2 local Ray workers, wall time, and whether the output equals
    the local executor's;
  * ``--only ...,tau2`` (the extra ``tau2``): tau2's own loader
    (``Results.load`` of every file) against ours (the index, and the index
    plus parsing every simulation), and tau2's evaluator against our replay +
    DB check on a sample of ``--sample`` simulations (``benchmarks.vs_tau2``;
    the whole corpus would take tau2 hours at 100k), in one child process.

Peak memory is the whole process tree's (worker processes included), sampled
every 0.2 s, and at least the main process's own max RSS.

Ratios (base / this tree) are printed at the end, and for every N this tree's
figures per layout against the targets (first rows < 1 s, the TUI's process
tree ≤ 1 GB, ``replay --json`` ≤ 20 s). Files are written under a temporary
folder (``--keep DIR``: there, and left in place), never in the repository.
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
TIMEOUT = 3600


def _tree_rss(root_pid: int) -> int:
    """Resident bytes of a process and all its descendants (worker processes included), from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as handle:
                rss[int(entry)] = int(handle.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
        parents[int(entry)] = int(fields[1])
    total, stack = 0, [root_pid]
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total


PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _child(root: Path, argv: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float, int, str]:
    """Run ``argv`` with ``root``'s code first on the path: (wall s, peak RSS MB of the process tree, exit
    status, stderr tail). The peak sums the child and its worker processes, sampled every 0.2 s (and is at
    least the child's own max RSS)."""
    import threading

    env = dict(os.environ, PYTHONPATH=str(root), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONHASHSEED="0")
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=stdout, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err_bytes = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    err = err_bytes.decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, max(usage.ru_maxrss * 1024, peak[0]) / 1024**2, proc.returncode, err[-600:]


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {1000 * statistics.median(values):.0f} ms, p95 {1000 * p95:.0f} ms, max {1000 * max(values):.0f} ms"


# --- the TUI child ---------------------------------------------------------------------------------------------
async def _tui_probe(paths: list[str], tau2_data: str) -> dict:
    from benchmarks.keys import CursorTimer
    from benchmarks.tui_app import build_app, catalog, indexed
    from tau_tui.tui.widgets.run_table import RunTable

    out: dict = {}
    start = time.perf_counter()
    app = build_app(paths, tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        while True:
            now = time.perf_counter() - start
            table = app.runs_screen.query_one(RunTable)
            if "first_rows" not in out and table.row_count:
                out["first_rows"] = now
            if indexed(app):
                out["all_indexed"] = now
                break
            await pilot.pause(0.005)
        out["rows"] = len(catalog(app).rows)
        table = app.runs_screen.query_one(RunTable)
        keys = CursorTimer(table)
        out["keys_during"] = await keys.presses(pilot, 30)
        while app.busy:
            await pilot.pause(0.05)
        out["replay_done"] = time.perf_counter() - start
        out["replayed"] = sum(1 for r in catalog(app).rows if r.replay is not None)
        out["keys_after"] = await keys.presses(pilot, 30)
        keys.close()
        screen = app.runs_screen

        async def work(action) -> float:
            t0 = time.perf_counter()
            action()
            await pilot.pause()
            return time.perf_counter() - t0

        out["filter"] = await work(lambda: screen.set_filter(screen.filter.with_(failed_only=True)))
        out["filter_rows"] = table.row_count
        await work(lambda: screen.set_filter(screen.filter.with_(failed_only=False)))
        out["sort"] = await work(lambda: screen._sort_by("task"))
        out["search"] = await work(lambda: screen.set_filter(screen.filter.with_(text="cancel")))
        out["search_rows"] = table.row_count
        out["search_again"] = await work(lambda: screen.set_filter(screen.filter.with_(text="baggage")))
        app.workers.cancel_all()
        app.exit()
    return out


def tau2_child(paths: list[str], tau2_data: str, sample: int, result: str) -> int:
    """tau2's loader and evaluator against ours, in this one process (the tau2 extra)."""
    import contextlib
    import io
    import logging

    from benchmarks import vs_tau2
    from tau_tui.model import open_run

    logging.disable(logging.WARNING)
    vs_tau2._tau2()  # tau2's import, and its logger silenced, before anything is timed
    from tau2.data_model.simulation import Results

    out: dict = {}
    start = time.perf_counter()
    tau2_sims = sum(len(Results.load(Path(p)).simulations) for p in paths)
    out["tau2_load"] = time.perf_counter() - start
    gc_collect()
    start = time.perf_counter()
    runs = [open_run(p) for p in paths]
    rows = sum(len(run.entries) for run in runs)
    out["ours_index"] = time.perf_counter() - start
    for run in runs:
        for index in range(len(run.entries)):
            run.simulation(index)
    out["ours_parse_all"] = time.perf_counter() - start
    out["sims"] = [tau2_sims, rows]
    del runs
    gc_collect()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        vs_tau2.main([*paths, "--limit", str(max(1, sample // len(paths))), "--tau2-data", tau2_data])
    for line in buffer.getvalue().splitlines():
        cells = line.split()
        if cells and cells[0] == "all":
            out["eval_sims"], out["tau2_eval"], out["ours_eval"] = int(cells[1]), float(cells[2]), float(cells[3])
    Path(result).write_text(json.dumps(out))
    os._exit(0)


def gc_collect() -> None:
    import gc

    gc.collect()


def tui_child(paths: list[str], tau2_data: str, result: str) -> int:
    import asyncio

    Path(result).write_text(json.dumps(asyncio.run(_tui_probe(paths, tau2_data))))
    os._exit(0)  # skip the teardown of millions of objects: not part of what is measured


# --- the parent --------------------------------------------------------------------------------------------------
def measure(
    root: Path,
    paths: list[Path],
    tau2_data: str,
    what: list[str],
    workers: int | None,
    out_dir: Path,
    label: str,
    sample: int = 500,
) -> dict:
    results: dict = {}
    files = [str(p) for p in paths]
    if "tui" in what:
        probe = out_dir / f"tui-{label}.json"
        wall, rss, code, err = _child(
            root, [PYTHON, str(Path(__file__).resolve()), "--tui-child", str(probe), "--tau2-data", tau2_data, *files]
        )
        results["tui"] = json.loads(probe.read_text()) if code == 0 and probe.exists() else {"error": err}
        results["tui"]["rss"] = rss
    for command in ("replay", "eval"):
        if command not in what:
            continue
        argv = [PYTHON, "-m", "tau_tui", command, "--json", "--tau2-data", tau2_data, *files]
        if workers is not None and not label.startswith("base"):
            argv += ["--workers", str(workers)]
        target = out_dir / f"{command}-{label}.jsonl"
        with open(target, "wb") as handle:
            wall, rss, code, err = _child(root, argv, stdout=handle)
        results[command] = {
            "wall": wall,
            "rss": rss,
            "status": code,
            "output": str(target),
            "error": err if code not in (0, 1) else "",
        }
    if "ray" in what and not label.startswith("base"):
        for count in (1, 2):
            argv = [
                PYTHON,
                "-m",
                "tau_tui",
                "replay",
                "--json",
                "--tau2-data",
                tau2_data,
                "--executor",
                "ray",
                "--workers",
                str(count),
                *files,
            ]
            target = out_dir / f"replay-ray{count}-{label}.jsonl"
            with open(target, "wb") as handle:
                wall, rss, code, err = _child(root, argv, stdout=handle)
            results[f"ray{count}"] = {
                "wall": wall,
                "rss": rss,
                "status": code,
                "output": str(target),
                "error": err if code not in (0, 1) else "",
            }
    if "tau2" in what and not label.startswith("base"):
        probe = out_dir / f"tau2-{label}.json"
        wall, rss, code, err = _child(
            root,
            [
                PYTHON,
                str(Path(__file__).resolve()),
                "--tau2-child",
                str(probe),
                "--sample",
                str(sample),
                "--tau2-data",
                tau2_data,
                *files,
            ],
        )
        results["tau2"] = json.loads(probe.read_text()) if code == 0 and probe.exists() else {"error": err}
    return results


def _same(a: dict, b: dict, command: str) -> str:
    try:
        return "yes" if Path(a[command]["output"]).read_bytes() == Path(b[command]["output"]).read_bytes() else "NO"
    except (KeyError, OSError):
        return "?"


def report(n: int, size_mb: float, runs: dict[str, dict], layout: str = "indented") -> None:
    print(f"\n== {n} simulations, {layout} ({size_mb:.0f} MB) ==")
    labels = list(runs)
    rows = []

    def tui(key: str):
        return [runs[lb].get("tui", {}).get(key) for lb in labels]

    def line(name: str, values, fmt, ratio: bool = True) -> None:
        cells = [fmt(v) if isinstance(v, (int, float)) else "—" for v in values]
        text = f"  {name:<44}" + "".join(f"{c:>16}" for c in cells)
        if ratio and len(values) == 2 and all(isinstance(v, (int, float)) and v for v in values):
            text += f"   base/this {values[1] / values[0]:.1f}×" if labels[1] == "base" else ""
        rows.append(text)

    secs = lambda v: f"{v:.2f} s"  # noqa: E731
    mb = lambda v: f"{v:.0f} MB"  # noqa: E731
    rows.append(f"  {'':<44}" + "".join(f"{lb:>16}" for lb in labels))
    line("TUI launch → first rows", tui("first_rows"), secs)
    line("TUI launch → every file indexed", tui("all_indexed"), secs)
    line("TUI launch → background replay done", tui("replay_done"), secs)
    line("TUI peak memory (max RSS)", tui("rss"), mb)
    for key, name in (
        ("keys_during", "key → cursor moved, during replay"),
        ("keys_after", "key → cursor moved, after"),
    ):
        vals = [v for v in tui(key)]
        rows.append(f"  {name:<44}" + "".join(f"{(_ms(v) if isinstance(v, list) else '—'):>42}" for v in vals))
    line("failed-only filter (app work + repaint)", tui("filter"), secs)
    line("sort by task", tui("sort"), secs)
    line("text search (first)", tui("search"), secs)
    line("text search (again)", tui("search_again"), secs)
    for command in ("replay", "eval"):
        line(f"`{command} --json` wall", [runs[lb].get(command, {}).get("wall") for lb in labels], secs)
        line(f"`{command} --json` peak memory", [runs[lb].get(command, {}).get("rss") for lb in labels], mb)
    print("\n".join(rows))
    this = runs.get("this", {})
    if "ray1" in this:
        local = this.get("replay", {}).get("wall")
        for count in (1, 2):
            ray = this[f"ray{count}"]
            versus = f" (local {local:.2f} s)" if local else ""
            print(
                f"  `replay --json --executor ray --workers {count}` wall {ray['wall']:.2f} s{versus}, "
                f"peak {ray['rss']:.0f} MB (driver + local Ray processes), output identical to local: "
                f"{_same(this, {'replay': ray}, 'replay') if 'replay' in this else '?'}"
            )
        if this["ray1"].get("wall") and this["ray2"].get("wall"):
            print(f"  Ray speed-up, 1 → 2 workers: {this['ray1']['wall'] / this['ray2']['wall']:.2f}×")
    tau2 = this.get("tau2")
    if tau2 and "tau2_load" in tau2:
        print(
            f"  tau2 loader (Results.load) {tau2['tau2_load']:.2f} s vs our index {tau2['ours_index']:.2f} s "
            f"({tau2['tau2_load'] / tau2['ours_index']:.1f}×), index + parse every simulation "
            f"{tau2['ours_parse_all']:.2f} s ({tau2['tau2_load'] / tau2['ours_parse_all']:.1f}×); "
            f"{tau2['sims'][0]} / {tau2['sims'][1]} simulations"
        )
        if tau2.get("ours_eval"):
            print(
                f"  tau2 evaluator vs our replay + DB check, sample of {tau2['eval_sims']}: {tau2['tau2_eval']:.2f} s"
                f" vs {tau2['ours_eval']:.2f} s ({tau2['tau2_eval'] / tau2['ours_eval']:.0f}×)"
            )
    if len(labels) == 2:
        for command in ("replay", "eval"):
            if command in runs[labels[0]]:
                print(
                    f"  `{command} --json` output identical to base: {_same(runs[labels[0]], runs[labels[1]], command)}"
                )
    for lb in labels:
        for key, value in runs[lb].items():
            if isinstance(value, dict) and value.get("error"):
                print(f"  {lb} {key} failed: {value['error']}")
        tui_rows = runs[lb].get("tui", {})
        if "rows" in tui_rows:
            print(
                f"  {lb}: {tui_rows['rows']} rows, {tui_rows.get('replayed')} replayed, "
                f"filter {tui_rows.get('filter_rows')} rows, search {tui_rows.get('search_rows')} rows"
            )


LAYOUTS = ("indented", "compact")  # tau2's own indent, and one line as other tools re-save results
# What a leaderboard-size corpus must cost on 2 cores, in either layout: (what, key, unit, bound, strictly below).
TARGETS = (
    ("TUI launch → first rows", ("tui", "first_rows"), "s", 1.0, True),
    ("TUI peak memory (process tree)", ("tui", "rss"), "MB", 1024.0, False),
    ("`replay --json` wall", ("replay", "wall"), "s", 20.0, False),
    ("`replay --json` peak memory", ("replay", "rss"), "MB", None, False),
    ("`eval --json` wall", ("eval", "wall"), "s", None, False),
)


def targets(n: int, by_layout: dict[str, dict]) -> None:
    """This tree's figures for each layout side by side, each against its bound."""
    print(f"\n== {n} simulations: layouts against the targets ==")
    print(f"  {'':<34}" + "".join(f"{name:>26}" for name in by_layout) + "   target")
    for what, (part, key), unit, bound, strict in TARGETS:
        cells, ok = [], True
        for runs in by_layout.values():
            value = runs.get(part, {}).get(key)
            if isinstance(value, (int, float)):
                cells.append(f"{value:.2f} s" if unit == "s" else f"{value:.0f} MB")
                ok = ok and (bound is None or value < bound or (not strict and value == bound))
            else:
                cells.append("—")
                ok = False
        goal = "" if bound is None else f"{'<' if strict else '≤'} {bound:g} {unit}: " + ("ok" if ok else "MISSED")
        print(f"  {what:<34}" + "".join(f"{c:>26}" for c in cells) + f"   {goal}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, nargs="+", default=[1600, 5000, 20000])
    parser.add_argument("--domain", default="airline")
    parser.add_argument("--files", type=int, default=1, help="spread each N over this many files")
    parser.add_argument("--base", type=Path, help="a checkout of the baseline commit, measured in the same run")
    parser.add_argument("--workers", type=int, help="--workers for this tree's replay/eval (default: theirs)")
    parser.add_argument("--only", default="tui,replay,eval")
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--base-only", action="store_true", help="measure only the --base tree")
    parser.add_argument("--keep", type=Path, help="write the generated files here and keep them")
    parser.add_argument("--sample", type=int, default=500, help="simulations of the tau2 evaluator comparison")
    parser.add_argument(
        "--layout", choices=(*LAYOUTS, "both"), default="both", help="the generated files' JSON layout (both: each)"
    )
    parser.add_argument("--tui-child", metavar="RESULT", help=argparse.SUPPRESS)
    parser.add_argument("--tau2-child", metavar="RESULT", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tui_child:
        return tui_child(args.paths, args.tau2_data, args.tui_child)
    if args.tau2_child:
        return tau2_child(args.paths, args.tau2_data, args.sample, args.tau2_child)
    from benchmarks.make_corpus import make

    what = args.only.split(",")
    trees = ({} if args.base_only else {"this": ROOT}) | ({"base": args.base.resolve()} if args.base else {})
    layouts = LAYOUTS if args.layout == "both" else (args.layout,)
    with tempfile.TemporaryDirectory(prefix="tau-tui-scale-") as tmp:
        work = args.keep or Path(tmp)
        for n in args.n:
            this_tree: dict[str, dict] = {}
            for layout in layouts:
                folder = work / (f"{args.domain}-{n}-{args.files}" + ("" if layout == "indented" else f"-{layout}"))
                if not folder.exists():
                    make(
                        args.domain, n, folder, files=args.files, layout="compact" if layout == "compact" else "results"
                    )
                paths = sorted(folder.iterdir())
                size = sum(p.stat().st_size for p in paths) / 1e6
                runs = {}
                for label, root in trees.items():
                    print(f"measuring {label} ({root}) on {n} simulations, {layout}…", flush=True)
                    runs[label] = measure(
                        root, paths, args.tau2_data, what, args.workers, work, f"{label}-{n}-{layout}", args.sample
                    )
                report(n, size, runs, layout)
                this_tree[f"{layout} ({size:.0f} MB)"] = runs.get("this") or runs[next(iter(runs))]
            targets(n, this_tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
