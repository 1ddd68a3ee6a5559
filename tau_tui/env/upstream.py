"""Upstream fixes: tool bugs of tau2 1.0.1 fixed (or proposed fixed) upstream, one registry entry each.

A domain package registers the fixed version of one of its tools with
``register_upstream_fix(UpstreamFix(name, domain, tool, issue, summary, fixed))``.
Replay uses the registry twice: to class a mismatch whose recording matches
the other semantics as ``upstream_fix`` (naming the issue), and, when asked
(``--upstream-fixes``), to replay with the fixed tools instead of 1.0.1's
(``apply_upstream_fixes``). Off by default: tau2 1.0.1 is what the oracle checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tau_tui.env.environment import Environment


@dataclass(frozen=True)
class UpstreamFix:
    """The fixed version of one tool: ``fixed(toolkit, **arguments)`` runs in place of the declared tool."""

    name: str  # what the switch and the replay record call it
    domain: str  # the domain whose toolkit declares ``tool``
    tool: str
    issue: str  # the upstream issue, as "tau2-bench#317"
    summary: str  # what the fix changes, in one line
    fixed: Callable[..., Any]
    refs: tuple[str, ...] = ()  # other issues and the pull request of the fix

    @property
    def reference(self) -> str:
        """The issue and its other references, for a line of text: ``tau2-bench#317, #318, fix #322``."""
        return ", ".join((self.issue, *self.refs))


UPSTREAM_FIXES: dict[str, UpstreamFix] = {}


def register_upstream_fix(fix: UpstreamFix) -> UpstreamFix:
    """Add (or replace, by name) an upstream fix; domain packages call this when imported."""
    UPSTREAM_FIXES[fix.name] = fix
    return fix


def upstream_fixes(domain: str) -> tuple[UpstreamFix, ...]:
    """The fixes registered for a domain (its base name: ``telecom`` for ``telecom-workflow``)."""
    return tuple(fix for fix in UPSTREAM_FIXES.values() if fix.domain == domain)


def set_fix(env: Environment, fix: UpstreamFix, on: bool) -> bool:
    """Make ``env`` run the fixed tool (``on``) or the declared one; False when no toolkit of it declares the tool."""
    for kit in (env.agent, env.user):
        if kit is not None and kit.has_tool(fix.tool):
            kit.replace_tool(fix.tool, fix.fixed if on else None)
            others = tuple(name for name in env.upstream_fixes if name != fix.name)
            env.upstream_fixes = tuple(sorted(others + (fix.name,))) if on else others
            return True
    return False


def apply_upstream_fixes(env: Environment, fixes: tuple[UpstreamFix, ...]) -> Environment:
    """``env`` with every one of ``fixes`` its toolkits declare the tool of applied; returns ``env``."""
    for fix in fixes:
        set_fix(env, fix, True)
    return env
