"""Task rules: a copy of tau2's retail data with one planted defect per rule is diagnosed rule by rule, and on
tau2's own mock, retail, airline and telecom tasks the schema rules stay silent."""

from __future__ import annotations

import copy
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tau_tui.calibrate.gold import GoldChecker
from tau_tui.doctor.task_rules import TASK_RULES, TaskFinding, argument_problems, check_tasks, counts
from tau_tui.domains import DomainRegistry

pytestmark = pytest.mark.corpus


def _findings(data_root: Path, domain: str, ids: list[str] | None = None) -> list[TaskFinding]:
    checker = GoldChecker.for_name(DomainRegistry(data_root), domain)
    every = checker.domain.tasks()
    tasks = [every[i] for i in ids] if ids else list(every.values())
    return list(check_tasks(checker, domain, tasks, every))


def _plant(source: dict[str, Any], new_id: str, **criteria: Any) -> dict[str, Any]:
    task = copy.deepcopy(source)
    task["id"] = new_id
    task["evaluation_criteria"].update(criteria)
    return task


@pytest.fixture(scope="module")
def planted(tau2_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    shutil.copytree(tau2_data / "domains" / "retail", root / "domains" / "retail")
    path = root / "domains" / "retail" / "tasks.json"
    tasks = json.loads(path.read_text())
    base = tasks[0]
    actions = base["evaluation_criteria"]["actions"]
    lookup = actions[0]
    tasks += [
        # the gold state fails an env assertion (a tool that returns no bool) while DB is in the basis
        _plant(
            base,
            "planted_unreachable",
            reward_basis=["DB", "ENV_ASSERTION"],
            env_assertions=[
                {"env_type": "assistant", "func_name": "get_user_details", "arguments": {"user_id": "yusuf_rossi_9620"}}
            ],
        ),
        # only a lookup is expected: an agent that writes nothing matches the gold DB
        _plant(base, "planted_inaction", actions=[lookup], reward_basis=["DB"]),
        _plant(base, "planted_empty", reward_basis=["DB", "COMMUNICATE"], communicate_info=[]),
        # a delivered order cannot be cancelled
        _plant(
            base,
            "planted_action_error",
            actions=[
                *actions,
                {
                    "action_id": "x",
                    "name": "cancel_pending_order",
                    "arguments": {"order_id": "#W2378156", "reason": "no longer needed"},
                },
            ],
        ),
        _plant(
            base,
            "planted_unknown_tool",
            actions=[*actions, {"action_id": "x", "name": "refund_everything", "arguments": {}}],
        ),
        _plant(
            base,
            "planted_bad_arguments",
            actions=[{**lookup, "arguments": {"first_name": "Yusuf", "surname": "Rossi", "zip": 19122}}, *actions[1:]],
        ),
        {**copy.deepcopy(base), "id": "planted_duplicate"},
        _plant(
            base,
            "planted_contradiction",
            nl_assertions=["The agent does not exchange any item of order #W2378156."],
            reward_basis=["DB", "NL_ASSERTION"],
        ),
    ]
    path.write_text(json.dumps(tasks))
    return root


PLANTED = {
    "planted_unreachable": "unreachable",
    "planted_inaction": "passes_on_inaction",
    "planted_empty": "empty_component",
    "planted_action_error": "gold_action_error",
    "planted_unknown_tool": "unknown_tool",
    "planted_bad_arguments": "invalid_arguments",
    "planted_duplicate": "duplicate_task",
    "planted_contradiction": "nl_contradicts_actions",
}


def test_every_rule_has_a_planted_defect() -> None:
    assert set(PLANTED.values()) == set(TASK_RULES)


def test_planted_defects_are_diagnosed_rule_by_rule(planted: Path, tau2_data: Path) -> None:
    findings = _findings(planted, "retail")
    by_task: dict[str, set[str]] = {}
    for f in findings:
        by_task.setdefault(f.task, set()).add(f.rule)
    for task, rule in PLANTED.items():
        assert rule in by_task.get(task, set()), (task, by_task.get(task))
    # the duplicate is found from both sides, and names the other task
    dup = [f for f in findings if f.rule == "duplicate_task"]
    assert {f.task for f in dup} == {"0", "planted_duplicate"}
    assert dup[0].evidence["other_tasks"] in (["planted_duplicate"], ["0"])
    # the evidence names the action and its error, the bad names, the component
    error = next(f for f in findings if f.task == "planted_action_error" and f.rule == "gold_action_error")
    assert error.evidence["tool"] == "cancel_pending_order" and "Non-pending order" in error.evidence["error"]
    bad = next(f for f in findings if f.rule == "invalid_arguments")
    assert set(bad.evidence["problems"]) == {
        "unknown argument 'surname'",
        "missing required argument 'last_name'",
        "argument 'zip' is int, the tool takes string",
    }
    empty = [f.evidence["component"] for f in findings if f.task == "planted_empty" and f.rule == "empty_component"]
    assert empty == ["COMMUNICATE"]
    # the original tasks keep their own findings: the planted ones add exactly the planted rules
    original = Counter(f.rule for f in _findings(tau2_data, "retail"))
    planted_counts = Counter(f.rule for f in findings if f.task.startswith("planted_") or f.rule == "duplicate_task")
    for rule in ("unreachable", "unknown_tool", "invalid_arguments", "duplicate_task", "nl_contradicts_actions"):
        assert original[rule] == 0, rule
    assert planted_counts["duplicate_task"] == 2


@pytest.mark.parametrize("domain", ["mock", "retail", "airline", "telecom"])
def test_tau2_own_tasks_name_real_tools_with_fitting_arguments(tau2_data: Path, domain: str) -> None:
    checker = GoldChecker.for_name(DomainRegistry(tau2_data), domain)
    every = checker.domain.tasks()
    tasks = list(every.values())
    if domain == "telecom":  # the schema rules only: telecom has 2285 tasks
        rules = [TASK_RULES[r] for r in ("unknown_tool", "invalid_arguments", "duplicate_task")]
        from tau_tui.doctor.task_rules import DuplicateIndex, TaskProbe, check_task

        duplicates = DuplicateIndex(tasks)
        findings = [f for t in tasks for f in check_task(TaskProbe(checker, t, duplicates), domain, rules)]
    else:
        findings = list(check_tasks(checker, domain, tasks, every))
    tally = counts(findings)
    assert tally["unknown_tool"] == tally["invalid_arguments"] == tally["duplicate_task"] == 0, tally


def test_gold_action_error_is_exactly_where_the_reference_actions_raise(tau2_data: Path) -> None:
    """Replaying each retail task's reference actions in order from its initial state, independently of the rule."""
    registry = DomainRegistry(tau2_data)
    domain = registry.get("retail")
    raising = set()
    for task in domain.tasks().values():
        env = domain.new_environment()
        for index, action in enumerate(task.expected_actions):
            try:
                env.make_tool_call(action.name, action.requestor, action.arguments)
            except Exception:  # noqa: BLE001 - what the rule must find
                raising.add((task.id, index))
    found = {(f.task, f.evidence["action"]) for f in _findings(tau2_data, "retail") if f.rule == "gold_action_error"}
    assert raising and found == raising


def test_argument_problems_follow_the_schema() -> None:
    parameters = {
        "properties": {
            "a": {"type": "string"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "items": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["a"],
    }
    assert argument_problems({"a": "x", "n": None, "items": ["1"]}, parameters) == []
    assert argument_problems({"a": "x", "n": 3}, parameters) == []
    assert argument_problems({"a": True, "items": [1]}, parameters) == [
        "argument 'a' is bool, the tool takes string",
        "argument 'items' is list, the tool takes array",
    ]
    assert argument_problems({"b": 1}, parameters) == ["unknown argument 'b'", "missing required argument 'a'"]


def test_nl_heuristic_lets_denials_of_more_of_the_same_pass() -> None:
    from tau_tui.doctor.task_rules import TaskProbe, _nl_contradicts_actions
    from tau_tui.model.tasks import Task

    def hits(assertion: str) -> int:
        task = Task.model_validate(
            {
                "id": "t",
                "evaluation_criteria": {
                    "actions": [{"name": "cancel_reservation", "arguments": {}}],
                    "nl_assertions": [assertion],
                },
            }
        )
        return len(_nl_contradicts_actions(TaskProbe(None, task, None)))  # type: ignore[arg-type]

    assert hits("The agent does not cancel the reservation.") == 1
    assert hits("Agent does not cancel  any other reservation.") == 0
    assert hits("The agent does not book a new flight.") == 0
