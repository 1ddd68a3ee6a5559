"""The doctor's rule views: each target's rules are run by one ``RuleView.hits``, a rule that raises is a finding
of the task or simulation it could not read (never an error), and the other rules still run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from tau_tui.doctor.rules import RULES, SIMULATION, TASK, Advice, Reach, Remedy, Rule
from tau_tui.doctor.sim_rules import SIM_RULES, SimProbe, check_simulation
from tau_tui.doctor.task_rules import TASK_RULES, TaskProbe, check_task

ADVICE = Advice(Reach.NONE, "no reward changes: a test", Remedy.IGNORE, "nothing.", "A test.")


def _broken(probe: object) -> list[Any]:
    raise KeyError("missing")


def test_a_task_rule_that_raises_is_a_finding_and_the_next_rule_still_runs() -> None:
    rules: list[Rule[TaskProbe, tuple[str, dict[str, Any]]]] = [
        Rule("broken", TASK, "warning", "raises", ADVICE, _broken),
        Rule("found", TASK, "error", "one hit", ADVICE, lambda probe: [("seen", {"n": 1})]),
    ]
    probe = SimpleNamespace(task=SimpleNamespace(id="t1"))
    # a stand-in with only what the rule view reads of a task probe
    findings = list(check_task(cast(TaskProbe, probe), "mock", rules))
    assert [(f.rule, f.severity, f.task, f.domain) for f in findings] == [
        ("broken", "warning", "t1", "mock"),
        ("found", "error", "t1", "mock"),
    ]
    assert findings[0].detail == "the rule could not check the task: KeyError: 'missing'"
    assert findings[0].evidence == {"crash": True} and findings[1].evidence == {"n": 1}


def test_a_simulation_rule_that_raises_is_a_finding_of_the_whole_simulation() -> None:
    rules: list[Rule[SimProbe, tuple[int | None, str, dict[str, Any]]]] = [
        Rule("broken", SIMULATION, None, "raises", ADVICE, _broken),
        Rule("found", SIMULATION, None, "one hit", ADVICE, lambda probe: [(3, "at step 3", {})]),
    ]
    sim = SimpleNamespace(id="s1", task_id="t1")
    probe = SimpleNamespace(analysis=SimpleNamespace(run=SimpleNamespace(path="run.json"), sim=sim))
    # a stand-in with only what the rule view reads of a simulation probe
    findings = list(check_simulation(cast(SimProbe, probe), rules))
    assert [(f.rule, f.step, f.file, f.sim, f.task) for f in findings] == [
        ("broken", None, "run.json", "s1", "t1"),
        ("found", 3, "run.json", "s1", "t1"),
    ]
    assert findings[0].detail == "the rule could not check the simulation: KeyError: 'missing'"
    assert findings[0].evidence == {"crash": True}


def test_each_view_adds_rules_of_its_own_target_to_the_one_registry() -> None:
    assert all(RULES[name].target == TASK for name in TASK_RULES)
    assert all(RULES[name].target == SIMULATION for name in SIM_RULES)
    assert RULES["unreachable"].severity == "error" and RULES["whose_fault"].severity is None
