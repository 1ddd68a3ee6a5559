"""Replay and evaluation on every core: (file, simulation) units in worker processes, answers in input order.

``tau-tui replay`` and ``tau-tui eval`` (``--workers N``, default every core)
and the TUI's background replay hand their simulations to ``Executor.map``.
Each unit is computed by ``Worker.do``, in this process when there is one
worker and in each worker process otherwise, so the answers are the same by
construction; ``map`` yields them in the order of its input. A worker process
builds its own workspace from the settings (one registry, one gold cache per
process) and opens the run files itself (a large file by its streaming index),
keeping the last few open.

Worker processes are started with ``spawn`` (never ``fork``: the TUI has
threads) and import only the core, never textual.

``RayExecutor`` (``--executor ray``, the optional extra ``ray``) does the same
on Ray actors, one per CPU of the cluster ``ray.init()`` finds (Ray's own
conventions: ``RAY_ADDRESS``, or a local instance). Each actor keeps its own
workspace and domain cache; answers come back to this process in input order.
Units name files by path: every node must see them at the same path.
"""

from __future__ import annotations

import gc
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

KEEP_RUNS = 4  # run files a worker keeps open
CHUNK = 8  # units handed to a worker at a time
WAIT_SECONDS = 0.5  # how often a wait for a worker's answer checks that the workers are still there
POOL_MIN = 64  # fewer units than this (a small file) are done in this process: starting workers costs seconds


def available_cores() -> int:
    """The cores this process may run on (the default ``--workers``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Job:
    """What every worker computes, and from which settings it builds its workspace."""

    kind: str  # "replay" (the replay --json record), "eval" (a SimReport), "summary" (the runs table's columns)
    settings: Any = None  # config.Settings; None: the workspace the local worker is given
    text: bool = False  # also the human-readable block (replay, eval without --json)
    scorer: str | None = None  # eval --scorer FILE (for every file)


@dataclass(frozen=True)
class Unit:
    path: str
    index: int
    sidecar: bool = True  # eval: score tool calls with the sidecar beside the file (False: no scorer)


@dataclass(frozen=True)
class ReportDigest:
    """What ``tau-tui eval`` needs of a ``SimReport``, in plain data (a worker's objects of a domain's own
    modules could not be unpickled by a process that never loaded that domain)."""

    task_id: str
    reward: float | None
    recorded_reward: float | None
    termination: str | None
    agrees: bool | None
    flags: dict[str, int]
    line: str  # ``json_line(report.to_json(file))``

    @classmethod
    def of(cls, report: Any, file: str) -> ReportDigest:
        from tau_tui.textsafe import json_line

        return cls(report.task_id, report.evaluation.reward, report.recorded_reward, report.evaluation.termination,
                   report.agrees, dict(report.flag_counts()), json_line(report.to_json(file)))


@dataclass
class Outcome:
    """One unit's answer, in plain data: a record or report digest, or the one-line error that stopped it."""

    unit: Unit
    record: dict[str, Any] | None = None  # replay: the fields of ``SimAnalysis.to_json()`` the totals read
    line: str | None = None  # replay: ``json_line(SimAnalysis.to_json())``
    report: ReportDigest | None = None  # eval
    summaries: Any = None  # summary: ``Summaries`` (replay and evaluation columns)
    haystack: str | None = None  # summary: the searchable text of the simulation
    text: str | None = None
    error: str | None = None
    domain_error: bool = False  # the file's domain is missing: none of its simulations can be done
    warnings: list[str] = field(default_factory=list)


