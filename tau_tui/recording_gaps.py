"""What a recording leaves out, worked out where the domain registry is: its domain, and old uploads' tasks.

``model/`` reads files and knows no domains, so a file that names no domain carries "domain unknown"
(``RunFile.resolution`` is None) until a ``RunResolver`` looks at it. In order:

1. the domain the file states (``info.environment_info.domain_name``, a top-level ``domain``): kept;
2. ``--domain D`` (the settings' ``recording_domain``), for files that name none;
3. a ``results.json`` or ``run.json`` beside the file that names one (``model.io.sidecar_domain``);
4. the tools it calls, matched against each domain's tools (``DomainRegistry.tool_index``: the domain
   folders' toolkits; an installed tau2's domains, a fork's own among them, only when the folders do not
   settle it, since importing tau2 takes seconds and the folders win by name as well).

Then simulations without a task id, trial or termination get them back (``model.recover``), against the
file's tasks or its domain's. The result is a ``RunResolution`` the run keeps; ``notices`` says in one line
per fact what was inferred and how, so nothing is recovered silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau_tui.domains import DomainError, split_variant
from tau_tui.model.io import RunResolution, sidecar_domain
from tau_tui.model.recover import (
    DomainMatch,
    checked_tools,
    lacks,
    match_domain,
    recover_simulations,
    summary,
    tool_calls,
)

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.model.io import RunFile
    from tau_tui.model.tasks import Task

DOMAIN_FLAG = "--domain NAME"
FORK_HINT = (
    "a fork's own domain? supply it with --domains DIR (a folder holding its package) or with the fork's tau2 "
    "installed (its registry is served), and name it with --domain NAME"
)


class RunResolver:
    """Works out what runs leave out against one registry; ``recording_domain`` is ``--domain``'s value."""

    def __init__(self, registry: DomainRegistry, recording_domain: str | None = None):
        self.registry = registry
        self.recording_domain = recording_domain
        self._indexes: dict[bool, dict[str, frozenset[str]]] = {}

    def tool_index(self, fallbacks: bool = False) -> dict[str, frozenset[str]]:
        """Each domain's tools (built once per resolver; with ``fallbacks``, tau2's domains too)."""
        if fallbacks not in self._indexes:
            self._indexes[fallbacks] = self.registry.tool_index(fallbacks=fallbacks)
        return self._indexes[fallbacks]

    def resolve(self, run: RunFile) -> RunResolution:
        """The run's domain when it names none (or why it cannot be told) and its simulations' recovered fields."""
        domain, source, problem = (None, None, None) if run.domain_name else self._domain(run)
        named = run.domain_name or domain
        recovered = {}
        if not run.recorded_only and any(lacks(entry) for entry in run.entries):  # a v1 run is shown as recorded
            untold = any(not entry.task_id for entry in run.entries)  # only then are tasks needed
            tasks, tasks_from = self._tasks(run, named) if untold else ({}, "no tasks (none needed)")
            recovered = recover_simulations(run.raw_sims, run.entries, tasks, tasks_from)
        return RunResolution(domain, source, problem, recovered)

    def notices(self, run: RunFile) -> list[str]:
        """One line each (naming the file) for what was inferred about ``run`` and how."""
        resolution = run.resolution
        out = []
        stated = run.domain_name
        if stated and self.recording_domain and split_variant(stated)[0] != split_variant(self.recording_domain)[0]:
            out.append(
                f"{run.path}: names its domain '{stated}'; --domain {self.recording_domain} is for files naming none"
            )
        if resolution is not None and resolution.domain is not None:
            out.append(f"{run.path}: domain {resolution.domain} (the file names none), from {resolution.source}")
        said = summary(resolution.recovered) if resolution is not None else None
        if said:
            out.append(f"{run.path}: {said}")
        return out

    def _domain(self, run: RunFile) -> tuple[str | None, str | None, str | None]:
        """(domain, where it came from, None), or (None, None, why it cannot be told)."""
        if self.recording_domain:
            return self.recording_domain, "--domain", None
        beside = sidecar_domain(run.path)
        if beside is not None:
            return beside[0], f"{beside[1].name} beside it", None
        calls = tool_calls(run.raw_sims)
        index = self.tool_index()
        match = match_domain(calls, index)
        if match.domain is None and calls:
            wider = self.tool_index(fallbacks=True)
            if len(wider) > len(index):
                index, match = wider, match_domain(calls, wider)
        if match.domain is not None:
            return match.domain, f"the tools it calls ({_names(match.deciding)})", None
        if not calls:  # no tool called: the gold actions its recorded checks name are the domain's tools too
            checked = checked_tools(run.raw_sims)
            by_checks = match_domain(checked, index) if checked else None
            if by_checks is not None and by_checks.domain is None:
                wider = self.tool_index(fallbacks=True)
                if len(wider) > len(index):
                    by_checks = match_domain(checked, wider)
            if by_checks is not None and by_checks.domain is not None:
                names = _names(by_checks.deciding)
                return by_checks.domain, f"the tools its recorded action checks name ({names}); it calls none", None
        return None, None, _cannot_tell(match, tuple(sorted(calls)), sorted(index))

    def _tasks(self, run: RunFile, domain: str | None) -> tuple[dict[str, Task], str]:
        """The tasks task ids are recovered against: the file's own, else its domain's (none when unknown)."""
        own = run.tasks()
        if own:
            return own, "the file's tasks"
        if domain is None:
            return {}, "no tasks (the domain is unknown)"
        try:
            return self.registry.get(domain).tasks(), f"the tasks of domain {domain}"
        except (DomainError, ValueError) as exc:  # a domain that cannot load, or a task file that does not validate
            return {}, f"no tasks ({exc})"


def _names(names: tuple[str, ...], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _cannot_tell(match: DomainMatch, called: tuple[str, ...], known: list[str]) -> str:
    """The one line for a run whose domain nothing tells."""
    head = "cannot tell the domain: the file names none"
    if not match.calls:
        return f"{head} and calls no tool; pass {DOMAIN_FLAG} (known: {', '.join(known) or 'none'})"
    if match.candidates:
        return (
            f"{head}, and the tools it calls ({_names(called)}) are in {', '.join(match.candidates)} alike; "
            f"pass {DOMAIN_FLAG} to choose"
        )
    return f"{head}, and no domain we know has the tools it calls ({_names(match.unknown)}); {FORK_HINT}"
