"""One episode between an agent, a user and the environment, with tau2's half-duplex turn semantics.

- Without a message history the agent opens with "Hi! How can I help you
  today?" (cost 0) and the user speaks next; in solo mode the agent's first
  turn opens the episode instead.
- A message with tool calls goes to the environment: the calls run in order
  and each gets one tool message, right after the calling message; the
  results go back to the caller. A message without tool calls goes to the
  other side.
- Every routed message is one step, environment steps included. After each
  step (unless a call is on its way to the environment): ``max_steps`` ends
  the episode, then ``max_errors`` (error tool results so far; it wins when
  both trip), then the wall-clock ``timeout`` (also enforced while waiting
  for a participant).
- The user ends it with ###STOP###, ###TRANSFER### or ###OUT-OF-SCOPE###
  (user_stop); agents that can stop (solo, scripted, human) with ###STOP###
  (agent_stop). In solo mode an agent message that is not a tool call or a
  stop is an agent_error.
- A task's message history is replayed strictly to set the environment (a
  mismatch or a broken structure raises ``HistoryError``), stamped one second
  apart ending now, and decides who speaks next from its last message. A
  history ending in tool calls without results (a fork taken right after a
  call) has those calls executed first.
- Participant failures end the episode with their own reason: a malformed
  tool call or an empty message → agent_error / user_error; a provider
  failure after retries → infrastructure_error; a context overflow →
  context_window_exceeded; anything unexpected → unexpected_error. Details go
  in the simulation's ``info``. Anything the orchestrator calls may raise
  ``EndEpisode`` to end the episode with a reason of its own; a tool backend
  may hand it the result message of the refused call, which joins the
  trajectory (the other calls of that message get "not run" results, so
  every call keeps its result).
- Tool calls go through a ``ToolBackend``: by default ``EpisodeTools`` (the
  task's fault plan, attempt counters that start at zero with every
  episode, then the environment), or a cassette of recorded results. Injected
  faults are marked on their tool messages (``injected_fault``) and listed in
  ``info["faults"]``; the episode's seeds (instance, faults, sampling) go in
  ``info["seeds"]`` when the task has a fault plan or an instance seed.
- Discoverable tools are not listed to a side until a result of one of its
  READ tools names them; the result message then carries
  ``discovered_tools`` and the side gets their schemas from its next turn.

The result is a tau2 ``SimulationRun`` (messages carry turn_idx, timestamps,
cost and usage); it is not evaluated here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import traceback
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable

from tau_tui.env.discovery import DISCOVERED_HOW_KEY, DISCOVERED_KEY, kit_of, revealed_tools
from tau_tui.env.environment import Environment
from tau_tui.env.episode import EpisodeTools, ToolBackend, not_run_message
from tau_tui.env.faults import FAULT_PLAN_KEY, INSTANCE_SEED_KEY, FaultPlan, fault_mark, task_seeds
from tau_tui.env.tool_schema import tool_schema
from tau_tui.llm.credentials import MissingCredentials
from tau_tui.llm.failures import LLMError, MalformedToolCall
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage, ToolCall, ToolMessage, UserMessage
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.replay import FATAL_IN_TAU2, replay
from tau_tui.rollout.participants import AGENT, USER, Participant, ParticipantError, agent_sees, user_sees
from tau_tui.rollout.protocol import OWN_PROTOCOL, ProtocolTexts

GREETING = "Hi! How can I help you today?"
ENV = "env"


class HistoryError(ValueError):
    """A task's message history cannot start an episode (tau2 raises the same cases)."""


@dataclass(frozen=True)
class MessageAdded:
    """A message joined the trajectory (``from_history``: it came from the task or fork history)."""

    message: Message
    index: int
    from_history: bool = False


@dataclass(frozen=True)
class EpisodeEnded:
    termination: str


EpisodeListener = Callable[[Any], None]


class EndEpisode(Exception):
    """Raised by anything the orchestrator calls (a participant, a tool backend such as a cassette)
    to end the episode with its own termination reason and details for ``info``.

    ``message``: a tool backend's answer to the call it refused; it joins the trajectory before the end.
    """

    def __init__(self, termination: str, info: dict[str, Any] | None = None, message: ToolMessage | None = None):
        super().__init__(termination)
        self.termination = termination
        self.info = info or {}
        self.message = message


