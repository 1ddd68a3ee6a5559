"""Rollouts over Ray from the TUI: the form's "run on" choice, and the runs screen's line of nodes.

The Pilot tests use a fake remote (``Runner.remote``'s duck type) that runs each unit here and says it ran on
one of two nodes, one of which dies: no Ray is needed. The last test launches a real one through the session's
``RolloutController`` (``ray.init(num_cpus=2)``), skipped when the ``ray`` extra is missing.
"""

from __future__ import annotations

import asyncio
import faulthandler
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from rich.console import Console
from textual.widget import Widget
from textual.widgets import Select

from tau_tui.rollout import SimulationPlaced, WorkerLost, WorkersStarted
from tau_tui.rollout.progress import RunTally
from tau_tui.rollout.records import sim_to_dict
from tau_tui.tui.screens.rollout import RolloutScreen
from tau_tui.views.live import node_line
from tau_tui.workspace import Workspace

from .conftest import open_rollout_form, set_input, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tau_tui.model.tasks import Task
    from tau_tui.tui.app import TauTuiApp
    from tests.tui.conftest import MakeApp

SMALL, BIG = (80, 24), (160, 45)
NODES = ("node-a/1f2e3d4c", "node-b/9a8b7c6d")


class TwoNodes:
    """A ``Runner.remote`` that runs each unit in this process and reports it as run on ``NODES``, round robin;
    the fourth unit sent to node b finds its worker dead (as ``RayRollout`` reports it)."""

    def __init__(self, workers: int | None) -> None:
        self.workers = workers
        self.slots = 2
        self.sent = 0
        self.closed = False
        self.runner: Any = None
        self.dead = False

    async def start(self, runner: Any) -> None:
        self.runner = runner
        runner.emit(WorkersStarted(NODES))

    async def finish(self, task: Any, trial: int, seed: int) -> tuple[dict[str, Any], float | None, str]:
        node = NODES[self.sent % 2] if not self.dead else NODES[0]
        self.sent += 1
        self.runner.emit(SimulationPlaced(task.id, trial, seed, node))
        await asyncio.sleep(0.01)
        if node == NODES[1] and self.sent >= 4:
            self.dead = True
            self.runner.emit(WorkerLost(node, "The actor died unexpectedly"))
            raise RuntimeError("the Ray worker died (The actor died unexpectedly)")
        sim, reward = await self.runner.finish_unit(task, trial, seed)
        return sim_to_dict(sim, self.runner.secrets), reward, node

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def two_nodes(monkeypatch: pytest.MonkeyPatch) -> list[TwoNodes]:
    """The workspace's ``rollout_remote("ray")`` gives a ``TwoNodes``; the form offers Ray as if installed."""
    made: list[TwoNodes] = []

    def remote(self: Workspace, kind: str = "local", workers: int | None = None) -> TwoNodes | None:
        if kind != "ray":
            return None
        made.append(TwoNodes(workers))
        return made[-1]

    monkeypatch.setattr(Workspace, "rollout_remote", remote)
    monkeypatch.setattr("tau_tui.tui.screens.rollout.ray_missing", lambda: None)
    return made


def drawn(widget: Widget) -> str:
    """What a line widget shows, rendered at its width."""
    console = Console(width=widget.size.width, record=True, file=io.StringIO())
    console.print(widget.render())
    return console.export_text().rstrip("\n")


async def _rollout_over_two_nodes(app: TauTuiApp, pilot: Pilot[None], out: Path) -> None:
    form = await open_rollout_form(pilot)
    assert form.query_one("#r-workers").disabled  # in the TUI, workers are Ray actors (a local rollout runs here)
    form.query_one("#r-executor", Select).value = "ray"
    await pilot.pause()
    assert not form.query_one("#r-workers").disabled
    await set_input(pilot, "#r-workers", "2")
    await set_input(pilot, "#r-k", "1")
    await set_input(pilot, "#r-out", str(out))
    await pilot.press("ctrl+s")
    assert app.screen is app.runs_screen
    await wait_until(
        pilot,
        lambda: app.session.rollouts.progress is not None and not app.session.rollouts.progress.active,
        "the rollout",
    )
    await settle(pilot)


