"""Replay every simulation of run files: time per simulation and peak memory.

    python -m benchmarks.replay_corpus [PATH ...] [--tau2-data DIR]

PATH defaults to the tau2 corpus beside the project. Prints one line per file
(simulations, seconds, ms per simulation) and the peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainError, DomainRegistry
from tau_tui.model import RunFileError, expand_paths, open_run

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(CORPUS)])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    args = parser.parse_args(argv)
    analyzer = Analyzer(DomainRegistry(args.tau2_data))
    total_sims, total_time = 0, 0.0
    per_domain: dict[str, list[float]] = {}
    for path in expand_paths(args.paths):
        try:
            run = open_run(path)
        except RunFileError as exc:
            print(f"skip  {exc}")
            continue
        if not run.entries:
            continue
        start = time.perf_counter()
        done = 0
        try:
            for i in range(len(run.entries)):
                analyzer.analyze(run, i)
                done += 1
        except DomainError as exc:
            print(f"skip  {path.name}: {exc}")
            continue
        elapsed = time.perf_counter() - start
        total_sims += done
        total_time += elapsed
        per_domain.setdefault(run.domain or "?", []).append(elapsed / max(done, 1))
        print(f"{done:5d} sims  {elapsed:7.3f} s  {1000 * elapsed / max(done, 1):7.2f} ms/sim  {path.name}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"total: {total_sims} simulations in {total_time:.2f} s "
        f"({1000 * total_time / max(total_sims, 1):.2f} ms/sim); peak RSS {peak_mb:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
