"""Replay and evaluation on every core: (file, simulation) units in worker processes, answers in input order.

The pool sits below the composition root: ``Workspace.executor`` builds executors and hands each
worker the workspace class to build its own from the resolved settings (``Job.factory``).

``tau-tui replay`` and ``tau-tui eval`` (``--workers N``, default every core)
and the TUI's background replay hand their simulations to ``Executor.map``.
Each unit is computed by ``Worker.do``, in this process when there is one
worker and in each worker process otherwise, so the answers are the same by
construction; ``map`` yields them in the order of its input. A worker process
builds its own workspace from the settings (``Job.factory``) (one registry, one gold cache per
process) and opens the run files itself (a large file by its streaming index),
keeping the last few open.

Worker processes are started with ``spawn`` (never ``fork``: the TUI has
threads) and import only the core, never textual.

``RayExecutor`` (``--executor ray``, the optional extra ``ray``) does the same
on Ray actors, one per CPU of the cluster ``ray.init()`` finds (Ray's own
conventions: ``RAY_ADDRESS``, or a local instance). Each actor keeps its own
workspace and domain cache; answers come back to this process in input order.
Actors never open the run files: this process ships each simulation's bytes
(a streamed file's byte span, or the raw simulation of a file read whole) with
what the actor needs of its file once (``FileHead``: info, tasks, layout, the
eval sidecar), so the nodes need no shared storage. With ``--ship-data`` they need no domain data either: the
data of each file's domain is packed once (``parcel.pack_domain``), put in Ray's object store and named in the
file's head; an actor unpacks it once per node and computes that domain's units with a worker whose settings
point at the copy (``parcel.shipped_settings``).

``RayRollout`` runs the episodes of ``tau-tui run`` / ``calibrate`` on Ray
actors (``Runner.remote``): (trial, task id, seed) units over the run config
and task definitions each actor receives once (with ``--ship-data``, the run's domain data too); the finished
simulation comes back as the dict the writer saves, and the one writer here saves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol

from tau_tui.model.heap import keep_long_lived

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.catalog.summaries import Summaries
    from tau_tui.config import Settings
    from tau_tui.domains import DomainRegistry
    from tau_tui.evaluate import Judge, ScorerConfig, SimReport
    from tau_tui.evaluate.cost_time import SimCostTime
    from tau_tui.evaluate.validity import SimValidity
    from tau_tui.model.io import RunFile
    from tau_tui.model.tasks import Task
    from tau_tui.rollout import RetryPolicy, RunConfig, Runner
    from tau_tui.workers.parcel import Parcel

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


class WorkerWorkspace(Protocol):
    """What a worker needs of the workspace it computes in (``tau_tui.workspace.Workspace``)."""

    @property
    def analyzer(self) -> Analyzer: ...

    @property
    def registry(self) -> DomainRegistry: ...

    def judge(self, retry: RetryPolicy | None = None) -> Judge | None: ...


WorkspaceFactory = Callable[["Settings"], WorkerWorkspace]


class UnitExecutor(Protocol):
    """What computes units: ``Executor`` (processes here) or ``RayExecutor`` (Ray actors)."""

    def adopt(self, path: Path | str, run: RunFile) -> None: ...

    def map(self, units: Iterable[Unit]) -> Iterator[Outcome]: ...

    def close(self) -> None: ...

    def __enter__(self) -> UnitExecutor: ...

    def __exit__(self, *exc: Any) -> None: ...


@dataclass(frozen=True)
class Job:
    """What every worker computes, and how it builds its workspace (``factory(settings)``: the workspace class,
    which pickles by reference, so the pool never imports the composition root above it)."""

    kind: str  # "replay" (the replay --json record), "eval" (a SimReport), "summary" (the runs table's columns)
    settings: Settings | None = None  # the resolved settings every worker process is built from
    text: bool = False  # also the human-readable block (replay, eval without --json)
    scorer: str | None = None  # eval --scorer FILE (for every file)
    factory: WorkspaceFactory | None = None  # set by ``Workspace.executor``


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
    replay_problem: bool = False  # its replay has a mismatch or a finding (``replay.facts.has_problems``)
    cost: tuple[str, float | None] = ("not recorded", None)  # recorded agent cost: (``agent_cost_state``, cost)
    spend: SimCostTime | None = None  # recorded costs, duration and token meters
    validity: SimValidity | None = None  # what of it changes what a score over it means

    @property
    def has_problems(self) -> bool:
        """What ``eval --only-problems`` shows: a replay problem, or a recomputed reward that differs from the
        recorded one or cannot be computed."""
        return self.replay_problem or self.agrees is False or self.reward is None

    @classmethod
    def of(
        cls,
        report: SimReport,
        file: str,
        replay_problem: bool = False,
        spend: SimCostTime | None = None,
        validity: SimValidity | None = None,
    ) -> ReportDigest:
        from tau_tui.textsafe import json_line

        return cls(
            report.task_id,
            report.evaluation.reward,
            report.recorded_reward,
            report.evaluation.termination,
            report.agrees,
            dict(report.flag_counts()),
            json_line(report.to_json(file)),
            replay_problem,
            (report.recorded.cost_state, report.recorded.agent_cost)
            if report.recorded is not None
            else ("not recorded", None),
            spend,
            validity,
        )


@dataclass
class Outcome:
    """One unit's answer, in plain data: a record or report digest, or the one-line error that stopped it."""

    unit: Unit
    record: dict[str, Any] | None = None  # replay: the fields of ``SimAnalysis.to_json()`` the totals read
    line: str | None = None  # replay: ``json_line(SimAnalysis.to_json())``
    report: ReportDigest | None = None  # eval
    summaries: Summaries | None = None  # summary: the replay and evaluation columns
    haystack: str | None = None  # summary: the searchable text of the simulation
    text: str | None = None
    error: str | None = None
    domain_error: bool = False  # the file's domain is missing: none of its simulations can be done
    warnings: list[str] = field(default_factory=list)


