"""How to find each simulation in a results file of any JSON layout: the candidates, measured in the same run.

    python -m benchmarks.stream_layouts [-n 5000] [--repeat 3] [--keep DIR]

``benchmarks.make_corpus`` writes N real airline simulations twice, indented
as tau2 writes them and on one line (compact). Each way of indexing them runs
in its own child process, on each file (wall time, median of ``--repeat``;
peak memory of the child):

  * ``stream``: ours (``model.stream``: orjson finds where each value ends in a
    window of the mapped file; rows from each simulation, spans kept);
  * ``whole``: the whole file parsed by orjson, then the rows (what a compact
    file cost before ``stream`` read every layout);
  * ``regex``: a pure-Python scanner (``re`` skipping strings and escapes,
    counting brackets) for the spans, then orjson on each span for its row;
  * ``ijson``: ijson's C backend (``yajl2_c``; only when ijson is installed:
    it is no dependency of ours), ``items(f, "simulations.item")`` for the rows.
    It gives no byte offsets, so it could not keep spans to read again or send.

Every candidate must produce the same rows; a difference is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = ("stream", "whole", "regex", "ijson")
# Everything up to the next bracket, strings (with their escapes) skipped whole.
_TOKEN = re.compile(rb'[^"\[\]{}]*+(?:"(?:[^"\\]++|\\.)*+"[^"\[\]{}]*+)*+([\[\]{}])', re.S)


def _rows_stream(path: Path) -> list[Any]:
    from tau_tui.model import open_run, runtime

    runtime.configure(stream_bytes=0)
    return open_run(path).entries


def _rows_whole(path: Path) -> list[Any]:
    from tau_tui.model import open_run, runtime

    runtime.configure(stream_bytes=1 << 62)
    return open_run(path).entries


def _rows_regex(path: Path) -> list[Any]:
    import mmap

    import orjson

    from tau_tui.model.io.runfile import _index_entry

    rows = []
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        pos = buf.find(b"[", buf.find(b'"simulations"')) + 1
        while True:
            pos = buf.find(b"{", pos)
            depth, at = 1, pos + 1
            while depth:
                match = _TOKEN.match(buf, at)
                assert match is not None
                depth += 1 if match.group(1) in (b"{", b"[") else -1
                at = match.end()
            rows.append(_index_entry(len(rows), orjson.loads(buf[pos:at])))
            following = buf[at : at + 64].lstrip()
            if not following.startswith(b","):
                return rows
            pos = at


def _rows_ijson(path: Path) -> list[Any]:
    import ijson

    from tau_tui.model.io.runfile import _index_entry

    with open(path, "rb") as handle:
        return [_index_entry(i, raw) for i, raw in enumerate(ijson.items(handle, "simulations.item", use_float=True))]


def child(candidate: str, path: str, out: str) -> int:
    read = {"stream": _rows_stream, "whole": _rows_whole, "regex": _rows_regex, "ijson": _rows_ijson}[candidate]
    import orjson  # noqa: F401 - imports are not what is measured

    import tau_tui.model.io  # noqa: F401

    if candidate == "ijson":
        import ijson  # noqa: F401
    start = time.perf_counter()
    rows = read(Path(path))
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    digest = [[e.id, e.task_id, e.reward, e.n_messages, e.n_tool_calls] for e in rows]
    Path(out).write_text(json.dumps({"wall": wall, "peak": peak, "rows": digest}))
    return 0


def _has_ijson() -> bool:
    try:
        import ijson  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the generated files here and keep them")
    parser.add_argument("--child", nargs=3, metavar=("CANDIDATE", "PATH", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    from benchmarks.make_corpus import make

    candidates = [c for c in CANDIDATES if c != "ijson" or _has_ijson()]
    with tempfile.TemporaryDirectory(prefix="tau-tui-layouts-") as tmp:
        work = args.keep or Path(tmp)
        files = {}
        for layout in ("results", "compact"):
            folder = work / f"airline-{args.n}-{layout}"
            if not folder.exists():
                make("airline", args.n, folder, layout=layout)
            files["indented" if layout == "results" else "compact"] = sorted(folder.iterdir())[0]
        out = Path(work) / "child.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        results: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.repeat):  # alternately, so that the machine's load falls on every candidate alike
            for layout, path in files.items():
                for candidate in candidates:
                    argv_child = [sys.executable, "-m", "benchmarks.stream_layouts", "--child", candidate, str(path)]
                    subprocess.run([*argv_child, str(out)], check=True, cwd=ROOT, env=env)
                    results.setdefault((layout, candidate), []).append(json.loads(out.read_text()))
        print(f"{args.n} airline simulations; median wall of {args.repeat} runs, peak memory of the child")
        for layout, path in files.items():
            print(f"  {layout} ({path.stat().st_size / 1e6:.0f} MB)")
            reference = results[(layout, "whole")][0]["rows"]
            for candidate in candidates:
                runs = results[(layout, candidate)]
                wall = statistics.median(r["wall"] for r in runs)
                peak = max(r["peak"] for r in runs) / 1024**2
                same = "same rows" if runs[0]["rows"] == reference else "ROWS DIFFER"
                print(f"    {candidate:<8} {wall:6.2f} s {peak:6.0f} MB  {same}")
        if "ijson" not in candidates:
            print("  (ijson is not installed: `pip install ijson` to measure its C backend too)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
