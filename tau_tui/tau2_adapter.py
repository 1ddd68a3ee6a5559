"""Replaying domains registered in an installed ``tau2`` package through our core.

People extend tau2 with their own domains in forks. When ``tau2`` is
importable, any domain its registry knows (and that we do not implement
natively) is wrapped here: tau2's toolkits run the tools and hold the DBs as
pydantic models, while replay, verdicts, hashes, diffs and the TUI are ours.

Only tau2's declared tools are callable by name. Task definitions may also run
the toolkit's public helper methods (tau2 uses plain methods for init actions
and assertions), never private names or anything inherited from tau2's base
classes.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any, Callable

from tau_tui.env.domain import Domain, DomainError
from tau_tui.env.environment import Environment, EnvState, call_arguments
from tau_tui.env.store import clone
from tau_tui.env.tools import ToolType, UnknownFunction
from tau_tui.model.tasks import EnvFunctionCall, InitializationData, Task


def tau2_available() -> bool:
    try:
        return importlib.util.find_spec("tau2") is not None and importlib.util.find_spec("tau2.registry") is not None
    except (ImportError, ValueError):
        return False


def _quiet_tau2_logging() -> None:
    """tau2 logs its start-up chatter (registry contents, missing .env) through loguru to stderr;
    our CLI promises one-line errors, so records from tau2's own modules are switched off."""
    try:
        from loguru import logger
    except ImportError:
        return
    logger.disable("tau2")


def _registry() -> Any:  # tau2.registry.registry (tau2 is an optional extra, not followed by mypy)
    _quiet_tau2_logging()
    try:
        from tau2.registry import registry  # heavy: imported only when an adapted domain is used
    except Exception as exc:  # noqa: BLE001 - a broken tau2 install is reported on one line
        raise DomainError(f"tau2 is installed but cannot be imported ({type(exc).__name__}: {exc})") from None
    return registry


def tau2_domain_names() -> list[str]:
    return list(_registry().get_domains()) if tau2_available() else []


def _share_unchanged(before: Any, after: Any) -> Any:
    """``after`` with every subtree equal to ``before``'s replaced by it (so snapshots share memory)."""
    if before is None:
        return after
    if isinstance(before, dict) and isinstance(after, dict):
        if before.keys() == after.keys():
            merged = {k: _share_unchanged(before[k], after[k]) for k in after}
            return before if all(merged[k] is before[k] for k in after) else merged
        return {k: _share_unchanged(before.get(k), v) if k in before else v for k, v in after.items()}
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        merged_list = [_share_unchanged(b, a) for b, a in zip(before, after, strict=False)]
        return before if all(m is b for m, b in zip(merged_list, before, strict=False)) else merged_list
    return before if type(before) is type(after) and before == after else after


class _KitView:
    """Declared-tool facts about one tau2 toolkit, in our terms."""

    def __init__(self, kit: Any):
        self.kit = kit
        self.names = set(kit.tools.keys()) if kit is not None else set()

    def has(self, name: str) -> bool:
        return isinstance(name, str) and name in self.names

    def tool_type(self, name: str) -> ToolType:
        raw = self.kit.tool_type(name)
        return ToolType(getattr(raw, "value", raw))

    def mutates(self, name: str) -> bool:
        probe = getattr(self.kit, "tool_mutates_state", None)
        if probe is not None:
            return bool(probe(name))
        return self.tool_type(name) is ToolType.WRITE

    def helper(self, name: str) -> Callable[..., Any]:
        """A public method the domain's toolkit class defines itself (not tau2's base classes)."""
        if not isinstance(name, str) or name.startswith("_") or (name not in self.names and not self._defines(name)):
            raise UnknownFunction(f"Function {name} not found in {type(self.kit).__name__}")
        method: Callable[..., Any] = getattr(self.kit, name)
        return method

    def _defines(self, name: str) -> bool:
        """Whether the toolkit's own classes, below tau2's base classes, define a function ``name``."""
        from tau2.environment.toolkit import ToolKitBase

        base_names = {n for klass in ToolKitBase.__mro__ for n in vars(klass)}
        for klass in type(self.kit).__mro__:
            if klass is ToolKitBase or klass is object:
                break
            member = vars(klass).get(name)
            if member is not None and inspect.isfunction(member) and name not in base_names:
                return True
        return False