class Worker:
    """Computes units with one workspace; the same code in this process and in worker processes."""

    def __init__(self, job: Job, workspace: WorkerWorkspace | None = None, runs: dict[str, RunFile] | None = None):
        self.job = job
        if workspace is None:
            if job.factory is None or job.settings is None:
                raise ValueError("a worker needs a workspace, or the job's settings and factory")
            workspace = job.factory(job.settings)
        self.workspace = workspace
        self.analyzer = self.workspace.analyzer
        self.judge = self.workspace.judge() if job.kind == "eval" else None
        self._runs: OrderedDict[str, RunFile] = OrderedDict(runs or {})
        self._override = None
        self.sidecars: dict[
            str, ScorerConfig | None
        ] = {}  # eval: a file's sidecar scorer (None: none) as the caller read it
        self._frozen = False
        if job.scorer:
            from tau_tui.evaluate.scorer import load_scorer_config

            self._override = load_scorer_config(Path(job.scorer))

    def run_of(self, path: str) -> RunFile:
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

    def do(self, unit: Unit, run: RunFile | None = None) -> Outcome:
        """``unit``'s answer; ``run``: its file as the caller has it (else opened by path)."""
        from tau_tui.domains import DomainError
        from tau_tui.model.io import RunFileError

        try:
            run = self.run_of(unit.path) if run is None else run
            compute: Callable[[RunFile, Unit], Outcome] = getattr(self, f"_{self.job.kind}")
            outcome = compute(run, unit)
        except (DomainError, RunFileError) as exc:
            outcome = Outcome(unit, error=str(exc), domain_error=isinstance(exc, DomainError))
        outcome.warnings = self.analyzer.registry.new_warnings()
        if not self._frozen:  # the domain data loaded by the first unit lives as long as the worker
            keep_long_lived()
            self._frozen = True
        return outcome

    def _replay(self, run: RunFile, unit: Unit) -> Outcome:
        from tau_tui.textsafe import json_line

        analysis = self.analyzer.analyze(run, unit.index)
        record = analysis.to_json()
        text = None
        if self.job.text:
            from tau_tui.replay.facts import plain_text

            text = plain_text(analysis.facts(record))
        stored = record["recorded_final_db"]
        brief = {
            "file": record["file"],
            "first_mismatch": True if record["first_mismatch"] is not None else None,
            "mismatch_classes": record["mismatch_classes"],
            "findings": len(record["findings"]),
            "db_match": record["db_match"],
            "recorded_final_db": None if stored is None else {"match": stored["match"]},
        }
        return Outcome(unit, record=brief, line=json_line(record), text=text)

    def _eval(self, run: RunFile, unit: Unit) -> Outcome:
        from tau_tui.evaluate import ScorerConfig

        scorer = self._override
        if scorer is None and unit.sidecar and str(run.path) in self.sidecars:  # read where the file is
            scorer = self.sidecars[str(run.path)] or ScorerConfig(None, None, {})
        elif scorer is None:
            scorer = self.analyzer.scorer_config(run) if unit.sidecar else ScorerConfig(None, None, {})
        from tau_tui.replay.facts import has_problems

        analysis = self.analyzer.analyze(run, unit.index)
        report = self.analyzer.assess(analysis, judge=self.judge, scorer=scorer)
        check = analysis.recorded_db_check
        replay_problem = has_problems(
            {
                "first_mismatch": analysis.first_mismatch(),
                "findings": analysis.findings,
                "recorded_final_db": check.to_json() if check is not None else None,
            }
        )
        text = None
        if self.job.text:
            from tau_tui.evaluate.render import simulation_block

            text = simulation_block(report)
        from tau_tui.evaluate.cost_time import SimCostTime

        spend = SimCostTime.of_raw(run.raw_simulation(unit.index))
        validity = self.analyzer.validity(analysis, report, spend)
        return Outcome(unit, report=ReportDigest.of(report, unit.path, replay_problem, spend, validity), text=text)

    def _summary(self, run: RunFile, unit: Unit) -> Outcome:
        from tau_tui.catalog import sim_text
        from tau_tui.catalog.summaries import summarize

        summaries = summarize(self.analyzer, self.analyzer.analyze(run, unit.index))
        return Outcome(unit, summaries=summaries, haystack=sim_text(run.raw_simulation(unit.index)).lower())


