"""Making new trajectories: rollouts by models or scripts, and sessions with a person on one side.

Layers inside this package (model calls go through ``tau_tui.llm``):

- ``participants``: the ``Participant`` interface and the briefs (what each side may know);
- ``agents`` / ``users``: LLM, scripted (``scripted/gold``, ``scripted/user``) and human participants;
- ``human``: the turn requests and replies a UI exchanges with a human participant;
- ``orchestrator``: one episode with tau2's turn semantics → ``SimulationRun`` (tool calls go through
  ``tau_tui.env.EpisodeTools``: the task's fault plan, per-episode attempt counters);
- ``cassette``: an episode against a recording's tool results instead of a live environment;
- ``scripted``: an agent that follows a fixed list of steps (demo recordings, tests, cassette runs);
- ``evaluation``: scoring a finished simulation with our evaluator;
- ``records``: results files (run info, secrets kept out, atomic incremental saves);
- ``runner``: tasks × k trials, concurrency, progress events, resume;
- ``session``: ``PlaySession`` (a person plays one side) and forks.
"""

from tau_tui.llm.client import RetryPolicy
from tau_tui.rollout.factory import HUMAN, ParticipantSpec, ParticipantSpecError, build_agent, build_user
from tau_tui.rollout.human import HumanReply, QueueSource, ToolRequest, TurnRequest
from tau_tui.rollout.orchestrator import (
    EndEpisode,
    EpisodeEnded,
    EpisodeOptions,
    HistoryError,
    MessageAdded,
    Orchestrator,
)
from tau_tui.rollout.participants import AgentBrief, Participant, UserBrief, agent_brief, user_brief
from tau_tui.rollout.runner import (
    LLMRetried,
    RunConfig,
    RunError,
    RunFinished,
    Runner,
    RunStarted,
    RunSummary,
    SimulationFinished,
    SimulationMessage,
    SimulationPlaced,
    SimulationStarted,
    WorkerLost,
    WorkersStarted,
    trial_seeds,
)
from tau_tui.rollout.session import Episode, PlaySession, continue_episode, fork_history

__all__ = [
    "HUMAN",
    "AgentBrief",
    "EndEpisode",
    "Episode",
    "EpisodeEnded",
    "EpisodeOptions",
    "HistoryError",
    "HumanReply",
    "LLMRetried",
    "MessageAdded",
    "Orchestrator",
    "Participant",
    "ParticipantSpec",
    "ParticipantSpecError",
    "PlaySession",
    "QueueSource",
    "RetryPolicy",
    "RunConfig",
    "RunError",
    "RunFinished",
    "RunStarted",
    "RunSummary",
    "Runner",
    "SimulationFinished",
    "SimulationMessage",
    "SimulationPlaced",
    "SimulationStarted",
    "ToolRequest",
    "TurnRequest",
    "UserBrief",
    "WorkerLost",
    "WorkersStarted",
    "agent_brief",
    "build_agent",
    "build_user",
    "continue_episode",
    "fork_history",
    "trial_seeds",
    "user_brief",
]
