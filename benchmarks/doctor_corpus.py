"""The benchmark doctor over run files against plain replay and replay + assessment of the same files.

    python -m benchmarks.doctor_corpus [PATH ...] [--tau2-data DIR] [--rounds N]

PATH defaults to the tau2 corpus beside the project (its recordings and the generated gold runs). Each
round times, in this process and each with a fresh analyzer (cold gold and initial-state caches): the
replay of every simulation (what ``tau-tui replay`` does), replay + assessment (``tau-tui eval``: reward,
explanation, process flags), and ``doctor.recordings.examine`` (everything ``tau-tui doctor PATH`` does:
invariants, premature ends, attribution, whose fault, clusters) with the noise split. Prints seconds per
1,000 simulations for each and doctor / replay, doctor / eval; the best round counts.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tau_tui.analysis import Analyzer
from tau_tui.doctor.noise import NoiseSplit
from tau_tui.doctor.recordings import examine
from tau_tui.domains import DomainError, DomainRegistry
from tau_tui.model import RunFileError, expand_paths, open_run
from tau_tui.model.io import RecordedOnly

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def _runs(paths: list[str]) -> list:
    runs = []
    for path in expand_paths(paths):
        try:
            run = open_run(path)
        except RunFileError:
            continue
        if run.raw_sims and not run.recorded_only:
            runs.append(run)
    return runs


def _each(analyzer: Analyzer, runs: list, assess: bool) -> int:
    done = 0
    for run in runs:
        for index in range(len(run.raw_sims)):
            try:
                analysis = analyzer.analyze(run, index)
            except (DomainError, RecordedOnly, RunFileError):
                continue
            if assess:
                analyzer.assess(analysis)
            done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(CORPUS)])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    registry = DomainRegistry(args.tau2_data)
    best: dict[str, float] = {}
    sims = files = 0
    for round_ in range(args.rounds):
        for name in ("replay", "eval", "doctor"):
            runs = _runs(args.paths)  # opened afresh: every phase parses its simulations itself
            files = len(runs)
            analyzer = Analyzer(registry)
            start = time.perf_counter()
            if name == "doctor":
                noise = NoiseSplit()
                exam = examine(analyzer, runs, on_probe=noise.add)
                noise.records()
                count = exam.simulations
            else:
                count = _each(analyzer, runs, assess=name == "eval")
            elapsed = time.perf_counter() - start
            sims = count
            best[name] = min(best.get(name, elapsed), elapsed)
            print(f"round {round_ + 1}  {name:7s} {count} simulations in {elapsed:6.2f} s")
    per_k = {name: 1000 * seconds / max(sims, 1) for name, seconds in best.items()}
    print(
        f"{sims} simulations, {files} files; seconds per 1,000 simulations (best of {args.rounds}): "
        f"replay {per_k['replay']:.2f}, eval {per_k['eval']:.2f}, doctor {per_k['doctor']:.2f}; "
        f"doctor / replay {best['doctor'] / best['replay']:.2f}x, doctor / eval {best['doctor'] / best['eval']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