@pytest.mark.parametrize("size", [SMALL, BIG])
async def test_a_rollout_over_two_nodes_shows_each_node_and_marks_the_one_that_died(
    make_app: MakeApp, tmp_path: Path, two_nodes: list[TwoNodes], size: tuple[int, int]
) -> None:
    app = make_app(runs_dir=tmp_path)
    out = tmp_path / "nodes.json"
    async with app.run_test(size=size) as pilot:
        await _rollout_over_two_nodes(app, pilot, out)
        (remote,) = two_nodes
        assert remote.workers == 2 and remote.closed  # the form's workers reached rollout_remote; let go at the end
        progress = app.session.rollouts.progress
        assert progress is not None
        assert progress.finished and progress.done == 10
        a, b = progress.nodes[NODES[0]], progress.nodes[NODES[1]]
        assert (b.dead, b.lost, b.done) == (True, 1, 1) and (a.dead, a.done, a.lost) == (False, 8, 0)
        line = app.runs_screen.query_one("#rollout-nodes")
        assert line.display
        shown = drawn(line)
        assert len(shown) <= size[0]
        # the dead node first, both named in full at either size
        assert shown == f" nodes  {NODES[1]}: died · 1 done · 1 lost │ {NODES[0]}: 8 done"
        rows = app.session.catalog.rows_of(out)
        assert sorted(r.termination for r in rows).count("infrastructure_error") == 1


async def test_without_ray_the_form_says_so_and_runs_here(
    make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tau_tui.tui.screens.rollout.ray_missing", lambda: "Ray needs the optional extra 'ray'")
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        form = await open_rollout_form(pilot)
        executor = form.query_one("#r-executor", Select)
        assert executor.disabled and executor.value == "local"
        assert "Ray needs the optional extra 'ray'" in str(form.query_one("#r-executor-hint").render())
        await set_input(pilot, "#r-out", str(tmp_path / "here.json"))
        assert form.plan().executor == "local"


async def test_the_form_refuses_zero_workers(make_app: MakeApp, tmp_path: Path, two_nodes: list[TwoNodes]) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        form = await open_rollout_form(pilot)
        form.query_one("#r-executor", Select).value = "ray"
        await pilot.pause()
        await set_input(pilot, "#r-workers", "0")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, RolloutScreen)
        assert "workers: at least 1" in str(form.query_one("#r-error").render())


def test_a_run_request_names_a_bad_executor_or_worker_count_as_its_front_end_does() -> None:
    from tau_tui.workspace import FORM_LABELS, RequestError, RunRequest

    form = RunRequest("mock", "scripted/gold", "scripted/user", executor="ray", workers="0", labels=dict(FORM_LABELS))
    with pytest.raises(RequestError, match=r"^workers: at least 1"):
        form.validate()
    with pytest.raises(RequestError, match=r"^--executor: 'dask' is not one of local, ray"):
        RunRequest("mock", "scripted/gold", "scripted/user", executor="dask").validate()
    RunRequest("mock", "scripted/gold", "scripted/user", executor="ray", workers="").validate()  # empty: default


def _many(count: int, dead: int = 0) -> RunTally:
    tally = RunTally()
    names = tuple(f"host-{i:02d}/{i:08x}" for i in range(count))
    tally.apply(WorkersStarted(names))
    for i, name in enumerate(names):
        for unit in range(i % 3 + 1):
            tally.apply(SimulationPlaced(f"t{i}-{unit}", 0, 1, name))
    for name in names[:dead]:
        tally.apply(WorkerLost(name, ""))
    return tally


