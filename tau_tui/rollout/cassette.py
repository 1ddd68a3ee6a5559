"""Cassette replay: run an agent against the tool results of a recording instead of a live environment.

A cassette is built from one recorded simulation: every tool call after the
task's own history, paired with its recorded result. During the new
episode a request gets the next unused recorded result *for the same
request* — same requestor, same tool, same arguments (key order aside) —
in the order they were recorded. Anything else is refused with an explicit
"no recorded result" error, and the episode ends with its own termination
reason, ``no_recorded_result``:

- ``unknown_tool``: the recording never calls a tool of that name;
- ``different_arguments``: it does, but never with these arguments;
- ``past_end``: every recorded result for this request is already used.

A result recorded for one request is never served for another. Served
results keep the recording's marks (an injected fault stays injected) and
gain ``cassette: {sim, step}`` (where they come from); the refused result
carries ``refused: {reason, tool, arguments, by: "cassette"}``. Nothing runs
against the environment: replaying the new trajectory later shows where the
recorded results disagree with what the environment would have answered
(results recorded in another order, for instance).

``run_cassettes`` runs a new agent and user over the simulations of a
recording and writes an evaluated tau2 results file (``tau-tui run
--cassette``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tau_tui.domains import DomainError, DomainRegistry, split_variant
from tau_tui.env.discovery import DISCOVERED_HOW_KEY, DISCOVERED_KEY
from tau_tui.env.episode import CASSETTE_KEY, REFUSAL_KEY, ToolBackend, refused_message
from tau_tui.env.faults import canonical_arguments
from tau_tui.model.io import RunFile, RunFileError, open_run
from tau_tui.model.messages import ParticipantMessage, ToolCall, ToolMessage
from tau_tui.model.results import NO_RECORDED_RESULT, SimulationRun
from tau_tui.model.secrets import secret_values
from tau_tui.model.tasks import Task
from tau_tui.recording_gaps import RunResolver
from tau_tui.rollout.evaluation import SimulationEvaluator
from tau_tui.rollout.factory import ParticipantSpec, build_agent, build_user, check_credentials, check_spec
from tau_tui.rollout.orchestrator import EndEpisode, EpisodeOptions, Orchestrator
from tau_tui.rollout.protocol import protocol_tools
from tau_tui.rollout.records import ResultsWriter, run_info

UNKNOWN_TOOL, DIFFERENT_ARGUMENTS, PAST_END = "unknown_tool", "different_arguments", "past_end"
_REASON_TEXT = {
    UNKNOWN_TOOL: "the recording never calls this tool",
    DIFFERENT_ARGUMENTS: "the recording calls this tool only with other arguments",
    PAST_END: "every result recorded for this request is already used",
}


class CassetteError(Exception):
    """A cassette run that cannot start; ``str()`` is one line."""


@dataclass(frozen=True)
class RecordedResult:
    """One recorded call and its result (``step``: the result's index in the recorded trajectory)."""

    call: ToolCall
    result: ToolMessage
    step: int


def request_key(call: ToolCall) -> tuple[str, str, str]:
    """What a served result must match: requestor, tool, arguments (key order does not matter)."""
    return call.requestor, call.name, canonical_arguments(call.arguments)


class CassetteRefusal(EndEpisode):
    """A request with no recorded result: ends the episode with ``no_recorded_result``."""

    def __init__(self, call: ToolCall, reason: str, source: str | None):
        detail = _REASON_TEXT[reason]
        text = (
            f"Error: no recorded result for {call.name}({canonical_arguments(call.arguments)}): {detail}"
            f"{f' (cassette {source})' if source else ''}"
        )
        mark = {"reason": reason, "tool": call.name, "arguments": call.arguments, "by": "cassette"}
        super().__init__(NO_RECORDED_RESULT, {"error": text[len("Error: ") :]}, refused_message(call, text, mark))
        self.reason = reason
        self.call = call


class Cassette(ToolBackend):
    """Recorded results served per request, in recorded order; anything else is refused."""

    def __init__(self, recorded: list[RecordedResult], source: str | None = None, recording: str | None = None):
        self.recorded = list(recorded)
        self.source = source
        self.recording = recording
        self.queues: dict[tuple[str, str, str], deque[RecordedResult]] = {}
        for entry in self.recorded:
            self.queues.setdefault(request_key(entry.call), deque()).append(entry)
        self.tools = {(e.call.requestor, e.call.name) for e in self.recorded}
        self.served: list[tuple[str, int]] = []  # (new call id, recorded step)
        self.refusal: dict[str, Any] | None = None

    @classmethod
    def from_simulation(cls, sim: SimulationRun, task: Task | None = None, recording: str | None = None) -> Cassette:
        """The calls of a recorded simulation after the task's own history, with their results (by id)."""
        history = len(task.history) if task is not None and sim.graded_from == "messages" else 0  # ticks hold none
        messages = sim.trajectory[history:]
        offset = len(sim.trajectory) - len(messages)
        waiting: dict[str, ToolCall] = {}
        recorded: list[RecordedResult] = []
        for index, message in enumerate(messages, start=offset):
            if isinstance(message, ParticipantMessage):
                for call in message.tool_calls or []:
                    waiting[call.id] = call
            elif isinstance(message, ToolMessage) and message.id in waiting:
                recorded.append(RecordedResult(waiting.pop(message.id), message, index))
        return cls(recorded, sim.id, recording)

    @property
    def unused(self) -> int:
        return sum(len(q) for q in self.queues.values())

    def _reason(self, call: ToolCall) -> str:
        key = request_key(call)
        if key in self.queues or self.recorded and not self.unused:
            return PAST_END
        if (call.requestor, call.name) in self.tools:
            return DIFFERENT_ARGUMENTS
        return UNKNOWN_TOOL

    def call(self, tool_call: ToolCall) -> ToolMessage:
        queue = self.queues.get(request_key(tool_call))
        if not queue:
            refusal = CassetteRefusal(tool_call, self._reason(tool_call), self.source)
            self.refusal = {
                "reason": refusal.reason,
                "tool": tool_call.name,
                "arguments": tool_call.arguments,
                "call_id": tool_call.id,
            }
            raise refusal
        entry = queue.popleft()
        extra = {
            k: v
            for k, v in (entry.result.model_extra or {}).items()
            if k not in (CASSETTE_KEY, REFUSAL_KEY, DISCOVERED_KEY, DISCOVERED_HOW_KEY)
        }
        message = ToolMessage(
            id=tool_call.id,
            content=entry.result.content,
            requestor=tool_call.requestor,
            error=bool(entry.result.error),
            **extra,
        )
        setattr(message, CASSETTE_KEY, {"sim": self.source, "step": entry.step})
        self.served.append((tool_call.id, entry.step))
        return message

    def episode_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "recording": self.recording,
            "sim": self.source,
            "recorded": len(self.recorded),
            "served": len(self.served),
            "unused": self.unused,
        }
        if self.refusal is not None:
            info["refusal"] = self.refusal
        return {CASSETTE_KEY: info}