def validate_history(history: list[Message]) -> None:
    """tau2's checks: only agent/user/tool messages; n tool calls are followed by n results of that requestor."""
    expected = 0
    requestor: str | None = None
    for index, message in enumerate(history):
        if isinstance(message, (AssistantMessage, UserMessage)):
            if expected > 0:
                raise HistoryError(
                    f"message {index}: {expected} tool result(s) missing before this {message.role} message"
                )
            if message.is_tool_call:
                expected, requestor = len(message.tool_calls or []), message.role
            else:
                requestor = None
        elif isinstance(message, ToolMessage):
            if expected == 0 or requestor is None:
                raise HistoryError(f"message {index}: a tool result that follows no tool call")
            if message.requestor != requestor:
                raise HistoryError(f"message {index}: tool result for {message.requestor}, expected {requestor}")
            expected -= 1
        else:
            raise HistoryError(f"message {index}: a {message.role!r} message cannot be in a message history")


@dataclass(frozen=True)
class EpisodeOptions:
    """How an episode runs, one value from the workspace through the episode to the orchestrator."""

    seed: int | None = None  # the model sampling seed recorded with the simulation
    max_steps: int = 200
    max_errors: int = 10
    timeout: float | None = None  # seconds a side may take to answer (None: no limit)
    solo: bool = False  # no user: the agent works from the ticket
    strict_history: bool = True  # a fork's recorded prefix is replayed strictly (tau2's rule)
    protocol: ProtocolTexts = OWN_PROTOCOL  # whose prompts the LLM sides get (``protocol.resolve_protocol``)

    def with_seed(self, seed: int | None) -> EpisodeOptions:
        return dataclasses.replace(self, seed=seed)


