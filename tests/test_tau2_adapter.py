"""Domains registered in an installed tau2 replay through our core (needs the `tau2` extra).

CI installs the extra (`.ci/run` runs `make test EXTRAS=dev,tau2`), so these run there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

from tau_tui.tau2_adapter import tau2_available

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task as Tau2Task
    from tau2.environment.environment import Environment as Tau2Environment

    from tau_tui.domains import DomainRegistry

pytestmark = [
    pytest.mark.tau2,
    pytest.mark.skipif(not tau2_available(), reason="needs the optional tau2 extra (pip install -e '.[tau2]')"),
]

TOY = "toy_tau2_adapter"
_Tool = TypeVar("_Tool", bound=Callable[..., Any])


def _tau2_tool(kind: Any) -> Callable[[_Tool], _Tool]:
    """tau2's ``is_tool(kind)``, seen with its real shape (mypy skips tau2, so its decorator is untyped)."""
    from tau2.environment.toolkit import is_tool

    return cast("Callable[[_Tool], _Tool]", is_tool(kind))


@pytest.fixture(scope="module")
def toy_domain() -> tuple[Callable[..., Tau2Environment], Tau2Task]:
    """A custom domain written against tau2's own classes, registered in tau2's registry."""
    from pydantic import Field
    from tau2.data_model.tasks import Task as Tau2Task
    from tau2.environment.db import DB
    from tau2.environment.environment import Environment
    from tau2.environment.toolkit import ToolKitBase, ToolType
    from tau2.registry import registry

    class Counter(DB):  # type: ignore[misc]  # mypy skips tau2 (pyproject.toml): DB is Any to it
        values: dict[str, int] = Field(default_factory=dict)

    class CounterTools(ToolKitBase):  # type: ignore[misc]  # likewise: ToolKitBase is Any to mypy
        @_tau2_tool(ToolType.WRITE)
        def set_value(self, key: str, value: int) -> dict[str, Any]:
            """Set a counter."""
            if key == "forbidden":
                raise ValueError("forbidden key")
            self.db.values[key] = value
            return {"key": key, "value": value}

        @_tau2_tool(ToolType.READ)
        def get_value(self, key: str) -> int:
            """Read a counter."""
            value: int = self.db.values[key]
            return value

        def reset_all(self) -> None:
            """A public helper tasks may use in initialisation actions."""
            self.db.values.clear()

        def _secret(self) -> str:
            return "never"

    def get_environment(solo_mode: bool = False) -> Tau2Environment:
        return Environment(domain_name=TOY, policy="count things", tools=CounterTools(Counter(values={"a": 1})))

    task = Tau2Task.model_validate(
        {
            "id": "t1",
            "user_scenario": {"instructions": "set b to 2"},
            "initial_state": {
                "initialization_actions": [{"env_type": "assistant", "func_name": "reset_all", "arguments": {}}]
            },
            "evaluation_criteria": {
                "actions": [{"action_id": "x", "name": "set_value", "arguments": {"key": "b", "value": 2}}],
                "reward_basis": ["DB"],
            },
        }
    )
    if TOY not in registry.get_domains():
        registry.register_domain(get_environment, TOY)
        registry.register_tasks(lambda split=None: [task], TOY)
    return get_environment, task


def _message(role: str, **kw: Any) -> dict[str, Any]:
    return {"role": role, **kw}


def _run_file(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    data = {
        "timestamp": "t",
        "info": {"environment_info": {"domain_name": TOY, "policy": "p"}},
        "tasks": [],
        "simulations": [{"id": "s1", "task_id": "t1", "termination_reason": "user_stop", "messages": messages}],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(data))
    return path


def test_custom_tau2_domain_replays_with_verdicts_and_tau2_hashes(
    tmp_path: Path, toy_domain: tuple[Callable[..., Tau2Environment], Tau2Task]
) -> None:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.model import open_run

    get_environment, task = toy_domain
    calls = [
        {"id": "w", "name": "set_value", "arguments": {"key": "b", "value": 2}},
        {"id": "m", "name": "set_value", "arguments": {"key": "c", "value": 3}},
        {"id": "r", "name": "get_value", "arguments": {"key": "b"}},
        {"id": "h", "name": "_secret", "arguments": {}},
    ]
    messages = [
        _message("assistant", content="hi"),
        _message("user", content="set b"),
        _message("assistant", content=None, tool_calls=calls),
        _message("tool", id="w", content='{"key": "b", "value": "2"}'),
        _message("tool", id="m", content='{"key": "c", "value": "999"}'),
        _message("tool", id="r", content='"2"'),
        _message("tool", id="h", content="Error: Tool '_secret' not found.", error=True),
    ]
    run = open_run(_run_file(tmp_path, messages))
    analysis = Analyzer(DomainRegistry(None)).analyze(run, 0)
    record = analysis.to_json()
    assert record["verdicts"] == {
        "replayed": 1,
        "mismatch": 1,
        "skipped_read": 1,
        "skipped_unknown": 1,
        "recorded_error": 1,
    }
    # the same trajectory through tau2's own environment gives the same DB hash
    inner = get_environment()
    inner.tools.reset_all()
    inner.tools.set_value(key="b", value=2)
    inner.tools.set_value(key="c", value=3)
    assert record["pred_db"] == inner.get_db_hash()
    assert record["gold_db"] != record["pred_db"] and record["db_match"] is False
    changes, _ = analysis.timeline.changes_at(3)
    assert [(c.path, c.after) for c in changes] == [(("values", "b"), 2)]


def test_adapter_refuses_undeclared_names(toy_domain: tuple[Callable[..., Tau2Environment], Tau2Task]) -> None:
    from tau_tui.model import EnvFunctionCall, ToolCall
    from tau_tui.tau2_adapter import Tau2Domain
    from tau_tui.tau2_adapter import Tau2Environment as AdaptedEnvironment

    env = Tau2Domain(TOY).new_environment()
    assert isinstance(env, AdaptedEnvironment)
    for name in ("_secret", "update_db", "get_db_hash", "__init__", "reset_all"):
        message = env.call(ToolCall(id="x", name=name, arguments={}))
        assert message.error and message.content == f"Error: Tool '{name}' not found."
    for name in ("_secret", "update_db", "use_tool", "__class__"):
        with pytest.raises(ValueError):
            env.run_env_function(EnvFunctionCall(env_type="assistant", func_name=name, arguments={}))
    env.run_env_function(EnvFunctionCall(env_type="assistant", func_name="reset_all", arguments={}))
    assert env.db_hash() == env.inner.get_db_hash()


def test_native_domains_win_over_tau2(registry: DomainRegistry) -> None:
    from tau_tui.tau2_adapter import Tau2Domain

    assert not isinstance(registry.get("mock"), Tau2Domain)