class Worker:
    """Computes units with one workspace; the same code in this process and in worker processes."""

    def __init__(self, job: Job, workspace: Any = None, runs: dict[str, Any] | None = None):
        from tau_tui.workspace import Workspace

        self.job = job
        self.workspace = workspace if workspace is not None else Workspace(job.settings)
        self.analyzer = self.workspace.analyzer
        self.judge = self.workspace.judge() if job.kind == "eval" else None
        self._runs: OrderedDict[str, Any] = OrderedDict(runs or {})
        self._override = None
        self._frozen = False
        if job.scorer:
            from tau_tui.evaluate.scorer import load_scorer_config

            self._override = load_scorer_config(Path(job.scorer))

    def run_of(self, path: str) -> Any:
        from tau_tui.model.io import open_run

        run = self._runs.get(path)
        if run is None:
            run = open_run(path)
            self._runs[path] = run
            while len(self._runs) > KEEP_RUNS:
                self._runs.popitem(last=False)
        else:
            self._runs.move_to_end(path)
        return run

    def do(self, unit: Unit) -> Outcome:
        from tau_tui.domains import DomainError
        from tau_tui.model.io import RunFileError

        try:
            run = self.run_of(unit.path)
            outcome = getattr(self, f"_{self.job.kind}")(run, unit)
        except (DomainError, RunFileError) as exc:
            outcome = Outcome(unit, error=str(exc), domain_error=isinstance(exc, DomainError))
        outcome.warnings = self.analyzer.registry.new_warnings()
        if not self._frozen:  # the domain data loaded by the first unit lives as long as the worker
            gc.freeze()
            self._frozen = True
        return outcome

    def _replay(self, run: Any, unit: Unit) -> Outcome:
        from tau_tui.textsafe import json_line

        analysis = self.analyzer.analyze(run, unit.index)
        record = analysis.to_json()
        text = None
        if self.job.text:
            from tau_tui.replay.facts import plain_text

            text = plain_text(analysis.facts(record))
        brief = {"file": record["file"], "first_mismatch": True if record["first_mismatch"] is not None else None,
                 "findings": len(record["findings"]), "db_match": record["db_match"]}
        return Outcome(unit, record=brief, line=json_line(record), text=text)

    def _eval(self, run: Any, unit: Unit) -> Outcome:
        from tau_tui.evaluate import ScorerConfig

        scorer = self._override
        if scorer is None:
            scorer = self.analyzer.scorer_config(run) if unit.sidecar else ScorerConfig(None, None, {})
        report = self.analyzer.evaluate(run, unit.index, judge=self.judge, scorer=scorer)
        text = None
        if self.job.text:
            from tau_tui.evaluate.render import simulation_block

            text = simulation_block(report)
        return Outcome(unit, report=ReportDigest.of(report, unit.path), text=text)

    def _summary(self, run: Any, unit: Unit) -> Outcome:
        from tau_tui.catalog import EvalSummary, ReplaySummary, sim_text
        from tau_tui.catalog.summaries import Summaries, assess_analysis

        analysis = self.analyzer.analyze(run, unit.index)
        replay = ReplaySummary.of(analysis)
        try:
            summaries = Summaries(replay, EvalSummary.of(assess_analysis(self.analyzer, analysis)))
        except Exception as exc:  # noqa: BLE001 - the replay columns are still worth showing
            summaries = Summaries(replay, eval_error=f"evaluation failed: {type(exc).__name__}: {exc}")
        return Outcome(unit, summaries=summaries, haystack=sim_text(run.raw_sims[unit.index]).lower())


_WORKER: Worker | None = None


def _start_worker(job: Job) -> None:
    global _WORKER
    _WORKER = Worker(job)


def _do_chunk_in_worker(units: list[Unit]) -> list[Outcome]:
    return [_do_in_worker(unit) for unit in units]


def _do_in_worker(unit: Unit) -> Outcome:
    assert _WORKER is not None
    try:
        return _WORKER.do(unit)
    except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
        return Outcome(unit, error=f"{unit.path}: simulation #{unit.index}: {type(exc).__name__}: {exc}")


def _abandon(pool: Any) -> None:
    """Drop a pool one of whose workers was killed: the dead process may hold a lock of the pool's queues, so
    ``terminate()`` (now, or the finalizer at exit) could block forever. Its other workers are killed instead."""
    pool._terminate.cancel()  # multiprocessing.util.Finalize: nothing runs at exit
    pool._state = "TERMINATE"  # no "unclosed pool" warning when it is collected
    for process in list(pool._pool):
        if process.is_alive():
            process.kill()


