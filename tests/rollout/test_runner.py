"""The runner: tasks × k trials, concurrency, saving each simulation at once, resume, layouts."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.model.io import open_run
from tau_tui.model.messages import AssistantMessage, Message, ParticipantMessage
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.rollout import (
    ParticipantSpec,
    ParticipantSpecError,
    RunConfig,
    RunError,
    Runner,
    RunSummary,
    SimulationFinished,
    SimulationStarted,
    factory,
    trial_seeds,
)
from tau_tui.rollout.agents import GoldAgent
from tau_tui.rollout.participants import AgentBrief

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tau_tui.domains import DomainRegistry
    from tau_tui.rollout.records import ResultsWriter

# A simulation's key in a results file: (trial, task id, seed).
SimKey = tuple[int | None, str, int | None]

GOLD, USER = ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user")
TASKS = ["create_task_1", "update_task_1", "impossible_task_1"]


def config(**kwargs: Any) -> RunConfig:
    kwargs.setdefault("task_ids", list(TASKS))
    return RunConfig(domain="mock", agent=kwargs.pop("agent", GOLD), user=kwargs.pop("user", USER), **kwargs)


def run(registry: DomainRegistry, path: Path, cfg: RunConfig, **kwargs: Any) -> tuple[RunSummary, list[object]]:
    events: list[object] = []
    summary = asyncio.run(Runner(cfg, path, registry, listener=events.append, **kwargs).run())
    return summary, events


def keys(path: Path) -> Counter[SimKey]:
    return Counter((e.trial, e.task_id, e.seed) for e in open_run(path).entries)


def test_tasks_times_trials_with_tau2_seeds_in_tau2_order(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    summary, events = run(registry, path, config(num_trials=3, concurrency=1, seed=42))
    seeds = trial_seeds(42, 3)
    started = [(e.trial, e.task_id, e.seed) for e in events if isinstance(e, SimulationStarted)]
    assert started == [(trial, task, seeds[trial]) for trial in range(3) for task in TASKS]
    assert summary.completed == 9 and summary.rewards == [1.0] * 9
    assert keys(path) == Counter(started)
    data = json.loads(path.read_text())
    assert data["info"]["num_trials"] == 3 and data["info"]["seed"] == 42
    assert data["info"]["agent_info"] == {
        "implementation": "scripted_gold",
        "llm": "scripted/gold",
        "llm_args": {},
        "voice_settings": None,
    }
    assert data["info"]["environment_info"]["domain_name"] == "mock"
    assert [t["id"] for t in data["tasks"]] == TASKS
    assert all(s["reward_info"]["reward"] == 1.0 for s in data["simulations"])


def test_every_finished_simulation_is_on_disk_before_the_next_event(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    seen: list[tuple[int, bool, bool]] = []

    def listener(event: object) -> None:
        if isinstance(event, SimulationFinished):
            saved = json.loads(path.read_text())["simulations"]
            seen.append(
                (event.completed, len(saved) >= event.completed, event.simulation.id in {s["id"] for s in saved})
            )

    asyncio.run(Runner(config(num_trials=2, concurrency=2), path, registry, listener=listener).run())
    assert seen == [(i, True, True) for i in range(1, 7)]


def test_simulations_that_finish_during_a_save_are_saved_together(
    registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.rollout.records import ResultsWriter

    writes: list[int] = []
    write = ResultsWriter.write

    def slow_write(self: ResultsWriter) -> None:
        time.sleep(0.2)  # a big file: the other episodes finish meanwhile
        writes.append(len(self.simulations))
        write(self)

    monkeypatch.setattr(ResultsWriter, "write", slow_write)
    path = tmp_path / "run.json"
    summary = asyncio.run(Runner(config(num_trials=3, concurrency=3), path, registry).run())
    assert summary.completed == 9 and keys(path) == Counter(
        (trial, task, seed) for trial, seed in enumerate(trial_seeds(300, 3)) for task in TASKS
    )
    assert writes[0] == 0 and writes[-1] == 9 and writes == sorted(writes)
    assert len(writes) < 1 + 9  # the first write (no simulation yet), then fewer than one per simulation


def test_a_failed_save_fails_the_run(registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tau_tui.rollout.records import ResultsWriter

    def full_disk(self: ResultsWriter, sims: Iterable[SimulationRun]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ResultsWriter, "add_many", full_disk)
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(Runner(config(num_trials=2, concurrency=2), tmp_path / "run.json", registry).run())


class SlowGold(GoldAgent):
    running = 0
    peak = 0

    async def generate(self, incoming: list[Message]) -> ParticipantMessage:
        SlowGold.running += 1
        SlowGold.peak = max(SlowGold.peak, SlowGold.running)
        await asyncio.sleep(0.02)
        SlowGold.running -= 1
        return await super().generate(incoming)


def test_concurrency_limit(registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(factory.SCRIPTED_AGENTS, "scripted/slow", lambda task, brief, args: SlowGold(task, brief))
    SlowGold.peak = 0
    summary, _ = run(
        registry, tmp_path / "run.json", config(agent=ParticipantSpec("scripted/slow"), num_trials=4, concurrency=3)
    )
    assert summary.completed == 12
    assert SlowGold.peak == 3


def test_resume_runs_only_what_is_missing(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config(num_trials=2))
    full = json.loads(path.read_text())
    kept = full["simulations"][:2]
    partial = {**full, "simulations": kept}
    path.write_text(json.dumps(partial))

    summary, events = run(registry, path, config(num_trials=2), resume=True)
    started = [(e.trial, e.task_id) for e in events if isinstance(e, SimulationStarted)]
    assert len(started) == 4 and summary.already_done == 2 and summary.completed == 4
    final = json.loads(path.read_text())
    assert [s["id"] for s in final["simulations"][:2]] == [s["id"] for s in kept]
    assert keys(path) == keys_of(full)
    assert final["timestamp"] == full["timestamp"]


def keys_of(data: dict[str, Any]) -> Counter[SimKey]:
    return Counter((s["trial"], s["task_id"], s["seed"]) for s in data["simulations"])


def test_resume_reruns_infrastructure_errors_and_drops_them(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config())
    data = json.loads(path.read_text())
    broken = data["simulations"][1]
    broken.update(termination_reason="infrastructure_error", reward_info=None, messages=[])
    path.write_text(json.dumps(data))
    summary, events = run(registry, path, config(), resume=True)
    assert [e.task_id for e in events if isinstance(e, SimulationStarted)] == [broken["task_id"]]
    final = json.loads(path.read_text())
    assert broken["id"] not in {s["id"] for s in final["simulations"]}
    assert len(final["simulations"]) == 3 and all(s["reward_info"]["reward"] == 1.0 for s in final["simulations"])


def test_resume_with_more_trials_adds_them(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config(num_trials=1))
    summary, events = run(registry, path, config(num_trials=2), resume=True)
    assert {e.trial for e in events if isinstance(e, SimulationStarted)} == {1}
    assert len(open_run(path).entries) == 6


def test_refusals_before_anything_runs(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config())
    with pytest.raises(RunError, match="already exists; pass --resume"):
        Runner(config(), path, registry).prepare()
    with pytest.raises(RunError, match="agent 'scripted/gold'"):
        Runner(config(agent=ParticipantSpec("openai/other")), path, registry, resume=True).prepare()
    with pytest.raises(RunError, match="seed 300"):
        Runner(config(seed=1), path, registry, resume=True).prepare()
    with pytest.raises(RunError, match="no task 'nope'"):
        Runner(config(task_ids=["nope"]), tmp_path / "x.json", registry).prepare()
    with pytest.raises(ParticipantSpecError, match="no scripted agent 'scripted/oops'"):
        Runner(config(agent=ParticipantSpec("scripted/oops")), tmp_path / "x.json", registry).prepare()
    with pytest.raises(ParticipantSpecError, match="no scripted user 'scripted/gold'"):
        Runner(config(user=ParticipantSpec("scripted/gold")), tmp_path / "x.json", registry).prepare()
    with pytest.raises(RunError, match="tau-tui play"):
        Runner(config(user=ParticipantSpec("human")), tmp_path / "x.json", registry).prepare()
    assert not (tmp_path / "x.json").exists()


def test_resume_refuses_a_changed_task(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config())
    data = json.loads(path.read_text())
    data["tasks"][0]["evaluation_criteria"]["actions"][0]["arguments"]["title"] = "Other"
    path.write_text(json.dumps(data))
    with pytest.raises(RunError, match="task 'create_task_1' changed"):
        Runner(config(), path, registry, resume=True).prepare()


def test_dir_layout_and_its_resume(registry: DomainRegistry, tmp_path: Path) -> None:
    root = tmp_path / "rundir"
    run(registry, root, config(num_trials=2, layout="dir"))
    meta = json.loads((root / "results.json").read_text())
    files = sorted(p.stem for p in (root / "simulations").glob("*.json"))
    assert "simulations" not in meta
    assert sorted(e["id"] for e in meta["simulation_index"]) == files and len(files) == 6
    assert all(e["reward"] == 1.0 for e in meta["simulation_index"])
    loaded = open_run(root)
    assert len(loaded.entries) == 6 and not loaded.warnings

    gone = meta["simulation_index"][-1]["id"]
    (root / "simulations" / f"{gone}.json").unlink()
    meta["simulation_index"] = meta["simulation_index"][:-1]
    (root / "results.json").write_text(json.dumps(meta))
    summary, events = run(registry, root, config(num_trials=2), resume=True)
    assert summary.completed == 1
    assert len(list((root / "simulations").glob("*.json"))) == 6
    assert not open_run(root).warnings


def test_a_simulation_that_cannot_start_is_an_infrastructure_error(
    registry: DomainRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    runner = Runner(config(task_ids=["update_task_1"]), path, registry)
    runner.prepare()

    def broken(task: Task, brief: AgentBrief, args: dict[str, Any]) -> GoldAgent:
        raise RuntimeError("agent construction failed")

    monkeypatch.setitem(factory.SCRIPTED_AGENTS, "scripted/gold", broken)
    summary = asyncio.run(runner.run())
    sim = open_run(path).simulation(0)
    assert sim.termination_reason == "infrastructure_error" and sim.messages == []
    assert sim.info is not None and sim.reward_info is not None
    assert "agent construction failed" in sim.info["error"] and sim.reward_info.reward == 0.0
    assert summary.terminations["infrastructure_error"] == 1


def test_assistant_message_costs_are_summed_per_side(registry: DomainRegistry, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(registry, path, config(task_ids=["update_task_1"]))
    sim = open_run(path).simulation(0)
    assert sim.agent_cost == 0.0 and sim.user_cost == 0.0
    assert sim.messages is not None
    assert isinstance(sim.messages[0], AssistantMessage)


def test_a_snapshot_is_the_results_file_as_saved_without_reading_it_back(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    seen: list[tuple[int, bool]] = []
    runner = Runner(config(num_trials=2, concurrency=1), path, registry)

    def listener(event: object) -> None:
        if isinstance(event, SimulationFinished):
            entries = runner.snapshot().entries
            seen.append((len(entries) >= event.completed, event.simulation.id in {e.id for e in entries}))

    runner.listener = listener
    asyncio.run(runner.run())
    assert seen == [(True, True)] * 6  # each finished simulation is in the snapshot when its event arrives
    snapshot, saved = runner.snapshot(), open_run(path)
    assert snapshot.path == saved.path and snapshot.raw_info == saved.raw_info
    assert [t.id for t in snapshot.tasks().values()] == [t.id for t in saved.tasks().values()]
    assert [(e.id, e.task_id, e.trial) for e in snapshot.entries] == [(e.id, e.task_id, e.trial) for e in saved.entries]
