"""Discoverable tools: callable from the start, listed to a side only once it has found them.

A tool declared with ``@tool(..., discoverable=True)`` is not in the tool
schemas a participant is given. It is discovered when a successful result of
one of that side's READ tools (a document read, a search) names it as a whole
word. The rule reads only the call and its result text, so a live episode and
a replay of its recording find the same discoveries at the same step.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tau_tui.env.environment import Environment
from tau_tui.env.tools import Toolkit, ToolType
from tau_tui.model.messages import Message, ToolMessage

DISCOVERED_KEY = "discovered_tools"  # on a tool message: discoverable tools its content made known
DISCOVERED_HOW_KEY = "discovered_how"  # on a tool message: {tool: "unlock" | "give"} for wrapper-reached tools


def discovered_mark(message: Message) -> list[str]:
    """The tools a live episode marked as made known by this tool message (``discovered_tools``)."""
    if not isinstance(message, ToolMessage):
        return []
    found = (message.model_extra or {}).get(DISCOVERED_KEY)
    return [str(name) for name in found] if isinstance(found, list) else []


def discovered_how(message: Message) -> dict[str, str]:
    """How each tool of the ``discovered_tools`` mark became available ("read" unless the mark says otherwise)."""
    how = (message.model_extra or {}).get(DISCOVERED_HOW_KEY) if isinstance(message, ToolMessage) else None
    return {str(k): str(v) for k, v in how.items()} if isinstance(how, dict) else {}


def discoverable_tools(kit: Toolkit | None) -> list[str]:
    """The discoverable tools a toolkit declares."""
    if kit is None:
        return []
    return [name for name, spec in kit.declared_tools.items() if spec.discoverable]


@lru_cache(maxsize=None)
def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def kit_of(env: Environment, requestor: str) -> Toolkit | None:
    """The toolkit whose tools a requestor may be listed ("assistant": the agent's)."""
    return env.user if requestor == "user" else env.agent


def revealed_tools(env: Environment, tool: str, requestor: str, content: str, error: bool) -> list[str]:
    """Discoverable tools of the requestor's toolkit that this result of ``tool`` names (in declaration order)."""
    kit = kit_of(env, requestor)
    hidden = discoverable_tools(kit)
    if (
        error
        or not hidden
        or kit is None
        or not kit.reveals_by_reading
        or not kit.has_tool(tool)
        or kit.spec(tool).type is not ToolType.READ
    ):
        return []
    return [name for name in hidden if name != tool and _word(name).search(content or "")]