# --- running an agent over a recording ----------------------------------------------------------


@dataclass
class CassetteOutcome:
    """One new simulation of a cassette run and the recorded simulation it ran over."""

    source: str
    simulation: SimulationRun
    reward: float | None


@dataclass
class CassetteRunSummary:
    path: Path
    outcomes: list[CassetteOutcome] = field(default_factory=list)


def _selected(run: RunFile, sim_ids: list[str] | None, task_ids: list[str] | None) -> list[int]:
    if sim_ids:
        picked = []
        for sim_id in sim_ids:
            index = run.find(sim_id)
            if index is None:
                raise CassetteError(f"no simulation {sim_id!r} in {run.path}")
            picked.append(index)
    else:
        picked = list(range(len(run.entries)))
    if task_ids:
        picked = [i for i in picked if run.entries[i].task_id in task_ids]
    if not picked:
        raise CassetteError(f"{run.path}: no simulation to run over")
    return picked


async def run_cassettes(
    recording: Path | str,
    registry: DomainRegistry,
    agent: ParticipantSpec,
    user: ParticipantSpec,
    out: Path | str,
    options: EpisodeOptions | None = None,
    *,
    sim_ids: list[str] | None = None,
    task_ids: list[str] | None = None,
    domain: str | None = None,
    judge: Any = None,
    listener: Callable[[CassetteOutcome], None] | None = None,
) -> CassetteRunSummary:
    """Run ``agent`` and ``user`` over each selected simulation of ``recording`` with its cassette.

    Each new simulation is evaluated like any rollout and saved at once in a
    tau2 results file at ``out``; ``options.seed`` (default: each recorded
    simulation's own) is the model sampling seed; the recording's mode (solo or not) is kept.
    """
    options = options if options is not None else EpisodeOptions()
    out = Path(out)
    if out.exists():
        raise CassetteError(f"{out} already exists; choose another --out")
    try:
        run = open_run(recording)
    except RunFileError as exc:
        raise CassetteError(str(exc)) from None
    run.resolve(RunResolver(registry, domain).resolve(run))  # a recording naming no domain: --domain, its tools
    name = run.domain
    if name is None:
        problem = run.resolution.problem if run.resolution is not None else None
        raise CassetteError(f"{run.path}: {problem or 'cannot tell the domain of the recording'}")
    if domain is not None and split_variant(domain)[0] != split_variant(name)[0]:
        raise CassetteError(f"the recording is of domain '{name}', not '{domain}'")
    check_spec(agent, "agent")
    if not run.solo:
        check_spec(user, "user")
    check_credentials([(agent, "agent")] + ([] if run.solo else [(user, "user")]), judge)
    dom, variant = registry.resolve(name)
    indices = _selected(run, sim_ids, task_ids)
    tasks: dict[str, Task] = {}
    for index in indices:
        task_id = run.entries[index].task_id
        task = run.tasks().get(task_id)
        if task is None:
            try:
                task = dom.tasks().get(task_id)
            except DomainError:
                task = None
        if task is None:
            raise CassetteError(
                f"task {task_id!r} of simulation {run.entries[index].id} is neither in the "
                f"recording nor in domain '{dom.name}'"
            )
        tasks[task_id] = task
    sample_env = dom.new_environment(solo=run.solo, variant=variant)
    options = dataclasses.replace(options, protocol=protocol_tools(options.protocol, dom, name, sample_env))
    sample_task = next(iter(tasks.values()))
    info = run_info(
        domain_name=sample_env.domain_name,
        policy=sample_env.policy,
        agent=build_agent(agent, sample_task, sample_env, solo=run.solo, protocol=options.protocol).info(),
        user=build_user(user, sample_task, sample_env, solo=run.solo, protocol=options.protocol).info(),
        num_trials=1,
        max_steps=options.max_steps,
        max_errors=options.max_errors,
        seed=options.seed,
        env_info=sample_env.recorded_info(),
        extra={
            "solo": run.solo,
            "cassette": {"recording": str(run.path), "simulations": [run.entries[i].id for i in indices]},
            "protocol": options.protocol.record(with_agent=not agent.is_scripted and not agent.is_human),
        },
    )
    writer = ResultsWriter(out, info, list(tasks.values()), secret_values(agent.llm_args, user.llm_args))
    evaluator = SimulationEvaluator(dom, variant, options.protocol.run_judge(judge))
    summary = CassetteRunSummary(writer.path)
    writer.write()
    for index in indices:
        recorded = run.simulation(index)
        task = tasks[recorded.task_id]
        env = dom.new_environment(solo=run.solo, variant=variant)
        env.bind_task(task)
        cassette = Cassette.from_simulation(recorded, task, str(run.path))
        episode = dataclasses.replace(
            options, solo=run.solo, seed=recorded.seed if options.seed is None else options.seed
        )
        orchestrator = Orchestrator(
            env,
            task,
            build_agent(agent, task, env, solo=run.solo, protocol=options.protocol),
            build_user(user, task, env, solo=run.solo, protocol=options.protocol),
            episode,
            trial=recorded.trial,
            tools=cassette,
        )
        sim = await orchestrator.run()
        scored = await asyncio.to_thread(evaluator.apply, sim, task, run.solo)
        writer.add(sim)
        outcome = CassetteOutcome(recorded.id, sim, scored.reward)
        summary.outcomes.append(outcome)
        if listener is not None:
            listener(outcome)
    return summary
