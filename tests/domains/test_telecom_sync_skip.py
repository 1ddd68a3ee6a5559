"""Telecom's sync is skipped when nothing was written since the last one: the replays stay exactly the same."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from domains.telecom.environment import TelecomEnvironment
from tau_tui.model.messages import ToolCall
from tau_tui.model.tasks import EnvFunctionCall
from tests.conftest import CORPUS
from tests.helpers import loaded_as

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry

pytestmark = pytest.mark.corpus

PHONE = "555-123-2002"  # line L1002 of customer C1001
TELECOM_RUN = CORPUS / "sierra-research__tau2-bench__gpt-4.1_telecom_default_gpt-4.1_1trials.json"


@pytest.fixture
def env(registry: DomainRegistry) -> TelecomEnvironment:
    return loaded_as(registry.get("telecom").new_environment(), TelecomEnvironment)


def counting(env: TelecomEnvironment, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs: list[int] = []
    inner = env._sync

    def counted() -> None:
        runs.append(1)
        inner()

    monkeypatch.setattr(env, "_sync", counted)
    return runs


def test_a_sync_after_a_sync_with_no_write_between_is_skipped(
    env: TelecomEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.run_env_function(
        EnvFunctionCall(
            env_type="user", func_name="set_user_info", arguments={"name": "John Smith", "phone_number": PHONE}
        )
    )
    runs = counting(env, monkeypatch)
    env.sync()
    assert runs == []  # the helper's own sync went through and nothing was written since
    env.call(ToolCall(id="r", name="check_status_bar", arguments={}, requestor="user"))
    assert runs == []  # a read writes nothing
    before = env.freeze()
    env.call(ToolCall(id="w", name="toggle_airplane_mode", arguments={}, requestor="user"))
    assert env.user is not None
    assert env.user.db is not None
    assert runs == [] and env.user.db.device["airplane_mode"] is True  # sync never reads the phone
    assert env.freeze().user["surroundings"] is before.user["surroundings"]
    env.run_env_function(EnvFunctionCall(env_type="user", func_name="set_user_location", arguments={"abroad": True}))
    assert runs == [1]  # the surroundings are read by sync
    env.make_tool_call("disable_roaming", "assistant", {"customer_id": "C1001", "line_id": "L1002"})
    assert env.user.db.surroundings["roaming_allowed"] is True
    env.sync()
    assert runs == [1, 1] and env.user.db.surroundings["roaming_allowed"] is False


def test_a_sync_that_failed_is_never_skipped(env: TelecomEnvironment, monkeypatch: pytest.MonkeyPatch) -> None:
    assert env.user is not None
    assert env.user.db is not None
    env.user.db.update(("surroundings",), {"phone_number": "000-000-0000"})  # no such line
    runs = counting(env, monkeypatch)
    for _ in range(2):
        with pytest.raises(ValueError, match="Line with phone number 000-000-0000 not found"):
            env.sync()
    assert runs == [1, 1]


def test_replays_with_and_without_the_skip_are_the_same(
    analyzer: Analyzer, registry: DomainRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.model import open_run

    run = open_run(TELECOM_RUN)
    environment_class = type(registry.get("telecom").new_environment())
    syncs: list[int] = []

    def outcome() -> list[tuple[Any, ...]]:
        analyzer.forget()
        out: list[tuple[Any, ...]] = []
        for index in range(len(run.entries)):
            analysis = analyzer.analyze(run, index)
            record = analysis.to_json()
            out.append(
                (
                    record["pred_db"],
                    record["pred_user_db"],
                    record["gold_db"],
                    record["gold_user_db"],
                    record["env_assertions"],
                    [(c.replayed, c.replayed_error) for c in analysis.timeline.calls],
                )
            )
        return out

    skipping = outcome()

    def always_sync(self: TelecomEnvironment) -> None:
        syncs.append(1)
        self._sync()

    monkeypatch.setattr(environment_class, "sync", always_sync)
    always = outcome()
    analyzer.forget()
    assert syncs and skipping == always and len(skipping) == 40


def test_the_phones_no_op_check_never_takes_different_json_for_the_same(env: TelecomEnvironment) -> None:
    import sys

    same = sys.modules[type(env.user).__module__]._same
    assert same({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]})
    assert not same(0.0, -0.0) and not same({"a": 1}, {"a": True}) and not same([1], [1.0])
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # another key order is written (same hash either way)
    assert same(float("nan"), float("nan")) and not same((1,), [1])
