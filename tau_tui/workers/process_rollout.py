"""A rollout's episodes on several local processes: ``tau-tui run --workers N`` (``Runner.remote``).

One process runs every episode of a local run on one core: each model call costs litellm some milliseconds
of CPU (building the request, parsing the reply, pricing it), and when a wave of calls answers at once
they are handled one after another, so at a high ``--concurrency`` the run falls behind the model. With
``--workers N`` the episodes run in N worker processes instead, each with its own event loop and up to
``ceil(concurrency / N)`` episodes at once (the run's ``--concurrency`` stays the limit of calls in flight
in all), and this process only hands out units, saves and reports.

Each worker is forked from a forkserver (never from this process, which has threads) that imported litellm
once, or spawned where there is none; it builds its workspace from the resolved
settings (``factory(settings)``, as the replay pool's workers do), gets the run config with the task
definitions once, and loads it (``Runner.load``: domain, tasks, evaluator; it starts importing litellm at
once). Before any unit runs, each worker says whether it can run the config, the key its models lack if
any, and its domain fingerprint, which must equal this process's. A unit is (trial, task id, seed); what
comes back is the simulation as the writer saves it (secrets blanked) and its reward. A worker that dies
loses the units it had (the runner saves them as infrastructure errors, which ``--resume`` runs again)
and gets no more. Workers ignore Ctrl-C (this process stops them) and leave when this process goes.

The workers' episode events (``SimulationMessage``, ``LLMRetried``) come back over the same connection
and reach the runner's listener in this process, so the progress display and the TUI show them as for
a run in one process (over Ray they stay on the actors). Each worker is a node of its own in the progress
(``local/<pid>``, as a Ray node is host/id): ``WorkersStarted`` once they are all ready, ``SimulationPlaced``
for each unit handed out, ``WorkerLost`` for one that died while the run went on (not when it ends).
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from tau_tui.config import Settings
    from tau_tui.model.tasks import Task
    from tau_tui.rollout import RunConfig, Runner

WorkspaceFactory = Callable[["Settings"], Any]
READY_SECONDS = 300.0  # how long a worker may take to load the run (a cold litellm import included)


def _failure(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class _Episodes:
    """The body of one worker process: the driver's run config loaded (no file), its own domain cache."""

    def __init__(
        self,
        settings: Settings,
        factory: WorkspaceFactory,
        config: RunConfig,
        forward: Callable[[Any], None] | None = None,
    ):
        self.problem: str | None = None
        self.credentials: str | None = None
        try:
            from pathlib import Path

            from tau_tui.llm.credentials import MissingCredentials
            from tau_tui.rollout import Runner
            from tau_tui.rollout.factory import check_credentials
            from tau_tui.rollout.records import sim_to_dict

            self._to_dict = sim_to_dict
            workspace = factory(settings)
            self.runner = Runner(
                config, Path("-"), workspace.registry, listener=forward, judge=workspace.judge(config.agent.retry)
            )
            self.runner.load()
            self.tasks = {task.id: task for task in self.runner.tasks}
            sides = [(config.agent, "agent")] + ([] if config.solo else [(config.user, "user")])
            try:
                check_credentials(sides, self.runner.judge)
            except MissingCredentials as exc:
                self.credentials = str(exc)
        except Exception as exc:  # noqa: BLE001 - told to the driver in one line by the ready message
            self.problem = _failure(exc)

    def ready(self) -> tuple[str, str | None, str | None, Any]:
        fingerprint = None if self.problem else self.runner.domain_fingerprint
        return "ready", self.problem, self.credentials, fingerprint

    async def finish(self, trial: int, task_id: str, seed: int) -> tuple[dict[str, Any], float | None]:
        sim, reward = await self.runner.finish_unit(self.tasks[task_id], trial, seed)
        return self._to_dict(sim, self.runner.secrets), reward


