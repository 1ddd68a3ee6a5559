"""The rollout a session runs (one at a time): start a ``RunPlan``, fold the runner's events, stop.

``RolloutController`` holds the one "already running" check, the progress (``RolloutProgress``, folded by
``RunTally.apply`` as ``tau-tui run``'s is) and the runner, whose ``snapshot()`` is the results file as
saved so far. ``run`` is a coroutine for the front end's event loop (litellm calls are async); ``fold``
says what each event means for the front end. The runner comes from ``Workspace.prepared_runner``, as
``tau-tui run``'s: a plan with ``executor="ray"`` runs its episodes on Ray actors (``rollout_remote``, with
the session's settings: ``ray_address``), and the progress counts each node.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from tau_tui.rollout.progress import RolloutProgress

if TYPE_CHECKING:
    from tau_tui.model.io import RunFile
    from tau_tui.rollout import Runner
    from tau_tui.workspace import RunPlan, Workspace


class RolloutBusy(Exception):
    """Another rollout is still running; ``str()`` says how to stop it."""


@dataclass(frozen=True)
class RolloutUpdate:
    """What one runner event means for the front end."""

    progress: bool  # the progress changed: redraw it
    notice: str | None = None  # a line to show (a retry, the run finished)
    warning: bool = False
    run: RunFile | None = None  # the results file as saved so far: its rows join the catalog
    first_file: bool = False  # ``run`` is the rollout's first simulation: views may narrow to its file


class RolloutController:
    """The session's rollout: at most one runs at a time."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.progress: RolloutProgress | None = None  # the running rollout, or the last one
        self._runner: Runner | None = None

    def busy(self) -> str | None:
        """Why no rollout can start now (one is running), or None."""
        if self.progress is not None and self.progress.active:
            return "a rollout is already running (K on the runs screen stops it)"
        return None

    def start(self, plan: RunPlan) -> RolloutProgress:
        """Claim the session for ``plan`` (``run`` then runs it); ``RolloutBusy`` when one is running."""
        reason = self.busy()
        if reason is not None:
            raise RolloutBusy(reason)
        config = plan.config
        self.progress = RolloutProgress(
            path=plan.path,
            domain=config.domain,
            agent=config.agent.model,
            user="—" if config.solo else config.user.model,
        )
        self._runner = None
        return self.progress

    async def run(self, plan: RunPlan, listener: Callable[[Any], None]) -> str | None:
        """Prepare in a thread (domain loading; over Ray, joining the cluster), then run on this event loop; the
        one-line error, or None. Ray's workers are let go (in a thread) however the run ends."""
        from tau_tui.config import ConfigError
        from tau_tui.domains import DomainError
        from tau_tui.model.io import error_text
        from tau_tui.rollout import ParticipantSpecError, RunError
        from tau_tui.workers.pool import RayUnavailable

        runner: Runner | None = None
        try:
            runner = await self._prepared(plan, listener)
            self._runner = runner
            await runner.run()
        except (DomainError, RunError, ParticipantSpecError, RayUnavailable, ConfigError, ValueError, KeyError) as exc:
            return error_text(exc)
        except Exception as exc:  # noqa: BLE001 - shown on the runs screen, never a crash
            return f"{type(exc).__name__}: {exc}"
        finally:
            remote = runner.remote if runner is not None else None
            if remote is not None:
                await asyncio.shield(asyncio.to_thread(remote.close))
        return None

    async def _prepared(self, plan: RunPlan, listener: Callable[[Any], None]) -> Runner:
        """``prepared_runner`` (with the judge and the remote episodes, as tau-tui run) in a thread; stopped
        meanwhile, what the thread still makes is let go when it ends (the file's lock, Ray's workers)."""
        preparing = asyncio.ensure_future(asyncio.to_thread(self.workspace.prepared_runner, plan, listener))
        try:
            return await asyncio.shield(preparing)
        except asyncio.CancelledError:
            preparing.add_done_callback(_let_go)
            raise

    def fold(self, event: Any) -> RolloutUpdate:
        """One runner event folded into the progress (events after a stop change nothing)."""
        from tau_tui import formats
        from tau_tui.rollout import LLMRetried, RunFinished, SimulationFinished, WorkerLost
        from tau_tui.rollout.progress import lost_text, retry_text

        progress = self.progress
        if progress is None or progress.stopped:
            return RolloutUpdate(progress=False)
        progress.apply(event)  # the one fold of runner events (rollout/progress.py), as tau-tui run's
        if isinstance(event, LLMRetried):
            return RolloutUpdate(True, retry_text(event), warning=True)
        if isinstance(event, WorkerLost):
            return RolloutUpdate(True, lost_text(event), warning=True)
        if isinstance(event, SimulationFinished) and self._runner is not None:
            run = self._runner.snapshot()
            first = not progress.shown
            progress.shown = True
            return RolloutUpdate(True, run=run, first_file=first)
        if isinstance(event, RunFinished):
            return RolloutUpdate(
                True,
                f"rollout finished: {progress.done} simulation(s), average reward "
                f"{formats.average(progress.average)}; saved in {progress.path}",
            )
        return RolloutUpdate(True)

    def stop(self) -> str:
        """Mark the rollout stopped (the front end cancels its task); what finished is saved."""
        progress = self.progress
        if progress is None or not progress.active:
            return "no rollout is running"
        progress.stopped = True
        progress.halt()
        return f"rollout stopped: {progress.done} simulation(s) saved in {progress.path}"

    def failed(self, error: str) -> None:
        if self.progress is not None:
            self.progress.error = error
            self.progress.halt()


def _let_go(preparing: asyncio.Future[Runner]) -> None:
    """A runner prepared for a rollout that was stopped meanwhile: its file and its workers are released."""
    if preparing.cancelled() or preparing.exception() is not None:
        return
    runner = preparing.result()
    if runner.remote is not None:
        runner.remote.close()
    runner.close()