class Tau2Environment(Environment):
    """Our ``Environment`` interface over a tau2 ``Environment`` object."""

    def __init__(self, tau2_env: Any, solo: bool = False):
        self.inner = tau2_env
        self._agent = _KitView(tau2_env.tools)
        self._user = _KitView(getattr(tau2_env, "user_tools", None))
        self._last: tuple[Any, Any] = (None, None)
        super().__init__(tau2_env.get_domain_name(), tau2_env.get_policy(), None, None, solo=False)
        self.solo = solo

    def sync(self) -> None:
        if hasattr(self, "inner"):
            self.inner.sync_tools()

    def _view(self, name: str) -> _KitView | None:
        for view in (self._agent, self._user):
            if view.has(name):
                return view
        return None

    def has_tool(self, name: Any) -> bool:
        return self._view(name) is not None

    def tool_names(self) -> frozenset[str]:
        return frozenset(self._agent.names | self._user.names)

    def mutates(self, name: str) -> bool:
        view = self._view(name)
        return True if view is None else view.mutates(name)

    def tool_type(self, name: str) -> ToolType | None:
        view = self._view(name)
        return None if view is None else view.tool_type(name)

    def side_of(self, name: str) -> str | None:
        if self._agent.has(name):
            return "assistant"
        if self._user.has(name):
            return "user"
        return None

    def make_tool_call(self, name: str, requestor: str = "assistant", arguments: Any = None) -> Any:
        arguments = call_arguments(arguments)
        if not self.has_tool(name):
            raise ValueError(f"Tool '{name}' not found.")
        result = self.inner.make_tool_call(name, requestor=requestor, **arguments)
        return copy.deepcopy(result)

    def run_env_function(self, call: EnvFunctionCall) -> Any:
        if call.env_type not in ("user", "assistant"):
            raise ValueError(f"Invalid environment type: {call.env_type}")
        view = self._user if call.env_type == "user" else self._agent
        if view.kit is None:
            raise ValueError(f"No {call.env_type} toolkit in this domain")
        result = view.helper(call.func_name)(**call.arguments)
        self.sync()
        return result

    def apply_initialization_data(self, data: InitializationData) -> None:
        from tau2.data_model.tasks import InitializationData as Tau2Init

        self.inner.set_state(Tau2Init.model_validate(data.model_dump()), None, [])

    def _dump(self, kit: Any) -> Any:
        return None if kit is None or getattr(kit, "db", None) is None else kit.db.model_dump()

    def freeze(self) -> EnvState:
        agent = _share_unchanged(self._last[0], self._dump(self.inner.tools))
        user = _share_unchanged(self._last[1], self._dump(getattr(self.inner, "user_tools", None)))
        self._last = (agent, user)
        return EnvState(agent, user)

    def state(self) -> EnvState:
        return self.freeze()

    def restore(self, state: EnvState) -> bool:
        return False  # tau2's pydantic DBs are not rebuilt from snapshots

    def db_hash(self) -> str | None:
        digest: str | None = self.inner.get_db_hash()
        return digest

    def user_db_hash(self) -> str | None:
        digest: str | None = self.inner.get_user_db_hash()
        return digest


class Tau2Domain(Domain):
    """A domain served by an installed tau2's registry."""

    uses_tau2_data = False

    def __init__(self, name: str):
        super().__init__(None)
        self.name = name
        prefix = f"{name}-"
        self.variants = tuple(n[len(prefix) :] for n in tau2_domain_names() if n.startswith(prefix))

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        full = f"{self.name}-{variant}" if variant else self.name
        registry = _registry()
        if full not in registry.get_domains():  # never another domain's environment in its place
            raise DomainError(f"tau2's registry has no domain '{full}'")
        constructor = registry.get_env_constructor(full)
        try:
            inner = constructor(solo_mode=solo)
        except TypeError:
            inner = constructor()
        return Tau2Environment(inner, solo=solo)

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        return self.new_environment(solo=solo, variant=variant).policy

    def tasks(self) -> dict[str, Task]:
        if self._tasks is None:
            registry = _registry()
            try:
                loaded = registry.get_tasks_loader(self.name)()
            except KeyError:
                loaded = []
            self._tasks = {t.id: t for t in (Task.model_validate(clone(x.model_dump())) for x in loaded)}
        return self._tasks

    def task_file(self) -> Path:
        raise DomainError(f"tau2 domain '{self.name}' has no task file of ours")


class Tau2Provider:
    """The domains an installed tau2's registry knows: a ``DomainProvider`` that can also list them
    (``domain_names``), so that a recording naming no domain can be matched against a fork's own domains too."""

    def __call__(self, name: str) -> Tau2Domain | None:
        """The tau2-registered domain ``name`` (or its base name), if tau2 knows it."""
        if not tau2_available():
            return None
        names = tau2_domain_names()
        base = name.split("-")[0]
        if name not in names and (name != base or base not in names):  # a variant tau2 lacks is no domain of it
            return None
        return Tau2Domain(base if base in names else name)

    def domain_names(self) -> list[str]:
        """The base names of the domains tau2's registry holds (none without tau2; importing it takes seconds)."""
        return list(dict.fromkeys(name.split("-")[0] for name in tau2_domain_names()))


adapted_domain = Tau2Provider()
