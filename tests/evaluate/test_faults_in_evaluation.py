"""Calls that never reached the environment do not count as done, and retrying them is not a flag."""

from __future__ import annotations

from tau_tui.env.environment import EnvState
from tau_tui.evaluate.checks import action_checks
from tau_tui.evaluate.diagnostics import repeated_calls
from tau_tui.model import ToolCall
from tau_tui.model.tasks import Action
from tau_tui.replay import CallRecord, Timeline, Verdict


def _timeline(calls: list[CallRecord]) -> Timeline:
    state = EnvState(None, None)
    return Timeline(steps=[], calls=calls, findings=[], initial=state, final=state)


def _record(index: int, verdict: Verdict, step: int) -> CallRecord:
    return CallRecord(
        index=index,
        call=ToolCall(id=f"c{index}", name="ship", arguments={"order": "A"}),
        call_step=step,
        verdict=verdict,
        result_step=step + 1,
    )


def test_withheld_and_refused_calls_do_not_satisfy_actions() -> None:
    action = Action(action_id="a", name="ship", arguments={"order": "A"})
    for verdict in (Verdict.INJECTED_FAULT, Verdict.REFUSED):
        calls = [_record(0, verdict, 1)]
        assert not action_checks([action], calls, _timeline(calls))[0].matched
    calls = [_record(0, Verdict.INJECTED_FAULT, 1), _record(1, Verdict.REPLAYED, 3)]
    check = action_checks([action], calls, _timeline(calls))[0]
    assert check.matched and check.step == 3


def test_retry_after_an_injected_fault_is_not_a_repeated_call() -> None:
    calls = [_record(0, Verdict.INJECTED_FAULT, 1), _record(1, Verdict.REPLAYED, 3)]
    assert repeated_calls(_timeline(calls), 0) == []
    calls = [_record(0, Verdict.SKIPPED_READ, 1), _record(1, Verdict.SKIPPED_READ, 3)]
    assert [f.kind for f in repeated_calls(_timeline(calls), 0)] == ["repeated_call"]
