"""Replay + DB check of recorded simulations: ours against tau2's own evaluator, in one run.

    python -m benchmarks.vs_tau2 [PATH ...] [--limit N] [--tau2-data DIR]

Needs the optional tau2 extra (`pip install -e '.[tau2]'`). For every simulation
it times tau2's ``EnvironmentEvaluator.calculate_reward`` (a fresh tau2
environment for the predicted and the gold side, as tau2 does) and our
``Analyzer.analyze`` (replay, gold state, hashes, env assertions), then prints
per-domain totals and the speed ratio. Ours is measured twice: as used
(pristine DBs, initialised and gold states cached per process) and "cold",
with the per-task caches cleared before every simulation (pristine DBs stay
loaded: tau2 reloads them for every environment, which is most of its cost).
The three passes run one after the other in the same process. Domains are
looked up before timing on both sides (tau2's registry import loads its
domain modules; ``Analyzer.domain_of`` imports ours); our pristine DBs are
loaded inside the first timed pass. The prepared recordings are frozen out of
the garbage collector's passes before timing (``gc.freeze``), for both sides,
as ``tau-tui replay``/``eval`` and the TUI freeze what they loaded.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
from collections import defaultdict
from pathlib import Path

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainRegistry
from tau_tui.model import RunFileError, expand_paths, open_run

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"


def _tau2():
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    from tau2.data_model.message import AssistantMessage, SystemMessage, ToolMessage, UserMessage
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    from tau2.registry import registry

    roles = {"assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage, "system": SystemMessage}
    return registry, Task, EnvironmentEvaluator, roles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(CORPUS)])
    parser.add_argument("--limit", type=int, default=0, help="at most N simulations per file (0: all)")
    parser.add_argument("--tau2-data", default=str(CORPUS))
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    registry, Tau2Task, Evaluator, roles = _tau2()
    analyzer = Analyzer(DomainRegistry(args.tau2_data, use_tau2=False))
    ours = defaultdict(float)
    ours_cold = defaultdict(float)
    theirs = defaultdict(float)
    counts = defaultdict(int)
    tau2_failed = defaultdict(int)
    tau2_missing: set[str] = set()
    work = []  # (domain, run, index, tau2 task, tau2 messages, constructor)
    for path in expand_paths(args.paths):
        try:
            run = open_run(path)
        except RunFileError:
            continue
        domain = run.domain
        if not run.entries or domain is None or domain == "mock":
            continue  # the installed (older) tau2 has a different mock domain
        try:
            constructor = registry.get_env_constructor(domain)
        except KeyError:
            if domain not in tau2_missing:
                hint = (
                    " (python -m benchmarks.banking_vs_oracle compares with tau2 1.0.1's recorded seconds)"
                    if domain == "banking_knowledge"
                    else ""
                )
                print(f"skipped {domain}: the installed tau2 has no such domain{hint}", file=sys.stderr)
            tau2_missing.add(domain)
            continue
        analyzer.domain_of(run)  # imports our domain package, as importing tau2's registry imports tau2's
        tau2_tasks = {tid: Tau2Task.model_validate(t.model_dump(mode="json")) for tid, t in run.tasks().items()}
        n = len(run.entries) if not args.limit else min(args.limit, len(run.entries))
        for index in range(n):
            sim = run.simulation(index)
            task = tau2_tasks.get(sim.task_id)
            if task is None:
                continue
            messages = [
                roles[m.role].model_validate(m.model_dump(mode="json")) for m in sim.trajectory if m.role in roles
            ]
            work.append((domain, run, index, task, messages, constructor))
            counts[domain] += 1
    # The prepared work stays alive throughout: freeze it out of the collector's passes, as the CLI's pool and
    # the TUI freeze what they loaded (both sides are timed with it frozen).
    gc.collect()
    gc.freeze()
    # Three phases in one process, so neither side pays for the other's garbage.
    for domain, run, _index, task, messages, constructor in work:
        start = time.perf_counter()
        try:
            Evaluator.calculate_reward(constructor, task, messages, solo_mode=run.solo)
        except Exception:  # noqa: BLE001 - older tau2 raises on replay mismatches; timed all the same
            tau2_failed[domain] += 1
        theirs[domain] += time.perf_counter() - start
    gc.collect()
    for domain, run, index, *_ in work:
        start = time.perf_counter()
        analyzer.analyze(run, index).to_json()
        ours[domain] += time.perf_counter() - start
    gc.collect()
    for domain, run, index, *_ in work:
        analyzer.forget()
        start = time.perf_counter()
        analyzer.analyze(run, index).to_json()
        ours_cold[domain] += time.perf_counter() - start
    print(
        f"{'domain':8} {'sims':>5} {'tau2 s':>8} {'ours s':>8} {'ours cold s':>11} {'ratio':>7} {'ratio cold':>10}"
        f" {'tau2 raised':>11}"
    )
    for domain in sorted(counts):
        t, o, c = theirs[domain], ours[domain], ours_cold[domain]
        print(
            f"{domain:8} {counts[domain]:5d} {t:8.2f} {o:8.2f} {c:11.2f} {t / o:7.1f} {t / c:10.1f} "
            f"{tau2_failed[domain]:11d}   ({1000 * t / counts[domain]:.0f} vs {1000 * o / counts[domain]:.1f} ms/sim)"
        )
    total_t, total_o, total_c = sum(theirs.values()), sum(ours.values()), sum(ours_cold.values())
    if total_o:
        print(
            f"{'all':8} {sum(counts.values()):5d} {total_t:8.2f} {total_o:8.2f} {total_c:11.2f} "
            f"{total_t / total_o:7.1f} {total_t / total_c:10.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
