"""The environment: both sides' toolkits, routing, tool messages, state and hashes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tau_tui.env.jsonify import to_json_str
from tau_tui.env.schema import DBSchema, apply_patch
from tau_tui.env.store import Store, clone, same_state, state_hash
from tau_tui.env.tools import Toolkit, ToolType
from tau_tui.model.messages import ToolCall, ToolMessage
from tau_tui.model.tasks import EnvAssertion, EnvFunctionCall, InitializationData, Task


def make_store(schema: DBSchema, pristine_root: dict[str, Any]) -> Store:
    """A fresh store over a pristine tree (shared, never mutated)."""
    return Store(pristine_root, kind=schema.kind, schema=schema)


@dataclass(frozen=True)
class EnvState:
    """Immutable snapshot of both DBs (``None`` for a side without a DB)."""

    agent: Any
    user: Any

    @cached_property
    def _agent_hash(self) -> str | None:
        return None if self.agent is None else state_hash(self.agent, frozen=True)

    @cached_property
    def _user_hash(self) -> str | None:
        if self.user is None:
            return None
        return self._agent_hash if self.user is self.agent else state_hash(self.user, frozen=True)

    def agent_hash(self) -> str | None:
        """tau2's hash of the agent DB (computed once per snapshot)."""
        return self._agent_hash

    def user_hash(self) -> str | None:
        """tau2's hash of the user DB (computed once per snapshot)."""
        return self._user_hash

    def share_hashes(self, other: EnvState, agent_hash: str | None, user_hash: str | None) -> None:
        """Take ``other``'s hashes for each side whose state is the same as ``other``'s (``same_state``,
        compared by the changes): the same canonical JSON has the same hash, so it is not hashed again."""
        if (
            "_agent_hash" not in self.__dict__
            and self.agent is not None
            and other.agent is not None
            and same_state(self.agent, other.agent, frozen=True)
        ):
            self.__dict__["_agent_hash"] = agent_hash
        if (
            "_user_hash" not in self.__dict__
            and self.user is not None
            and other.user is not None
            and same_state(self.user, other.user, frozen=True)
        ):
            self.__dict__["_user_hash"] = user_hash