def _serve(conn: Connection, settings: Settings, factory: WorkspaceFactory, config: RunConfig) -> None:
    """A worker process: load the config, answer ready, then run the units it is sent until told to stop
    (or until the driver is gone)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the driver stops us

    def forward(event: Any) -> None:  # an episode's messages and retries, on this process's loop
        try:
            conn.send(("event", event))
        except (OSError, ValueError):  # the driver is gone: the reader ends the loop
            pass

    body = _Episodes(settings, factory, config, forward)
    conn.send(body.ready())
    if body.problem or body.credentials:
        return
    asyncio.run(_serve_units(conn, body))


async def _serve_units(conn: Connection, body: _Episodes) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    running: set[asyncio.Task[None]] = set()

    async def one(ticket: int, trial: int, task_id: str, seed: int) -> None:
        try:
            data, reward = await body.finish(trial, task_id, seed)
            answer: tuple[Any, ...] = ("done", ticket, data, reward)
        except Exception as exc:  # noqa: BLE001 - the driver saves it as an infrastructure error
            answer = ("failed", ticket, _failure(exc))
        conn.send(answer)

    def take(message: Any) -> None:
        if message[0] == "unit":
            task = loop.create_task(one(*message[1:]))
            running.add(task)
            task.add_done_callback(running.discard)
        else:
            stop.set()

    def read() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the driver is gone
                loop.call_soon_threadsafe(stop.set)
                return
            loop.call_soon_threadsafe(take, message)
            if message[0] != "unit":
                return

    threading.Thread(target=read, name="tau-tui-episodes-reader", daemon=True).start()
    await stop.wait()
    for task in list(running):
        task.cancel()


def _context(runner: Runner) -> Any:
    """How the workers start: forked from a forkserver that imported litellm once (when a model of the run
    calls through it, so the workers do not each spend seconds of CPU on that import) or only the HTTP client
    (when every model goes straight to its endpoint), else spawned."""
    from tau_tui.llm.client import uses_litellm

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    sides = (runner.config.agent, runner.config.user)
    models = [spec.settings() for spec in sides if not (spec.is_scripted or spec.is_human)]
    if any(uses_litellm(settings) for settings in models):
        context.set_forkserver_preload(["tau_tui.llm.litellm_preload"])
    elif models:  # every call goes straight to its endpoint: the workers need only the HTTP client
        context.set_forkserver_preload(["aiohttp"])
    return context


class _Worker:
    """The driver's side of one worker process: its connection, the units it has, and a reader thread."""

    def __init__(self, process: Any, conn: Connection):
        self.process = process
        self.conn = conn
        self.name = f"local/{process.pid}"  # as the progress lines name it, like a Ray node (host/id)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.ready: asyncio.Future[Any] | None = None
        self.dead = False
        self.send_lock = threading.Lock()


