"""``RunTally.apply``: the one fold of runner events into progress (tau-tui run and the TUI format it)."""

from pathlib import Path

from tau_tui.model.results import SimulationRun
from tau_tui.rollout.orchestrator import MessageAdded
from tau_tui.rollout.progress import RunTally
from tau_tui.rollout.runner import (
    LLMRetried,
    RunFinished,
    RunStarted,
    RunSummary,
    SimulationFinished,
    SimulationStarted,
)

PATH = Path("out.json")


def _finished(task_id: str, reward: float | None, completed: int) -> SimulationFinished:
    sim = SimulationRun(id=f"sim-{task_id}", task_id=task_id, termination_reason="user_stop")
    return SimulationFinished(task_id, 0, 7, sim, reward, completed, 5)


def test_a_resumed_run_is_folded_into_counts_and_an_average():
    tally = RunTally()
    assert tally.average is None and not tally.finished
    assert tally.apply(RunStarted(PATH, total=5, already_done=2, pending=3))
    assert (tally.total, tally.done, tally.already_done) == (5, 2, 2)
    for task_id in ("a", "b", "c"):
        tally.apply(SimulationStarted(task_id, 0, 7))
    assert tally.running == 3
    tally.apply(LLMRetried("a", 0, "agent", 1, 0.5, "rate limited"))
    tally.apply(_finished("a", 1.0, 3))
    tally.apply(_finished("b", None, 4))
    tally.apply(_finished("c", 0.0, 5))
    assert (tally.done, tally.running, tally.unscored, tally.retries) == (5, 0, 1, 1)
    assert tally.rewards == [1.0, 0.0] and tally.average == 0.5
    assert tally.apply(RunFinished(PATH, RunSummary(PATH, 5, 2)))
    assert tally.finished and tally.running == 0


def test_other_events_leave_the_tally_alone_and_running_never_goes_below_zero():
    tally = RunTally()
    assert not tally.apply(MessageAdded(None, 0))  # type: ignore[arg-type]
    assert not tally.apply(object())
    tally.apply(_finished("a", 1.0, 1))  # a finish whose start was not seen (a listener attached late)
    assert tally.running == 0 and tally.done == 1
    assert tally == RunTally(done=1, rewards=[1.0])


def test_over_ray_each_finished_simulation_names_its_node_and_the_end_counts_them_per_node():
    import io

    from tau_tui.rollout.console import RunProgress

    stream = io.StringIO()
    progress = RunProgress(stream=stream)
    events = [RunStarted(PATH, total=3, already_done=0, pending=3)]
    for completed, node in enumerate(["host/1f2e3d4c", "host/9a8b7c6d", "host/1f2e3d4c"], 1):
        finished = _finished(f"t{completed}", 1.0, completed)
        events.append(SimulationFinished(**{**finished.__dict__, "node": node}))
    with progress:
        for event in [*events, RunFinished(PATH, RunSummary(PATH, 3, 0))]:
            progress(event)
    shown = stream.getvalue()
    assert "task t2 trial 0: reward 1 · user_stop · 0 messages · on host/9a8b7c6d" in shown
    assert "simulations per node: host/1f2e3d4c 2, host/9a8b7c6d 1" in shown
    assert progress.tally.by_node == {"host/1f2e3d4c": 2, "host/9a8b7c6d": 1}
