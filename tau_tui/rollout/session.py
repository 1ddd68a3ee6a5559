"""Human-in-the-loop sessions and forks: one episode with a person on one side, or continued from a history.

``PlaySession`` is the headless core of ``tau-tui play`` and of the TUI's
play screens. A person plays the user or the agent of one task; the other
side is any model string or a scripted participant. The session runs the
episode in the background (``start()``/``run()``); whenever it is the
person's turn, ``on_turn`` is called with a ``TurnRequest`` and
``wait_turn()`` returns it; the person answers with ``say()``,
``call_tool()`` or ``end()``. Every message is reported to ``on_event``
(``MessageAdded``, ``EpisodeEnded``) and ``env`` is the live environment
(for a DB pane). When the episode ends it is evaluated; ``save()`` writes a
tau2 results file holding the task and the simulation.

``continue_episode`` runs a fork: a prefix of a recorded trajectory continued
by a new agent and/or user, evaluated against the same task.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

from tau_tui.domains import Domain, DomainRegistry
from tau_tui.env.environment import Environment
from tau_tui.model.messages import Message
from tau_tui.model.results import SimulationRun
from tau_tui.model.secrets import secret_values
from tau_tui.model.tasks import Task
from tau_tui.rollout.evaluation import Scored, SimulationEvaluator
from tau_tui.rollout.factory import HUMAN, ParticipantSpec, build_agent, build_user, check_credentials
from tau_tui.rollout.human import HumanReply, QueueSource, TurnRequest
from tau_tui.rollout.orchestrator import EpisodeEnded, EpisodeOptions, Orchestrator
from tau_tui.rollout.participants import AGENT, USER, Participant
from tau_tui.rollout.prompts import STOP
from tau_tui.rollout.protocol import ProtocolTexts, protocol_tools
from tau_tui.rollout.records import ResultsWriter, run_info


def _as_spec(spec: ParticipantSpec | str) -> ParticipantSpec:
    return spec if isinstance(spec, ParticipantSpec) else ParticipantSpec(spec)


def fork_history(messages: list[Message], upto: int) -> list[Message]:
    """Messages ``0..upto`` of a recorded trajectory (copies), the start of a fork."""
    if not 0 <= upto < len(messages):
        raise IndexError(f"no message {upto} in a trajectory of {len(messages)}")
    return [m.model_copy(deep=True) for m in messages[: upto + 1]]


class Episode:
    """One episode wired up: environment, participants, orchestrator, evaluator (shared by sessions and forks)."""

    def __init__(
        self,
        domain: Domain,
        variant: str | None,
        task: Task,
        agent: ParticipantSpec,
        user: ParticipantSpec,
        options: EpisodeOptions | None = None,
        *,
        human: QueueSource | None = None,
        history: list[Message] | None = None,
        judge: Any = None,
        listener: Callable[[Any], None] | None = None,
    ):
        options = options if options is not None else EpisodeOptions()
        solo = options.solo
        self.domain, self.variant, self.task, self.solo = domain, variant, task, solo
        self.agent_spec, self.user_spec = agent, user
        check_credentials([(agent, "agent")] + ([] if solo else [(user, "user")]), judge)
        self.env: Environment = domain.new_environment(solo=solo, variant=variant)
        self.env.bind_task(task)  # before the agent reads the policy (banking's golden_retrieval is per task)
        name = domain.name if variant is None else f"{domain.name}-{variant}"
        self.protocol = protocol_tools(options.protocol, domain, name, self.env)
        self.agent: Participant = build_agent(agent, task, self.env, solo=solo, human=human, protocol=self.protocol)
        self.user: Participant = build_user(user, task, self.env, solo=solo, human=human, protocol=self.protocol)
        self.orchestrator = Orchestrator(
            self.env, task, self.agent, self.user, options, history=history, listener=listener
        )
        self.evaluator = SimulationEvaluator(domain, variant, self.protocol.run_judge(judge))
        self.result: SimulationRun | None = None
        self.scored: Scored | None = None

    async def run(self, evaluate: bool = True) -> SimulationRun:
        self.result = await self.orchestrator.run()
        if evaluate:
            self.scored = await asyncio.to_thread(self.evaluator.apply, self.result, self.task, self.solo)
        return self.result

    def info(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return run_info(
            domain_name=self.env.domain_name,
            policy=self.env.policy,
            agent=self.agent.info(),
            user=self.user.info(),
            num_trials=1,
            max_steps=self.orchestrator.max_steps,
            max_errors=self.orchestrator.max_errors,
            seed=self.orchestrator.seed,
            env_info=self.env.recorded_info(),
            extra={
                "solo": self.solo,
                "protocol": self.protocol.record(
                    with_agent=not (self.agent_spec.is_scripted or self.agent_spec.is_human)
                ),
                **(extra or {}),
            },
        )

    def save(self, path: Path | str, extra: dict[str, Any] | None = None) -> Path:
        """Write a tau2 results file with this task and simulation (atomically; secrets kept out)."""
        if self.result is None:
            raise RuntimeError("the episode has not finished")
        secrets = secret_values(self.agent_spec.llm_args, self.user_spec.llm_args)
        writer = ResultsWriter(Path(path), self.info(extra), [self.task], secrets)
        writer.add(self.result)
        return writer.path


def _domain(registry: DomainRegistry, name: str) -> tuple[Domain, str | None]:
    return registry.resolve(name)


def _task(domain: Domain, task: Task | str) -> Task:
    if isinstance(task, Task):
        return task
    tasks = domain.tasks()
    if task not in tasks:
        raise KeyError(f"no task {task!r} in domain '{domain.name}'")
    return tasks[task]


class PlaySession:
    """A person plays ``play_as`` ("user" or "agent") of one task; ``other`` plays the other side."""

    def __init__(
        self,
        registry: DomainRegistry,
        domain: str,
        task: Task | str,
        play_as: str,
        other: ParticipantSpec | str,
        options: EpisodeOptions | None = None,
        *,
        history: list[Message] | None = None,
        judge: Any = None,
        on_event: Callable[[Any], None] | None = None,
        on_turn: Callable[[TurnRequest], None] | None = None,
    ):
        options = options if options is not None else EpisodeOptions()
        if play_as not in (USER, AGENT):
            raise ValueError(f"play as 'user' or 'agent', not {play_as!r}")
        if options.solo and play_as == USER:
            raise ValueError("solo mode has no user to play")
        self.play_as = play_as
        self.domain, variant = _domain(registry, domain)
        self.task = _task(self.domain, task)
        self.on_event = on_event
        self.source = QueueSource(on_turn)
        human = ParticipantSpec(HUMAN)
        other_spec = _as_spec(other)
        agent, user = (other_spec, human) if play_as == USER else (human, other_spec)
        self.messages: list[Message] = []
        self.episode = Episode(
            self.domain,
            variant,
            self.task,
            agent,
            user,
            options,
            human=self.source,
            history=history,
            judge=judge,
            listener=self._on_event,
        )
        self._runner: asyncio.Task[SimulationRun] | None = None

    # --- what the screen shows ------------------------------------------------------
    @property
    def env(self) -> Environment:
        return self.episode.env

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools the person may call (function schemas)."""
        person = self.episode.user if self.play_as == USER else self.episode.agent
        return list(person.brief.tools)  # type: ignore[attr-defined]

    @property
    def protocol(self) -> ProtocolTexts:
        """Whose prompts the model side gets (and the person is shown: ``person_prompt``)."""
        return self.episode.protocol

    def person_prompt(self) -> str:
        """The system prompt a model playing the person's side would get under this session's protocol: the
        person reads what the model would (tau2's user guidelines and scenario, or tau2's agent prompt)."""
        person = self.episode.user if self.play_as == USER else self.episode.agent
        brief: Any = person.brief  # type: ignore[attr-defined]
        if self.play_as == USER:
            return self.protocol.user_system_prompt(brief.scenario_text, with_tools=bool(brief.tools))
        return self.protocol.agent_system_prompt(brief.policy, brief.solo, brief.ticket)

    @property
    def pending(self) -> TurnRequest | None:
        """The turn waiting for the person, if any."""
        return self.source.pending

    @property
    def done(self) -> bool:
        return self.episode.result is not None

    @property
    def result(self) -> SimulationRun | None:
        return self.episode.result

    @property
    def reward(self) -> float | None:
        return self.episode.scored.reward if self.episode.scored is not None else None

    def _on_event(self, event: Any) -> None:
        message = getattr(event, "message", None)
        if message is not None:
            self.messages.append(message)
        if self.on_event is not None:
            self.on_event(event)

    # --- running ------------------------------------------------------------------------
    async def run(self) -> SimulationRun:
        """Run the episode to its end, then evaluate it."""
        return await self.episode.run()

    def start(self) -> asyncio.Task[SimulationRun]:
        """Run in the background on the current loop; returns the task (await it for the result)."""
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(self.run())
        return self._runner

    async def wait_turn(self) -> TurnRequest | None:
        """The next turn of the person, or None once the episode has ended."""
        runner = self.start()
        while not self.source.requests.empty():
            queued = self.source.requests.get_nowait()
            if queued is self.source.pending:
                return queued
        request = asyncio.ensure_future(self.source.next_request())
        finished, _ = await asyncio.wait({request, runner}, return_when=asyncio.FIRST_COMPLETED)
        if request in finished:
            return request.result()
        request.cancel()
        runner.result()  # re-raises if the episode failed
        return None

    async def wait(self) -> SimulationRun:
        return await self.start()

    def abort(self) -> None:
        """Stop without a result (nothing is saved)."""
        if self._runner is not None:
            self._runner.cancel()

    # --- the person's turn -----------------------------------------------------------------
    def say(self, text: str) -> None:
        self.source.reply(HumanReply.say(text))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> None:
        self.source.reply(HumanReply.call(name, arguments))

    def end(self) -> None:
        """End the conversation from the person's side (###STOP###)."""
        self.source.reply(HumanReply.say(STOP))

    def save(self, path: Path | str) -> Path:
        return self.episode.save(path, {"play_as": self.play_as})


async def continue_episode(
    registry: DomainRegistry,
    domain: str,
    task: Task | str,
    history: list[Message],
    agent: ParticipantSpec | str,
    user: ParticipantSpec | str,
    options: EpisodeOptions | None = None,
    *,
    judge: Any = None,
    listener: Callable[[Any], None] | None = None,
) -> Episode:
    """Fork: continue ``history`` (a recorded prefix, task history included) with a new agent and user.

    Returns the finished, evaluated ``Episode`` (``.result``, ``.scored``, ``.save(path)``).
    """
    dom, variant = _domain(registry, domain)
    episode = Episode(
        dom,
        variant,
        _task(dom, task),
        _as_spec(agent),
        _as_spec(user),
        options,
        history=history,
        judge=judge,
        listener=listener,
    )
    await episode.run()
    return episode


__all__ = ["Episode", "EpisodeEnded", "PlaySession", "continue_episode", "fork_history"]
