"""``RunTally.apply``: the one fold of runner events into progress (tau-tui run and the TUI format it)."""

from pathlib import Path

from tau_tui.model.results import SimulationRun
from tau_tui.rollout.orchestrator import MessageAdded
from tau_tui.rollout.progress import RunTally, lost_text, node_parts
from tau_tui.rollout.runner import (
    LLMRetried,
    RunFinished,
    RunStarted,
    RunSummary,
    SimulationFinished,
    SimulationPlaced,
    SimulationStarted,
    WorkerLost,
    WorkersStarted,
)

PATH = Path("out.json")


def _finished(task_id: str, reward: float | None, completed: int) -> SimulationFinished:
    sim = SimulationRun(id=f"sim-{task_id}", task_id=task_id, termination_reason="user_stop")
    return SimulationFinished(task_id, 0, 7, sim, reward, completed, 5)


def test_a_resumed_run_is_folded_into_counts_and_an_average() -> None:
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


def test_other_events_leave_the_tally_alone_and_running_never_goes_below_zero() -> None:
    tally = RunTally()
    assert not tally.apply(MessageAdded(None, 0))  # type: ignore[arg-type]
    assert not tally.apply(object())
    tally.apply(_finished("a", 1.0, 1))  # a finish whose start was not seen (a listener attached late)
    assert tally.running == 0 and tally.done == 1
    assert tally == RunTally(done=1, rewards=[1.0])


def test_over_ray_each_finished_simulation_names_its_node_and_the_end_counts_them_per_node() -> None:
    import io

    from tau_tui.rollout.console import RunProgress

    stream = io.StringIO()
    progress = RunProgress(stream=stream)
    events: list[RunStarted | SimulationFinished] = [RunStarted(PATH, total=3, already_done=0, pending=3)]
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


# --- per node (over Ray) --------------------------------------------------------------------------------


def _sent(task_id: str, node: str) -> SimulationPlaced:
    return SimulationPlaced(task_id, 0, 7, node)


def _back(task_id: str, completed: int, node: str | None, termination: str = "user_stop") -> SimulationFinished:
    sim = SimulationRun(id=f"sim-{task_id}", task_id=task_id, termination_reason=termination)
    return SimulationFinished(task_id, 0, 7, sim, None if node is None else 1.0, completed, 5, node)


def test_each_node_counts_what_it_runs_and_what_it_finished() -> None:
    tally = RunTally()
    assert tally.apply(WorkersStarted(("a", "a", "b")))
    tally.apply(RunStarted(PATH, total=5, already_done=0, pending=5))
    for task_id, node in [("t1", "a"), ("t2", "b"), ("t3", "a")]:
        tally.apply(SimulationStarted(task_id, 0, 7))
        assert tally.apply(_sent(task_id, node))
    assert {name: (n.running, n.done, n.workers) for name, n in tally.nodes.items()} == {"a": (2, 0, 2), "b": (1, 0, 1)}
    tally.apply(_back("t1", 1, "a"))
    tally.apply(_back("t2", 2, "b"))
    assert (tally.nodes["a"].running, tally.nodes["a"].done) == (1, 1)
    assert (tally.nodes["b"].running, tally.nodes["b"].done) == (0, 1)
    assert tally.by_node == {"a": 1, "b": 1}  # as before: finished simulations per node
    tally.apply(RunFinished(PATH, RunSummary(PATH, 5, 0)))
    assert all(n.running == 0 for n in tally.nodes.values())


def test_a_node_whose_workers_died_is_marked_and_its_lost_units_counted_there() -> None:
    tally = RunTally()
    tally.apply(WorkersStarted(("a", "b", "b")))
    for task_id, node in [("t1", "a"), ("t2", "b"), ("t3", "b")]:
        tally.apply(SimulationStarted(task_id, 0, 7))
        tally.apply(_sent(task_id, node))
    tally.apply(_back("t2", 1, "b"))
    assert tally.apply(WorkerLost("a", "The actor died unexpectedly"))
    tally.apply(_back("t1", 2, None, "infrastructure_error"))  # a lost unit comes back without its node
    a, b = tally.nodes["a"], tally.nodes["b"]
    assert (a.dead, a.lost, a.done, a.running) == (True, 1, 0, 0)
    assert not b.dead and tally.dead_nodes == 1
    assert node_parts(a) == [("died", "dead"), ("0 done", "done"), ("1 lost", "lost")]
    assert node_parts(b) == [("1 done", "done"), ("1 running", "running")]
    tally.apply(WorkerLost("b", ""))
    assert not tally.nodes["b"].dead  # one of its two workers lives
    assert node_parts(tally.nodes["b"])[0] == ("1/2 workers died", "dead")
    assert [name for name, _ in tally.ranked_nodes()] == ["a", "b"]  # the dead one first
    assert lost_text(WorkerLost("a", "The actor died")) == (
        "the Ray worker on a died (The actor died): its units are saved as infrastructure errors, "
        "which tau-tui run --resume runs again"
    )


def test_nodes_are_ranked_dead_first_then_by_work_then_by_name() -> None:
    tally = RunTally()
    tally.apply(WorkersStarted(("c", "b", "a", "d")))
    for i, node in enumerate(["a", "b", "b", "c"]):
        tally.apply(_sent(f"t{i}", node))
    tally.apply(WorkerLost("d", ""))
    assert [name for name, _ in tally.ranked_nodes()] == ["d", "b", "a", "c"]


def test_a_local_run_has_no_nodes() -> None:
    tally = RunTally()
    tally.apply(SimulationStarted("t1", 0, 7))
    tally.apply(_back("t1", 1, None))
    assert tally.nodes == {} and tally.by_node == {}


def test_the_console_lists_each_node_under_the_bar_while_the_run_goes() -> None:
    import io

    from tau_tui.rollout.console import RunProgress, node_lines

    tally = RunTally()
    tally.apply(WorkersStarted(tuple(f"n{i}" for i in range(8))))
    for i in range(8):
        tally.apply(_sent(f"t{i}", f"n{i}"))
    tally.apply(_back("t0", 1, "n0"))
    tally.apply(WorkerLost("n7", "gone"))
    lines = node_lines(tally, limit=3)
    assert lines == [
        "  on n7: [bold red]died[/] · 0 done · [cyan]1 running[/]",
        "  on n0: 1 done",
        "  on n1: 0 done · [cyan]1 running[/]",
        "  +5 more nodes: 0 done · 5 running",
    ]
    stream = io.StringIO()
    progress = RunProgress(stream=stream, per_simulation=False)
    with progress:
        progress(WorkersStarted(("host/1f2e3d4c", "host/9a8b7c6d")))
        progress(RunStarted(PATH, total=2, already_done=0, pending=2))
        progress(SimulationStarted("t1", 0, 7))
        progress(_sent("t1", "host/1f2e3d4c"))
        progress.progress.refresh()  # what the live display draws now, mid-run (stderr is no terminal here)
        mid_run = list(progress.progress.get_renderables())
        progress(WorkerLost("host/9a8b7c6d", "The actor died"))
    assert [str(r) for r in mid_run[1:]] == ["  on host/1f2e3d4c: 0 done · 1 running", "  on host/9a8b7c6d: 0 done"]
    shown = stream.getvalue()
    assert "the Ray worker on host/9a8b7c6d died (The actor died)" in shown
    assert "  on host/9a8b7c6d: died · 0 done" in shown  # the last drawing, at the end
