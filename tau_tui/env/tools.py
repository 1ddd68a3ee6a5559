"""Declaring tools: the ``tool`` decorator, ``helper`` functions, and ``Toolkit``.

Only methods marked with ``@tool`` are tools. ``@helper`` marks functions that
task definitions may run (initialisation actions, env assertions) but that an
agent or user may not call. Nothing else on a toolkit is reachable by name:
private methods, dunders and DB accessors named by a recording or a model are
unknown tools.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from enum import Enum
from types import MethodType
from typing import Any, Callable, ClassVar, TypeVar

from tau_tui.env.store import Store

_TOOL_ATTR = "__tau_tui_tool__"
_HELPER_ATTR = "__tau_tui_helper__"


class ToolType(str, Enum):
    """tau2's tool types: read, write, think, generic."""

    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


@dataclass(frozen=True)
class ToolSpec:
    """A toolkit method marked as a tool: its type, whether it mutates state, whether discoverable."""

    name: str
    type: ToolType
    mutates_state: bool
    discoverable: bool = False


Method = TypeVar("Method", bound=Callable[..., Any])


def tool(
    tool_type: ToolType = ToolType.READ, *, mutates_state: bool | None = None, discoverable: bool = False
) -> Callable[[Method], Method]:
    """Mark a toolkit method as a tool. Only WRITE tools mutate state unless told otherwise."""
    mutates = tool_type == ToolType.WRITE if mutates_state is None else mutates_state

    def mark(func: Method) -> Method:
        setattr(func, _TOOL_ATTR, (ToolType(tool_type), mutates, discoverable))
        return func

    return mark


def helper(func: Method) -> Method:
    """Mark a toolkit method that task definitions may run (init actions, assertions)."""
    setattr(func, _HELPER_ATTR, True)
    return func


class UnknownFunction(ValueError):
    """A name that is neither a declared tool nor a declared helper."""


class Toolkit:
    """One side's tools over one DB store. Subclasses declare tools with ``@tool``."""

    declared_tools: ClassVar[dict[str, ToolSpec]] = {}
    declared_helpers: ClassVar[frozenset[str]] = frozenset()
    # Whether a READ result naming a discoverable tool makes it known (``env/discovery.py``). A toolkit whose
    # discoverable tools are reached through wrapper tools instead (tau2's banking_knowledge) sets False.
    reveals_by_reading: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tools: dict[str, ToolSpec] = {}
        helpers: set[str] = set()
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                mark = getattr(member, _TOOL_ATTR, None)
                if mark is not None:
                    tools[name] = ToolSpec(name, *mark)
                elif name in tools and not name.startswith("_"):
                    tools.pop(name)  # overridden without the decorator: no longer a tool
                if getattr(member, _HELPER_ATTR, False):
                    helpers.add(name)
        cls.declared_tools = tools
        cls.declared_helpers = frozenset(helpers)

    def __init__(self, db: Store | None = None):
        self.db = db

    # --- what exists ------------------------------------------------------
    def has_tool(self, name: str) -> bool:
        return isinstance(name, str) and name in self.declared_tools

    def spec(self, name: str) -> ToolSpec:
        return self.declared_tools[name]

    def tool_names(self, include_discoverable: bool = True) -> list[str]:
        return [n for n, s in self.declared_tools.items() if include_discoverable or not s.discoverable]

    def replace_tool(self, name: str, function: Callable[..., Any] | None) -> None:
        """Run ``function(self, **arguments)`` for the declared tool ``name`` on this toolkit (None: the declared
        method again). The tool's spec stays the declared one: an upstream fix changes what a tool does, not
        what it is (``env/upstream.py``)."""
        if not self.has_tool(name):
            raise ValueError(f"Tool '{name}' not found.")
        if function is None:
            self.__dict__.pop(name, None)
        else:
            setattr(self, name, MethodType(function, self))

    def bound(self, name: str) -> Callable[..., Any]:
        """The bound method of a declared tool (never of anything else)."""
        if not self.has_tool(name):
            raise ValueError(f"Tool '{name}' not found.")
        method: Callable[..., Any] = getattr(self, name)
        return method

    # --- discoverable tools reached through wrappers (banking_knowledge) ------
    def unlocks(self, name: str, arguments: Any, content: str, error: bool) -> list[tuple[str, str, str]]:
        """(side, tool, how) this result of ``name`` makes available; ``how`` is "unlock" or "give". None here."""
        return []

    def wrapped_tool(self, name: str, arguments: Any) -> str | None:
        """The discoverable tool a wrapper call of ``name`` runs (None: not a wrapper)."""
        return None

    # --- calling ----------------------------------------------------------
    def use_tool(self, name: str, /, **kwargs: Any) -> Any:
        """Call a declared tool; unknown names fail with tau2's wording."""
        return self.bound(name)(**kwargs)

    def run_function(self, name: str, /, **kwargs: Any) -> Any:
        """Run a tool or a declared helper for a task definition."""
        if isinstance(name, str) and (name in self.declared_tools or name in self.declared_helpers):
            return getattr(self, name)(**kwargs)
        raise UnknownFunction(f"Function {name} not found in {type(self).__name__}")

    def signature(self, name: str) -> inspect.Signature:
        return inspect.signature(self.bound(name))