def test_many_nodes_show_the_top_few_and_how_many_more_fit_to_the_width() -> None:
    tally = _many(12, dead=1)
    for width in (80, 160, 240):
        text = node_line(tally, width).plain
        assert len(text) <= width, (width, text)
        shown = text.count("host-")
        assert text.endswith(f"│ +{12 - shown} more"), text
        assert text.startswith(" nodes  host-00/00000000: died")  # the dead node first, whatever the width
    assert node_line(tally, 80).plain.count("host-") < node_line(tally, 160).plain.count("host-")
    everything = node_line(_many(2), 200).plain
    assert "more" not in everything and everything.count("host-") == 2


def test_a_long_node_name_is_clipped_in_the_middle_and_dead_nodes_left_out_are_counted() -> None:
    tally = RunTally()
    long = "a-very-long-host-name.example.internal/0123abcd"
    tally.apply(WorkersStarted((long, "b", "c")))
    tally.apply(WorkerLost("b", ""))
    tally.apply(WorkerLost("c", ""))
    text = node_line(tally, 40).plain
    assert text == " nodes  b: died · 0 done │ +2 more (1 died)"
    wide = node_line(tally, 200).plain
    assert "a-very-long…nal/0123abcd: 0 done" in wide


class NoDescriptor(io.StringIO):
    """A captured stream as the TUI's (Textual's print capture): no file descriptor."""

    def fileno(self) -> int:
        return -1


@pytest.mark.corpus
async def test_a_rollout_launched_by_the_controller_runs_on_real_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's ``RolloutController`` with a plan whose executor is Ray, while prints are captured as in the
    TUI: it starts a local instance itself, the episodes run on its actors (``workers`` x ``concurrency`` at
    once), each simulation names its node, the tally counts them, and the instance is let go at the end."""
    ray = pytest.importorskip("ray", reason="the optional extra 'ray' is not installed (pip install 'tau-tui[ray]')")
    from tau_tui.config import Settings
    from tau_tui.session.rollouts import RolloutController
    from tau_tui.workspace import RunRequest
    from tests.conftest import CORPUS, corpus_required

    corpus_required()
    assert not ray.is_initialized()
    workspace = Workspace(Settings(tau2_data=CORPUS, protocol="own", runs_dir=tmp_path))
    request = RunRequest("mock", "scripted/gold", "scripted/user", concurrency=2, executor="ray", workers=2)
    plan = workspace.run_plan(request)
    controller = RolloutController(workspace)
    controller.start(plan)
    events: list[Any] = []

    def listen(event: Any) -> None:
        events.append(event)
        controller.fold(event)

    from tau_tui.workers.pool import RayRollout

    finish, flying = RayRollout.finish, [0]

    async def counted(self: RayRollout, task: Task, trial: int, seed: int) -> tuple[dict[str, Any], float | None, str]:
        flying.append(flying[-1] + 1)
        try:
            return await finish(self, task, trial, seed)
        finally:
            flying.append(flying[-1] - 1)

    monkeypatch.setattr(RayRollout, "finish", counted)
    monkeypatch.setattr("sys.stdout", NoDescriptor())  # ray.init enables faulthandler on sys.stderr when
    monkeypatch.setattr("sys.stderr", NoDescriptor())  # it is off, as in the TUI (pytest turns it on)
    enabled = faulthandler.is_enabled()
    faulthandler.disable()
    try:
        error = await controller.run(plan, listen)
    finally:
        monkeypatch.undo()  # the streams (and the counting) as they were
        faulthandler.disable()
        if enabled:
            assert sys.__stderr__ is not None
            faulthandler.enable(file=sys.__stderr__)
    assert error is None
    assert not ray.is_initialized()  # the instance it started is shut down
    progress = controller.progress
    assert progress is not None and progress.finished and progress.done == 10
    ((name, node),) = progress.nodes.items()  # one machine: one node, two workers
    assert (node.workers, node.done, node.running, node.lost) == (2, 10, 0, 0)
    assert progress.by_node == {name: 10}
    assert sum(isinstance(e, SimulationPlaced) for e in events) == 10
    assert max(flying) == 4  # units at once: 2 workers x --concurrency 2, not one per worker