class Orchestrator:
    """Runs one episode; ``await run()`` returns the ``SimulationRun``.

    ``history`` replaces the task's own message history (a fork: a prefix of
    a recorded trajectory, which already starts with the task's history).
    ``listener`` gets ``MessageAdded`` for every message and ``EpisodeEnded``
    at the end (a TUI posts them as messages; ``env`` is the live state).
    ``tools`` replaces the live backend (``EpisodeTools`` over ``env`` with the
    task's fault plan), e.g. with a cassette.
    """

    def __init__(
        self,
        env: Environment,
        task: Task,
        agent: Participant,
        user: Participant,
        options: EpisodeOptions | None = None,
        *,
        history: list[Message] | None = None,
        sim_id: str | None = None,
        trial: int | None = None,
        listener: EpisodeListener | None = None,
        tools: ToolBackend | None = None,
    ):
        self.env = env
        self.fault_plan = FaultPlan.of_task(task)
        self.tools: ToolBackend = tools if tools is not None else EpisodeTools(env, self.fault_plan)
        self.discovered: dict[str, int] = {}  # discoverable tool -> trajectory index of the result naming it
        self.task = task
        self.agent = agent
        self.user = user
        options = options if options is not None else EpisodeOptions()
        self.options = options
        self.max_steps = options.max_steps
        self.max_errors = options.max_errors
        self.timeout = options.timeout
        self.seed = options.seed
        self.solo = options.solo
        self.source_history = task.history if history is None else list(history)
        self.strict_history = options.strict_history
        self.sim_id = sim_id or str(uuid.uuid4())
        self.trial = trial
        self.listener = listener

        self.trajectory: list[Message] = []
        self.from_role: str | None = None
        self.to_role: str | None = None
        self.incoming: list[Message] = []
        self.pending_calls: ParticipantMessage | None = None
        self.step_count = 0
        self.num_errors = 0
        self.done = False
        self.termination: str | None = None
        self.info: dict[str, Any] = {}
        self._last_stamp: datetime | None = None
        self._t0: float | None = None

    # --- bookkeeping ----------------------------------------------------------
    def _emit(self, event: Any) -> None:
        if self.listener is not None:
            self.listener(event)

    def _stamp(self) -> str:
        """Now, strictly after the previous message (so sorting by timestamp keeps the order)."""
        now = datetime.now()
        if self._last_stamp is not None and now <= self._last_stamp:
            now = self._last_stamp + timedelta(microseconds=1)
        self._last_stamp = now
        return now.isoformat()

    def _append(self, message: Message, from_history: bool = False) -> None:
        if not from_history:
            message.timestamp = self._stamp()
        message.turn_idx = len(self.trajectory)
        self.trajectory.append(message)
        self._emit(MessageAdded(message, message.turn_idx, from_history))

    def _elapsed(self) -> float:
        return 0.0 if self._t0 is None else time.perf_counter() - self._t0

    def _remaining(self) -> float | None:
        return None if self.timeout is None else max(0.0, self.timeout - self._elapsed())

    def _finish(self, termination: str) -> None:
        self.done = True
        self.termination = termination

    # --- start ----------------------------------------------------------------------
    def _load_history(self) -> list[Message]:
        history = [m.model_copy(deep=True) for m in self.source_history]
        start = datetime.now() - timedelta(seconds=len(history))
        for i, message in enumerate(history):
            message.turn_idx = None
            message.timestamp = (start + timedelta(seconds=i)).isoformat()
        if history:
            self._last_stamp = start + timedelta(seconds=len(history) - 1)
        return history

    def _set_state(self, history: list[Message]) -> None:
        """Initial data and actions, then the history's calls replayed strictly (tau2's ``set_state``)."""
        validate_history(history)
        replayed = history
        last = history[-1] if history else None
        if isinstance(last, (AssistantMessage, UserMessage)) and last.is_tool_call:
            replayed = history[:-1]
        timeline = replay(replayed, self.task, lambda _solo: self.env, self.solo)
        if not timeline.strict_ok and self.strict_history:
            if timeline.mismatches:
                first = timeline.mismatches[0]
                raise HistoryError(
                    f"history call {first.name!r} (message {first.result_step}) replays to a "
                    f"different result than recorded"
                )
            finding = next(f for f in timeline.findings if f.kind in FATAL_IN_TAU2)
            raise HistoryError(f"the initial state cannot be set up: {finding.message}")
        self.tools.prime(replayed)
        for found in timeline.discoveries:
            self._discover(found.tool, found.side, found.step, found.how)

    def _initialize(self) -> None:
        history = self._load_history()
        self._set_state(history)
        if self.seed is not None:
            self.agent.set_seed(self.seed)
            self.user.set_seed(self.seed)
        for message in history:
            self._append(message, from_history=True)
        if history:
            self._route_from_history(history)
        elif not self.solo:
            self.agent.start([])
            self.user.start([])
            greeting = AssistantMessage(content=GREETING, cost=0.0)
            self._append(greeting)
            self.agent.history.append(greeting)
            self.from_role, self.to_role, self.incoming = AGENT, USER, [greeting]
        else:
            self.agent.start([])
            self.user.start([])
            self.from_role, self.to_role, self.incoming = None, AGENT, []
        self.env.sync()

    def _route_from_history(self, history: list[Message]) -> None:
        last = history[-1]
        before = history[:-1]
        if isinstance(last, AssistantMessage):
            self.from_role = AGENT
            self.to_role = ENV if last.is_tool_call else USER
            self.agent.start([m for m in history if agent_sees(m)])
            self.user.start([m for m in before if user_sees(m)])
            if self.agent.is_stop(last):
                self._finish("agent_stop")
        elif isinstance(last, UserMessage):
            self.from_role = USER
            self.to_role = ENV if last.is_tool_call else AGENT
            self.user.start([m for m in history if user_sees(m)])
            self.agent.start([m for m in before if agent_sees(m)])
            if self.user.is_stop(last):
                self._finish("user_stop")
        elif isinstance(last, ToolMessage):
            self.from_role = ENV
            receiver = AGENT if last.requestor == "assistant" else USER
            self.to_role = receiver
            agent_part = before if receiver == AGENT else history
            user_part = before if receiver == USER else history
            self.agent.start([m for m in agent_part if agent_sees(m)])
            self.user.start([m for m in user_part if user_sees(m)])
        else:
            raise HistoryError(
                f"the last history message must come from the agent, the user or a tool, not {last.role!r}"
            )
        if self.to_role == ENV:
            self.pending_calls = last  # type: ignore[assignment]
        else:
            self.incoming = [last]

    # --- turns ---------------------------------------------------------------------
    async def _ask(self, participant: Participant, side: str) -> ParticipantMessage:
        error_kind = "agent_error" if side == AGENT else "user_error"
        remaining = self._remaining()
        if remaining is not None and remaining <= 0:
            raise EndEpisode("timeout")
        try:
            reply = participant.respond(self.incoming)
            message = await (reply if remaining is None else asyncio.wait_for(reply, remaining))
        except TimeoutError:
            raise EndEpisode("timeout", {"error": f"the {side} did not answer within the timeout"}) from None
        except MissingCredentials:
            raise  # not this episode's end: the run stops
        except MalformedToolCall as exc:
            raise EndEpisode(
                error_kind,
                {"error": str(exc), "error_type": exc.error_type, "side": side, "malformed_reply": exc.details},
            ) from None
        except LLMError as exc:
            raise EndEpisode(
                exc.termination,
                {
                    "error": str(exc),
                    "error_type": exc.error_type,
                    "side": side,
                    **({"details": exc.details} if exc.details else {}),
                },
            ) from None
        except ParticipantError as exc:
            raise EndEpisode(error_kind, {"error": str(exc), "error_type": "ParticipantError", "side": side}) from None
        has_text = isinstance(message.content, str) and bool(message.content.strip())
        if not message.is_tool_call and not has_text:
            raise EndEpisode(error_kind, {"error": f"the {side} sent an empty message", "side": side})
        requestor = "assistant" if side == AGENT else "user"
        for call in message.tool_calls or []:
            call.requestor = requestor
        return message

    async def _first_solo_turn(self) -> None:
        """tau2's solo start: the agent's first message is part of initialisation (not a step)."""
        message = await self._ask(self.agent, AGENT)
        self._append(message)
        self.from_role = AGENT
        if message.is_tool_call:
            self.to_role, self.pending_calls = ENV, message
        else:
            self.to_role = USER
            self._finish("agent_stop" if self.agent.is_stop(message) else "agent_error")
            if self.termination == "agent_error":
                self.info["error"] = "the agent wrote a message in solo mode"

    async def _step(self) -> None:
        if self.to_role == USER:
            message = await self._ask(self.user, USER)
            if self.user.is_stop(message):
                self._finish("user_stop")
            self._append(message)
            self.from_role = USER
            self._route(message, AGENT)
        elif self.to_role == AGENT:
            message = await self._ask(self.agent, AGENT)
            if self.agent.is_stop(message):
                self._finish("agent_stop")
            self._append(message)
            self.from_role = AGENT
            self._route(message, USER)
            if self.to_role == USER and self.solo and not self.agent.is_stop(message):
                self._finish("agent_error")
                self.info["error"] = "the agent wrote a message in solo mode"
        elif self.to_role == ENV:
            self._run_tools()
        else:
            raise RuntimeError(f"nobody to talk to (from {self.from_role} to {self.to_role})")
        self.step_count += 1
        self.env.sync()

    def _route(self, message: ParticipantMessage, other: str) -> None:
        if message.is_tool_call:
            self.to_role, self.pending_calls = ENV, message
        else:
            self.to_role, self.incoming = other, [message]

    def _run_tools(self) -> None:
        message = self.pending_calls
        if message is None or not message.tool_calls:
            raise RuntimeError("a step to the environment without tool calls")
        results: list[Message] = []
        stop: EndEpisode | None = None
        for call in message.tool_calls:
            if stop is not None:
                result = not_run_message(call)
            else:
                try:
                    result = self.tools.call(call)
                except EndEpisode as end:
                    if end.message is None:
                        raise
                    stop, result = end, end.message
                self._note_discoveries(call, result)
            if result.error:
                self.num_errors += 1
            self._append(result)
            results.append(result)
        if stop is not None:
            raise stop
        self.pending_calls = None
        caller = self.from_role
        self.from_role, self.to_role, self.incoming = ENV, caller, results

    # --- discoverable tools --------------------------------------------------------------
    def _note_discoveries(self, call: ToolCall, result: ToolMessage) -> None:
        """Mark the discoverable tools a result names (before it joins the trajectory) and list them."""
        side = "user" if call.requestor == "user" else "assistant"
        found = [
            name
            for name in revealed_tools(self.env, call.name, side, result.text, bool(result.error))
            if name not in self.discovered
        ]
        # tools a wrapper domain's result unlocks or gives (banking): marked, but reached through the wrappers
        owner = kit_of(self.env, self.env.side_of(call.name) or side) if self.env.has_tool(call.name) else None
        made = [
            (to, name, how)
            for to, name, how in (
                owner.unlocks(call.name, call.arguments, result.text, bool(result.error)) if owner else []
            )
            if name not in self.discovered and name not in found
        ]
        if found or made:
            setattr(result, DISCOVERED_KEY, found + [name for _, name, _ in made])
            if made:
                setattr(result, DISCOVERED_HOW_KEY, {name: how for _, name, how in made})
            for name in found:
                self._discover(name, side, len(self.trajectory))
            for to, name, how in made:
                self._discover(name, to, len(self.trajectory), how)

    def _discover(self, name: str, side: str, step: int, how: str = "read") -> None:
        if name in self.discovered:
            return
        self.discovered[name] = step
        kit = kit_of(self.env, side)
        if how == "read" and kit is not None and kit.has_tool(name):
            participant = self.user if side == "user" else self.agent
            participant.add_tools([tool_schema(kit, name)])

    def _check_termination(self) -> None:
        """tau2's order: max steps, then max errors (wins), then the timeout; never while calls are pending."""
        if self.to_role == ENV:
            return
        if self.step_count >= self.max_steps:
            self._finish("max_steps")
        if self.num_errors >= self.max_errors:
            self._finish("too_many_errors")
        if not self.done and self.timeout is not None and self._elapsed() >= self.timeout:
            self._finish("timeout")

    # --- run ----------------------------------------------------------------------
    async def run(self) -> SimulationRun:
        start_time = datetime.now().isoformat()
        self._t0 = time.perf_counter()
        self._initialize()
        try:
            if not self.done and self.solo and self.from_role is None:
                await self._first_solo_turn()
            while not self.done:
                await self._step()
                self._check_termination()
        except EndEpisode as stop:
            self._finish(stop.termination)
            self.info.update(stop.info)
        except MissingCredentials:
            raise  # no key, or a refused one: nothing to record, every other episode would end the same
        except Exception as exc:  # noqa: BLE001 - recorded as the episode's end, with the traceback
            self._finish("unexpected_error")
            self.info.update(
                error=f"{type(exc).__name__}: {exc}",
                error_type=type(exc).__name__,
                error_traceback=traceback.format_exc(),
            )
        finally:
            for participant in (self.agent, self.user):
                try:
                    await participant.close()
                except Exception:  # noqa: BLE001 - closing never hides the result
                    pass
        self._emit(EpisodeEnded(self.termination or "unexpected_error"))
        return self._result(start_time)

    def _episode_info(self) -> dict[str, Any]:
        """What the episode adds to ``info``: seeds, injected faults, discoveries, the backend's notes."""
        extra = self.task.model_extra or {}
        out: dict[str, Any] = {}
        if FAULT_PLAN_KEY in extra or INSTANCE_SEED_KEY in extra:
            out["seeds"] = task_seeds(self.task, self.seed)
        injected = [
            {"step": index, "call_id": message.id, **mark}
            for index, message in enumerate(self.trajectory)
            if isinstance(message, ToolMessage) and (mark := fault_mark(message)) is not None
        ]
        if self.fault_plan is not None or injected:
            out["faults"] = {"seed": self.fault_plan.seed if self.fault_plan else None, "injected": injected}
        if self.discovered:
            out["discovered_tools"] = dict(self.discovered)
        out.update(self.tools.episode_info())
        return out

    def _result(self, start_time: str) -> SimulationRun:
        end_time = datetime.now().isoformat()
        for index, message in enumerate(self.trajectory):
            message.turn_idx = index
        self.info.update(self._episode_info())
        return SimulationRun(
            id=self.sim_id,
            task_id=self.task.id,
            timestamp=end_time,
            start_time=start_time,
            end_time=end_time,
            duration=self._elapsed(),
            termination_reason=self.termination,
            agent_cost=side_cost(self.trajectory, AssistantMessage),
            user_cost=side_cost(self.trajectory, UserMessage),
            reward_info=None,
            messages=list(self.trajectory),
            trial=self.trial,
            seed=self.seed,
            mode="half_duplex",
            info=self.info or None,
            policy=self.env.policy,
        )


def side_cost(messages: list[Message], kind: type) -> float | None:
    """tau2's per-side cost: the sum over that side's messages, None if any of them has no cost."""
    total = 0.0
    for message in messages:
        if isinstance(message, kind):
            cost = getattr(message, "cost", None)
            if cost is None:
                return None
            total += cost
    return total