class ProcessRollout:
    """``Runner.remote`` on ``workers`` local worker processes (see the module docstring)."""

    def __init__(self, settings: Settings, factory: WorkspaceFactory, workers: int):
        if workers < 2:
            raise ValueError("a process rollout needs at least 2 workers")
        self.settings = settings
        self.factory = factory
        self.workers = workers
        self.slots = workers
        self._workers: list[_Worker] = []
        self._tickets = 0
        self._emit: Callable[[Any], None] | None = None  # the runner's listener: the workers' episode events
        self._started = False  # WorkersStarted told: a worker that dies from now on is told as lost
        self._closing = False  # close(): the workers leave, none is lost

    async def start(self, runner: Runner) -> None:
        from tau_tui.llm.credentials import MissingCredentials
        from tau_tui.rollout import RunError

        config = dataclasses.replace(runner.config, tasks=list(runner.tasks), task_ids=[t.id for t in runner.tasks])
        self._emit = runner.emit
        concurrency = max(1, runner.config.concurrency)
        count = min(self.workers, concurrency)
        self.slots = concurrency  # the runner's limit of units in flight; each goes to the least busy worker
        context = _context(runner)
        loop = asyncio.get_running_loop()
        for _ in range(count):
            mine, theirs = context.Pipe()
            process = context.Process(
                target=_serve, args=(theirs, self.settings, self.factory, config), daemon=True, name="tau-tui-episodes"
            )
            process.start()
            theirs.close()
            worker = _Worker(process, mine)
            worker.ready = loop.create_future()
            self._workers.append(worker)
            threading.Thread(target=self._read, args=(worker, loop), name="tau-tui-episodes", daemon=True).start()
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(*(w.ready for w in self._workers if w.ready is not None)), READY_SECONDS
            )
        except asyncio.TimeoutError:
            raise RunError(f"the worker processes did not load the run within {READY_SECONDS:.0f} s") from None
        except RuntimeError as exc:  # one died before it answered
            raise RunError(f"a worker process did not start: {exc}") from None
        for _, problem, credentials, fingerprint in answers:
            if credentials:
                raise MissingCredentials(credentials)
            if problem is not None:
                raise RunError(f"a worker process cannot run this: {problem}")
            if fingerprint != runner.domain_fingerprint:  # the same files, read again: only a change meanwhile
                raise RunError(f"domain '{runner.config.domain}' changed on disk while the workers started")
        from tau_tui.rollout import WorkersStarted

        self._started = True
        runner.emit(WorkersStarted(tuple(w.name for w in self._workers)))

    def _read(self, worker: _Worker, loop: asyncio.AbstractEventLoop) -> None:
        """The reader thread of one worker: each answer settles its future on the loop; at the end of the
        connection (the process died or left) every unit it had fails."""
        while True:
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                break
            try:
                loop.call_soon_threadsafe(self._settle, worker, message)
            except RuntimeError:  # the loop is closed: the run is over
                return
        worker.process.join(5)
        code = worker.process.exitcode
        try:
            loop.call_soon_threadsafe(self._lost, worker, code)
        except RuntimeError:
            pass

    def _settle(self, worker: _Worker, message: Any) -> None:
        if message[0] == "event":
            if self._emit is not None:
                self._emit(message[1])
            return
        if message[0] == "ready":
            if worker.ready is not None and not worker.ready.done():
                worker.ready.set_result(message)
            return
        future = worker.pending.pop(message[1], None)
        if future is None or future.done():
            return
        if message[0] == "done":
            future.set_result((message[2], message[3]))
        else:
            future.set_exception(RuntimeError(f"in the worker process: {message[2]}"))

    def _lost(self, worker: _Worker, code: int | None) -> None:
        if worker.dead:
            return
        worker.dead = True
        died = f"the worker process died (exit code {code})" if code else "the worker process left"
        if self._started and not self._closing and self._emit is not None:
            from tau_tui.rollout import WorkerLost

            self._emit(WorkerLost(worker.name, f"exit code {code}" if code else "it left", local=True))
        if worker.ready is not None and not worker.ready.done():
            worker.ready.set_exception(RuntimeError(died))
        for future in worker.pending.values():
            if not future.done():
                future.set_exception(RuntimeError(died))
        worker.pending.clear()

    async def finish(self, task: Task, trial: int, seed: int) -> tuple[dict[str, Any], float | None, str | None]:
        """One unit on the least busy live worker: (the simulation as saved, its reward, the worker's name)."""
        live = [w for w in self._workers if not w.dead]
        if not live:
            raise RuntimeError("every worker process died")
        worker = min(live, key=lambda w: len(w.pending))
        self._tickets += 1
        ticket = self._tickets
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.pending[ticket] = future
        if self._emit is not None:
            from tau_tui.rollout import SimulationPlaced

            self._emit(SimulationPlaced(task.id, trial, seed, worker.name))
        try:
            with worker.send_lock:
                worker.conn.send(("unit", ticket, trial, task.id, seed))
        except (OSError, ValueError) as exc:
            worker.pending.pop(ticket, None)
            raise RuntimeError(f"the worker process is gone ({_failure(exc)})") from None
        try:
            data, reward = await future
        finally:
            worker.pending.pop(ticket, None)
        return data, reward, worker.name

    def close(self) -> None:
        self._closing = True
        for worker in self._workers:
            try:
                with worker.send_lock:
                    worker.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        for worker in self._workers:
            worker.process.join(2)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(2)
            worker.conn.close()
        self._workers = []

    def __enter__(self) -> ProcessRollout:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
