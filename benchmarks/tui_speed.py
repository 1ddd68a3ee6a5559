"""How fast the inspector is on the corpus: launch to a usable runs table, and stepping a long trajectory.

    python -m benchmarks.tui_speed [PATH ...] [--tau2-data DIR] [--steps N]

Measures, headless (``App.run_test``, 160x45):
  1. launch → first rows in the runs table (usable), → every file indexed, → background replay done;
  2. on the longest trajectory: state + diff per step with the core alone (``state_at`` + ``changes_at``,
     and the diff against the gold final state), target < 16 ms per step;
  3. on the same trajectory in the TUI: one cursor step (the key press, the state tree and change pane
     update, and the repaint), and the DB pane update alone.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"mean {1000 * statistics.mean(values):6.2f} ms  median {1000 * statistics.median(values):6.2f} ms  "
        f"p95 {1000 * p95:6.2f} ms  max {1000 * max(values):6.2f} ms  (n={len(values)})"
    )


def longest_simulation(paths: list[str]):
    from tau_tui.model.io import RunFileError, expand_paths, open_run

    best = None
    for path in expand_paths(paths):
        try:
            run = open_run(path)
        except RunFileError:
            continue
        for entry in run.entries:
            if best is None or entry.n_messages > best[0]:
                best = (entry.n_messages, run, entry.index)
    return best


def bench_core(run, index: int, tau2_data: str) -> None:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.replay.diff import diff_states

    analyzer = Analyzer(DomainRegistry(tau2_data))
    start = time.perf_counter()
    analysis = analyzer.analyze(run, index)
    print(f"  replay of the simulation (first, loads the domain): {1000 * (time.perf_counter() - start):.0f} ms")
    start = time.perf_counter()
    analysis = analyzer.analyze(run, index)
    print(f"  replay of the simulation (domain loaded):            {1000 * (time.perf_counter() - start):.1f} ms")
    timeline = analysis.timeline
    steps = len(timeline.steps)
    per_step, gold_step = [], []
    gold = analysis.gold.state if analysis.gold else None
    for k in range(steps):
        timeline._diffs.clear()  # measure the diff itself, not the cache
        t0 = time.perf_counter()
        state = timeline.state_at(k)
        timeline.changes_at(k)
        per_step.append(time.perf_counter() - t0)
        if gold is not None:
            t0 = time.perf_counter()
            diff_states(state.agent, gold.agent)
            diff_states(state.user, gold.user)
            gold_step.append(time.perf_counter() - t0)
    print(f"  state + step diff, per step (core, headless):  {_ms(per_step)}")
    print(f"  state + diff vs gold final state, per step:    {_ms(gold_step)}")
    budget = max(per_step) * 1000
    print(f"  target < 16 ms per step: {'met' if budget < 16 else 'MISSED'} (worst {budget:.2f} ms)")


async def bench_app(paths: list[str], tau2_data: str, run_path: Path, sim_id: str, steps: int) -> None:
    from benchmarks.keys import CursorTimer
    from benchmarks.tui_app import build_app, catalog, indexed
    from tau_tui.tui.screens.trajectory import TrajectoryScreen
    from tau_tui.tui.widgets.run_table import RunTable

    start = time.perf_counter()
    app = build_app(paths, tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        first_rows = all_files = None
        while True:
            now = time.perf_counter() - start
            table = app.runs_screen.query_one(RunTable)
            if first_rows is None and table.row_count:
                first_rows = now
            if indexed(app):
                all_files = now
                break
            await pilot.pause(0.005)
        print(f"  launch → first rows in the runs table (usable): {1000 * first_rows:7.0f} ms")
        print(
            f"  launch → every file indexed ({len(catalog(app).files)} files, {len(catalog(app).rows)} simulations): "
            f"{1000 * all_files:7.0f} ms"
        )
        # cursor moves in the runs table while replay runs in the background: time from the key
        # press to the cursor moving (the table's cursor watcher), not Pilot's waiting
        table = app.runs_screen.query_one(RunTable)
        keys = CursorTimer(table)
        moves = await keys.presses(pilot, 30)
        keys.close()
        print(f"  runs table: key press → cursor moved, during background replay: {_ms(moves)}")
        t0 = time.perf_counter()
        await pilot.press("f")
        print(
            f"  'failed only' filter on the whole corpus: {1000 * (time.perf_counter() - t0):.0f} ms "
            f"({app.runs_screen.query_one(RunTable).row_count} rows)"
        )
        await pilot.press("c")
        while app.busy:
            await pilot.pause(0.05)
        print(f"  launch → background replay done: {time.perf_counter() - start:7.1f} s")

        row = catalog(app).find(run_path, sim_id)
        assert row is not None
        shown: list[float] = []
        show_step = TrajectoryScreen.show_step

        def timed_first_show(self, step: int) -> None:
            show_step(self, step)
            shown.append(time.perf_counter())

        TrajectoryScreen.show_step = timed_first_show  # type: ignore[method-assign]
        for attempt in ("first", "again"):
            shown.clear()
            t0 = time.perf_counter()
            app.open_simulation(row)
            while not shown:
                await pilot.pause(0.002)
            screen = app.screen
            assert isinstance(screen, TrajectoryScreen) and screen.doc is not None
            print(
                f"  open the trajectory ({len(screen.doc)} messages, {attempt} time): "
                f"{1000 * (shown[0] - t0):.0f} ms to messages and DB pane shown"
            )
            if attempt == "first":
                await pilot.press("escape")
                await pilot.pause()
        TrajectoryScreen.show_step = show_step  # type: ignore[method-assign]
        await app.workers.wait_for_complete()
        await pilot.pause()

        pane: list[float] = []
        frames: list[float] = []
        original = screen.show_step
        original_refresh = screen._compositor_refresh

        def timed_show_step(step: int) -> None:
            t = time.perf_counter()
            original(step)
            pane.append(time.perf_counter() - t)

        def timed_refresh() -> None:
            t = time.perf_counter()
            original_refresh()
            frames.append(time.perf_counter() - t)

        screen.show_step = timed_show_step  # type: ignore[method-assign]
        screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]

        async def press(key: str) -> tuple[float, float]:
            """(Pilot round trip, the app's own work: DB pane update + repaint) for one key."""
            pane.clear()
            frames.clear()
            t0 = time.perf_counter()
            await pilot.press(key)
            return time.perf_counter() - t0, sum(pane) + sum(frames)

        steps_timed = [await press("j") for _ in range(min(steps, len(screen.doc) - 1))]
        print(
            f"  one step, Pilot key round trip (includes Pilot's own waits, ~45 ms on an empty app): "
            f"{_ms([r for r, _ in steps_timed])}"
        )
        print(f"  one step, the app's work (DB pane update + repaint):   {_ms([w for _, w in steps_timed])}")
        slowest = max(range(len(steps_timed)), key=lambda i: steps_timed[i][1])
        print(f"    (slowest: step {slowest + 1}, {1000 * steps_timed[slowest][1]:.0f} ms)")
        await pilot.press("g")
        jumps = [await press("w") for _ in range(len(screen.doc.targets["write"]))]
        print(f"  jump to the next write, the app's work:                {_ms([w for _, w in jumps])}")
        await pilot.press("d")
        gold = [await press("k") for _ in range(20)]
        print(f"  one step with the gold diff shown, the app's work:     {_ms([w for _, w in gold])}")
        app.workers.cancel_all()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(CORPUS)])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--steps", type=int, default=250, help="cursor steps to time in the TUI")
    args = parser.parse_args(argv)
    found = longest_simulation(args.paths)
    if found is None:
        print("no simulation found")
        return 1
    n, run, index = found
    print(f"longest trajectory: {n} messages, {run.path.name} #{index} ({run.entries[index].id})")
    print("core (headless):")
    bench_core(run, index, args.tau2_data)
    print("TUI (headless app.run_test, 160x45):")
    asyncio.run(bench_app(args.paths, args.tau2_data, run.path, run.entries[index].id, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
