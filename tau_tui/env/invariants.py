"""Domain invariants: what a domain's data model promises after every write, one registry entry each.

A domain package declares what holds in its data with
``register_invariant(Invariant(name, domain, description, check))``: ``check(db, scope)`` looks at one
side's DB state tree and returns the ``Violation``s it finds. ``scope`` maps a top-level collection to the
entity keys a write touched (``None``: look at everything), so a check after one write reads only what
changed. The doctor (``tau_tui.doctor``) runs them on the replayed state after every write; an invariant
must hold on the domain's initial data and on every gold trajectory, or it is no invariant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Scope = Mapping[str, set[Any]] | None


@dataclass(frozen=True)
class Violation:
    """Where an invariant fails (a dotted path into the DB) and how."""

    where: str
    message: str


@dataclass(frozen=True)
class Invariant:
    """One promise of a domain's data model, checked on a side's DB (``side``: "agent" or "user")."""

    name: str
    domain: str
    description: str
    check: Callable[[Any, Scope], Iterable[Violation]]
    side: str = "agent"


INVARIANTS: dict[str, Invariant] = {}


def register_invariant(invariant: Invariant) -> Invariant:
    """Add (or replace, by name) a domain invariant; domain packages call this when imported."""
    INVARIANTS[invariant.name] = invariant
    return invariant


def invariants(domain: str) -> tuple[Invariant, ...]:
    """The invariants registered for a domain (its base name)."""
    return tuple(inv for inv in INVARIANTS.values() if inv.domain == domain)


def entities(db: Any, collection: str, scope: Scope) -> Iterator[tuple[Any, Any]]:
    """(key, entity) of a top-level collection: the keys ``scope`` names for it, or all when ``scope`` is None."""
    table = db.get(collection) if isinstance(db, Mapping) else None
    if not isinstance(table, Mapping):
        return
    keys: Iterable[Any] = table if scope is None else scope.get(collection, ())
    for key in keys:
        if key in table:
            yield key, table[key]


def violations(invariant: Invariant, db: Any, scope: Scope = None) -> list[Violation]:
    """The invariant's violations on ``db``; a check that crashes on the data is itself a violation."""
    if db is None:
        return []
    try:
        return list(invariant.check(db, scope))
    except Exception as exc:  # noqa: BLE001 - data the check cannot read breaks what it promises
        return [Violation("", f"the check could not read the data: {type(exc).__name__}: {exc}")]