def call_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as a tool takes them: None is no arguments; anything but an object is a TypeError."""
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise TypeError(f"tool arguments must be an object, got {type(arguments).__name__}")
    return arguments


class Environment:
    """tau2's ``Environment``: route calls, turn results into tool messages, keep both DBs.

    Domains with cross-side effects (telecom) override ``sync``.
    """

    def __init__(
        self, domain_name: str, policy: str, agent: Toolkit | None, user: Toolkit | None = None, solo: bool = False
    ):
        self.domain_name = domain_name
        self.policy = policy
        self.agent = agent
        self.user = user
        self.solo = solo
        if solo:
            self._check_solo()
        self.sync()

    def _check_solo(self) -> None:
        agent_names = set(self.agent.declared_tools) if self.agent else set()
        user_names = set(self.user.declared_tools) if self.user else set()
        overlap = agent_names & user_names
        if overlap:
            raise ValueError(f"Tool names overlap: {overlap}")

    def sync(self) -> None:
        """Propagate effects between the agent and user DBs (nothing by default)."""

    # DB tables that log tool use (shown apart on the State tab), e.g. banking's discoverable-tool logs.
    log_tables: tuple[str, ...] = ()
    # Names of the upstream fixes this environment's tools run with (``env/upstream.py``); none: tau2 1.0.1.
    upstream_fixes: tuple[str, ...] = ()

    def recorded_info(self) -> dict[str, Any]:
        """Top-level ``info`` fields a results file of this environment records (none by default)."""
        return {}

    def bind_task(self, task: Task | None) -> None:
        """Set what the environment takes from the task it runs (nothing by default).

        Called before initialisation by replay, the gold state and live episodes.
        banking_knowledge takes the task's read-log allowlist from here, as tau2
        builds its environment with the task.
        """

    # --- what tools exist ---------------------------------------------------
    def _owner(self, name: str) -> Toolkit | None:
        for kit in (self.agent, self.user):
            if kit is not None and kit.has_tool(name):
                return kit
        return None

    def has_tool(self, name: Any) -> bool:
        return isinstance(name, str) and self._owner(name) is not None

    def tool_names(self) -> frozenset[str]:
        """Every tool the agent or the user may call here (what a recording's calls tell its domain by)."""
        return frozenset(name for kit in (self.agent, self.user) if kit is not None for name in kit.declared_tools)

    def mutates(self, name: str) -> bool:
        """Whether replay must re-execute this tool (unknown names count as mutating, as in tau2)."""
        kit = self._owner(name)
        return True if kit is None else kit.spec(name).mutates_state

    def tool_type(self, name: str) -> ToolType | None:
        kit = self._owner(name)
        return None if kit is None else kit.spec(name).type

    def side_of(self, name: str) -> str | None:
        """'assistant' or 'user': whose toolkit declares this tool."""
        if self.agent is not None and self.agent.has_tool(name):
            return "assistant"
        if self.user is not None and self.user.has_tool(name):
            return "user"
        return None

    # --- calling ------------------------------------------------------------
    def make_tool_call(self, name: str, requestor: str = "assistant", arguments: Any = None) -> Any:
        """Run a tool for a requestor, without sync; returns a private copy of the result."""
        arguments = call_arguments(arguments)
        if requestor == "user":
            if self.solo:
                raise ValueError("User tool calls are not allowed in solo mode")
            if self.user is None:
                raise ValueError("User tools not available")
            return clone(self.user.use_tool(name, **arguments))
        if requestor == "assistant":
            if self.solo and self.user is not None and self.user.has_tool(name):
                return clone(self.user.use_tool(name, **arguments))
            if self.agent is None:
                raise ValueError("Tools not available")
            return clone(self.agent.use_tool(name, **arguments))
        raise ValueError(f"Invalid requestor: {requestor}")

    def call(self, tool_call: ToolCall) -> ToolMessage:
        """tau2's ``get_response``: run, sync, and turn any exception into an error message."""
        error = False
        try:
            result = self.make_tool_call(tool_call.name, tool_call.requestor, tool_call.arguments)
            self.sync()
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an error message
            result = f"Error: {exc}"
            error = True
        return ToolMessage(
            id=tool_call.id, content=to_json_str(result), requestor=tool_call.requestor, role="tool", error=error
        )

    # --- task definitions -----------------------------------------------------
    def _kit_for(self, env_type: str) -> Toolkit:
        if env_type == "user":
            kit = self.user
        elif env_type == "assistant":
            kit = self.agent
        else:
            raise ValueError(f"Invalid environment type: {env_type}")
        if kit is None:
            raise ValueError(f"No {env_type} toolkit in this domain")
        return kit

    def _db_for(self, env_type: str) -> Store:
        store = self._kit_for(env_type).db
        if store is None:
            raise ValueError(f"No {env_type} DB in this domain to patch")
        return store

    def run_env_function(self, call: EnvFunctionCall) -> Any:
        """Run a declared tool or helper named by a task (init action or assertion), then sync."""
        result = self._kit_for(call.env_type).run_function(call.func_name, **call.arguments)
        self.sync()
        return result

    def run_assertion(self, assertion: EnvAssertion) -> bool:
        result = self.run_env_function(assertion)
        if not isinstance(result, bool):
            raise ValueError(f"Function {assertion.func_name} returned {type(result)} instead of bool")
        return result == assertion.assert_value

    def apply_initialization_data(self, data: InitializationData) -> None:
        """Merge the task's DB patches; the other side then shares the patched DB (tau2 does this)."""
        if data.agent_data is not None:
            store = self._db_for("assistant")
            apply_patch(store, store.schema, data.agent_data)
            if self.user is not None and self.user.db is not None:
                self.user.db = store
        if data.user_data is not None:
            store = self._db_for("user")
            apply_patch(store, store.schema, data.user_data)
            if self.agent is not None and self.agent.db is not None:
                self.agent.db = store

    # --- state ------------------------------------------------------------
    def _stores(self) -> list[Store]:
        out: list[Store] = []
        for kit in (self.agent, self.user):
            if kit is not None and kit.db is not None and all(kit.db is not s for s in out):
                out.append(kit.db)
        return out

    def freeze(self) -> EnvState:
        """Snapshot both DBs; later writes copy on write, so the snapshot never changes."""
        for store in self._stores():
            store.freeze()
        return self.state()

    def restore(self, state: EnvState) -> bool:
        """Put both DBs back to a snapshot of an environment of the same domain; False if unsupported."""
        if self.agent is not None and self.agent.db is not None and state.agent is not None:
            self.agent.db.replace_root(state.agent)
        if self.user is not None and self.user.db is not None and state.user is not None:
            if state.user is state.agent and self.agent is not None:
                self.user.db = self.agent.db  # the initialisation aliased the two sides, as tau2 does
            else:
                self.user.db.replace_root(state.user)
        return True

    def state(self) -> EnvState:
        agent = self.agent.db.root if self.agent is not None and self.agent.db is not None else None
        user = self.user.db.root if self.user is not None and self.user.db is not None else None
        return EnvState(agent, user)

    def db_hash(self) -> str | None:
        return None if self.agent is None or self.agent.db is None else self.agent.db.hash()

    def user_db_hash(self) -> str | None:
        return None if self.user is None or self.user.db is None else self.user.db.hash()
