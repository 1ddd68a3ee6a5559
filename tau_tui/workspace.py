"""The one composition root: a configured tau-tui core, headless.

A ``Workspace`` owns the resolved settings, the domain registry, one analyzer
(one gold cache), the judge, the retry policy and limits, the runs folder and
the one output-path namer. It builds the executors that replay and evaluate on
every core or on Ray (``executor``), runners with their remote episodes
(``runner``), calibrations, play sessions, forks and gold checks, from validated
requests; the CLI and the TUI only fill requests and render results, so the two
front ends cannot drift apart. Building one applies the settings' file limits to
this process (``model.runtime``): the command's, each worker's and each actor's.

Requests validate to one error type, ``RequestError``, whose message starts
with the field's name as the front end shows it (``--agent-llm-args`` on the
command line, ``agent args`` in a form): each request takes ``labels``.

Imports the core only (never textual).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from tau_tui.config import ConfigError, Settings

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.calibrate import Calibrator
    from tau_tui.calibrate.gold import GoldChecker
    from tau_tui.domains import DomainRegistry
    from tau_tui.evaluate import Judge
    from tau_tui.model.messages import Message
    from tau_tui.model.tasks import Task
    from tau_tui.rollout import Episode, EpisodeOptions, ParticipantSpec, PlaySession, RetryPolicy, RunConfig, Runner
    from tau_tui.rollout.protocol import ProtocolTexts
    from tau_tui.workers.pool import Job, RayRollout, UnitExecutor
    from tau_tui.workers.process_rollout import ProcessRollout

# field -> how the command line names it; forms pass their own labels
CLI_LABELS = {
    "domain": "--domain",
    "agent": "--agent-llm",
    "user": "--user-llm",
    "agent_args": "--agent-llm-args",
    "user_args": "--user-llm-args",
    "num_trials": "-k",
    "concurrency": "--concurrency",
    "max_steps": "--max-steps",
    "max_errors": "--max-errors",
    "timeout": "--timeout",
    "llm_retries": "--llm-retries",
    "task_retries": "--task-retries",
    "executor": "--executor",
    "workers": "--workers",
    "out": "--out",
    "task": "--task",
    "other": "--llm",
    "other_args": "--llm-args",
    "play_as": "--as",
    "after": "--after",
    "sim": "--sim",
    "protocol": "--protocol",
}
EXECUTORS = ("local", "ray")  # where a rollout's episodes run
FORM_LABELS = {
    "domain": "domain",
    "agent": "agent model",
    "user": "user model",
    "agent_args": "agent args",
    "user_args": "user args",
    "num_trials": "trials (k)",
    "concurrency": "concurrency",
    "max_steps": "max steps",
    "max_errors": "max errors",
    "timeout": "timeout (s)",
    "llm_retries": "retries",
    "executor": "run on",
    "workers": "workers",
    "out": "output file",
    "task": "task",
    "other": "other side",
    "other_args": "other side args",
    "play_as": "side",
    "after": "after message",
    "sim": "simulation",
}


class RequestError(ValueError):
    """A request field that cannot be used; ``str()`` starts with the field's label, ``field`` is its name."""

    def __init__(self, field: str, label: str, message: str):
        flag = label.startswith("-") and message.startswith(("is ", "must "))
        super().__init__(f"{label}{' ' if flag else ': '}{message}")
        self.field = field


def parse_json_object(value: str | dict[str, Any] | None, label: str, name: str = "") -> dict[str, Any] | None:
    """Litellm arguments typed as JSON (the one parser of both front ends); ``RequestError`` names ``label``."""
    if value is None or isinstance(value, dict):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestError(name or label, label, f"not valid JSON ({exc.msg})") from None
    if not isinstance(parsed, dict):
        raise RequestError(name or label, label, 'expected a JSON object like {"api_base": "http://…"}')
    return parsed


