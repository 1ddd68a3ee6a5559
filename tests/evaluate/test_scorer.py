"""The tool-call scorer (agno ToolCallScorer semantics) and its sidecar file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.evaluate import ScorerConfig, ScorerConfigError, ScorerSpec, score_tool_calls, scorer_config_for
from tau_tui.evaluate.scorer import sidecar_path
from tests.evaluate.support import TASK_1_DONE, UPDATE, mock_task, replayed
from tests.helpers import call, greet, result, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.replay.timeline import CallRecord

TASK = mock_task()


def calls_of(registry: DomainRegistry, messages: list[dict[str, Any]]) -> list[CallRecord]:
    return replayed(registry, messages, TASK).timeline.calls


def spec(**data: Any) -> ScorerSpec:
    return ScorerSpec.from_json(data)


def test_junk_argument_call_satisfies_a_name_only_check(registry: DomainRegistry) -> None:
    records = calls_of(registry, [greet(), call("get_users", {"junk": "???"}), result([])])
    score = score_tool_calls(records, spec(expected_tools=["get_users"]))
    assert score.passed and score.value == 1.0


def test_errored_call_satisfies_nothing(registry: DomainRegistry) -> None:
    records = calls_of(registry, [greet(), call("update_task_status", UPDATE), result("Error: boom", error=True)])
    score = score_tool_calls(
        records, spec(expected_tools=["update_task_status"], arguments={"update_task_status": UPDATE})
    )
    assert not score.passed and score.value == 0.0
    assert [c.satisfied for c in score.checks] == [False, False]


def test_strict_mode_fails_on_an_extra_clean_call(registry: DomainRegistry) -> None:
    records = calls_of(
        registry,
        [
            greet(),
            call("get_users", {}, "r"),
            result([], "r"),
            call("update_task_status", UPDATE, "w"),
            result(TASK_1_DONE, "w"),
        ],
    )
    lenient = score_tool_calls(records, spec(expected_tools=["update_task_status"]))
    strict = score_tool_calls(records, spec(expected_tools=["update_task_status"], strict=True))
    assert lenient.passed and lenient.additional == ["get_users"]
    assert not strict.passed and strict.value == 1.0 and any("strict" in n for n in strict.notes)


def test_strict_mode_ignores_extra_calls_that_errored(registry: DomainRegistry) -> None:
    records = calls_of(
        registry,
        [
            greet(),
            call("get_users", {}, "r"),
            result("Error: x", "r", error=True),
            call("update_task_status", UPDATE, "w"),
            result(TASK_1_DONE, "w"),
        ],
    )
    assert score_tool_calls(records, spec(expected_tools=["update_task_status"], strict=True)).passed


def test_argument_specs_match_by_subset(registry: DomainRegistry) -> None:
    records = calls_of(registry, [greet(), call("update_task_status", UPDATE), result(TASK_1_DONE)])
    assert score_tool_calls(records, spec(arguments={"update_task_status": {"status": "completed"}})).passed
    missing = score_tool_calls(records, spec(arguments={"update_task_status": {"status": "completed", "x": 1}}))
    assert not missing.passed


def test_no_type_coercion(registry: DomainRegistry) -> None:
    records = calls_of(
        registry,
        [greet(), call("create_task", {"user_id": "user_1", "title": "5", "n": 1}), result({"task_id": "task_2"})],
    )
    assert not score_tool_calls(records, spec(arguments={"create_task": {"title": 5}})).passed
    assert not score_tool_calls(records, spec(arguments={"create_task": {"n": True}})).passed
    assert score_tool_calls(records, spec(arguments={"create_task": {"n": 1.0}})).passed  # both numbers


def test_value_is_satisfied_over_checks_and_lists_are_separate_checks(registry: DomainRegistry) -> None:
    records = calls_of(registry, [greet(), call("update_task_status", UPDATE), result(TASK_1_DONE)])
    score = score_tool_calls(
        records,
        spec(
            expected_tools=["update_task_status", "get_users", "update_task_status"],
            arguments={"update_task_status": [{"task_id": "task_1"}, {"task_id": "task_9"}]},
        ),
    )
    assert len(score.checks) == 4  # duplicate names are one check
    assert score.value == pytest.approx(2 / 4) and not score.passed


def test_only_executed_agent_calls_count(registry: DomainRegistry) -> None:
    dismiss = {"notification_id": "notif_1"}
    records = calls_of(
        registry,
        [
            greet(),
            call("dismiss_notification", dismiss, "u", requestor="user"),
            result("ok", "u", requestor="user"),
            call("get_users", {}, "x"),
            user("hi"),
        ],
    )
    score = score_tool_calls(records, spec(expected_tools=["dismiss_notification", "get_users"]))
    assert score.value == 0.0 and score.notes[0] == "no clean tool executions"


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"expected_tools": "get_users"},
        {"arguments": {"t": 1}},
        {"expected_tools": ["a"], "strict": "yes"},
        {"expected_tools": ["a"], "other": 1},
    ],
)
def test_spec_validation(bad: dict[str, Any]) -> None:
    with pytest.raises(ScorerConfigError):
        ScorerSpec.from_json(bad)


def test_sidecar_default_and_per_task_specs(tmp_path: Path) -> None:
    recording = tmp_path / "run.json"
    recording.write_text("{}")
    assert scorer_config_for(recording) is None
    sidecar = sidecar_path(recording)
    assert sidecar.name == "run.scorer.json"
    sidecar.write_text(
        json.dumps(
            {
                "default": {"expected_tools": ["get_users"]},
                "tasks": {"7": {"expected_tools": ["cancel"], "strict": True}},
            }
        )
    )
    config = scorer_config_for(recording)
    assert config is not None
    assert config.spec_for("7") == ScorerSpec(("cancel",), {}, True)
    spec_8 = config.spec_for("8")
    assert spec_8 is not None
    assert spec_8.expected_tools == ("get_users",)
    assert ScorerConfig.from_json({"tasks": {}}).spec_for("1") is None
    sidecar.write_text("{nope")
    with pytest.raises(ScorerConfigError, match="run.scorer.json"):
        scorer_config_for(recording)
