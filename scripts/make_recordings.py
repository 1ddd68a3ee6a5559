"""Regenerate recordings/: the runs `make run` opens, on our own domains, by scripted participants.

Needs no tau2 data and no model. Every run is a real episode against the
aftersales or warehouse environment (or, for the cassette runs, against the
tool results of warehouse.json); ids, call ids and times are then renumbered,
so the files come out byte for byte the same every time.

- aftersales.json: the gold agent finding the hidden goodwill tool in KB-205
  and using it; the gold agent on two refunds and a goodwill credit; a hasty
  agent that calls a tool that does not exist and refunds 449.00 without the
  team lead's approval (reward 0, worth explaining).
- warehouse.json: the gold agent riding out the Bristol service's injected
  timeouts and temporary errors; an agent that reads the timeout as "no
  stock" and backorders the line (reward 0).
- warehouse_cassette.json: two other scripted agents over the tool results of
  warehouse.json's first run: one asks for an allocation nobody recorded and
  is refused (no_recorded_result); one makes the recorded allocations in the
  other order and gets results recorded for another state (replay mismatch).

Usage: python scripts/make_recordings.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tau_tui.domains import Domain, DomainRegistry
from tau_tui.model.messages import ParticipantMessage, ToolMessage
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.rollout.agents import GoldAgent
from tau_tui.rollout.cassette import Cassette
from tau_tui.rollout.evaluation import SimulationEvaluator
from tau_tui.rollout.orchestrator import EpisodeOptions, Orchestrator
from tau_tui.rollout.participants import Participant, agent_brief, user_brief
from tau_tui.rollout.records import ResultsWriter, run_info
from tau_tui.rollout.scripted import StepAgent
from tau_tui.rollout.users import ScriptedUser

ROOT = Path(__file__).resolve().parents[1]
STARTED = datetime(2025, 3, 14, 9, 0, 0)
SEED = 300
WRITTEN_AT = "2025-03-14T17:30:00"


def normalised(sim: SimulationRun, sim_id: str, start: datetime) -> SimulationRun:
    """Stable ids, call ids and times (one second per message), everywhere they appear."""
    ids: dict[str, str] = {}

    def rename(old: str) -> str:
        return ids.setdefault(old, f"{sim_id}-c{len(ids) + 1:02d}")

    for index, message in enumerate(sim.messages):
        message.turn_idx = index
        message.timestamp = (start + timedelta(seconds=index)).isoformat()
        if isinstance(message, ParticipantMessage):
            for call in message.tool_calls or []:
                call.id = rename(call.id)
        elif isinstance(message, ToolMessage):
            message.id = ids.get(message.id, message.id)
    info = sim.info or {}
    for entry in (info.get("faults") or {}).get("injected", []):
        entry["call_id"] = ids.get(entry["call_id"], entry["call_id"])
    refusal = (info.get("cassette") or {}).get("refusal")
    if refusal:
        refusal["call_id"] = ids.get(refusal["call_id"], refusal["call_id"])
    end = start + timedelta(seconds=len(sim.messages))
    sim.id = sim_id
    sim.start_time, sim.end_time, sim.timestamp = start.isoformat(), end.isoformat(), end.isoformat()
    sim.duration = float(len(sim.messages))
    return sim


class Recording:
    """One results file being built: episodes run, renumbered, evaluated and saved in order."""

    def __init__(self, domain: Domain, path: Path, agents: str, extra: dict[str, Any] | None = None):
        self.domain = domain
        self.path = path
        self.agents = agents
        self.extra = extra
        self.episodes: list[tuple[str, Task, SimulationRun]] = []

    def episode(self, sim_id: str, task_id: str, make_agent, cassette: Cassette | None = None) -> SimulationRun:
        task = self.domain.tasks()[task_id]
        env = self.domain.new_environment()
        agent: Participant = make_agent(task, env)
        user = ScriptedUser(user_brief(task, env))
        orchestrator = Orchestrator(env, task, agent, user, EpisodeOptions(seed=SEED), trial=0, tools=cassette)
        sim = asyncio.run(orchestrator.run())
        start = STARTED + timedelta(minutes=10 * len(self.episodes))
        sim = normalised(sim, sim_id, start)
        SimulationEvaluator(self.domain).apply(sim, task)
        self.episodes.append((sim_id, task, sim))
        return sim

    def save(self) -> Path:
        env = self.domain.new_environment()
        info = run_info(
            domain_name=env.domain_name,
            policy=env.policy,
            agent={"implementation": "scripted", "llm": self.agents, "llm_args": {}},
            user=ScriptedUser(user_brief(self.episodes[0][1], env)).info(),
            num_trials=1,
            max_steps=200,
            max_errors=10,
            seed=SEED,
            extra={"made_by": "scripts/make_recordings.py", **(self.extra or {})},
        )
        tasks = list({task.id: task for _, task, _ in self.episodes}.values())
        self.path.unlink(missing_ok=True)
        writer = ResultsWriter(self.path, info, tasks, timestamp=WRITTEN_AT)
        for _, _, sim in self.episodes:
            writer.add(sim)
        return self.path


def gold(task: Task, env) -> Participant:
    return GoldAgent(task, agent_brief(task, env))


def steps(name: str, items: list, retry_faults: bool = False):
    return lambda task, env: StepAgent(list(items), name=name, retry_faults=retry_faults)


def aftersales(domain: Domain, out: Path) -> Path:
    rec = Recording(domain, out / "aftersales.json", "scripted/gold, scripted/hasty")
    rec.episode("as-gold-goodwill", "goodwill_for_late_delivery", gold)
    rec.episode("as-gold-two-returns", "two_returns_one_delayed", gold)
    rec.episode(
        "as-hasty-refund",
        "large_refund_needs_approval",
        steps(
            "scripted/hasty",
            [
                ("find_customer_by_email", {"email": "owen.parry@example.com"}),
                ("get_refund_status", {"order_id": "LH-10329"}),
                ("list_returns", {"customer_id": "cust_owen_parry"}),
                ("issue_refund", {"return_id": "RMA-2006"}),
                "Good news: your coffee machine passed its check and I have refunded 449.00 to your Mastercard. "
                "It should show in 3 to 5 working days. Is there anything else I can help you with?",
            ],
        ),
    )
    return rec.save()


def warehouse(domain: Domain, out: Path) -> tuple[Path, Recording]:
    rec = Recording(domain, out / "warehouse.json", "scripted/gold, scripted/gives-up")
    rec.episode("wh-gold-split", "split_across_warehouses", gold)
    rec.episode("wh-gold-timeouts", "south_times_out_twice", gold)
    rec.episode(
        "wh-gives-up",
        "south_times_out_twice",
        steps(
            "scripted/gives-up",
            [
                ("get_account", {"account_id": "ACC-1002"}),
                ("get_order", {"order_id": "SO-5009"}),
                ("lookup_stock", {"sku": "CP-22-3M", "warehouse": "south"}),
                ("backorder_line", {"order_id": "SO-5009", "line_no": 1, "quantity": 30}),
                "Bristol has no 22 mm pipe available at the moment, so I have put all 30 lengths of SO-5009 on "
                "backorder; the next delivery is due on 2025-03-25. Is there anything else I can help you with?",
            ],
        ),
    )
    return rec.save(), rec


def cassettes(domain: Domain, out: Path, source: Recording) -> Path:
    sim_id, task, recorded = source.episodes[0]
    recording = "recordings/warehouse.json"
    rec = Recording(
        domain,
        out / "warehouse_cassette.json",
        "scripted/greedy, scripted/reordered",
        {"cassette": {"recording": recording, "simulations": [sim_id]}},
    )
    order = {"order_id": "SO-5002", "line_no": 1}
    rec.episode(
        "cas-greedy-refused",
        task.id,
        steps(
            "scripted/greedy",
            [
                ("get_account", {"account_id": "ACC-1004"}),
                ("get_order", {"order_id": "SO-5002"}),
                ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "south"}),
                ("allocate_line", {**order, "warehouse": "south", "quantity": 60}),
                "All 60 valves are reserved in Bristol. Is there anything else I can help you with?",
            ],
        ),
        cassette=Cassette.from_simulation(recorded, task, recording),
    )
    rec.episode(
        "cas-reordered-mismatch",
        task.id,
        steps(
            "scripted/reordered",
            [
                ("get_account", {"account_id": "ACC-1004"}),
                ("get_order", {"order_id": "SO-5002"}),
                ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "north"}),
                ("lookup_stock", {"sku": "TRV-15-WH", "warehouse": "south"}),
                ("allocate_line", {**order, "warehouse": "north", "quantity": 20}),
                ("allocate_line", {**order, "warehouse": "south", "quantity": 40}),
                "SO-5002 is allocated: 20 valves from Leeds and 40 from Bristol. Anything else I can help you with?",
            ],
            retry_faults=True,
        ),
        cassette=Cassette.from_simulation(recorded, task, recording),
    )
    return rec.save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "recordings"), help="folder to write (default recordings/)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    registry = DomainRegistry(None, use_tau2=False)
    written = [aftersales(registry.get("aftersales"), out)]
    path, source = warehouse(registry.get("warehouse"), out)
    written += [path, cassettes(registry.get("warehouse"), out, source)]
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
