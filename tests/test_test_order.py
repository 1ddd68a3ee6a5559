"""The order make test hands the tests to pytest-xdist: the longest at the head of each worker's first share."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conftest import LONGEST_LIST, ROOT, front_loaded, longest_tests, worksteal_shares


@dataclass(frozen=True)
class Test:
    nodeid: str


def test_shares_are_worksteals_first_split() -> None:
    assert worksteal_shares(10, 3) == [3, 3, 4]
    assert worksteal_shares(2000, 3) == [666, 667, 667]
    assert sum(worksteal_shares(7, 7)) == 7


def test_each_share_begins_with_its_long_tests_and_the_rest_keep_their_order() -> None:
    items = [Test(f"t{i}") for i in range(30)]
    longest = {"t29": 100.0, "t28": 60.0, "t27": 50.0, "t3": 45.0, "t10": 5.0}
    out = front_loaded(items, longest, 3)
    assert sorted(out, key=lambda t: int(t.nodeid[1:])) == items  # the same tests, each once
    shares = [out[0:10], out[10:20], out[20:30]]
    # dealt longest first to the worker with the fewest seconds: 100 | 60 | 50, then 45 to the third (50), 5 to
    # the second (60)
    assert [t.nodeid for t in shares[0][:1]] == ["t29"]
    assert [t.nodeid for t in shares[1][:2]] == ["t28", "t10"]
    assert [t.nodeid for t in shares[2][:2]] == ["t27", "t3"]
    rest = [t for t in out if t.nodeid not in longest]
    assert rest == [t for t in items if t.nodeid not in longest]


def test_a_selection_too_small_to_share_keeps_its_order() -> None:
    items = [Test("a"), Test("b"), Test("c")]
    assert front_loaded(items, {"a": 1.0, "b": 2.0, "c": 3.0}, 3) == [Test("c"), Test("b"), Test("a")]
    assert front_loaded(items[:2], {"a": 1.0, "b": 2.0}, 3) == items[:2]  # a worker whose share is empty


def test_the_long_tests_listed_are_tests_of_this_suite() -> None:
    listed = longest_tests()
    assert len(listed) >= 10 and LONGEST_LIST.is_file()
    for node in listed:
        assert (ROOT / node.split("::")[0]).is_file(), node