_WORKER: Worker | None = None


def _start_worker(job: Job) -> None:
    global _WORKER
    _WORKER = Worker(job)


def _do_chunk_in_worker(units: list[Unit]) -> list[Outcome]:
    return [_do_in_worker(unit) for unit in units]


def _do_in_worker(unit: Unit) -> Outcome:
    from tau_tui.llm.credentials import MissingCredentials

    assert _WORKER is not None
    try:
        return _WORKER.do(unit)
    except MissingCredentials:
        raise  # the judge's key is missing or refused: every other simulation would fail the same way
    except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
        return Outcome(unit, error=f"{unit.path}: simulation #{unit.index}: {type(exc).__name__}: {exc}")


def _abandon(pool: Any) -> None:
    """Drop a pool one of whose workers was killed: the dead process may hold a lock of the pool's queues, so
    ``terminate()`` (now, or the finalizer at exit) could block forever. Its other workers are killed instead."""
    pool._terminate.cancel()  # multiprocessing.util.Finalize: nothing runs at exit
    pool._state = "TERMINATE"  # no "unclosed pool" warning when it is collected
    handler = pool._worker_handler  # it starts a replacement for a dead worker: stopped first, so that none
    handler._state = "TERMINATE"  # is left half-started (a spawn traceback on stderr when this process exits)
    pool._change_notifier.put(None)
    handler.join(timeout=5)
    for process in list(pool._pool):
        if process.is_alive():
            process.kill()


class WorkersLost(RuntimeError):
    """The worker processes stopped or one of them died: the units they held are lost; ``str()`` is one line."""


class Executor:
    """Runs units on ``workers`` processes; ``map`` keeps input order.

    With one worker, and for a batch smaller than ``POOL_MIN``, the units are done in this process with
    ``workspace`` (the same ``Worker.do``: the same answers).
    """

    def __init__(
        self,
        job: Job,
        workers: int = 1,
        workspace: WorkerWorkspace | None = None,
        runs: dict[str, RunFile] | None = None,
    ):
        self.job = job
        self.workers = max(1, workers)
        self._local = Worker(job, workspace, runs)
        self._pool: Any = None
        self._pids: set[int] = set()  # the worker processes started (a missing one died: its units are lost)

    def adopt(self, path: Path | str, run: RunFile) -> None:
        """A run this process has open already: the local worker uses it instead of opening the file again.

        It lives as long as the command: the collector's full passes leave it alone from now on.
        """
        runs = self._local._runs
        runs[str(path)] = run
        runs.move_to_end(str(path))
        while len(runs) > KEEP_RUNS:
            runs.popitem(last=False)
        keep_long_lived()

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
                    self.workers, initializer=_start_worker, initargs=(self.job,)
                )
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
        chunks = [units[i : i + CHUNK] for i in range(0, len(units), CHUNK)]
        answers = pool.imap(_do_chunk_in_worker, chunks)  # chunksize 1: an iterator that can wait with a timeout
        while True:
            try:
                yield from answers.next(timeout=WAIT_SECONDS)
            except StopIteration:
                return
            except NotYet:  # a unit that never comes back would block forever: closed, or a worker died
                if self._pool is not pool:
                    raise WorkersLost("the worker processes were stopped") from None
                alive = {process.pid for process in pool._pool if process.is_alive()}
                if not self._pids <= alive:
                    self._pool = None
                    _abandon(pool)
                    raise WorkersLost("a worker process died (out of memory?); its simulations were lost") from None

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
class RayUnavailable(RuntimeError):
    """``--executor ray`` without the optional extra (or without a cluster to reach); one line."""


