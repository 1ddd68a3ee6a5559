"""The runs table's rebuild (a new filter or sort, rows arriving) at 100k and 1M rows, against copying the rows.

    python -m benchmarks.table_rebuild [-n 100000 1000000] [--files 100] [--repeat 5] [PATH]

Builds a catalog of N rows from one recording (default: the corpus's tau2 airline file), its simulations copied
under ``--files`` file names with their own ids, then in a headless app with the runs table at 160×45 measures,
for each size:

- ``copy``: ``list(catalog.rows)``, the least any rebuild does (the baseline);
- ``rebuild``: ``Catalog.view`` (no filter, load order) and ``RunTable.show_rows`` with the catalog, the columns
  measured already (they are as rows arrive), and the same with a filter (failed runs) and with a sort (task);
- ``measure afresh``: what each rebuild measured before the facts were kept per file (``ColumnStats.feed``
  over every row: each name cell made, its longest value and its distinguishing starts);
- ``arrive``: measuring the rows as they arrive, all files' rows (``ColumnStats.sync``, once per file), the
  cost spread over indexing.

Prints the medians over ``--repeat`` runs and each against the copy in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def catalog_of(path: Path, size: int, files: int):
    from tau_tui.catalog import Catalog
    from tau_tui.model.io import open_run

    base = open_run(path)
    per_file = -(-size // files)
    catalog = Catalog()
    made = 0
    for f in range(files):
        count = min(per_file, size - made)
        if count <= 0:
            break
        run = dataclasses.replace(base, path=path.parent / f"{path.stem}.copy{f:04d}.json")
        run.entries = [
            dataclasses.replace(base.entries[i % len(base.entries)], index=i, id=f"{f:04d}-{i:07d}-sim")
            for i in range(count)
        ]
        catalog.add_run(run)
        made += count
    return catalog


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def measure(catalog, repeat: int) -> dict[str, float]:
    from textual.app import App, ComposeResult

    from tau_tui.catalog import RunFilter, SortSpec
    from tau_tui.tui.widgets.run_table import RunTable
    from tau_tui.views.column_stats import ColumnStats
    from tau_tui.views.columns import COLUMNS

    class Bench(App[None]):
        def compose(self) -> ComposeResult:
            yield RunTable()

    out: dict[str, float] = {}
    app = Bench()
    async with app.run_test(size=(160, 45)):
        table = app.query_one(RunTable)

        def arrive() -> None:
            stats = ColumnStats(COLUMNS)
            files = {}
            for key, run in catalog.files.items():
                files[key] = run
                stats.sync(files, catalog.file_rows)

        out["arrive"] = median_ms(arrive, 1)
        table.show_rows(catalog.view(RunFilter(), SortSpec()), catalog=catalog)  # the facts, kept
        out["copy"] = median_ms(lambda: list(catalog.rows), repeat)
        for name, flt, sort in (
            ("rebuild", RunFilter(), SortSpec()),
            ("rebuild, filtered", RunFilter(failed_only=True), SortSpec()),
            ("rebuild, sorted", RunFilter(), SortSpec("task")),
        ):
            out[name] = median_ms(lambda f=flt, s=sort: table.show_rows(catalog.view(f, s), catalog=catalog), repeat)
        fresh = ColumnStats(COLUMNS)
        out["measure afresh"] = median_ms(lambda: fresh.feed(catalog.rows), max(1, repeat // 2))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=CORPUS / "sierra-research__tau2-bench__airline.json")
    parser.add_argument("-n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for size in args.n:
        started = time.perf_counter()
        catalog = catalog_of(args.path, size, args.files)
        print(
            f"{len(catalog.rows):,} rows in {len(catalog.files)} files, made in {time.perf_counter() - started:.1f} s"
        )
        figures = asyncio.run(measure(catalog, args.repeat))
        copy = figures["copy"]
        for name, ms in figures.items():
            print(f"  {name:18s} {ms:9.1f} ms  {ms / copy:8.1f}x the copy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
