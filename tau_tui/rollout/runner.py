"""Tasks × k trials with a concurrency limit, each simulation saved the moment it ends.

Seeds follow tau2: ``random.seed(seed)`` then one ``randint(0, 1_000_000)``
per trial, shared by every task of that trial. Units run in tau2's order
(trial by trial, tasks in order) under an ``asyncio.Semaphore``. A finished
simulation is evaluated with our evaluator (``reward_info`` in tau2's shape)
and the whole results file is rewritten atomically, so a run killed at any
moment leaves a valid file. ``resume`` skips what that file already holds,
keyed like tau2 by (trial, task_id, seed); infrastructure errors are dropped
and run again. A run holds an advisory lock on its results file from
``prepare`` to the end of ``run``: a second run (or ``--resume``) on the same
file is refused while the first is going.

``Runner.remote`` moves the episodes elsewhere (``tau_tui.workers.pool.RayRollout``:
``--executor ray``): an object with ``slots`` (units at once), ``async
start(runner)`` (called once, before the file is first written) and ``async
finish(task, trial, seed)`` returning the simulation as saved (a dict), its
reward and the node it ran on (``SimulationFinished.node``). A remote worker builds a runner from the same config and calls only
``load`` and ``finish_unit``; what comes back is saved here by the one writer,
with the same lock, resume keys and events (``SimulationMessage`` and
``LLMRetried`` stay where the episode runs). ``RayRollout`` tells the listener where units go through
``Runner.emit``: ``WorkersStarted`` (one node per worker, before the first unit), ``SimulationPlaced``
(a unit sent to a node, after its ``SimulationStarted``) and ``WorkerLost`` (a worker that died; its units
come back as infrastructure errors, which ``--resume`` runs again).

Progress is reported as events (``RunStarted``, ``SimulationStarted``,
``SimulationMessage``, ``LLMRetried``, ``SimulationFinished``,
``RunFinished``) to one listener: the CLI draws a rich progress bar from
them, a TUI posts them as messages.

A model without its API key stops the run before the file is written
(``check_credentials``), and a key the provider refuses stops it at that
call (``MissingCredentials``): the episodes in flight are cancelled, nothing
is saved for them, and a results file this run created with nothing in it is
removed again.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import itertools
import random
import traceback
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from tau_tui.domains import Domain, DomainRegistry
from tau_tui.env.environment import Environment
from tau_tui.llm.client import RetryListener, preload
from tau_tui.llm.credentials import MissingCredentials
from tau_tui.llm.failures import ProviderFailure
from tau_tui.model.io import RunFile, RunFileError, file_lock, open_run
from tau_tui.model.results import SimulationRun
from tau_tui.model.secrets import known_secrets, scrub_text
from tau_tui.model.tasks import Task, task_content_digest
from tau_tui.rollout.evaluation import SimulationEvaluator
from tau_tui.rollout.factory import ParticipantSpec, build_agent, build_user, check_credentials, check_spec
from tau_tui.rollout.orchestrator import EpisodeOptions, MessageAdded, Orchestrator
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolTexts, protocol_tools
from tau_tui.rollout.records import (
    ResultsWriter,
    detect_layout,
    domain_fingerprint,
    fingerprint_info,
    run_info,
)

INFRASTRUCTURE_ERROR = "infrastructure_error"
TAU2_TASK_RETRIES, TAU2_RETRY_DELAY = 3, 1.0  # tau2 1.0.1's DEFAULT_RETRY_ATTEMPTS and DEFAULT_RETRY_MIN_WAIT
FAILED_CALL_ENDS = frozenset({INFRASTRUCTURE_ERROR, "context_window_exceeded"})  # a model call failed for good


class RunError(Exception):
    """A run that cannot start (unknown task, existing file, resume mismatch); ``str()`` is one line."""


@dataclass
class RunConfig:
    """What to run: a domain, the two sides, which tasks, how many trials, and the limits."""

    domain: str
    agent: ParticipantSpec
    user: ParticipantSpec
    task_ids: list[str] | None = None
    num_trials: int = 1
    concurrency: int = 3
    max_steps: int = 200
    max_errors: int = 10
    seed: int = 300
    timeout: float | None = None
    solo: bool = False
    judge_llm: str | None = None
    layout: str = "json"  # "json": one results file; "dir": results.json + simulations/<id>.json
    tasks: list[Task] | None = None  # explicit definitions (an edited task) instead of the domain's, by id
    protocol: ProtocolTexts = OWN_PROTOCOL  # whose prompts the LLM sides get (``protocol.resolve_protocol``)
    # Under protocol tau2, as tau2's runner (--max-retries, --retry-delay): an episode whose model call failed
    # for good, or whose evaluation raised, is run again up to this many times, then saved as tau2's
    # infrastructure_error placeholder (no messages). None: tau2's default (3) under tau2; under own, never.
    task_retries: int | None = None
    retry_delay: float = TAU2_RETRY_DELAY

    @property
    def attempts(self) -> int:
        """How many times an episode may run (1 + its retries)."""
        if self.protocol.name != "tau2":
            return 1
        return 1 + (TAU2_TASK_RETRIES if self.task_retries is None else max(0, self.task_retries))

    def episode_options(self, seed: int | None) -> EpisodeOptions:
        """How each episode of this run goes (``seed``: its trial's)."""
        return EpisodeOptions(
            seed=seed,
            max_steps=self.max_steps,
            max_errors=self.max_errors,
            timeout=self.timeout,
            solo=self.solo,
            protocol=self.protocol,
        )


# --- events ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunStarted:
    path: Path
    total: int
    already_done: int
    pending: int


@dataclass(frozen=True)
class SimulationStarted:
    task_id: str
    trial: int
    seed: int


@dataclass(frozen=True)
class SimulationMessage:
    task_id: str
    trial: int
    message: Any


@dataclass(frozen=True)
class LLMRetried:
    task_id: str
    trial: int
    side: str
    attempt: int
    delay: float
    error: str


@dataclass(frozen=True)
class SimulationFinished:
    task_id: str
    trial: int
    seed: int
    simulation: SimulationRun
    reward: float | None
    completed: int
    total: int
    node: str | None = None  # where it ran, over Ray (host/node id); None in this process


@dataclass(frozen=True)
class WorkersStarted:
    """The remote workers are up: the node of each, one entry per worker (over Ray its node, host/id; a local
    worker process is a node of its own, ``local/<pid>``)."""

    nodes: tuple[str, ...]


@dataclass(frozen=True)
class SimulationPlaced:
    """A unit was sent to a remote worker on ``node`` (its ``SimulationStarted`` came first)."""

    task_id: str
    trial: int
    seed: int
    node: str


@dataclass(frozen=True)
class WorkerLost:
    """A remote worker on ``node`` died: the units it had come back as infrastructure errors, it gets no more.
    ``local``: a worker process of this machine (``run --workers`` without Ray), ``node`` its name."""

    node: str
    error: str
    local: bool = False


@dataclass(frozen=True)
class RunFinished:
    path: Path
    summary: RunSummary


RunListener = Callable[[Any], None]


@dataclass
class RunSummary:
    """What a rollout did: simulations to run, already done, completed, their rewards."""

    path: Path
    total: int
    already_done: int
    completed: int = 0
    rewards: list[float] = field(default_factory=list)
    unscored: int = 0
    terminations: Counter[str | None] = field(default_factory=Counter)

    @property
    def average_reward(self) -> float | None:
        return sum(self.rewards) / len(self.rewards) if self.rewards else None


def trial_seeds(seed: int, num_trials: int) -> list[int]:
    """tau2's seeds: one ``randint(0, 1_000_000)`` per trial after ``random.seed(seed)``."""
    rng = random.Random(seed)
    return [rng.randint(0, 1_000_000) for _ in range(num_trials)]


def select_tasks(domain: Domain, task_ids: list[str] | None) -> list[Task]:
    tasks = domain.tasks()
    if not task_ids:
        return list(tasks.values())
    missing = [t for t in task_ids if t not in tasks]
    if missing:
        sample = ", ".join(list(tasks)[:8])
        raise RunError(f"no task {missing[0]!r} in domain '{domain.name}' ({len(tasks)} tasks: {sample}, ...)")
    return [tasks[t] for t in dict.fromkeys(task_ids)]


def _identity(info: dict[str, Any]) -> dict[str, Any]:
    """The parts of a run's info that must match to resume it."""
    agent = info.get("agent_info") or {}
    user = info.get("user_info") or {}
    env = info.get("environment_info") or {}
    ours = info.get("tau_tui") or {}
    return {
        "domain": env.get("domain_name"),
        "agent": agent.get("llm"),
        "agent implementation": agent.get("implementation"),
        "user": user.get("llm"),
        "user implementation": user.get("implementation"),
        "seed": info.get("seed"),
        "max_steps": info.get("max_steps"),
        "max_errors": info.get("max_errors"),
        "solo": ours.get("solo", False),
        "protocol": (ours.get("protocol") or {}).get("name", "own"),
    }


class Runner:
    """Runs a ``RunConfig`` into a results file; ``await run()`` returns a ``RunSummary``."""

    def __init__(
        self,
        config: RunConfig,
        path: Path | str,
        registry: DomainRegistry,
        *,
        resume: bool = False,
        listener: RunListener | None = None,
        judge: Any = None,
    ):
        self.config = config
        self.path = Path(path)
        self.registry = registry
        self.resume = resume
        self.listener = listener
        self.judge = judge
        self.done_keys: set[tuple[Any, str, Any]] = set()  # (trial, task id, seed) as the file records them
        self._first_env: Environment | None = None  # built by ``load``, used once by ``prepare``
        self._fingerprints: dict[str, dict[str, Any]] = {}  # task id -> the fingerprint info its simulations get
        self.secrets: set[str] = set()
        self.remote: Any = None  # where the episodes run instead of this process (see the module docstring)
        self.models_here = True  # False: the episodes will run elsewhere, so ``load`` does not load litellm
        self._prepared = False
        self._loaded = False
        self._lock = ExitStack()
        self._threads: ThreadPoolExecutor | None = None  # scoring and saving, one thread per slot (``run``)

    def emit(self, event: Any) -> None:
        """Tell the listener ``event`` (a remote's episodes report theirs through it too)."""
        if self.listener is not None:
            self.listener(event)

    def snapshot(self) -> RunFile:
        """The results file as saved so far, as a loaded run, without reading it back (after ``prepare``).

        Its simulation dicts are the saved ones (shared, never changed once saved), so a front end can
        show each finished simulation the moment it ends without reaching into the writer.
        """
        writer = self.writer
        return RunFile(
            self.path,
            "results",
            list(writer.simulations),
            dict(writer.info),
            writer.raw_tasks,
            timestamp=writer.timestamp,
        )

    # --- preparation ---------------------------------------------------------------------
    def prepare(self) -> None:
        """Load the domain and tasks, build the run info, and open (or resume) the results file."""
        self.load()
        config = self.config
        sample = self.tasks[0]
        env, self._first_env = self._first_env, None
        assert env is not None, "load() builds the first environment"
        agent = build_agent(config.agent, sample, env, solo=config.solo, protocol=config.protocol)
        user = build_user(config.user, sample, env, solo=config.solo, protocol=config.protocol)
        # tau2's runner records the domain's own policy even in solo mode (the agent is prompted with the solo one)
        tau2_solo = config.solo and config.protocol.name == "tau2"
        info = run_info(
            domain_name=env.domain_name,
            policy=self.domain.policy(variant=self.variant) if tau2_solo else env.policy,
            agent=agent.info(),
            user=user.info(),
            num_trials=config.num_trials,
            max_steps=config.max_steps,
            max_errors=config.max_errors,
            seed=config.seed,
            env_info=env.recorded_info(),
            extra={
                "solo": config.solo,
                "timeout": config.timeout,
                "judge_llm": config.judge_llm,
                "concurrency": config.concurrency,
                "protocol": config.protocol.record(with_agent=not config.agent.is_scripted),
            },
        )
        exists = self.path.exists()
        if exists and not self.resume:
            raise RunError(f"{self.path} already exists; pass --resume to finish it, or choose another --out")
        layout = detect_layout(self.path) if exists else config.layout
        self._lock.enter_context(file_lock(self._lock_target(layout), wait=False))
        try:
            self.writer = ResultsWriter(self.path, info, list(self.tasks), self.secrets, layout=layout)
            if exists:
                self._load_previous()
        except BaseException:
            self.close()
            raise
        self._prepared = True

    def load(self) -> None:
        """Check the config and load what the episodes need (domain, tasks, seeds, evaluator); no file is touched.

        ``prepare`` starts with it; a remote worker (``Runner.remote``) calls only this.
        """
        if self._loaded:
            return
        config = self.config
        if config.num_trials < 1:
            raise RunError("-k must be at least 1")
        if config.concurrency < 1:
            raise RunError("--concurrency must be at least 1")
        if config.max_steps < 1 or config.max_errors < 1:
            raise RunError("--max-steps and --max-errors must be at least 1")
        check_spec(config.agent, "agent")
        if not config.solo:
            check_spec(config.user, "user")
        if config.agent.is_human or config.user.is_human:
            raise RunError("human participants play through 'tau-tui play', not 'run'")
        models = [spec.settings() for spec in (config.agent, config.user) if not (spec.is_scripted or spec.is_human)]
        if models and self.models_here and self.remote is None:
            preload(models)
        self.domain, self.variant = self.registry.resolve(config.domain)
        if config.tasks:
            given = {t.id: t for t in config.tasks}
            missing = [t for t in config.task_ids or [] if t not in given]
            if missing:
                raise RunError(f"no task {missing[0]!r} among the tasks given")
            self.tasks = [given[t] for t in dict.fromkeys(config.task_ids or given)]
        else:
            self.tasks = select_tasks(self.domain, config.task_ids)
        if not self.tasks:
            raise RunError(f"domain '{self.domain.name}' has no tasks to run")
        self.seeds = trial_seeds(config.seed, config.num_trials)
        env = self.domain.new_environment(solo=config.solo, variant=self.variant)
        self.domain_fingerprint = domain_fingerprint(env)
        self._first_env = env  # the run info of ``prepare`` is built on it
        protocol = protocol_tools(config.protocol, self.domain, config.domain, env)
        if protocol is not config.protocol:  # tau2's tool schemas, read once here: remote workers get them so
            self.config = config = dataclasses.replace(config, protocol=protocol)
        self.secrets = known_secrets(config.agent.llm_args, config.user.llm_args)
        self.evaluator = SimulationEvaluator(self.domain, self.variant, config.protocol.run_judge(self.judge))
        self._loaded = True

    def _lock_target(self, layout: str) -> Path:
        """The path whose lock this run holds: the results file, or the folder of a dir-layout run."""
        if layout == "dir" and self.path.name == "results.json":
            return self.path.parent
        return self.path

    def close(self) -> None:
        """Release the results file for other runs (``run`` does it when it ends)."""
        self._lock.close()

    def _load_previous(self) -> None:
        try:
            previous = open_run(self.path)
        except RunFileError as exc:
            raise RunError(f"cannot resume: {exc}") from None
        self._remove_stale_temporaries()
        old, new = _identity(previous.raw_info), _identity(self.writer.info)
        changed = [k for k in new if old.get(k) != new[k]]
        if changed:
            key = changed[0]
            raise RunError(
                f"cannot resume {self.path}: it was run with {key} {old.get(key)!r}, this run has "
                f"{new[key]!r}; choose another --out"
            )
        previous_tasks = previous.tasks()
        for task in self.tasks:
            before = previous_tasks.get(task.id)
            if before is not None and task_content_digest(before) != task_content_digest(task):
                raise RunError(f"cannot resume {self.path}: task {task.id!r} changed since it was run")
        kept, dropped = [], []
        for raw in previous.raw_sims:
            if not isinstance(raw, dict):
                continue
            if raw.get("termination_reason") == INFRASTRUCTURE_ERROR:
                dropped.append(str(raw.get("id")))
                continue
            kept.append(raw)
            self.done_keys.add((raw.get("trial"), str(raw.get("task_id")), raw.get("seed")))
        self.writer.keep(kept)
        self.writer.discard(dropped)
        if previous.timestamp:
            self.writer.timestamp = previous.timestamp
        selected = {t.id for t in self.tasks}
        self.writer.set_tasks([t for t in previous_tasks.values() if t.id not in selected] + list(self.tasks))

    def _remove_stale_temporaries(self) -> None:
        """Half-written temporary files a killed run left beside its results (``write_atomic``'s names)."""
        meta = self.writer.meta_path
        folders = [(meta.parent, meta.name)]
        if self.writer.layout == "dir":
            folders += [(self.writer.sims_dir, "")]
        for folder, name in folders:
            for stale in folder.glob(f".{name}*.tmp") if folder.is_dir() else []:
                stale.unlink(missing_ok=True)

    # --- running -----------------------------------------------------------------------
    def units(self) -> list[tuple[int, Task, int]]:
        """(trial, task, seed) still to run, in tau2's order."""
        return [
            (trial, task, seed)
            for trial, seed in enumerate(self.seeds)
            for task in self.tasks
            if (trial, task.id, seed) not in self.done_keys
        ]

    async def run(self) -> RunSummary:
        if not self._prepared:
            self.prepare()
        slots = self.config.concurrency if self.remote is None else self.remote.slots
        self._threads = ThreadPoolExecutor(max_workers=slots + 1, thread_name_prefix="tau-tui-run")
        try:
            return await self._run_units(slots)
        except MissingCredentials:
            self.writer.remove_if_unused()
            raise
        finally:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None
            self.close()

    async def _in_thread(self, func: Callable[..., Any], *args: Any) -> Any:
        """``func(*args)`` on this run's threads: a blocking judge call of every slot at once, and a save, never
        wait for a thread, and the loop's default executor stays free for litellm's own per-call set-up."""
        if self._threads is None:  # a remote worker's runner: ``finish_unit`` without ``run``
            self._threads = ThreadPoolExecutor(max_workers=self.config.concurrency + 1, thread_name_prefix="tau-tui")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(func, *args))

    async def _run_units(self, slots: int) -> RunSummary:
        units = self.units()
        total = len(self.tasks) * len(self.seeds)
        summary = RunSummary(self.path, total, total - len(units))
        remote = self.remote
        if remote is None and units:
            sides = [(self.config.agent, "agent")] + ([] if self.config.solo else [(self.config.user, "user")])
            check_credentials(sides, self.judge)  # remote workers have their own environment
        if remote is not None and units:
            await remote.start(self)  # its workers are there and agree with this process before the file is
            slots = remote.slots  # known once they are: units at once on all of them
        self.writer.write()
        self.emit(RunStarted(self.path, total, summary.already_done, len(units)))
        semaphore = asyncio.Semaphore(slots)
        lock = asyncio.Lock()
        waiting: list[tuple[int, SimulationRun]] = []  # finished, not saved yet (with their ticket)
        saved: set[int] = set()  # the tickets of the simulations saved
        failed: dict[int, Exception] = {}  # tickets whose batch could not be saved, and why
        tickets = itertools.count()

        async def save(sim: SimulationRun) -> None:
            """Group commit: the simulations that finished while a save was going are saved with one write,
            in a thread (episodes and remote workers go on meanwhile); each is on disk before it is reported."""
            ticket = next(tickets)
            waiting.append((ticket, sim))
            async with lock:
                if ticket in saved:
                    return
                if ticket in failed:  # the save of its batch failed: every simulation of it says so
                    raise failed.pop(ticket)
                batch = list(waiting)
                waiting.clear()
                try:
                    await self._in_thread(self.writer.add_many, [s for _, s in batch])
                except Exception as exc:
                    failed.update((t, exc) for t, _ in batch if t != ticket)
                    raise
                saved.update(t for t, _ in batch)

        async def one(trial: int, task: Task, seed: int) -> None:
            attempts = 1 if remote is not None else self.config.attempts  # a remote unit retries where it runs
            for attempt in range(1, attempts + 1):
                if attempt > 1:
                    await asyncio.sleep(self.config.retry_delay)
                async with semaphore:
                    if attempt == 1:
                        self.emit(SimulationStarted(task.id, trial, seed))
                    node = None
                    if remote is None:
                        sim = await self.episode(task, trial, seed)
                    else:
                        sim, scored, node = await self._finish_remotely(remote, task, trial, seed)
                if remote is None:  # scored after its slot is free: the next episode starts meanwhile
                    scored = await self._in_thread(self._score, sim, task)
                    failure = self._failure(sim)
                    if failure is not None:
                        if attempt < attempts:
                            continue
                        sim, scored = self._given_up(task, trial, seed, failure, attempts), None
                break
            await save(sim)
            summary.completed += 1
            summary.terminations[sim.termination_reason] += 1
            if scored is None:
                summary.unscored += 1
            else:
                summary.rewards.append(scored)
            done = summary.already_done + summary.completed
            self.emit(SimulationFinished(task.id, trial, seed, sim, scored, done, total, node))

        running = [asyncio.ensure_future(one(*unit)) for unit in units]
        try:
            await asyncio.gather(*running)
        except BaseException:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
        self.emit(RunFinished(self.path, summary))
        return summary

    async def finish_unit(self, task: Task, trial: int, seed: int) -> tuple[SimulationRun, float | None]:
        """One episode, stamped with the task's fingerprint and scored: what the writer saves, and its reward
        (run again as ``RunConfig.attempts`` says when it failed)."""
        attempts = self.config.attempts
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self.config.retry_delay)
            sim = await self.episode(task, trial, seed)
            scored = await self._in_thread(self._score, sim, task)
            failure = self._failure(sim)
            if failure is None:
                break
            if attempt == attempts:
                return self._given_up(task, trial, seed, failure, attempts), None
        return sim, scored

    def _failure(self, sim: SimulationRun) -> tuple[str, str, str] | None:
        """Under protocol tau2, why tau2's runner would have raised out of this episode (a model call that
        failed for good, an evaluation that raised) as (error, error type, traceback); None otherwise."""
        if self.config.protocol.name != "tau2":
            return None
        info = sim.info or {}
        evaluation = info.get("evaluation")
        if isinstance(evaluation, dict) and isinstance(evaluation.get("tau2_raises"), str):  # where tau2's raises
            kind, _, text = evaluation["tau2_raises"].partition(": ")
            return (text or kind, kind if text else "EvaluationError", "")
        if isinstance(evaluation, dict) and evaluation.get("status") == "failed":
            notes = evaluation.get("notes") or ["the evaluation failed"]
            kind, _, text = str(notes[0]).partition(": ")
            return (text or kind, kind if text else "EvaluationError", str(evaluation.get("traceback") or ""))
        if sim.termination_reason in FAILED_CALL_ENDS:
            return (str(info.get("error") or sim.termination_reason), str(info.get("error_type") or "LLMError"), "")
        return None

    def _given_up(
        self, task: Task, trial: int, seed: int, failure: tuple[str, str, str], attempts: int
    ) -> SimulationRun:
        """tau2's placeholder for a task that failed every attempt (``run_with_retry``): no messages, the last
        error in ``info``; stamped with the task's fingerprint as every simulation."""
        error, error_type, trace = failure
        now = datetime.now().isoformat()
        sim = SimulationRun(
            id=str(uuid.uuid4()),
            task_id=task.id,
            timestamp=now,
            start_time=now,
            end_time=now,
            duration=0.0,
            termination_reason=INFRASTRUCTURE_ERROR,
            messages=[],
            trial=trial,
            seed=seed,
            mode="half_duplex",
            info={
                "error": error,
                "error_type": error_type,
                "error_traceback": trace,
                "failed_after_attempts": attempts,
                **fingerprint_info(task, self.domain_fingerprint),
            },
        )
        return sim

    async def episode(self, task: Task, trial: int, seed: int) -> SimulationRun:
        """One episode stamped with the task's fingerprint, not scored yet."""
        sim = await self.simulate(task, trial, seed)
        stamp = self._fingerprints.get(task.id)
        if stamp is None:  # hashed once per task: its trials share it
            stamp = self._fingerprints[task.id] = fingerprint_info(task, self.domain_fingerprint)
        sim.info = {**(sim.info or {}), **copy.deepcopy(stamp)}
        return sim

    async def _finish_remotely(
        self,
        remote: Any,
        task: Task,
        trial: int,
        seed: int,
    ) -> tuple[SimulationRun, float | None, str | None]:
        """``finish_unit`` on ``remote``: the simulation comes back as its saved dict, with the node it ran on; a
        unit the remote side lost (a worker that died) becomes an infrastructure_error placeholder here (no
        node), as a failed start does."""
        started = datetime.now().isoformat()
        try:
            data, scored, node = await remote.finish(task, trial, seed)
            return SimulationRun.model_validate(data), scored, node
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, never raised through the batch
            sim = self._placeholder(task, trial, seed, started, exc)
            sim.info = {**(sim.info or {}), **fingerprint_info(task, self.domain_fingerprint)}
            return sim, await self._in_thread(self._score, sim, task), None

    def _score(self, sim: SimulationRun, task: Task) -> float | None:
        try:
            return self.evaluator.apply(sim, task, self.config.solo).reward
        except MissingCredentials:
            raise  # the judge's key: every simulation would be left unscored the same way
        except Exception as exc:  # noqa: BLE001 - an evaluator failure leaves the simulation unscored
            sim.reward_info = None
            evaluation: dict[str, Any] = {
                "status": "failed",
                "notes": [scrub_text(f"{type(exc).__name__}: {exc}", self.secrets)],
            }
            if self.config.protocol.name == "tau2":  # its placeholder keeps the traceback, as tau2's does
                evaluation["traceback"] = scrub_text(traceback.format_exc(), self.secrets)
            sim.info = {**(sim.info or {}), "evaluation": evaluation}
            return None

    async def simulate(self, task: Task, trial: int, seed: int) -> SimulationRun:
        """One episode; a failure to even start it becomes an infrastructure_error placeholder (as tau2)."""
        config = self.config

        def on_message(event: Any) -> None:
            if isinstance(event, MessageAdded):
                self.emit(SimulationMessage(task.id, trial, event.message))

        def on_retry(side: str) -> RetryListener:
            def report(attempt: int, delay: float, exc: BaseException) -> None:
                name = exc.name if isinstance(exc, ProviderFailure) else type(exc).__name__  # as recordings name it
                text = scrub_text(f"{name}: {exc}".splitlines()[0], self.secrets)
                self.emit(LLMRetried(task.id, trial, side, attempt, delay, text))

            return report

        started = datetime.now().isoformat()
        try:
            env = self.domain.new_environment(solo=config.solo, variant=self.variant)
            env.bind_task(task)  # before the agent reads the policy (banking's golden_retrieval is per task)
            agent = build_agent(
                config.agent, task, env, solo=config.solo, on_retry=on_retry("agent"), protocol=config.protocol
            )
            user = build_user(
                config.user, task, env, solo=config.solo, on_retry=on_retry("user"), protocol=config.protocol
            )
            orchestrator = Orchestrator(
                env, task, agent, user, config.episode_options(seed), trial=trial, listener=on_message
            )
            return await orchestrator.run()
        except MissingCredentials:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, never raised through the batch
            return self._placeholder(task, trial, seed, started, exc)

    @staticmethod
    def _placeholder(task: Task, trial: int, seed: int, started: str, exc: Exception) -> SimulationRun:
        """The infrastructure_error simulation of an episode that could not run (tau2's placeholder)."""
        now = datetime.now().isoformat()
        return SimulationRun(
            id=str(uuid.uuid4()),
            task_id=task.id,
            timestamp=now,
            start_time=started,
            end_time=now,
            duration=0.0,
            termination_reason=INFRASTRUCTURE_ERROR,
            messages=[],
            trial=trial,
            seed=seed,
            mode="half_duplex",
            info={
                "error": f"{type(exc).__name__}: {exc}",
                "error_type": type(exc).__name__,
                "error_traceback": traceback.format_exc(),
                "failed_after_attempts": 1,
            },
        )