@dataclass
class _Request:
    labels: dict[str, str] = field(default_factory=lambda: dict(CLI_LABELS), kw_only=True)

    def label(self, name: str) -> str:
        return self.labels.get(name, name)

    def error(self, name: str, message: str) -> RequestError:
        return RequestError(name, self.label(name), message)

    def out_path(self) -> Path | None:
        """The output file the request names (``out``), or None for the default name."""
        out = str(getattr(self, "out", None) or "").strip()
        return Path(out) if out else None

    def json_object(self, name: str) -> dict[str, Any] | None:
        """A JSON-object field (text, a dict or None; empty text: None)."""
        return parse_json_object(getattr(self, name), self.label(name), name)

    def whole(self, name: str, minimum: int = 1) -> int:
        value = getattr(self, name)
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            raise self.error(name, "a whole number, please") from None
        if number < minimum:
            raise self.error(
                name, f"must be at least {minimum}" if self.label(name).startswith("-") else f"at least {minimum}"
            )
        return number


@dataclass
class RunRequest(_Request):
    """A rollout (``tau-tui run``, the TUI's new-rollout form) or the trials of a calibration."""

    domain: str | None
    agent: str | None
    user: str | None = None
    agent_args: str | dict[str, Any] | None = None
    user_args: str | dict[str, Any] | None = None
    tasks: list[str] | None = None
    num_trials: int | str = 1
    concurrency: int | str = 3
    max_steps: int | str = 200
    max_errors: int | str = 10
    seed: int | None = 300
    timeout: float | str | None = None
    solo: bool = False
    llm_retries: int = 5
    layout: str = "json"
    out: str | Path | None = None
    kind: str = "run"  # "run" or "calibrate": which default output name
    resume: bool = False  # finish the run already in ``out``
    allow_existing: bool = False  # leave an existing ``out`` to the runner (its error says --resume)
    executor: str = "local"  # where the episodes run: "local" (this process) or "ray" (``rollout_remote``)
    workers: int | str | None = (
        None  # Ray actors, or local worker processes (``rollout_remote``); None or empty: default
    )
    protocol: str | None = None  # whose prompts: "tau2", "own", "auto"; None: the settings' (``Workspace.protocol``)
    task_retries: int | None = None  # runs again of a failed episode under tau2 (``RunConfig.task_retries``)

    def validate(self) -> None:
        """Raise ``RequestError`` naming the first field that cannot be used."""
        if not self.domain:
            raise self.error("domain", "is required")
        if not self.agent or not str(self.agent).strip():
            raise self.error("agent", "is required (a model, or scripted/gold)")
        if not self.solo and not (self.user or "").strip():
            raise self.error("user", "is required (a model, or scripted/user), unless solo")
        if "human" in (self.agent, self.user):
            raise self.error(
                "agent" if self.agent == "human" else "user",
                "a human plays through 'Play as user or agent' (p) or tau-tui play, not in a rollout",
            )
        self.json_object("agent_args")
        self.json_object("user_args")
        self.whole("num_trials")
        self.whole("concurrency")
        self.whole("max_steps")
        self.whole("max_errors")
        self.seconds("timeout")
        if self.executor not in EXECUTORS:
            raise self.error("executor", f"{self.executor!r} is not one of {', '.join(EXECUTORS)}")
        self.worker_count()

    def worker_count(self) -> int | None:
        """``workers`` as a number (None: not given)."""
        if self.workers is None or (isinstance(self.workers, str) and not self.workers.strip()):
            return None
        return self.whole("workers")

    def seconds(self, name: str) -> float | None:
        value = getattr(self, name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            number = float(value)
        except ValueError:
            raise self.error(name, "a number of seconds, please") from None
        if number <= 0:
            raise self.error(name, "must be more than 0 seconds")
        return number


@dataclass
class RunPlan:
    """A validated run: what to run and where it is saved."""

    config: RunConfig
    path: Path
    resume: bool = False
    executor: str = "local"  # where its episodes run (``Workspace.rollout_remote``)
    workers: int | None = None  # Ray actors, or local worker processes (``rollout_remote``); None: the default


@dataclass
class PlayRequest(_Request):
    """A play session: a person plays one side of one task."""

    domain: str | None
    task: str | None
    play_as: str
    other: str | None
    other_args: str | dict[str, Any] | None = None
    solo: bool = False
    seed: int | None = None
    max_steps: int | str = 200
    out: str | Path | None = None
    protocol: str | None = None  # as ``RunRequest.protocol``

    def validate(self) -> None:
        if not self.domain:
            raise self.error("domain", "pick one")
        if not self.task:
            raise self.error("task", "pick one from the list")
        if self.play_as not in ("user", "agent"):
            raise self.error("play_as", "user or agent")
        if not self.other or not self.other.strip() or self.other.strip() == "human":
            raise self.error("other", "a model string, scripted/gold or scripted/user")
        self.json_object("other_args")
        self.whole("max_steps")


@dataclass
class ForkRequest(_Request):
    """Continue simulation ``sim`` of a recording after message ``after`` with a new agent and user."""

    sim: str | None
    after: int | str
    agent: str | None
    user: str | None = "scripted/user"
    agent_args: str | dict[str, Any] | None = None
    user_args: str | dict[str, Any] | None = None
    strict: bool = True  # replay the recorded prefix strictly (tau2's rule); lenient continues from any state
    llm_retries: int = 5
    out: str | Path | None = None

    def validate(self) -> None:
        if not self.sim or not str(self.sim).strip():
            raise self.error("sim", "is required (a simulation id of the file)")
        self.whole("after", 0)
        if not self.agent or not str(self.agent).strip():
            raise self.error("agent", "is required (a model, or scripted/gold)")
        for name in ("agent", "user"):
            if str(getattr(self, name) or "").strip() == "human":
                raise self.error(name, "a fork runs without a person: a model or a scripted participant")
        self.json_object("agent_args")
        self.json_object("user_args")


@dataclass
class ForkResult:
    """A finished fork: the evaluated episode, where it was saved, and what it continued."""

    episode: Episode
    path: Path
    sim_id: str
    after: int


@dataclass
class CalibrateRequest(_Request):
    domain: str | None

    def validate(self) -> None:
        if not self.domain:
            raise self.error("domain", "is required")


@dataclass
class GoldCheckRequest(_Request):
    domain: str | None
    tasks: list[str] | None = None

    def validate(self) -> None:
        if not self.domain:
            raise self.error("domain", "is required")


class Workspace:
    """Settings + registry + analyzer + judge + retry policy + runs folder + output naming + executors."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        registry: DomainRegistry | None = None,
        judge_factory: Callable[[str, str | None], Judge] | None = None,
    ):
        """``registry``: domains built in code (tests); such a workspace cannot be rebuilt in another process,
        so its work stays in this one."""
        from tau_tui.model import runtime

        self.settings = settings if settings is not None else Settings()
        runtime.configure(self.settings.max_read_bytes, self.settings.stream_bytes, self.settings.notes_dir)
        self._registry = registry
        self.registry_given = registry is not None
        self._analyzer: Analyzer | None = None
        self._judge_factory = judge_factory

    # --- what it owns ------------------------------------------------------------------------------
    @property
    def runs_dir(self) -> Path:
        return Path(self.settings.runs_dir)

    @property
    def registry(self) -> DomainRegistry:
        if self._registry is None:
            from tau_tui.domains import default_registry

            self._registry = default_registry(
                self.settings.tau2_data, list(self.settings.domain_paths), data_origin=self.settings.origin("tau2_data")
            )
        return self._registry

    @property
    def analyzer(self) -> Analyzer:
        """The one analyzer (and gold cache) of this workspace."""
        if self._analyzer is None:
            from tau_tui.analysis import Analyzer

            self._analyzer = Analyzer(
                self.registry,
                upstream_fixes=self.settings.upstream_fixes,
                recording_domain=self.settings.recording_domain,
            )
        return self._analyzer

    @property
    def judge_model(self) -> str | None:
        return self.settings.judge_model

    @property
    def judge_api_base(self) -> str | None:
        return self.settings.judge_api_base

    def judge(self, retry: RetryPolicy | None = None) -> Judge | None:
        """The NL-assertion judge of the settings, or None when no judge model is set. ``retry``: a run's
        policy (its ``--llm-retries``), so the judge of a run retries as its agent does; None: the default."""
        if not self.settings.judge_model:
            return None
        if self._judge_factory is not None:
            return self._judge_factory(self.settings.judge_model, self.settings.judge_api_base)
        from tau_tui.evaluate.judge import LiteLLMJudge

        return LiteLLMJudge(self.settings.judge_model, api_base=self.settings.judge_api_base, retry=retry)

    # --- where work runs -------------------------------------------------------------------------
    def replay_workers(self, workers: int | None = None) -> int:
        """Processes for replay and evaluation: ``workers``, else the settings' (default every core); one when
        the registry was built in code (a worker process could not rebuild it)."""
        from tau_tui.workers.pool import available_cores

        if self.registry_given:
            return 1
        chosen = workers if workers is not None else self.settings.workers
        return chosen if chosen is not None else available_cores()

    def executor(self, job: Job, workers: int | None = None, kind: str = "local") -> UnitExecutor:
        """What computes ``job``'s units: processes here (``replay_workers``), or Ray actors (``kind="ray"``,
        ``workers`` of them; ``RayUnavailable`` when Ray cannot start). Workers build their workspace from
        these settings."""
        from tau_tui.workers.pool import Executor, RayExecutor

        self._ships(kind)
        job = dataclasses.replace(job, settings=self.settings, factory=Workspace)
        if kind == "ray":
            self._rebuildable()
            job = dataclasses.replace(job, settings=self.settings.portable())  # actors may work in other folders
            return RayExecutor(job, workers if workers is not None else self.settings.workers, self)
        return Executor(job, self.replay_workers(workers), self)

    def rollout_remote(self, kind: str = "local", workers: int | None = None) -> RayRollout | ProcessRollout | None:
        """The remote episodes of a run: on Ray actors that build their workspace from these settings
        (``kind="ray"``), on ``workers`` local worker processes (``kind="local"`` with more than one), or
        None to run them in this process."""
        self._ships(kind)
        if kind != "ray":
            if workers is None or workers <= 1:
                return None
            from tau_tui.workers.process_rollout import ProcessRollout

            return ProcessRollout(self.settings, Workspace, workers)
        self._rebuildable()
        from tau_tui.workers.pool import RayRollout

        return RayRollout(
            self.settings.portable(), Workspace, workers if workers is not None else self.settings.workers
        )

    def _ships(self, kind: str) -> None:
        """``--ship-data`` on the command line needs Ray (the settings file's ``ship_data`` applies to Ray alone)."""
        if kind != "ray" and self.settings.ship_data and self.settings.origin("ship_data") == "--ship-data":
            raise ConfigError("--ship-data needs --executor ray (local workers read this machine's data)")

    def _rebuildable(self) -> None:
        if self.registry_given:
            raise ConfigError("--executor ray needs a workspace built from settings (its registry was given in code)")

    @staticmethod
    def retry_policy(retries: int = 5) -> RetryPolicy:
        from tau_tui.rollout import RetryPolicy

        return RetryPolicy(max_retries=max(0, retries))

    def new_output_path(self, kind: str, *parts: str) -> Path:
        """A new results file in the runs folder (the one naming rule, ``model.io.new_output_path``)."""
        from tau_tui.model.io import new_output_path

        return new_output_path(self.runs_dir, kind, *parts)

    # --- builders ------------------------------------------------------------------------------------
    def participant(self, model: str, args: dict[str, Any] | None, retries: int = 5) -> ParticipantSpec:
        from tau_tui.rollout import ParticipantSpec

        return ParticipantSpec(model, args, retry=self.retry_policy(retries))

    def sides(self, request: RunRequest | ForkRequest) -> tuple[ParticipantSpec, ParticipantSpec]:
        """The agent and user of a run or a fork (the user defaults to ``scripted/user``)."""
        agent = self.participant(str(request.agent).strip(), request.json_object("agent_args"), request.llm_retries)
        user = self.participant(
            (request.user or "scripted/user").strip(), request.json_object("user_args"), request.llm_retries
        )
        return agent, user

    def protocol(self, choice: str | None = None, field: _Request | None = None) -> ProtocolTexts:
        """The rollout protocol ``choice`` names (None: the settings'; "auto": tau2 where tau2's user-simulator
        guidelines are found in the tau2 data, else own), its texts read once. A protocol that cannot be had
        is a ``RequestError`` on ``field``'s ``protocol`` when a request asks, else ``ProtocolError``."""
        from tau_tui.domains import data_roots
        from tau_tui.rollout.protocol import ProtocolError, resolve_protocol

        chosen = choice if choice not in (None, "") else self.settings.protocol
        roots = [root for _, root in data_roots(self.settings.tau2_data, self.settings.origin("tau2_data"))]
        cache = self.settings.cache_dir or Path.home() / ".cache" / "tau-tui"
        try:
            return resolve_protocol(
                chosen,
                roots,
                self.settings.agent_prompt,
                self.settings.origin("agent_prompt"),
                self.settings.tau2_python,
                cache,
            )
        except ProtocolError as exc:
            if field is None:
                raise
            raise field.error("protocol", str(exc)) from None

    def run_plan(self, request: RunRequest) -> RunPlan:
        """Validate ``request`` and build its ``RunConfig`` and output path (``RequestError`` names the field)."""
        from tau_tui.rollout import RunConfig

        request.validate()
        agent, user = self.sides(request)
        protocol = self.protocol(request.protocol, request)
        config = RunConfig(
            domain=str(request.domain),
            agent=agent,
            user=user,
            task_ids=list(request.tasks or []) or None,
            num_trials=request.whole("num_trials"),
            concurrency=request.whole("concurrency"),
            max_steps=request.whole("max_steps"),
            max_errors=request.whole("max_errors"),
            seed=300 if request.seed is None else request.seed,
            timeout=request.seconds("timeout"),
            solo=request.solo,
            judge_llm=self.settings.judge_model,
            layout=request.layout,
            protocol=protocol,
            task_retries=request.task_retries,
        )
        named = request.out_path()
        if named is not None:
            path = named
        elif request.kind == "calibrate":
            path = self.new_output_path("calibrate", config.domain)
        else:
            path = self.new_output_path("run", config.domain, config.agent.model, config.user.model)
        if path.exists() and not (request.allow_existing or request.resume):
            raise request.error("out", f"{path} already exists (tau-tui run --resume finishes a run)")
        return RunPlan(config, path, resume=request.resume, executor=request.executor, workers=request.worker_count())

    def runner(
        self,
        plan: RunPlan,
        listener: Callable[[Any], None] | None = None,
        remote: RayRollout | ProcessRollout | None = None,
    ) -> Runner:
        """A ``Runner`` for ``plan``, with the judge; retries and limits come from the plan's config;
        ``remote``: where its episodes run (``rollout_remote``)."""
        return self.new_runner(plan.config, plan.path, resume=plan.resume, listener=listener, remote=remote)

    def prepared_runner(self, plan: RunPlan, listener: Callable[[Any], None] | None = None) -> Runner:
        """``runner(plan)``, prepared (the domain and tasks loaded, the file checked), then given its remote
        episodes (``rollout_remote(plan.executor, plan.workers)``): a bad request fails before a cluster is
        started. ``tau-tui run`` and the TUI's rollouts both start here; the caller closes ``runner.remote``."""
        runner = self.runner(plan, listener)
        runner.models_here = plan.executor != "ray" and (plan.workers is None or plan.workers <= 1)
        runner.prepare()
        try:
            runner.remote = self.rollout_remote(plan.executor, plan.workers)
        except BaseException:
            runner.close()
            raise
        return runner

    def new_runner(
        self,
        config: RunConfig,
        path: Path,
        *,
        resume: bool = False,
        listener: Callable[[Any], None] | None = None,
        remote: RayRollout | ProcessRollout | None = None,
    ) -> Runner:
        """The one place runners are made (runs, the TUI's rollouts, calibrations' trials)."""
        from tau_tui.rollout import Runner

        runner = Runner(
            config, path, self.registry, resume=resume, listener=listener, judge=self.judge(config.agent.retry)
        )
        runner.remote = remote
        return runner

    def calibrator(self, request: CalibrateRequest | str) -> Calibrator:
        from tau_tui.calibrate import Calibrator

        if isinstance(request, str):
            request = CalibrateRequest(request)
        request.validate()
        return Calibrator(
            self.registry,
            str(request.domain),
            judge=self.judge(),
            analyzer=self.analyzer,
            runner_factory=self.new_runner,
        )

    def gold_checker(self, request: GoldCheckRequest | str) -> GoldChecker:
        from tau_tui.calibrate.gold import GoldChecker

        if isinstance(request, str):
            request = GoldCheckRequest(request)
        request.validate()
        return GoldChecker.for_name(self.registry, str(request.domain), judge=self.judge())

    def play_path(self, request: PlayRequest) -> Path:
        """Where ``request``'s session is saved; ``RequestError`` when that file exists."""
        request.validate()
        path = request.out_path() or self.new_output_path("play", str(request.domain), str(request.task))
        if path.exists():
            raise request.error("out", f"{path} already exists; choose another")
        return path

    def play_session(self, request: PlayRequest) -> PlaySession:
        """A ``PlaySession`` with the judge (loads the domain: call it off a UI thread)."""
        from tau_tui.rollout import EpisodeOptions, PlaySession

        request.validate()
        other = self.participant(str(request.other).strip(), request.json_object("other_args"))
        options = EpisodeOptions(
            seed=request.seed,
            max_steps=request.whole("max_steps"),
            solo=request.solo,
            protocol=self.protocol(request.protocol, request),
        )
        return PlaySession(
            self.registry, str(request.domain), str(request.task), request.play_as, other, options, judge=self.judge()
        )

    async def fork(
        self,
        domain: str,
        task: Task | str,
        history: list[Message],
        agent: ParticipantSpec,
        user: ParticipantSpec,
        options: EpisodeOptions | None = None,
    ) -> Episode:
        """Continue a recorded prefix with new sides (scored with the judge)."""
        from tau_tui.rollout import continue_episode

        return await continue_episode(
            self.registry, domain, task, history, agent, user, options, judge=self.judge(agent.retry)
        )

    def fork_path(self, file_label: str, sim_id: str, step: int) -> Path:
        return self.new_output_path("fork", file_label, sim_id, f"m{step}")

    async def fork_simulation(self, run: Any, request: ForkRequest, task: Any = None) -> ForkResult:
        """The whole fork (``tau-tui fork`` and the trajectory screen's ``b``): validate, cut the recorded
        history after ``request.after``, continue it with the new sides (scored with the judge) and save it
        beside the runs (``forked_from`` names the source). ``task``: the recording's resolved task, when the
        caller has it (else the domain's task of that id). Blocking steps run in threads."""
        import asyncio

        from tau_tui.rollout import EpisodeOptions, fork_history

        request.validate()
        index = run.find(str(request.sim).strip())
        if index is None:
            raise request.error("sim", f"no simulation {str(request.sim).strip()!r} in {run.path}")
        after = request.whole("after", 0)
        sim = await asyncio.to_thread(run.simulation, index)
        if after >= len(sim.trajectory):
            raise request.error(
                "after", f"the simulation has {len(sim.trajectory)} messages (0 to {len(sim.trajectory) - 1})"
            )
        domain = run.domain
        if domain is None:
            raise ValueError(f"{run.path}: the recording does not say its domain")
        agent, user = self.sides(request)
        path = request.out_path() or self.fork_path(run.label, sim.id, after)
        if path.exists():
            raise request.error("out", f"{path} already exists; choose another")
        await asyncio.to_thread(self.registry.get, domain)
        episode = await self.fork(
            domain,
            task if task is not None else sim.task_id,
            fork_history(sim.trajectory, after),
            agent,
            user,
            EpisodeOptions(solo=run.solo, strict_history=request.strict, protocol=self.protocol(None, request)),
        )
        saved = await asyncio.to_thread(
            episode.save, path, {"forked_from": {"file": str(run.path), "simulation": sim.id, "after_message": after}}
        )
        return ForkResult(episode, saved, sim.id, after)


__all__ = [
    "CLI_LABELS",
    "FORM_LABELS",
    "CalibrateRequest",
    "ForkRequest",
    "ForkResult",
    "GoldCheckRequest",
    "PlayRequest",
    "RequestError",
    "RunPlan",
    "RunRequest",
    "Workspace",
]
