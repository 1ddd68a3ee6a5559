"""banking_knowledge in the TUI: unlocks, gives and wrapper calls on the trajectory, the tool logs on the State
tab, and the retrieval variant as a runs-table column and filter."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tau_tui.analysis import Analyzer, SimAnalysis
from tau_tui.catalog import RunFilter
from tau_tui.domains import DomainRegistry
from tau_tui.model.io import open_run
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import COLUMN_BY_KEY
from tau_tui.views.panels import render_tool_log
from tau_tui.views.render import RenderContext, render_step
from tau_tui.views.trajectory_doc import TrajectoryDoc

from ..conftest import CORPUS
from .conftest import settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


@runtime_checkable
class UnlockingToolkit(Protocol):
    """banking_knowledge's agent toolkit (loaded from the domain folder, so not a class to import here)."""

    unlocked: dict[str, dict[str, Any]]


GOLD = CORPUS / "generated" / "tau2-gold_banking_knowledge.json"
SIM = "gold-banking_knowledge-task_026-gold"  # gives a user tool (step 5), unlocks an agent tool (step 15)


def analysed() -> tuple[SimAnalysis, TrajectoryDoc]:
    run = open_run(GOLD)
    index = run.find(SIM)
    assert index is not None
    analysis = Analyzer(DomainRegistry(CORPUS)).analyze(run, index)
    return analysis, TrajectoryDoc(run.simulation(index).trajectory, analysis.timeline)


def text_at(doc: TrajectoryDoc, step: int, expanded: bool = False) -> str:
    return render_step(doc.steps[step], RenderContext(140, expanded=expanded)).plain


def test_unlocks_gives_and_wrapper_calls_are_marked_on_the_trajectory() -> None:
    analysis, doc = analysed()
    assert [(d.tool, d.step, d.side, d.how) for d in analysis.timeline.discoveries] == [
        ("submit_cash_back_dispute_0589", 5, "user", "give"),
        ("update_transaction_rewards_3847", 15, "assistant", "unlock"),
    ]
    assert doc.targets["discovery"] == [5, 15]
    assert "✦ given to the user submit_cash_back_dispute_0589" in text_at(doc, 5)
    assert "✦ unlocked update_transaction_rewards_3847" in text_at(doc, 15)
    user_call = next(c for c in doc.calls if c.name == "call_discoverable_user_tool")
    assert user_call.discoverable and user_call.discovered_at == 5
    assert "runs discoverable tool submit_cash_back_dispute_0589, made available at step 5" in text_at(
        doc, user_call.call_step, expanded=True
    )
    agent_call = next(c for c in doc.calls if c.name == "call_discoverable_agent_tool")
    assert agent_call.record is not None
    assert agent_call.record.via == "update_transaction_rewards_3847" and agent_call.discovered_at == 15
    assert not next(c for c in doc.calls if c.name == "log_verification").discoverable


def test_the_state_tab_lists_what_is_unlocked_and_the_hashed_logs() -> None:
    analysis, doc = analysed()
    early_log = render_tool_log(analysis.timeline, analysis.timeline.state_at(4), 4)
    assert early_log is not None
    early = early_log.plain
    assert "✦" not in early and "log agent_discoverable_tools (0, hashed)" in early
    late_log = render_tool_log(analysis.timeline, analysis.timeline.state_at(len(doc) - 1), len(doc) - 1)
    assert late_log is not None
    late = late_log.plain
    assert "submit_cash_back_dispute_0589  given to the user at step 5" in late
    assert "update_transaction_rewards_3847  unlocked by the agent at step 15" in late
    assert "log agent_discoverable_tools (1, hashed)" in late and '"status":"CALLED"' in late
    assert "log user_discoverable_tools (1, hashed)" in late


def test_other_domains_have_no_tool_log() -> None:
    from tau_tui.replay import replay

    domain = DomainRegistry(CORPUS).get("mock")
    timeline = replay([], None, lambda solo: domain.new_environment())
    assert render_tool_log(timeline, timeline.final, 0) is None


async def _rollout(tmp_path: Path, variant: str) -> Path:
    from tau_tui.rollout.factory import ParticipantSpec
    from tau_tui.rollout.session import Episode

    domain = DomainRegistry(CORPUS).get("banking_knowledge")
    episode = Episode(
        domain, variant, domain.tasks()["task_001"], ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user")
    )
    await episode.run(evaluate=False)
    return episode.save(tmp_path / f"{variant}.json")


