"""Domain invariants: they hold on tau2's initial data and on every gold trajectory, except where tau2 1.0.1's
``modify_pending_order_items`` breaks them (tau2-bench#317/#318) — and those are exactly the ones flagged."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.doctor.recordings import examine
from tau_tui.domains import DomainRegistry
from tau_tui.env.invariants import INVARIANTS, invariants, violations
from tau_tui.env.store import to_plain
from tau_tui.evaluate.invariants import invariant_breaks
from tau_tui.model.io import open_run

if TYPE_CHECKING:
    pass

pytestmark = pytest.mark.corpus

DOMAINS = ("retail", "airline", "telecom", "banking_knowledge")


def _initial_db(registry: DomainRegistry, domain: str) -> dict[str, Any]:
    db: dict[str, Any] = registry.get(domain).new_environment().freeze().agent  # the agent DB's frozen root
    return db


@pytest.mark.parametrize("domain", DOMAINS)
def test_invariants_hold_on_tau2_initial_data(registry: DomainRegistry, domain: str) -> None:
    db = _initial_db(registry, domain)  # loading the domain package registers its invariants
    checks = invariants(domain)
    assert checks, f"{domain} declares no invariant"
    for invariant in checks:
        assert violations(invariant, db) == [], invariant.name


def _modify_cases(sim: dict[str, Any], products: dict[str, Any]) -> list[int]:
    """Indices of the messages where a successful modify_pending_order_items changed two or more items to
    variants that differ in price or options (found from the recording and the catalogue alone)."""
    results = {m.get("id"): m for m in sim.get("messages") or [] if m.get("role") == "tool"}
    steps = []
    for index, message in enumerate(sim.get("messages") or []):
        for call in message.get("tool_calls") or []:
            if call.get("name") != "modify_pending_order_items":
                continue
            result = results.get(call.get("id"))
            if result is None or result.get("error"):
                continue
            args = call.get("arguments") or {}
            variants = []
            for new_id in args.get("new_item_ids") or []:
                variant = next(
                    (p["variants"][new_id] for p in products.values() if new_id in p["variants"]),
                    None,
                )
                if variant is not None:
                    variants.append((variant["price"], json.dumps(variant["options"], sort_keys=True)))
            if len(variants) >= 2 and len(set(variants)) >= 2 and any(v != variants[-1] for v in variants):
                steps.append(index)
    return steps


def _retail_files(tau2_data: Path) -> list[Path]:
    files = [p for p in tau2_data.glob("*.json") if "retail" in p.name] + [
        tau2_data / "generated" / "tau2-gold_retail.json"
    ]
    return sorted(files)


def test_every_buggy_modify_in_the_corpus_carries_invariant_violated(tau2_data: Path, analyzer: Analyzer) -> None:
    products = json.loads((tau2_data / "domains" / "retail" / "db.json").read_text())["products"]
    expected: set[tuple[str, str]] = set()
    for path in _retail_files(tau2_data):
        raw = json.loads(path.read_text())
        sims = raw.get("simulations") if isinstance(raw, dict) else raw
        if isinstance(raw, dict) and "simulation_run" in raw:
            sims = [raw["simulation_run"]]
        for sim in sims or []:
            if _modify_cases(sim, products):
                expected.add((str(path), sim["id"]))
    assert len(expected) >= 10
    exam = examine(analyzer, [open_run(p) for p in _retail_files(tau2_data)])
    flagged = {(str(f.file), f.sim) for f in exam.findings if f.rule == "invariant_violated"}
    assert {(str(Path(f)), s) for f, s in flagged} == {(str(Path(f)), s) for f, s in expected}
    for finding in (f for f in exam.findings if f.rule == "invariant_violated"):
        assert finding.evidence["tool"] == "modify_pending_order_items"
        assert "tau2-bench#317" in finding.detail and finding.evidence["upstream_issue"] == "tau2-bench#317"


@pytest.mark.parametrize("domain", ["airline", "telecom", "banking_knowledge", "mock", "retail"])
def test_gold_trajectories_break_no_invariant_but_the_named_upstream_bug(
    tau2_data: Path, analyzer: Analyzer, domain: str
) -> None:
    run = open_run(tau2_data / "generated" / f"tau2-gold_{domain}.json")
    products = json.loads((tau2_data / "domains" / "retail" / "db.json").read_text())["products"]
    raw = json.loads(run.path.read_text())["simulations"]
    for index in range(len(run.raw_sims)):
        analysis = analyzer.analyze(run, index)
        breaks = invariant_breaks(analysis.timeline, domain)
        buggy = _modify_cases(raw[index], products) if domain == "retail" else []
        assert {b.call.call_step for b in breaks} == set(buggy)
        assert all(b.fix is not None and b.fix.issue == "tau2-bench#317" for b in breaks)


def test_the_upstream_fix_keeps_the_invariants(tau2_data: Path) -> None:
    fixed = Analyzer(DomainRegistry(tau2_data), upstream_fixes=True)
    exam = examine(fixed, [open_run(tau2_data / "generated" / "tau2-gold_retail.json")])
    assert exam.simulations == 342 and not [f for f in exam.findings if f.rule == "invariant_violated"]


def _broken(registry: DomainRegistry, domain: str, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    db = copy.deepcopy(to_plain(_initial_db(registry, domain)))
    edit(db)
    return sorted({inv.name for inv in invariants(domain) if violations(inv, db)})


def test_each_invariant_fires_on_a_broken_db(registry: DomainRegistry) -> None:
    def retail_price(db: dict[str, Any]) -> None:
        order = next(iter(db["orders"].values()))
        order["items"][0]["price"] += 1

    def retail_options(db: dict[str, Any]) -> None:
        order = next(iter(db["orders"].values()))
        order["items"][0]["options"] = {"color": "none"}

    def retail_gift(db: dict[str, Any]) -> None:
        user = next(
            u for u in db["users"].values() if any(m["source"] == "gift_card" for m in u["payment_methods"].values())
        )
        next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")["balance"] = -1

    assert _broken(registry, "retail", retail_price) == ["retail-item-own-variant", "retail-payments-add-up"]
    assert _broken(registry, "retail", retail_options) == ["retail-item-own-variant"]
    assert _broken(registry, "retail", retail_gift) == ["retail-gift-card-balance"]

    def cancel_keeping_money(db: dict[str, Any]) -> None:
        next(iter(db["reservations"].values()))["status"] = "cancelled"

    def bad_segment(db: dict[str, Any]) -> None:
        next(iter(db["reservations"].values()))["flights"][0]["date"] = "1999-01-01"

    def orphan(db: dict[str, Any]) -> None:
        reservation = next(iter(db["reservations"].values()))
        db["users"][reservation["user_id"]]["reservations"].remove(reservation["reservation_id"])

    def negative(db: dict[str, Any]) -> None:
        user = next(
            u for u in db["users"].values() if any(m["source"] == "gift_card" for m in u["payment_methods"].values())
        )
        next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")["amount"] = -5
        flight = next(iter(db["flights"].values()))
        day = next(d for d in flight["dates"].values() if "available_seats" in d)
        day["available_seats"]["economy"] = -1

    assert _broken(registry, "airline", cancel_keeping_money) == ["airline-payments-cover-price"]
    assert _broken(registry, "airline", bad_segment) == ["airline-segments-exist"]
    assert _broken(registry, "airline", orphan) == ["airline-owner-lists-reservation"]
    assert _broken(registry, "airline", negative) == ["airline-balances", "airline-seats"]

    def telecom(db: dict[str, Any]) -> None:
        db["bills"][0]["total_due"] += 5
        db["lines"][0]["plan_id"] = "P9999"
        db["lines"][1]["data_used_gb"] = -1

    assert _broken(registry, "telecom", telecom) == ["telecom-bill-total", "telecom-data-used", "telecom-references"]

    def banking(db: dict[str, Any]) -> None:
        key = next(iter(db["accounts"]["data"]))
        db["accounts"]["data"][key]["account_id"] = "other"
        db["accounts"]["data"][key]["user_id"] = "nobody"

    assert _broken(registry, "banking_knowledge", banking) == ["banking-ids-are-keys", "banking-users-exist"]


def test_every_registered_invariant_is_tested_here(registry: DomainRegistry) -> None:
    for domain in DOMAINS:
        registry.get(domain)
    names = {"retail-item-own-variant", "retail-payments-add-up", "retail-gift-card-balance"}
    names |= {"airline-payments-cover-price", "airline-segments-exist", "airline-owner-lists-reservation"}
    names |= {"airline-balances", "airline-seats", "telecom-bill-total", "telecom-data-used", "telecom-references"}
    names |= {"banking-ids-are-keys", "banking-users-exist"}
    assert {n for n, inv in INVARIANTS.items() if inv.domain in DOMAINS} == names


def test_the_break_is_a_process_flag_on_the_trajectory(tau2_data: Path, analyzer: Analyzer) -> None:
    """Registered as a detector: the runs table, the legend and the trajectory's flag events read it."""
    from tau_tui.evaluate.diagnostics import DETECTORS

    assert DETECTORS["invariant_violated"].letter == "I"
    run = open_run(tau2_data / "generated" / "tau2-gold_retail.json")
    index = next(i for i in range(len(run.raw_sims)) if run.simulation(i).id == "gold-retail-20-gold")
    report = analyzer.evaluate(run, index)
    flags = [f for f in report.flags if f.kind == "invariant_violated"]
    assert {f.step for f in flags} == {19} and len(flags) == 4
    assert all("tau2-bench#317" in f.message for f in flags)


@pytest.mark.parametrize("domain", DOMAINS)
def test_invariants_hold_on_every_tasks_initial_state(registry: DomainRegistry, domain: str) -> None:
    """After each task's initialisation (its data patches and actions), before any message."""
    from tau_tui.replay import initialize

    dom = registry.get(domain)
    checks = invariants(domain)
    broken = []
    for task in dom.tasks().values():
        env = dom.new_environment()
        env.bind_task(task)
        initialize(env, task, [])
        db = env.freeze().agent
        broken += [(task.id, inv.name) for inv in checks if violations(inv, db)]
    assert broken == []
