"""Task fingerprints: which version of a task (definition, tools, data) a result belongs to.

A fingerprint hashes four parts: the task definition, the domain's tools
(names, types, mutating flags, signatures, docstrings, helpers), its pristine
DBs and its policy text (``tau_tui.rollout.records``). Simulations made by
our runner carry it in ``info["task_fingerprint"]`` (*recorded*). For other
recordings it is *derived*: the task embedded in the file (else the
domain's), the current domain's tools and DBs, and the policy text the file
recorded (else the current one). A simulation whose task cannot be found has
no fingerprint (*unknown*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_tui.domains import Domain, DomainError
from tau_tui.model.io import RunFile
from tau_tui.model.tasks import Task
from tau_tui.rollout.records import (
    FINGERPRINT_KEY,
    FINGERPRINT_PARTS,
    FINGERPRINT_PARTS_KEY,
    DomainFingerprint,
    combine_fingerprint,
    domain_fingerprint,
    fingerprint_parts,
)

RECORDED, DERIVED, UNKNOWN = "recorded", "derived", "unknown"
UNKNOWN_FINGERPRINT = "unknown"


@dataclass(frozen=True)
class Fingerprint:
    """A task version: the combined hash, its parts, and where it came from."""

    value: str
    parts: dict[str, str] | None
    source: str

    @property
    def short(self) -> str:
        return self.value[:8]


def changed_parts(old: dict[str, str] | None, new: dict[str, str] | None) -> list[str]:
    """Which parts differ between two fingerprints (all of them when a side has no parts)."""
    if not old or not new:
        return list(FINGERPRINT_PARTS)
    return [part for part in FINGERPRINT_PARTS if old.get(part) != new.get(part)]


class Fingerprinter:
    """Fingerprints of tasks of one domain (variant), with the domain part computed once per solo flag."""

    def __init__(self, domain: Domain, variant: str | None = None):
        self.domain = domain
        self.variant = variant
        self._domain_parts: dict[bool, DomainFingerprint] = {}
        self._tasks: dict[tuple[int, bool, str | None], tuple[Task, Fingerprint]] = {}

    def domain_part(self, solo: bool = False) -> DomainFingerprint:
        if solo not in self._domain_parts:
            env = self.domain.new_environment(solo=solo, variant=self.variant)
            self._domain_parts[solo] = domain_fingerprint(env)
        return self._domain_parts[solo]

    def of_task(self, task: Task, solo: bool = False, policy: str | None = None) -> Fingerprint:
        """The fingerprint a run of ``task`` made now would record (``policy``: a recording's text)."""
        key = (id(task), solo, policy)
        hit = self._tasks.get(key)
        if hit is None or hit[0] is not task:
            parts = fingerprint_parts(task, self.domain_part(solo), policy)
            hit = self._tasks[key] = (task, Fingerprint(combine_fingerprint(parts), parts, DERIVED))
        return hit[1]

    def of_simulation(self, run: RunFile, raw: Any) -> Fingerprint:
        """The fingerprint of one raw simulation of ``run``: recorded, else derived, else unknown."""
        info = raw.get("info") if isinstance(raw, dict) else None
        if isinstance(info, dict) and isinstance(info.get(FINGERPRINT_KEY), str):
            parts = info.get(FINGERPRINT_PARTS_KEY)
            return Fingerprint(info[FINGERPRINT_KEY], parts if isinstance(parts, dict) else None, RECORDED)
        task_id = str(raw.get("task_id")) if isinstance(raw, dict) else None
        task = self.task_of(run, task_id)
        if task is None:
            return Fingerprint(UNKNOWN_FINGERPRINT, None, UNKNOWN)
        env_info = run.raw_info.get("environment_info")
        policy = env_info.get("policy") if isinstance(env_info, dict) else None
        return self.of_task(task, run.solo, policy if isinstance(policy, str) else None)

    def task_of(self, run: RunFile, task_id: str | None) -> Task | None:
        """The task a simulation ran: embedded in the run, else the domain's current definition."""
        if task_id is None:
            return None
        task = run.tasks().get(task_id)
        if task is not None:
            return task
        try:
            return self.domain.tasks().get(task_id)
        except DomainError:
            return None
