"""The order make test hands the tests to pytest-xdist: the longest at the head of each worker's first share."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conftest import LONGEST_LIST, ROOT, front_loaded, group_of, longest_tests, worksteal_shares


@dataclass(frozen=True)
class FakeTest:
    nodeid: str


def ids(tests: list[FakeTest]) -> list[str]:
    return [t.nodeid for t in tests]


def test_shares_are_worksteals_first_split() -> None:
    assert worksteal_shares(10, 3) == [3, 3, 4]
    assert worksteal_shares(2000, 3) == [666, 667, 667]
    assert sum(worksteal_shares(7, 7)) == 7


def test_a_test_moves_with_its_module_and_the_ray_modules_with_each_other() -> None:
    assert group_of("tests/tui/test_corpus.py::test_x[a]") == "tests/tui/test_corpus.py"
    assert group_of("tests/workers/test_ray_cluster.py::t") == group_of("tests/workers/test_ray_executor.py::t")
    assert group_of("tests/workers/test_pool.py::t") == "tests/workers/test_pool.py"


def test_each_share_begins_with_its_long_groups_and_the_rest_keep_their_order() -> None:
    items = [FakeTest(f"tests/m{i // 3}.py::t{i}") for i in range(30)]  # ten modules of three tests
    longest = {"tests/m9.py::t29": 100.0, "tests/m8.py::t24": 60.0, "tests/m8.py::t25": 10.0}
    longest |= {"tests/m1.py::t3": 50.0, "tests/m0.py::t0": 5.0}
    out = front_loaded(items, longest, 3)
    assert sorted(out, key=lambda t: int(t.nodeid.rsplit("t", 1)[1])) == items  # the same tests, each once
    shares = [out[0:10], out[10:20], out[20:30]]
    # modules by seconds: m9 100, m8 70, m1 50, m0 5; dealt to the least loaded: m9 | m8 | m1, then m0 to m1's
    assert ids(shares[0][:3]) == ["tests/m9.py::t27", "tests/m9.py::t28", "tests/m9.py::t29"]
    assert ids(shares[1][:3]) == ["tests/m8.py::t24", "tests/m8.py::t25", "tests/m8.py::t26"]
    assert ids(shares[2][:6]) == [f"tests/m{i // 3}.py::t{i}" for i in (3, 4, 5, 0, 1, 2)]
    moved = {"tests/m9.py", "tests/m8.py", "tests/m1.py", "tests/m0.py"}
    rest = [t for t in out if group_of(t.nodeid) not in moved]
    assert rest == [t for t in items if group_of(t.nodeid) not in moved]


def test_a_selection_too_small_to_share_keeps_its_order() -> None:
    items = [FakeTest("tests/a.py::a"), FakeTest("tests/b.py::b"), FakeTest("tests/c.py::c")]
    longest = {"tests/a.py::a": 1.0, "tests/b.py::b": 2.0, "tests/c.py::c": 3.0}
    assert ids(front_loaded(items, longest, 3)) == ["tests/c.py::c", "tests/b.py::b", "tests/a.py::a"]
    assert front_loaded(items[:2], longest, 3) == items[:2]  # a worker whose share is empty


def test_the_long_tests_listed_are_tests_of_this_suite() -> None:
    listed = longest_tests()
    assert len(listed) >= 10 and LONGEST_LIST.is_file()
    for node in listed:
        assert (ROOT / node.split("::")[0]).is_file(), node