RAY_MISSING = "needs the optional extra 'ray' (pip install 'tau-tui[ray]')"


def ray_missing() -> str | None:
    """Why Ray cannot be used here (the extra is not installed), or None; looks without importing it."""
    import importlib.util

    return None if importlib.util.find_spec("ray") is not None else f"Ray {RAY_MISSING}"


def connect_ray(address: str | None = None) -> tuple[Any, bool]:
    """The ``ray`` module, connected to ``address`` (``Settings.ray_address``, from ``RAY_ADDRESS``; None: a local
    instance), and whether this call started the connection (then its owner shuts it down)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"--executor ray {RAY_MISSING}") from None
    owns = not ray.is_initialized()
    if owns:
        try:
            with _std_streams_with_descriptors():
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        except Exception as exc:  # noqa: BLE001 - a cluster that cannot be reached is one line
            raise RayUnavailable(f"Ray could not start or connect: {type(exc).__name__}: {exc}") from None
    return ray, owns


_DEVNULL: list[Any] = []  # the stand-in stream, opened once and never closed (faulthandler keeps its descriptor)


@contextlib.contextmanager
def _std_streams_with_descriptors() -> Iterator[None]:
    """``sys.stdout``/``sys.stderr`` with real file descriptors while Ray connects: ``ray.init`` enables
    ``faulthandler`` on them, which refuses a stream without one (the TUI's, which captures prints)."""

    def usable(stream: Any) -> bool:
        try:
            return int(stream.fileno()) >= 0
        except (AttributeError, OSError, ValueError):
            return False

    if usable(sys.stdout) and usable(sys.stderr):
        yield
        return
    if not _DEVNULL:
        _DEVNULL.append(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - kept for the process's life
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = _DEVNULL[0]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def actor_count(ray: Any, workers: int | None) -> int:
    """``--workers`` (default: the cluster's CPUs); more actors of one CPU each than the cluster has would wait
    for ever, so that is refused in one line."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if workers is None:
        return max(1, cpus)
    if workers > cpus:
        raise RayUnavailable(f"--workers {workers}: the Ray cluster has {cpus} CPU(s), one per worker is needed")
    return workers


@dataclass(frozen=True)
class FileHead:
    """What an actor needs of a run file besides one simulation's bytes (sent once per file and actor)."""

    key: str  # this file as this process opened it (one actor may hold several)
    path: str  # ``str(run.path)``: how records name the file; never opened by an actor
    layout: str
    info: dict[str, Any]
    tasks: list[Any]
    timestamp: str | None
    extra_top: dict[str, Any]
    count: int
    sidecar: Any = None  # eval: the scorer sidecar beside the file, as this process read it (None: there is none)
    resolution: Any = None  # what this process worked out for the file (``RunResolution``: its domain, old tasks)
    parcel: Parcel | None = None  # --ship-data: the data of the file's domain


class ShippedSims(Sequence[Any]):
    """The raw simulations an actor was sent: bytes of a span (parsed here), a raw dict, or the error that
    reading it raised where the file is (raised again, so the answer is the one the file's own reader gives)."""

    indexed_lazily = True  # RunFile: no index rows are built from it

    def __init__(self, count: int):
        self._size = count  # (``count`` is Sequence's own method)
        self.raw: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]  # ints only: RunFile indexes one sim
        value = self.raw[index]
        if isinstance(value, BaseException):
            raise value
        if isinstance(value, (bytes, bytearray, memoryview)):
            import orjson

            return orjson.loads(value)
        return value


def _shipped(run: RunFile, index: int) -> Any:
    """Simulation ``index`` of ``run`` as sent to an actor: a streamed file's span, else its raw simulation."""
    sims = run.raw_sims
    try:
        if hasattr(sims, "raw_bytes"):
            return sims.raw_bytes(index)
        return sims[index]
    except (OSError, ValueError) as exc:
        return exc


def _ships(settings: Settings | None) -> bool:
    return settings is not None and settings.ship_data


class _RayWorker:
    """The body of one Ray actor: a ``Worker`` over the job's settings, on the files this process sends; with
    ``--ship-data``, one per parcel received, over the settings of its unpacked copy."""

    def __init__(self, job: Job, override: Any = None):
        self.job = dataclasses.replace(job, scorer=None)
        self.override = override  # --scorer FILE, read where the command runs
        self.workers: dict[str | None, Worker] = {}  # parcel digest (None: none) -> its worker
        self.runs: OrderedDict[str, tuple[RunFile, ShippedSims, Worker]] = OrderedDict()  # key -> file, sims, worker
        if not _ships(job.settings):
            self._worker(None)

    def _worker(self, parcel: Parcel | None) -> Worker:
        """The worker of ``parcel``'s data (unpacked on this node first; ``ShipError`` when it is refused)."""
        key = None if parcel is None else parcel.digest
        worker = self.workers.get(key)
        if worker is None:
            job = self.job
            if job.settings is not None and job.settings.ship_data:
                import ray

                from tau_tui.workers.parcel import shipped_settings, unpacked

                root = None if parcel is None else unpacked(parcel, ray.get)
                job = dataclasses.replace(job, settings=shipped_settings(job.settings, root))
            worker = self.workers[key] = Worker(job)
            worker._override = self.override
        return worker

    def _run(self, head_ref: list[Any]) -> tuple[RunFile, ShippedSims, Worker]:
        import ray

        from tau_tui.model.io import RunFile

        head: FileHead = ray.get(head_ref[0])
        worker = self._worker(head.parcel)
        sims = ShippedSims(head.count)
        run = RunFile(
            Path(head.path),
            head.layout,
            sims,
            head.info,
            head.tasks,
            timestamp=head.timestamp,
            extra_top=head.extra_top,
        )
        worker.sidecars[str(run.path)] = head.sidecar
        if head.resolution is not None:  # the actor sees one simulation at a time: never work it out again here
            run.resolve(head.resolution)
        return run, sims, worker

    def do_shipped(self, key: str, head_ref: list[Any], items: list[tuple[Unit, Any]]) -> list[Outcome]:
        """The outcomes of ``items`` ((unit, what ``_shipped`` read for it)) of the file ``key``.

        ``head_ref`` is ``[ref of its FileHead]``: inside a list Ray leaves the ref alone, so the head is fetched
        only by an actor that does not hold that file yet.
        """
        from tau_tui.workers.parcel import ShipError

        held = self.runs.get(key)
        if held is None:
            try:
                held = self.runs[key] = self._run(head_ref)
            except ShipError as exc:  # the file's domain data was refused here: none of its units can be done
                return [Outcome(unit, error=str(exc), domain_error=True) for unit, _ in items]
            while len(self.runs) > KEEP_RUNS:
                _, (gone, _, holder) = self.runs.popitem(last=False)
                if all(other.path != gone.path for other, _, _ in self.runs.values()):
                    holder.sidecars.pop(str(gone.path), None)
        else:
            self.runs.move_to_end(key)
        run, sims, worker = held
        out = []
        for unit, raw in items:
            sims.raw = {unit.index: raw}
            try:
                out.append(worker.do(unit, run))
            except Exception as exc:  # noqa: BLE001 - one broken simulation never stops the others
                out.append(Outcome(unit, error=f"{unit.path}: simulation #{unit.index}: {type(exc).__name__}: {exc}"))
        sims.raw = {}
        return out


class RayExecutor:
    """``Executor`` on Ray actors: ``workers`` of them (default: the cluster's CPUs); ``map`` keeps input order.

    The actors are sent each simulation's bytes and, once, its file's ``FileHead``: they open no file. With
    ``--ship-data`` (the job's settings) the head names the parcel of the file's domain, packed once per domain.
    """

    IN_FLIGHT = 4  # chunks queued per actor

    def __init__(self, job: Job, workers: int | None = None, workspace: WorkerWorkspace | None = None):
        self._ray, self._owns = connect_ray(job.settings.ray_address if job.settings is not None else None)
        self.job = job
        self.workspace = workspace
        override = None
        if job.scorer:  # read here: the actors may not see the file
            from tau_tui.evaluate.scorer import load_scorer_config

            override = load_scorer_config(Path(job.scorer))
        try:
            count = actor_count(self._ray, workers)
        except RayUnavailable:
            self.close_connection()
            raise
        actor = self._ray.remote(num_cpus=1)(_RayWorker)
        self._actors = [actor.remote(job, override) for _ in range(count)]
        self.workers = count
        # path -> (run, head key, head ref, why its units cannot be done or None)
        self._runs: OrderedDict[str, tuple[RunFile, str, Any, str | None]] = OrderedDict()
        self._heads = 0
        self._parcels: dict[str, Parcel | str] = {}  # --ship-data: domain -> its parcel, or why it cannot be sent

    def adopt(self, path: Path | str, run: RunFile) -> None:
        """The run this process opened: its simulations are read from it and sent (it keeps only its index)."""
        self._remember(str(path), run)
        keep_long_lived()

    def _parcel(self, domain: str) -> Parcel | str:
        """The parcel of ``domain``'s data, packed and put in the object store the first time; or the one line
        why it cannot be (the registry's own error, as a local worker would give it, or ``ShipError``'s)."""
        from tau_tui.domains import DomainError, split_variant
        from tau_tui.workers.parcel import Parcel, ShipError, pack_domain

        base = split_variant(domain)[0]
        if base not in self._parcels:
            workspace = self.workspace
            if workspace is None:
                assert self.job.factory is not None and self.job.settings is not None  # set by Workspace.executor
                workspace = self.workspace = self.job.factory(self.job.settings)
            try:
                packed = pack_domain(workspace.registry, base)
                self._parcels[base] = Parcel(base, packed.digest, len(packed.blob), self._ray.put(packed.blob))
            except (DomainError, ShipError) as exc:
                self._parcels[base] = str(exc)
        return self._parcels[base]

    def _remember(self, path: str, run: RunFile) -> tuple[RunFile, str, Any, str | None]:
        self._heads += 1
        if self.workspace is not None:
            self.workspace.analyzer.prepare(run)
        parcel: Parcel | str | None = None
        if _ships(self.job.settings) and run.domain:
            parcel = self._parcel(run.domain)
        sidecar = None
        if self.job.kind == "eval" and not self.job.scorer and self.workspace is not None:
            try:
                sidecar = self.workspace.analyzer.scorer_config(run)
            except Exception:  # noqa: BLE001 - a broken sidecar: the command sends its units with sidecar=False
                sidecar = None
        head = FileHead(
            f"{os.getpid()}-{self._heads}",
            str(run.path),
            run.layout,
            run.raw_info,
            run.raw_tasks,
            run.timestamp,
            run.extra_top,
            len(run.raw_sims),
            sidecar,
            run.resolution,
            None if isinstance(parcel, str) else parcel,
        )
        problem = parcel if isinstance(parcel, str) else None
        entry = self._runs[path] = (run, head.key, self._ray.put(head), problem)
        self._runs.move_to_end(path)
        while len(self._runs) > KEEP_RUNS:
            self._runs.popitem(last=False)
        return entry

    def _file(self, path: str) -> tuple[RunFile, str, Any, str | None] | str:
        """(run, head key, head ref, problem) of ``path``, opened here when no run was adopted; or the error
        line."""
        entry = self._runs.get(path)
        if entry is not None:
            self._runs.move_to_end(path)
            return entry
        from tau_tui.model.io import RunFileError, open_run

        try:
            return self._remember(path, open_run(path))
        except RunFileError as exc:
            return str(exc)

    def _chunks(self, units: list[Unit]) -> Iterator[list[Unit]]:
        """Runs of at most ``CHUNK`` units of one file, in input order."""
        chunk: list[Unit] = []
        for unit in units:
            if chunk and (len(chunk) == CHUNK or chunk[0].path != unit.path):
                yield chunk
                chunk = []
            chunk.append(unit)
        if chunk:
            yield chunk

    def map(self, units: Iterable[Unit]) -> Iterator[Outcome]:
        pending: list[Any] = []  # ObjectRefs, or the outcomes of a file that could not be read here
        limit = self.IN_FLIGHT * len(self._actors)
        for number, chunk in enumerate(self._chunks(list(units))):
            entry = self._file(chunk[0].path)
            if isinstance(entry, str):
                pending.append([Outcome(unit, error=entry) for unit in chunk])
            elif entry[3] is not None:  # its domain's data cannot be shipped: none of its units can be done
                pending.append([Outcome(unit, error=entry[3], domain_error=True) for unit in chunk])
            else:
                run, key, head_ref, _ = entry
                items = [(unit, _shipped(run, unit.index)) for unit in chunk]
                pending.append(self._actors[number % len(self._actors)].do_shipped.remote(key, [head_ref], items))
            if len(pending) >= limit:
                yield from self._answer(pending.pop(0))
        for ref in pending:
            yield from self._answer(ref)

    def _answer(self, ref: Any) -> list[Outcome]:
        return ref if isinstance(ref, list) else self._ray.get(ref)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        self.close_connection()

    def close_connection(self) -> None:
        if self._owns:
            self._owns = False
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --- Ray rollouts ---------------------------------------------------------------------------------------------
class _RayEpisodes:
    """The body of one rollout actor: the driver's run config ``load``-ed (no file), its own domain cache."""

    def __init__(self, settings: Settings, factory: WorkspaceFactory, config: RunConfig, parcel: Parcel | None = None):
        import platform

        self.node = platform.node()
        self.problem: str | None = None
        try:
            import ray

            self.node = f"{self.node}/{ray.get_runtime_context().get_node_id()[:8]}"  # nodes may share a host
        except Exception:  # noqa: BLE001 - outside an actor (a test building the body): the host alone
            pass
        try:
            from tau_tui.rollout import Runner

            if settings.ship_data:  # the run's domain data as this process was sent it, unpacked on this node
                import ray

                from tau_tui.workers.parcel import shipped_settings, unpacked

                root = None if parcel is None else unpacked(parcel, ray.get)
                settings = shipped_settings(settings, root)
            workspace = factory(settings)
            self.runner = Runner(config, Path("-"), workspace.registry, judge=workspace.judge(config.agent.retry))
            self.runner.load()
            self.tasks = {task.id: task for task in self.runner.tasks}
        except Exception as exc:  # noqa: BLE001 - told to the driver in one line by ``ready``
            self.problem = f"{type(exc).__name__}: {exc}"

    def ready(self) -> tuple[str, str | None, Any]:
        """(node, the problem that stops this actor or None, its domain fingerprint)."""
        return self.node, self.problem, None if self.problem else self.runner.domain_fingerprint

    async def finish(self, trial: int, task_id: str, seed: int) -> dict[str, Any]:
        from tau_tui.rollout.records import sim_to_dict

        sim, reward = await self.runner.finish_unit(self.tasks[task_id], trial, seed)
        return {"simulation": sim_to_dict(sim, self.runner.secrets), "reward": reward, "node": self.node}


def _first_line(text: str, limit: int = 200) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:limit]


