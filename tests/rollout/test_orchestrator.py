"""The orchestrator's turn semantics (tau2 §7), with participants that say exactly what a test wants."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from tau_tui.env.domain import Domain
from tau_tui.env.environment import Environment
from tau_tui.env.store import Store
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage, ToolCall, ToolMessage, UserMessage
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.rollout.agents import GoldAgent
from tau_tui.rollout.orchestrator import GREETING, EndEpisode, EpisodeEnded, HistoryError, MessageAdded, Orchestrator
from tau_tui.rollout.participants import AGENT, USER, Participant, agent_brief, user_brief
from tau_tui.rollout.runner import trial_seeds
from tau_tui.rollout.users import NoUser, ScriptedUser
from tests.helpers import split_options

# What a scripted participant says next: a message, or a function of the incoming messages.
Line = ParticipantMessage | Callable[[list[Message]], ParticipantMessage]


class Lines(Participant):
    """Answers from a list; an entry is a message or a function of the incoming messages."""

    def __init__(self, side: str, replies: list[Line], delay: float = 0.0) -> None:
        super().__init__()
        self.side = side  # type: ignore[misc]  # Participant.side is a ClassVar; this double takes either side
        self.replies = list(replies)
        self.seen: list[list[Message]] = []
        self.delay = delay
        self.seeds: list[int | None] = []

    def set_seed(self, seed: int | None) -> None:
        self.seeds.append(seed)

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        self.seen.append(list(incoming))
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self.replies.pop(0) if self.replies else self._default()
        return reply(incoming) if callable(reply) else reply

    def _default(self) -> ParticipantMessage:
        cls: type[AssistantMessage] | type[UserMessage] = AssistantMessage if self.side == AGENT else UserMessage
        return cls(content="ok", cost=0.0)

    def is_stop(self, message: ParticipantMessage) -> bool:
        text = message.content or ""
        if self.side == USER:
            return not message.is_tool_call and any(
                t in text for t in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
            )
        return "###STOP###" in text


def agent_says(text: str) -> AssistantMessage:
    return AssistantMessage(content=text, cost=0.001)


def agent_calls(*calls: tuple[str, dict[str, Any], str]) -> AssistantMessage:
    return AssistantMessage(
        content=None, cost=0.002, tool_calls=[ToolCall(id=cid, name=name, arguments=args) for name, args, cid in calls]
    )


def user_says(text: str) -> UserMessage:
    return UserMessage(content=text, cost=0.0005)


def tool_ids(messages: list[Message]) -> list[str]:
    """The ids of ``messages``, every one a tool result."""
    ids = []
    for m in messages:
        assert isinstance(m, ToolMessage)
        ids.append(m.id)
    return ids


def timestamps(messages: list[Message]) -> list[str]:
    """The timestamps of ``messages``, every one stamped."""
    stamps = []
    for m in messages:
        assert m.timestamp is not None
        stamps.append(m.timestamp)
    return stamps


def agent_db(env: Environment) -> Store:
    assert env.agent is not None and env.agent.db is not None
    return env.agent.db


def user_db(env: Environment) -> Store:
    assert env.user is not None and env.user.db is not None
    return env.user.db


def run(env: Environment, task: Task, agent: Participant, user: Participant, **kwargs: Any) -> SimulationRun:
    options, rest = split_options(kwargs)
    return asyncio.run(Orchestrator(env, task, agent, user, options, **rest).run())


@pytest.fixture
def env(mock_domain: Domain) -> Environment:
    return mock_domain.new_environment()


@pytest.fixture
def plain_task() -> Task:
    return Task.model_validate({"id": "t", "user_scenario": {"instructions": "finish task_1"}})


def test_greeting_calls_in_order_and_one_result_each(env: Environment, plain_task: Task) -> None:
    agent = Lines(
        AGENT,
        [
            agent_calls(
                ("update_task_status", {"task_id": "task_1", "status": "completed"}, "a"), ("get_users", {}, "b")
            ),
            agent_says("Done, anything else?"),
        ],
    )
    user = Lines(USER, [user_says("Please finish task_1"), user_says("No thanks ###STOP###")])
    sim = run(env, plain_task, agent, user)
    assert sim.messages is not None
    roles = [(m.role, getattr(m, "id", None)) for m in sim.messages]
    assert roles == [
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("tool", "b"),
        ("assistant", None),
        ("user", None),
    ]
    first = sim.messages[0]
    assert isinstance(first, AssistantMessage)
    assert first.content == GREETING and first.cost == 0.0
    assert sim.termination_reason == "user_stop"
    assert [m.turn_idx for m in sim.messages] == list(range(7))
    stamps = timestamps(sim.messages)
    assert stamps == sorted(stamps) and len(set(stamps)) == 7
    assert '"status": "completed"' in sim.messages[3].content
    # The agent got both results together, after its call; the user never saw the call or the results.
    assert tool_ids(agent.seen[1]) == ["a", "b"]
    assert all(not isinstance(m, ToolMessage) for turn in user.seen for m in turn)
    assert sim.agent_cost == pytest.approx(0.0 + 0.002 + 0.001)
    assert sim.user_cost == pytest.approx(0.001)
    assert sim.model_extra is not None  # policy is a field tau-tui adds to tau2's record
    assert sim.mode == "half_duplex" and sim.model_extra["policy"] == env.policy
    assert agent_db(env).tasks["task_1"]["status"] == "completed"


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_each_user_stop_token_ends_with_user_stop(env: Environment, plain_task: Task, token: str) -> None:
    sim = run(env, plain_task, Lines(AGENT, []), Lines(USER, [user_says(f"bye {token}")]))
    assert sim.termination_reason == "user_stop"
    assert sim.messages is not None
    assert len(sim.messages) == 2


def test_user_tool_calls_go_to_the_user_toolkit_and_back_to_the_user(env: Environment, plain_task: Task) -> None:
    user = Lines(
        USER,
        [
            UserMessage(
                content=None, tool_calls=[ToolCall(id="u1", name="check_notifications", arguments={})], cost=0.0
            ),
            user_says("I see a notification. ###STOP###"),
        ],
    )
    agent = Lines(AGENT, [])
    sim = run(env, plain_task, agent, user)
    assert sim.messages is not None
    tool = sim.messages[2]
    assert isinstance(tool, ToolMessage) and tool.requestor == "user" and not tool.error
    user_call = sim.messages[1]
    assert isinstance(user_call, UserMessage) and user_call.tool_calls is not None
    assert user_call.tool_calls[0].requestor == "user"
    result = user.seen[1][0]
    assert isinstance(result, ToolMessage) and result.id == "u1"
    assert agent.seen == []  # the agent never spoke again: the user's call and its result are not for it


def test_max_steps_counts_environment_steps(env: Environment, plain_task: Task) -> None:
    agent = Lines(AGENT, [agent_calls(("get_users", {}, f"c{i}")) for i in range(10)])
    user = Lines(USER, [user_says("hi")])
    sim = run(env, plain_task, agent, user, max_steps=5)
    assert sim.termination_reason == "max_steps"
    assert sim.messages is not None
    # The greeting, then 5 steps: user, agent call, its result, agent call, its result.
    assert [m.role for m in sim.messages] == ["assistant", "user", "assistant", "tool", "assistant", "tool"]


def test_too_many_errors_wins_over_max_steps(env: Environment, plain_task: Task) -> None:
    agent = Lines(AGENT, [agent_calls(("no_such_tool", {}, f"c{i}")) for i in range(10)])
    sim = run(env, plain_task, agent, Lines(USER, [user_says("hi")]), max_errors=2, max_steps=5)
    assert sim.termination_reason == "too_many_errors"
    assert sim.messages is not None
    errors = [m for m in sim.messages if isinstance(m, ToolMessage)]
    assert [m.error for m in errors] == [True, True]
    assert errors[0].content == "Error: Tool 'no_such_tool' not found."


def test_wall_clock_timeout_interrupts_a_slow_participant(env: Environment, plain_task: Task) -> None:
    sim = run(env, plain_task, Lines(AGENT, [], delay=5.0), Lines(USER, [user_says("hi")]), timeout=0.3)
    assert sim.termination_reason == "timeout"
    assert sim.duration is not None and sim.duration < 3
    assert sim.info is not None and "within the timeout" in sim.info["error"]


def test_empty_messages_are_participant_errors(env: Environment, plain_task: Task) -> None:
    sim = run(env, plain_task, Lines(AGENT, [AssistantMessage(content="  ", cost=0.0)]), Lines(USER, [user_says("hi")]))
    assert sim.termination_reason == "agent_error"
    sim = run(env, plain_task, Lines(AGENT, []), Lines(USER, [UserMessage(content=None, cost=0.0)]))
    assert sim.termination_reason == "user_error"


def test_unexpected_failure_is_recorded_not_raised(env: Environment, plain_task: Task) -> None:
    def boom(incoming: list[Message]) -> ParticipantMessage:
        raise RuntimeError("participant bug")

    sim = run(env, plain_task, Lines(AGENT, [boom]), Lines(USER, [user_says("hi")]))
    assert sim.termination_reason == "unexpected_error"
    assert sim.info is not None
    assert "participant bug" in sim.info["error"] and "Traceback" in sim.info["error_traceback"]


def test_events_report_every_message_and_the_end(env: Environment, plain_task: Task) -> None:
    events: list[MessageAdded | EpisodeEnded] = []
    run(env, plain_task, Lines(AGENT, []), Lines(USER, [user_says("###STOP###")]), listener=events.append)
    assert [type(e) for e in events] == [MessageAdded, MessageAdded, EpisodeEnded]
    assert isinstance(events[-1], EpisodeEnded)
    assert events[-1].termination == "user_stop"


def test_seed_reaches_both_participants_and_the_record(env: Environment, plain_task: Task) -> None:
    agent, user = Lines(AGENT, []), Lines(USER, [user_says("###STOP###")])
    sim = run(env, plain_task, agent, user, seed=1234, trial=2)
    assert agent.seeds == [1234] and user.seeds == [1234]
    assert sim.seed == 1234 and sim.trial == 2


def test_trial_seeds_are_tau2s() -> None:
    random.seed(300)
    expected = [random.randint(0, 1_000_000) for _ in range(4)]
    assert trial_seeds(300, 4) == expected
    assert trial_seeds(300, 2) == expected[:2]


# --- message history ----------------------------------------------------------------------


def test_history_ending_with_agent_text_goes_to_the_user(env: Environment, mock_tasks: dict[str, Task]) -> None:
    task = mock_tasks["update_task_with_message_history"]
    user = Lines(USER, [user_says("###STOP###")])
    agent = Lines(AGENT, [])
    sim = run(env, task, agent, user)
    assert sim.termination_reason == "user_stop"
    assert sim.messages is not None
    history = task.history
    assert [m.role for m in sim.messages[: len(history)]] == [m.role for m in history]
    assert sim.messages[0].content == history[0].content
    assert all(m.role != "assistant" or m.content != GREETING for m in sim.messages)  # no greeting
    # The history's create_task was replayed: task_2 exists before anyone speaks.
    assert "task_2" in agent_db(env).tasks
    # The user saw its part of the history (its own message, the agent's texts; no calls, no results).
    assert [m.role for m in user.history[:2]] == ["user", "assistant"]
    assert agent.seen == []
    stamps = timestamps(sim.messages)
    assert stamps == sorted(stamps)
    assert sim.agent_cost is None  # history messages carry no cost, as in tau2


def _history_task(messages: list[dict[str, Any]]) -> Task:
    return Task.model_validate(
        {"id": "h", "user_scenario": {"instructions": "x"}, "initial_state": {"message_history": messages}}
    )


def test_history_ending_with_user_text_goes_to_the_agent(env: Environment) -> None:
    task = _history_task([{"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Finish task_1"}])
    agent = Lines(AGENT, [agent_says("done ###STOP###")])
    sim = run(env, task, agent, Lines(USER, []))
    assert agent.seen[0][0].content == "Finish task_1"
    assert sim.termination_reason == "agent_stop"


def test_history_ending_with_a_tool_result_goes_to_its_requestor(env: Environment) -> None:
    task = _history_task(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "h1", "name": "get_users", "arguments": {}}]},
            {"role": "tool", "id": "h1", "content": "[]", "requestor": "assistant"},
        ]
    )
    agent = Lines(AGENT, [agent_says("###STOP###")])
    run(env, task, agent, Lines(USER, []))
    assert tool_ids(agent.seen[0]) == ["h1"]


def test_history_ending_with_pending_calls_runs_them_first(env: Environment) -> None:
    task = _history_task(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "h1",
                        "name": "update_task_status",
                        "arguments": {"task_id": "task_1", "status": "completed"},
                    }
                ],
            },
        ]
    )
    agent = Lines(AGENT, [agent_says("###STOP###")])
    sim = run(env, task, agent, Lines(USER, []))
    assert sim.messages is not None
    result = sim.messages[2]
    assert result.role == "tool" and isinstance(result, ToolMessage) and result.id == "h1"
    assert agent_db(env).tasks["task_1"]["status"] == "completed"


def test_history_is_replayed_strictly(env: Environment) -> None:
    task = _history_task(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "h1",
                        "name": "update_task_status",
                        "arguments": {"task_id": "task_1", "status": "completed"},
                    }
                ],
            },
            {"role": "tool", "id": "h1", "content": '{"task_id": "task_1", "status": "tampered"}'},
            {"role": "assistant", "content": "done"},
        ]
    )
    with pytest.raises(HistoryError, match="replays to a different result"):
        run(env, task, Lines(AGENT, []), Lines(USER, []))


@pytest.mark.parametrize(
    "messages, problem",
    [
        ([{"role": "tool", "id": "x", "content": "?"}], "follows no tool call"),
        (
            [
                {
                    "role": "user",
                    "content": None,
                    "tool_calls": [{"id": "u", "name": "check_notifications", "arguments": {}}],
                },
                {"role": "tool", "id": "u", "content": "[]", "requestor": "assistant"},
            ],
            "expected user",
        ),
        ([{"role": "system", "content": "s"}], "cannot be in a message history"),
    ],
)
def test_broken_histories_are_refused(env: Environment, messages: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(HistoryError, match=problem):
        run(env, _history_task(messages), Lines(AGENT, []), Lines(USER, []))


def test_a_stop_in_the_history_ends_at_once(env: Environment) -> None:
    task = _history_task([{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "bye ###STOP###"}])
    sim = run(env, task, Lines(AGENT, []), Lines(USER, []))
    assert sim.messages is not None
    assert sim.termination_reason == "user_stop" and len(sim.messages) == 2


# --- solo mode --------------------------------------------------------------------------------


def test_solo_mode_gold_agent_uses_user_tools_and_stops_with_done(mock_domain: Domain) -> None:
    task = Task.model_validate(
        {
            "id": "solo",
            "ticket": "Dismiss the notification and finish task_1.",
            "evaluation_criteria": {
                "actions": [
                    {
                        "action_id": "1",
                        "name": "update_task_status",
                        "arguments": {"task_id": "task_1", "status": "completed"},
                    },
                    {
                        "action_id": "2",
                        "requestor": "user",
                        "name": "dismiss_notification",
                        "arguments": {"notification_id": "notif_1"},
                    },
                ]
            },
        }
    )
    env = mock_domain.new_environment(solo=True)
    brief = agent_brief(task, env, solo=True)
    assert "dismiss_notification" in brief.tool_names and "done" in brief.tool_names
    assert brief.ticket == task.ticket
    sim = run(env, task, GoldAgent(task, brief), NoUser(), solo=True)
    assert sim.termination_reason == "agent_stop"
    assert sim.messages is not None
    first = sim.messages[0]
    assert (
        first.role == "assistant" and isinstance(first, AssistantMessage) and first.tool_calls
    )  # no greeting in solo mode
    assert all(m.role != "user" for m in sim.messages)
    assert sim.messages[-1].content == "###STOP###"
    assert user_db(env).notifications["notif_1"]["status"] == "read"


def test_solo_mode_text_message_is_an_agent_error(mock_domain: Domain, plain_task: Task) -> None:
    env = mock_domain.new_environment(solo=True)
    sim = run(env, plain_task, Lines(AGENT, [agent_says("Hello?")]), NoUser(), solo=True)
    assert sim.termination_reason == "agent_error"
    env = mock_domain.new_environment(solo=True)
    agent = Lines(AGENT, [agent_calls(("get_users", {}, "c")), agent_says("hello")])
    sim = run(env, plain_task, agent, NoUser(), solo=True)
    assert sim.termination_reason == "agent_error"


# --- scripted participants ------------------------------------------------------------------


def test_gold_agent_routes_user_actions_to_the_scripted_user(mock_domain: Domain) -> None:
    task = Task.model_validate(
        {
            "id": "dual",
            "user_scenario": {
                "instructions": {
                    "domain": "mock",
                    "reason_for_call": "My inbox is full.",
                    "known_info": "I am user_1.",
                    "task_instructions": "t",
                }
            },
            "evaluation_criteria": {
                "actions": [
                    {
                        "action_id": "1",
                        "requestor": "user",
                        "name": "dismiss_notification",
                        "arguments": {"notification_id": "notif_1"},
                    },
                    {
                        "action_id": "2",
                        "name": "update_task_status",
                        "arguments": {"task_id": "task_1", "status": "completed"},
                    },
                ],
                "communicate_info": ["notification dismissed"],
            },
        }
    )
    env = mock_domain.new_environment()
    sim = run(env, task, GoldAgent(task, agent_brief(task, env)), ScriptedUser(user_brief(task, env)))
    assert sim.termination_reason == "user_stop"
    assert sim.messages is not None
    texts = [(m.role, m.content) for m in sim.messages if m.content]
    assert texts[1] == ("user", "My inbox is full.")
    user_call = next(m for m in sim.messages if isinstance(m, UserMessage) and m.role == "user" and m.tool_calls)
    assert isinstance(user_call, UserMessage) and user_call.tool_calls is not None
    assert user_call.tool_calls[0].name == "dismiss_notification"
    assert user_call.tool_calls[0].arguments == {"notification_id": "notif_1"}
    assert user_call.tool_calls[0].requestor == "user"
    assert user_db(env).notifications["notif_1"]["status"] == "read"
    assert "notification dismissed" in sim.messages[-2].content
    assert sim.messages[-1].content.endswith("###STOP###")


def test_scripted_user_answers_questions_from_known_info_then_gives_up(mock_domain: Domain) -> None:
    task = Task.model_validate(
        {
            "id": "q",
            "user_scenario": {
                "instructions": {
                    "domain": "mock",
                    "reason_for_call": "Help me.",
                    "known_info": "My id is user_1.",
                    "unknown_info": "You do not know your task ids.",
                    "task_instructions": "Ask for help.",
                }
            },
        }
    )
    env = mock_domain.new_environment()
    agent = Lines(AGENT, [agent_says("What is your id?"), agent_says("What is your task id?")] * 3)
    sim = run(env, task, agent, ScriptedUser(user_brief(task, env)))
    assert sim.messages is not None
    user_texts = [m.content for m in sim.messages if m.role == "user"]
    assert user_texts[0] == "Help me."
    assert user_texts[1] == "Sure. My id is user_1."
    assert "task ids" not in " ".join(user_texts)  # never volunteers unknown info
    assert user_texts[-1].endswith("###OUT-OF-SCOPE###") and sim.termination_reason == "user_stop"


def test_anything_called_can_end_the_episode_with_its_own_reason(
    env: Environment, plain_task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook cassettes and fault plans use: an environment wrapper refuses a call."""

    def refuse(call: ToolCall) -> ToolMessage:
        raise EndEpisode("no_recorded_result", {"error": f"no recorded result for {call.name}"})

    monkeypatch.setattr(env, "call", refuse)
    agent = Lines(AGENT, [agent_calls(("get_users", {}, "c1"))])
    sim = run(env, plain_task, agent, Lines(USER, [user_says("hi")]))
    assert sim.termination_reason == "no_recorded_result"
    assert sim.info == {"error": "no recorded result for get_users"}
