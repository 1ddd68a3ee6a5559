"""Filling a calibration grid: from recorded runs, and by running k trials per task live.

``Calibrator`` owns a ``CalibrationGrid`` for one domain. ``load_run`` adds a
cell per simulation of a recorded run of that domain (recorded reward, or
recomputed with ``recompute=True``). ``run`` rolls out a ``RunConfig`` with
the runner: a pending cell per (task, trial) appears at once, turns
``running`` when its simulation starts and pass / fail / unscored when it
ends (the simulation is on disk by then; the cell's ``ref`` names it).
``rerun`` runs selected rows again with the tasks' current definitions (an
edited task gets a new fingerprint, hence a new row). Subscribers of
``grid`` get the grid's events, the runner's events (``SimulationMessage``,
``LLMRetried``...) and ``CalibrationStarted`` / ``CalibrationFinished``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol

from tau_tui.analysis import Analyzer
from tau_tui.calibrate.fingerprint import Fingerprinter
from tau_tui.calibrate.grid import CalibrationGrid, Cell, RowKey, Setup, SimRef, TrialOutcome, classify
from tau_tui.calibrate.tasks import reload_domain_tasks
from tau_tui.domains import DomainError, DomainRegistry, split_variant
from tau_tui.model.io import RunFile, RunFileError, expand_paths, open_run
from tau_tui.model.tasks import Task
from tau_tui.rollout.records import fingerprint_info
from tau_tui.rollout.runner import RunConfig, Runner, RunSummary, SimulationFinished, SimulationStarted


@dataclass(frozen=True)
class CalibrationStarted:
    path: Path
    total: int
    pending: int


@dataclass(frozen=True)
class CalibrationFinished:
    path: Path
    summary: RunSummary


@dataclass
class LoadReport:
    """What loading recorded runs gave: simulations added per file, and files skipped with the reason."""

    added: dict[Path, int] = field(default_factory=dict)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.added.values())


def same_domain(name: str | None, domain: str) -> bool:
    """``telecom`` and ``telecom-workflow`` are different domains here (their policies differ)."""
    return name is not None and split_variant(name) == split_variant(domain)


def unscored_note(raw: Any) -> str | None:
    """Why a recorded simulation has no reward, from what its ``info`` says."""
    info = raw.get("info") if isinstance(raw, dict) else None
    if not isinstance(info, dict):
        return None
    evaluation = info.get("evaluation")
    if isinstance(evaluation, dict) and evaluation.get("notes"):
        return str(evaluation["notes"][0])
    error = info.get("error")
    return str(error).splitlines()[0] if error else None


def _trial_order(trial: int | None) -> tuple[bool, int]:
    """Trials in order, a simulation that names none after them (in file order: the sort is stable)."""
    return (trial is None, trial or 0)


def forks_line(count: int) -> str:
    """``1 fork left out``: what the grid does not count, said where it is shown."""
    from tau_tui import formats

    return f"{formats.count(count, 'fork')} left out"


class RunnerFactory(Protocol):
    """Builds the runner of a calibration's trials (``Workspace.new_runner``)."""

    def __call__(self, config: RunConfig, path: Path, *, resume: bool, listener: Any, remote: Any) -> Runner: ...