class RayRollout:
    """``Runner.remote`` on Ray actors: ``workers`` of them (default: the cluster's CPUs), each running up to
    the run's ``--concurrency`` simulations at once; no more units are in flight than that.

    Each actor builds its workspace from ``settings`` and gets the run config with the task definitions once
    (with ``settings.ship_data``, the parcel of the run's domain data too); a unit is (trial, task id, seed). Before any unit runs, every actor's domain fingerprint (tools, DB,
    policy) must equal this process's: a node with other domain data is refused in one line.
    """

    def __init__(self, settings: Settings, factory: WorkspaceFactory, workers: int | None = None):
        self._ray, self._owns = connect_ray(settings.ray_address)
        self._actors: list[Any] = []
        try:
            self.workers = actor_count(self._ray, workers)
        except RayUnavailable:
            self.close()
            raise
        self.settings = settings
        self.factory = factory
        self.slots = self.workers
        self._busy: list[int] = []
        self._dead: set[int] = set()  # actors that died: no more units go to them
        self._nodes: list[str] = []  # the node of each actor (``ready``)
        self._runner: Runner | None = None  # told where units go (``Runner.emit``)

    async def start(self, runner: Runner) -> None:
        from tau_tui.rollout import RunError

        ray = self._ray
        config = dataclasses.replace(runner.config, tasks=list(runner.tasks), task_ids=[t.id for t in runner.tasks])
        per_actor = max(1, runner.config.concurrency)
        actor = ray.remote(num_cpus=1, max_concurrency=per_actor)(_RayEpisodes)
        shared = ray.put(config)
        parcel = self._parcel(runner) if self.settings.ship_data else None
        self._actors = [actor.remote(self.settings, self.factory, shared, parcel) for _ in range(self.workers)]
        self._busy = [0] * len(self._actors)
        self.slots = per_actor * len(self._actors)
        answers = await asyncio.gather(*(asyncio.wrap_future(a.ready.remote().future()) for a in self._actors))
        for node, problem, fingerprint in answers:
            if problem is not None:
                raise RunError(f"a Ray worker on {node} cannot run this: {problem}")
            if fingerprint != runner.domain_fingerprint:
                parts = [
                    name
                    for name in ("tools", "db", "policy")
                    if getattr(fingerprint, name) != getattr(runner.domain_fingerprint, name)
                ]
                raise RunError(
                    f"the Ray worker on {node} has other data for domain '{runner.config.domain}' "
                    f"(its {' and '.join(parts)} {'differ' if len(parts) > 1 else 'differs'} from this "
                    f"machine's); install the same domain data on every node"
                )
        from tau_tui.rollout import WorkersStarted

        self._nodes = [str(node) for node, _, _ in answers]
        self._runner = runner
        runner.emit(WorkersStarted(tuple(self._nodes)))

    def _parcel(self, runner: Runner) -> Parcel:
        """The run's domain data, packed as ``runner`` reads it and put in the object store (``RunError``: one line
        when it cannot be shipped)."""
        from tau_tui.domains import DomainError
        from tau_tui.rollout import RunError
        from tau_tui.workers.parcel import Parcel, ShipError, pack_domain

        try:
            packed = pack_domain(runner.registry, runner.config.domain)
        except (DomainError, ShipError) as exc:
            raise RunError(str(exc)) from None
        return Parcel(packed.domain, packed.digest, len(packed.blob), self._ray.put(packed.blob))

    async def finish(self, task: Task, trial: int, seed: int) -> tuple[dict[str, Any], float | None, str]:
        """One unit on the least busy live actor: (the simulation as saved, its reward, the actor's node).

        An actor that died loses the units it had (the runner saves them as infrastructure errors, which
        ``--resume`` runs again) and gets no more; with none left, every unit fails at once.
        """
        from ray.exceptions import RayActorError, RayTaskError

        live = [i for i in range(len(self._actors)) if i not in self._dead]
        if not live:
            raise RuntimeError("every Ray worker died")
        from tau_tui.rollout import SimulationPlaced, WorkerLost

        index = min(live, key=self._busy.__getitem__)
        self._busy[index] += 1
        ref = self._actors[index].finish.remote(trial, task.id, seed)
        node = self._nodes[index] if index < len(self._nodes) else "?"
        self._announce(SimulationPlaced(task.id, trial, seed, node))
        try:
            answer = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            self._ray.cancel(ref)
            raise
        except RayActorError as exc:  # Ray's text runs over many lines: the saved placeholder gets one
            first = _first_line(str(exc))
            error = f"the Ray worker died ({first})" if first else "the Ray worker died"
            if index not in self._dead:  # told once, by the first of its units to come back
                self._dead.add(index)
                self._announce(WorkerLost(node, first))
            raise RuntimeError(error) from None
        except RayTaskError as exc:  # its text holds the actor's traceback: the cause, in one line
            cause = getattr(exc, "cause", None) or exc
            raise RuntimeError(f"on the Ray worker: {type(cause).__name__}: {_first_line(str(cause))}") from None
        finally:
            self._busy[index] -= 1
        return answer["simulation"], answer["reward"], answer["node"]

    def _announce(self, event: Any) -> None:
        if self._runner is not None:
            self._runner.emit(event)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
        if self._owns:
            self._ray.shutdown()

    def __enter__(self) -> RayRollout:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
