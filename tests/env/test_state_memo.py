"""Frozen plain state trees (telecom's DBs): hashes and comparisons from cached pieces equal tau2's canonical JSON."""

from __future__ import annotations

import datetime
import hashlib
import json
from enum import Enum, IntEnum
from typing import Any

import pytest

from tau_tui.env import store as store_module
from tau_tui.env.faults import AttemptCounter, _plain_key, canonical_arguments
from tau_tui.env.store import Store, canonical_bytes, same_state, state_hash


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


def canonical(tree: object) -> bytes:
    return json.dumps(tree, sort_keys=True, default=str).encode()


def tricky_tree() -> dict[str, Any]:
    return {
        "plans": [{"plan_id": "P1", "limit": 5.0, "price": -0.0, "big": 1e100}, {"plan_id": "P0", "limit": 2}],
        "lines": [
            {
                "id": "L1",
                "status": Colour.RED,
                "since": datetime.date(2025, 1, 2),
                "at": datetime.datetime(2025, 1, 2, 3, 4, 5),
                "tags": ("a", 1),
                "none": None,
                "ok": True,
            }
        ],
        "device": {
            "name": "caf\u00e9 \u2603",
            "signal": {Colour.BLUE: Colour.RED, Colour.RED: Colour.BLUE},
            "ports": {1: "one", 2: "two"},
            "nested": {"z": [1, [2, {"y": 3}]], "a": {}},
        },
        "empty_list": [],
        "empty": {},
        "count": 3,
        "ratio": float("nan"),
    }


def test_memo_bytes_are_tau2s_canonical_json_before_and_after_caching() -> None:
    tree = tricky_tree()
    expected = canonical(tree)
    assert store_module._memo_bytes(tree, 0) == expected
    assert store_module._memo_bytes(tree, 0) == expected  # now from cached pieces
    other_keys = {1: "a", 2: [1, {"x": 2}]}
    assert store_module._memo_bytes(other_keys, 0) == canonical(other_keys)
    assert state_hash(tree, frozen=True) == hashlib.sha256(expected).hexdigest() == state_hash(tree)


def test_a_state_derived_by_the_store_hashes_like_a_full_dump() -> None:
    tree = tricky_tree()
    state_hash(tree, frozen=True)  # caches the pieces of the base state
    store = Store(tree)
    store.edit("plans", 1)["limit"] = 3
    store.append("lines", {"id": "L2", "status": Colour.BLUE})
    store.update(("device",), {"name": "new"})
    derived = store.freeze()
    assert derived["plans"][0] is tree["plans"][0]  # shared, so its piece comes from the cache
    assert state_hash(derived, frozen=True) == hashlib.sha256(canonical(derived)).hexdigest()
    assert tree["plans"][1]["limit"] == 2 and tree["device"]["name"] == "caf\u00e9 \u2603"  # the base is untouched


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, True),
        (1, 1.0),
        (0.0, -0.0),
        ("1", 1),
        (None, "null"),
        ([1, 2], [1, 2, 3]),
        ({"a": 1}, {"b": 1}),
        ([1, 2], (1, 2)),
        (datetime.date(2025, 1, 2), "2025-01-02"),
        (Colour.RED, "red"),
        ({"a": 1}, {"a": 1}),
        (float("nan"), float("nan")),
        ({1: "x"}, {"1": "x"}),
        ({"k": [1, {"x": None}]}, {"k": [1, {"x": None}]}),
        ({"k": [1, {"x": None}]}, {"k": [1, {"x": False}]}),
        (1.5, 1.5),
        (float("inf"), float("inf")),
        (float("inf"), float("-inf")),
        (1e16, 1.0000000000000002e16),
        (datetime.date(2025, 1, 2), datetime.date(2025, 1, 2)),
        (datetime.date(2025, 1, 2), datetime.date(2025, 1, 3)),
        (
            datetime.datetime(2025, 1, 2, 10, tzinfo=datetime.timezone.utc),
            datetime.datetime(2025, 1, 2, 11, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
        ),
        (Colour.RED, Colour.BLUE),
        (Colour.RED, Colour("red")),
        (Level.LOW, Level.HIGH),
        (Level.LOW, 1),
    ],
)
def test_frozen_comparison_agrees_with_the_canonical_json(a: object, b: object) -> None:
    for left, right in ((a, b), (b, a)):
        tree_a, tree_b = {"device": {"v": left}, "list": [left]}, {"device": {"v": right}, "list": [right]}
        assert same_state(tree_a, tree_b, frozen=True) is (canonical_bytes(tree_a) == canonical_bytes(tree_b))


def test_store_counts_every_write() -> None:
    store = Store({"a": {"x": 1}, "b": [1]})
    counts = [store.writes]
    store.edit("a")["x"] = 2
    counts.append(store.writes)
    store.set("a", "y", 3)
    counts.append(store.writes)
    store.update(("a",), {"z": 4})
    counts.append(store.writes)
    store.append("b", 2)
    counts.append(store.writes)
    store.delete("a", "y")
    counts.append(store.writes)
    store.replace_root({"a": {}})
    counts.append(store.writes)
    store.get("a")
    store.freeze()
    assert counts == sorted(set(counts)) and len(counts) == 7 and store.writes == counts[-1]
    assert store.key_writes == {"a": 4, "b": 1}  # the root replaced as a whole counts in writes only


def test_plain_argument_keys_match_canonical_json_equality() -> None:
    samples = [{"a": 1}, {"a": True}, {"a": "1"}, {"a": None}, {"a": 1, "b": "x"}, {"b": "x", "a": 1}, {}]
    for x in samples:
        for y in samples:
            same_key = (_plain_key(x) or canonical_arguments(x)) == (_plain_key(y) or canonical_arguments(y))
            assert same_key is (canonical_arguments(x) == canonical_arguments(y))
    assert _plain_key({"a": 1.5}) is None and _plain_key({"a": [1]}) is None and _plain_key([1]) is None
    counter = AttemptCounter()
    assert [
        counter.next("t", {"a": 1, "b": "x"}),
        counter.next("t", {"b": "x", "a": 1}),
        counter.next("t", {"a": True, "b": "x"}),
        counter.next("t", {"a": 1.5}),
        counter.next("t", {"a": 1.5}),
    ] == [1, 2, 1, 1, 2]


def test_plain_argument_keys_leave_other_keys_to_the_canonical_text() -> None:
    assert _plain_key({1: "a", "b": 2}) is None and _plain_key({"a": {"b": 1}}) is None
    assert _plain_key({"a": 1}) != _plain_key({"a": True}) and _plain_key({"a": 1}) == _plain_key({"a": 1})


def test_the_piece_cache_is_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "_MAX_PIECE_BYTES", 100)
    store_module._PIECES.clear()
    monkeypatch.setattr(store_module, "_piece_bytes", 0)
    trees = [{"items": ["x" * 60, {"n": i}]} for i in range(5)]
    for tree in trees:
        assert store_module._memo_bytes(tree, 0) == canonical(tree)
    assert store_module._piece_bytes <= 100 + len(canonical(trees[-1]["items"])) and len(store_module._PIECES) <= 3