class Calibrator:
    """A calibration grid for one domain (variant), filled from runs and rollouts."""

    def __init__(
        self,
        registry: DomainRegistry,
        domain: str,
        grid: CalibrationGrid | None = None,
        *,
        judge: Any = None,
        analyzer: Analyzer | None = None,
        runner_factory: RunnerFactory | None = None,
    ):
        """``analyzer`` and ``runner_factory``: the workspace's (its one gold cache, runners with its judge and
        remote episodes); a calibrator made alone (tests) makes its own from ``registry`` and ``judge``."""
        self.registry = registry
        self.domain_name = domain
        self.domain, self.variant = registry.resolve(domain)
        self.grid = grid if grid is not None else CalibrationGrid()
        self.judge = judge
        self.fingerprints = Fingerprinter(self.domain, self.variant)
        self.task_overrides: dict[str, Task] = {}
        self.runs_started = 0
        self.forks_left_out = 0  # simulations of forks: a recorded prefix continued, not trials of a model pair
        self._seen: set[tuple[str, str]] = set()
        self._analyzer = analyzer
        self._runner_factory = runner_factory

    # --- task definitions ---------------------------------------------------------------
    def current_task(self, task_id: str) -> Task | None:
        """The definition a new run of ``task_id`` uses: an override (an edited task), else the domain's."""
        if task_id in self.task_overrides:
            return self.task_overrides[task_id]
        try:
            return self.domain.tasks().get(task_id)
        except DomainError:
            return None

    def mark_current(self, task_ids: Iterable[str] | None = None) -> None:
        """Tell the grid which fingerprint each task's current definition has."""
        ids = dict.fromkeys(task_ids if task_ids is not None else (r.task_id for r in self.grid.rows()))
        for task_id in ids:
            task = self.current_task(task_id)
            if task is not None:
                fingerprint = self.fingerprints.of_task(task)
                self.grid.set_current(task_id, fingerprint.value, fingerprint.parts)

    def reload_tasks(self) -> None:
        """Re-read the domain's task file and policy (after an edit) and re-mark every row."""
        reload_domain_tasks(self.domain)
        self.fingerprints = Fingerprinter(self.domain, self.variant)
        self.mark_current()

    def use_task(self, task: Task) -> None:
        """Run ``task`` (e.g. an edited copy from a run file) from now on instead of the domain's definition."""
        self.task_overrides[task.id] = task
        self.mark_current([task.id])

    # --- recorded runs --------------------------------------------------------------------
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer(self.registry)
        return self._analyzer

    def load_run(self, run: RunFile, *, recompute: bool = False) -> int:
        """Add a cell per simulation of ``run`` not loaded before; returns how many were added.

        ``recompute``: score with our evaluator (and the judge, if any) instead
        of the reward the recording states. A fork is left out (its first
        messages were played by the sides of the run it continues) and counted in
        ``forks_left_out``.
        """
        if not same_domain(run.domain, self.domain_name):
            raise DomainError(f"{run.path}: a run of domain '{run.domain or 'unknown'}', not '{self.domain_name}'")
        if run.forked_from is not None:
            self.forks_left_out += sum(not self._known(SimRef(run.path, entry.id)) for entry in run.entries)
            return 0
        setup = Setup(run.agent_model or run.agent_implementation, run.user_model or run.user_implementation)
        added = 0
        tasks = set()
        # A run file holds simulations in the order they finished (trial 3 may be written before trial 2): the
        # cells are added in trial order, as a live calibration adds them, so a resumed grid reads the same.
        pairs = sorted(zip(run.entries, run.raw_sims, strict=False), key=lambda pair: _trial_order(pair[0].trial))
        for entry, raw in pairs:
            ref = SimRef(run.path, entry.id)
            if entry.problem or self._known(ref):
                continue
            reward, note = entry.reward, unscored_note(raw)
            if recompute:
                try:
                    evaluation = self.analyzer().evaluate(run, entry.index, judge=self.judge).evaluation
                    reward = evaluation.reward
                    if reward is None and evaluation.notes:
                        note = evaluation.notes[-1]
                except RunFileError as exc:  # an unreadable simulation is unscored, the rest still loads
                    reward, note = None, str(exc)
            outcome, reason = classify(reward, entry.termination, note)
            fingerprint = self.fingerprints.of_simulation(run, raw)
            row = self.grid.ensure_row(
                entry.task_id, fingerprint.value, setup, parts=fingerprint.parts, source=fingerprint.source
            )
            self.grid.add_cell(row.key, Cell(outcome, entry.trial, entry.seed, reward, entry.termination, reason, ref))
            added += 1
            tasks.add(entry.task_id)
        self.mark_current(tasks)
        return added

    def load_paths(self, paths: Iterable[Path | str], *, recompute: bool = False) -> LoadReport:
        """Load every run of this domain under ``paths``; other domains and unreadable files are skipped."""
        report = LoadReport()
        for path in expand_paths(paths):
            try:
                run = open_run(path)
                report.added[path] = self.load_run(run, recompute=recompute)
            except (RunFileError, DomainError) as exc:
                report.skipped.append((path, str(exc)))
        return report

    def _known(self, ref: SimRef) -> bool:
        key = (str(Path(ref.path).resolve()), ref.sim_id)
        if key in self._seen:
            return True
        self._seen.add(key)
        return False

    # --- rollouts -------------------------------------------------------------------------
    async def run(
        self,
        config: RunConfig,
        path: Path | str,
        *,
        resume: bool = False,
        replace: bool = False,
        runner_listener: Any = None,
        remote: Any = None,
    ) -> RunSummary:
        """Roll out ``config`` into ``path`` and fill the grid live (``remote``: the runner's ``Runner.remote``).

        ``replace`` clears the rows this run fills before it starts (a fresh
        calibration of those rows). ``resume`` finishes an interrupted file:
        what it already holds appears as finished cells.
        """
        config = dataclasses.replace(config, domain=self.domain_name)
        if config.tasks is None and self.task_overrides:
            config = dataclasses.replace(config, tasks=self._current_tasks(config.task_ids))
        path = Path(path)
        cells: dict[tuple[int, str], tuple[RowKey, int]] = {}

        def on_event(event: Any) -> None:
            if isinstance(event, SimulationStarted):
                hit = cells.get((event.trial, event.task_id))
                if hit:
                    self.grid.update_cell(*hit, outcome=TrialOutcome.RUNNING)
            elif isinstance(event, SimulationFinished):
                hit = cells.get((event.trial, event.task_id))
                if hit:
                    self._finish(hit, event, path)
            self.grid.emit(event)
            if runner_listener is not None:
                runner_listener(event)

        if self._runner_factory is not None:
            runner = self._runner_factory(config, path, resume=resume, listener=on_event, remote=remote)
        else:
            runner = Runner(config, path, self.registry, resume=resume, listener=on_event, judge=self.judge)
            runner.remote = remote
        runner.prepare()
        self.runs_started += 1
        info = runner.writer.info
        setup = Setup((info.get("agent_info") or {}).get("llm"), (info.get("user_info") or {}).get("llm"))
        keys: dict[str, RowKey] = {}
        for task in runner.tasks:
            stamp = fingerprint_info(task, runner.domain_fingerprint)
            parts = stamp["task_fingerprint_parts"]
            row = self.grid.ensure_row(task.id, stamp["task_fingerprint"], setup, parts=parts, source="recorded")
            if replace:
                self.grid.clear_cells(row.key)
            keys[task.id] = row.key
        self.mark_current(keys)
        if resume and runner.writer.simulations:
            self.load_run(open_run(path))
        for trial, task, seed in runner.units():
            index = self.grid.add_cell(keys[task.id], Cell(TrialOutcome.PENDING, trial, seed))
            cells[(trial, task.id)] = (keys[task.id], index)
        self.grid.emit(CalibrationStarted(path, len(runner.tasks) * config.num_trials, len(cells)))
        summary = await runner.run()
        self.grid.emit(CalibrationFinished(path, summary))
        return summary

    def _current_tasks(self, task_ids: list[str] | None) -> list[Task]:
        ids = list(task_ids) if task_ids else list(dict.fromkeys([*self.domain.tasks(), *self.task_overrides]))
        tasks = []
        for task_id in ids:
            task = self.current_task(task_id)
            if task is None:
                raise DomainError(f"no task {task_id!r} in domain '{self.domain_name}'")
            tasks.append(task)
        return tasks

    def _finish(self, hit: tuple[RowKey, int], event: SimulationFinished, path: Path) -> None:
        sim = event.simulation
        note = unscored_note({"info": sim.info})
        outcome, reason = classify(event.reward, sim.termination_reason, note)
        ref = SimRef(path, sim.id)
        self._known(ref)
        self.grid.update_cell(
            *hit, outcome=outcome, reward=event.reward, termination=sim.termination_reason, reason=reason, ref=ref
        )

    async def rerun(
        self,
        keys: Iterable[RowKey],
        config: RunConfig,
        path: Path | str,
        *,
        replace: bool = False,
        seed: int | None = None,
    ) -> RunSummary:
        """Run the tasks of the selected rows again, with their current definitions.

        A task edited since a row was made runs under its new fingerprint, so
        its trials land in a new row. Without ``seed``, each run of this
        calibrator gets the next run seed (``config.seed`` + runs so far), so
        the new trials are not copies of the old ones.
        """
        task_ids = list(dict.fromkeys(key[0] for key in keys))
        tasks = self._current_tasks(task_ids)
        run_seed = seed if seed is not None else config.seed + self.runs_started
        config = dataclasses.replace(config, task_ids=task_ids, tasks=tasks, seed=run_seed)
        return await self.run(config, path, replace=replace)