class Executor:
    """Runs units on ``workers`` processes; ``map`` keeps input order.

    With one worker, and for a batch smaller than ``POOL_MIN``, the units are done in this process with
    ``workspace`` (the same ``Worker.do``: the same answers).
    """

    def __init__(self, job: Job, workers: int = 1, workspace: Any = None, runs: dict[str, Any] | None = None):
        self.job = job
        self.workers = max(1, workers)
        self._local = Worker(job, workspace, runs)
        self._pool: Any = None
        self._pids: set[int] = set()  # the worker processes started (a missing one died: its units are lost)

    def adopt(self, path: Path | str, run: Any) -> None:
        """A run this process has open already: the local worker uses it instead of opening the file again.

        It lives as long as the command: the collector's full passes leave it alone from now on.
        """
        runs = self._local._runs
        runs[str(path)] = run
        runs.move_to_end(str(path))
        while len(runs) > KEEP_RUNS:
            runs.popitem(last=False)
        gc.freeze()

    def _start(self) -> Any:
        if self._pool is None:
            import multiprocessing
            import sys

            # A front end may have replaced the standard streams (the TUI captures them): the processes that
            # multiprocessing starts inherit the real ones.
            streams = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = sys.__stdout__ or streams[0], sys.__stderr__ or streams[1]
            try:
                self._pool = multiprocessing.get_context("spawn").Pool(
                    self.workers, initializer=_start_worker, initargs=(self.job,))
            finally:
                sys.stdout, sys.stderr = streams
            self._pids = {process.pid for process in self._pool._pool}
        return self._pool

    def map(self, units: Iterable[Unit]) -> Iterator[Outcome]:
        units = list(units)
        if self.workers == 1 or (self._pool is None and len(units) < POOL_MIN):
            for unit in units:
                yield self._local.do(unit)
            return
        from multiprocessing import TimeoutError as NotYet

        pool = self._start()
        chunks = [units[i:i + CHUNK] for i in range(0, len(units), CHUNK)]
        answers = pool.imap(_do_chunk_in_worker, chunks)  # chunksize 1: an iterator that can wait with a timeout
        while True:
            try:
                yield from answers.next(timeout=WAIT_SECONDS)
            except StopIteration:
                return
            except NotYet:  # a unit that never comes back would block forever: closed, or a worker died
                if self._pool is not pool:
                    raise RuntimeError("the worker processes were stopped") from None
                alive = {process.pid for process in pool._pool if process.is_alive()}
                if not self._pids <= alive:
                    self._pool = None
                    _abandon(pool)
                    raise RuntimeError("a worker process died (out of memory?); its simulations were lost") from None

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.terminate()
            pool.join()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --- Ray ------------------------------------------------------------------------------------------------------
class _RayWorker:
    """The body of one Ray actor: a ``Worker`` over the job's settings."""

    def __init__(self, job: Job):
        self.worker = Worker(job)

    def do_many(self, units: list[Unit]) -> list[Outcome]:
        out = []
        for unit in units:
            try:
                out.append(self.worker.do(unit))
            except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
                out.append(Outcome(unit, error=f"{unit.path}: simulation #{unit.index}: {type(exc).__name__}: {exc}"))
        return out


class RayUnavailable(RuntimeError):
    """``--executor ray`` without the optional extra (or without a cluster to reach); one line."""


class RayExecutor:
    """``Executor`` on Ray actors: ``workers`` of them (default: the cluster's CPUs); ``map`` keeps input order."""

    IN_FLIGHT = 4  # chunks queued per actor

    def __init__(self, job: Job, workers: int | None = None, workspace: Any = None):
        try:
            import ray
        except ImportError:
            raise RayUnavailable("--executor ray needs the optional extra 'ray' (pip install 'tau-tui[ray]')") from None
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(logging_level="ERROR", log_to_driver=False)  # RAY_ADDRESS names an existing cluster
            except Exception as exc:  # noqa: BLE001 - a cluster that cannot be reached is one line
                raise RayUnavailable(f"Ray could not start or connect: {type(exc).__name__}: {exc}") from None
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(num_cpus=1)(_RayWorker)
        self._actors = [actor.remote(job) for _ in range(count)]
        self.workers = count

    def adopt(self, path: Path | str, run: Any) -> None:
        gc.freeze()  # the actors open the file themselves; this process keeps only its index

    def map(self, units: Iterable[Unit]) -> Iterator[Outcome]:
        units = list(units)
        chunks = [units[i:i + CHUNK] for i in range(0, len(units), CHUNK)]
        pending: list[Any] = []
        limit = self.IN_FLIGHT * len(self._actors)
        for number, chunk in enumerate(chunks):
            pending.append(self._actors[number % len(self._actors)].do_many.remote(chunk))
            if len(pending) >= limit:
                yield from self._ray.get(pending.pop(0))
        for ref in pending:
            yield from self._ray.get(ref)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        if self._owns:
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