async def test_retrieval_variant_is_a_column_and_a_filter(make_app: MakeApp, tmp_path: Path) -> None:
    for variant in ("bm25_grep", "grep_only"):
        await _rollout(tmp_path, variant)
    assert "retrieval" in COLUMN_BY_KEY
    app = make_app([tmp_path])
    async with app.run_test(size=(200, 45)) as pilot:
        await settle(pilot)
        assert sorted(r.retrieval for r in app.session.catalog.rows) == ["bm25_grep", "grep_only"]
        assert app.session.catalog.values("retrieval") == [("bm25_grep", 1), ("grep_only", 1)]
        screen = app.runs_screen
        screen.set_filter(RunFilter(retrieval="grep_only"))
        assert [r.retrieval for r in screen.query_one(RunTable).rows] == ["grep_only"]
        assert "retrieval:grep_only" in RunFilter(retrieval="grep_only").chips()


async def test_a_live_episode_marks_unlocks_and_gives_without_listing_the_tools() -> None:
    """Live results carry the marks (the play screen shows them); the agent still reaches them by the wrappers."""
    from tau_tui.rollout.agents import GoldAgent
    from tau_tui.rollout.factory import ParticipantSpec
    from tau_tui.rollout.session import Episode
    from tau_tui.rollout.users import ScriptedUser

    domain = DomainRegistry(CORPUS).get("banking_knowledge")
    episode = Episode(
        domain, None, domain.tasks()["task_026"], ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user")
    )
    sim = await episode.run(evaluate=False)
    assert sim.info is not None
    steps = sim.info["discovered_tools"]
    assert set(steps) == {"submit_cash_back_dispute_0589", "update_transaction_rewards_3847"}
    live = TrajectoryDoc(sim.trajectory, live=True)
    assert "✦ given to the user submit_cash_back_dispute_0589" in text_at(live, steps["submit_cash_back_dispute_0589"])
    assert "✦ unlocked update_transaction_rewards_3847" in text_at(live, steps["update_transaction_rewards_3847"])
    assert isinstance(episode.agent, GoldAgent) and isinstance(episode.user, ScriptedUser)
    assert "update_transaction_rewards_3847" not in episode.agent.brief.tool_names
    assert "unlock_discoverable_agent_tool" in episode.agent.brief.tool_names
    assert "submit_cash_back_dispute_0589" not in episode.user.brief.tool_names


def test_a_recording_cannot_make_up_an_unlocked_tool_name() -> None:
    from tau_tui.model.messages import AssistantMessage, ToolCall, ToolMessage
    from tau_tui.replay import replay

    domain = DomainRegistry(CORPUS).get("banking_knowledge")
    bogus = "evil\x1b[2Jname"
    call = ToolCall(id="c1", name="unlock_discoverable_agent_tool", arguments={"agent_tool_name": bogus})
    messages = [
        AssistantMessage(role="assistant", content=None, tool_calls=[call]),
        ToolMessage(id="c1", role="tool", content=f"Tool unlocked: {bogus}\nDescription: x", requestor="assistant"),
    ]
    timeline = replay(messages, None, lambda solo: domain.new_environment())
    assert timeline.discoveries == []


async def test_a_fork_after_an_unlock_keeps_the_tool_unlocked() -> None:
    """The unlock lives with the episode: a fork rebuilds it by replaying the history's unlock call."""
    from tau_tui.rollout.factory import ParticipantSpec
    from tau_tui.rollout.session import Episode, fork_history

    domain = DomainRegistry(CORPUS).get("banking_knowledge")
    run = open_run(GOLD)
    index = run.find(SIM)
    assert index is not None
    sim = run.simulation(index)
    history = fork_history(sim.trajectory, 16)  # just after "Tool unlocked: update_transaction_rewards_3847"
    episode = Episode(
        domain,
        None,
        domain.tasks()["task_026"],
        ParticipantSpec("scripted/gold"),
        ParticipantSpec("scripted/user"),
        history=history,
    )
    forked = await episode.run(evaluate=False)
    assert isinstance(episode.env.agent, UnlockingToolkit)
    assert "update_transaction_rewards_3847" in episode.env.agent.unlocked
    later = [m.text for m in forked.trajectory[len(history) :] if m.role == "tool"]
    assert later and not any("has not been unlocked" in text for text in later)
