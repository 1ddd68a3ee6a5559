"""Large results files made from the corpus: N real simulations of one domain, with new ids.

    python -m benchmarks.make_corpus --domain airline -n 20000 --out DIR [--files K] [--layout results|compact|dir]

Every simulation of the domain in the corpus (recorded runs and tau2's gold
runs, solo runs left out) is copied in turn, messages untouched, with a new id
(``<original id>~<copy>``) and the copy number as its trial, until there are N.
Tasks embedded in the sources go into every output file (a task id that two
sources define differently keeps the first definition, and the other source's
simulations of that task are not used), so each copy replays exactly as its
original does. ``--files K`` spreads the N simulations over K files; ``--layout
compact`` writes each results object on one line (as other tools re-save them),
``--layout dir`` tau2's directory layout (``results.json`` + ``simulations/``).

The output folder must be new or empty and is never inside the repository
(the benchmarks write under a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def source_pool(domain: str, corpus: Path = CORPUS) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict]:
    """(simulations, tasks, info) of ``domain`` across the corpus files, in file order."""
    from tau_tui.model.io import RunFileError, expand_paths, open_run

    sims: list[dict[str, Any]] = []
    tasks: dict[str, Any] = {}
    info: dict[str, Any] | None = None
    for path in expand_paths([corpus]):
        try:
            run = open_run(path)
        except RunFileError:
            continue
        if run.domain != domain or run.solo or run.layout not in ("results", "dir"):
            continue
        clashing: set[str] = set()
        for raw in run.raw_tasks:
            if not isinstance(raw, dict) or "id" not in raw:
                continue
            task_id = str(raw["id"])
            if task_id in tasks and tasks[task_id] != raw:
                clashing.add(task_id)
            else:
                tasks.setdefault(task_id, raw)
        for raw in run.raw_sims:
            if (
                isinstance(raw, dict)
                and isinstance(raw.get("messages"), list)
                and str(raw.get("task_id")) not in clashing
            ):
                sims.append(raw)
        if info is None and run.raw_info:
            info = run.raw_info
    return sims, list(tasks.values()), info or {"environment_info": {"domain_name": domain}}


def copies(pool: list[dict[str, Any]], n: int):
    """The first ``n`` copies of the pool, in turn: new id, copy number as trial."""
    for k in range(n):
        raw = pool[k % len(pool)]
        copy_no = k // len(pool)
        sim = dict(raw)
        sim["id"] = f"{raw.get('id')}~{copy_no}"
        sim["trial"] = copy_no
        yield sim


def _write(path: Path, payload: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(payload)
    os.replace(tmp, path)


def _dump(value: Any, depth: int = 0) -> bytes:
    """Indented JSON of ``value`` as it sits ``depth`` levels deep (tau2's own files are indented so)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n" + b"  " * depth)


def write_results_file(path: Path, info: dict, tasks: list, sims, compact: bool = False) -> int:
    """A results object written piece by piece (no whole-file tree in memory), indented as tau2 writes it or
    on one line (``compact``); returns the number of sims."""
    tmp = path.with_name(f".{path.name}.tmp")
    count = 0
    if compact:
        head = b'{"timestamp":"2026-01-01T00:00:00","info":' + orjson.dumps(info) + b',"tasks":'
        head += orjson.dumps(tasks) + b',"simulations":['
        between, before, tail = b",", b"", b"]}"
    else:
        head = b'{\n  "timestamp": "2026-01-01T00:00:00",\n  "info": ' + _dump(info, 1) + b',\n  "tasks": '
        head += _dump(tasks, 1) + b',\n  "simulations": [\n'
        between, before, tail = b",\n", b"    ", b"\n  ]\n}\n"
    with open(tmp, "wb") as handle:
        handle.write(head)
        for sim in sims:
            handle.write((between if count else b"") + before + (orjson.dumps(sim) if compact else _dump(sim, 2)))
            count += 1
        handle.write(tail)
    os.replace(tmp, path)
    return count


def write_dir_run(folder: Path, info: dict, tasks: list, sims) -> int:
    from tau_tui.model.io import id_filename

    (folder / "simulations").mkdir(parents=True)
    index = []
    for sim in sims:
        _write(folder / "simulations" / f"{id_filename(sim['id'])}.json", _dump(sim))
        index.append({"id": sim["id"], "task_id": sim.get("task_id"), "trial": sim.get("trial")})
    _write(
        folder / "results.json",
        _dump({"timestamp": "2026-01-01T00:00:00", "info": info, "tasks": tasks, "simulation_index": index}),
    )
    return len(index)


def make(domain: str, n: int, out: Path, files: int = 1, layout: str = "results") -> list[Path]:
    """Write ``n`` simulations of ``domain`` into ``files`` run files under ``out``; returns their paths."""
    if ROOT.resolve() in (out.resolve(), *out.resolve().parents):
        raise SystemExit(f"{out}: inside the repository; write large files under a temporary folder")
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise SystemExit(f"{out}: not empty")
    pool, tasks, info = source_pool(domain)
    if not pool:
        raise SystemExit(f"no {domain} simulations in {CORPUS}")
    stream = copies(pool, n)
    per_file = [n // files + (1 if i < n % files else 0) for i in range(files)]
    paths = []
    for i, count in enumerate(per_file):
        part = (next(stream) for _ in range(count))
        if layout == "dir":
            path = out / f"{domain}_scale_{i:03d}"
            write_dir_run(path, info, tasks, part)
        else:
            path = out / f"{domain}_scale_{i:03d}.json"
            write_results_file(path, info, tasks, part, compact=layout == "compact")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="airline")
    parser.add_argument("-n", type=int, default=20000, help="simulations in all (default 20000)")
    parser.add_argument("--out", required=True, type=Path, help="a new or empty folder (outside the repository)")
    parser.add_argument("--files", type=int, default=1)
    parser.add_argument("--layout", choices=("results", "compact", "dir"), default="results")
    args = parser.parse_args(argv)
    paths = make(args.domain, args.n, args.out, args.files, args.layout)
    size = sum(p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.rglob("*.json")) for p in paths)
    print(
        f"{args.n} {args.domain} simulations in {len(paths)} {args.layout} file(s) under {args.out}: "
        f"{size / 1e6:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
