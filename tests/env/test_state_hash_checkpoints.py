"""The checkpointed DB hash (the untouched prefix not hashed again) equals sha256 of the canonical JSON."""

from __future__ import annotations

import hashlib
import random

import pytest

from tau_tui.env import store as store_module
from tau_tui.env.store import Collection, CollectionBase, canonical_bytes, state_hash


def _root(bases: dict[str, CollectionBase]) -> dict[str, Collection]:
    return {name: Collection(base) for name, base in bases.items()}


def test_every_kind_of_change_hashes_as_the_whole_canonical_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_BYTES", 512)  # many checkpoints on a small DB
    rng = random.Random(7)
    bases = {
        name: CollectionBase(
            {f"{name[0]}{i:04d}": {"n": i, "tags": [name, i % 7], "note": "é" * (i % 3)} for i in range(300)}
        )
        for name in ("flights", "reservations", "users")
    }
    untouched = _root(bases)
    assert state_hash(untouched) == hashlib.sha256(canonical_bytes(untouched)).hexdigest()
    for trial in range(200):
        root = _root(bases)
        for _ in range(rng.randint(1, 4)):
            coll = root[rng.choice(list(root))]
            keys = sorted(coll)
            action = rng.choice(("change", "delete", "insert", "insert_first", "insert_last", "delete_last"))
            if action == "change":
                coll[rng.choice(keys)] = {"n": -trial}
            elif action == "delete":
                del coll[rng.choice(keys)]
            elif action == "delete_last":
                del coll[keys[-1]]
            elif action == "insert":
                coll[rng.choice(keys) + "x"] = [trial]
            elif action == "insert_first":
                coll["0"] = trial
            else:
                coll["zzzz"] = None
        assert state_hash(root) == hashlib.sha256(canonical_bytes(root)).hexdigest(), trial


def test_a_root_that_is_not_all_collections_is_hashed_whole() -> None:
    root = {"a": Collection({"x": 1}), "meta": {"v": 2}}
    assert state_hash(root) == hashlib.sha256(canonical_bytes(root)).hexdigest()


def test_same_state_is_canonical_equality_compared_by_changes() -> None:
    from tau_tui.env.store import same_state

    rng = random.Random(11)
    bases = {name: CollectionBase({f"k{i:03d}": {"v": i} for i in range(40)}) for name in ("a", "b")}
    seen = {True: 0, False: 0}
    for trial in range(300):
        left, right = _root(bases), _root(bases)
        for side in (left, right):
            for _ in range(rng.randint(0, 2)):
                coll = side[rng.choice("ab")]
                key = f"k{rng.randint(0, 45):03d}"
                if rng.random() < 0.3 and key in coll:
                    del coll[key]
                else:
                    coll[key] = {"v": rng.randint(0, 2)} if rng.random() < 0.5 else {"v": int(key[1:])}
        expected = canonical_bytes(left) == canonical_bytes(right)
        assert same_state(left, right) is expected, trial
        seen[expected] += 1
    assert seen[True] > 20 and seen[False] > 20  # both outcomes were exercised
