"""Write tests/slow.txt, the tests ``make test-fast`` leaves out, and tests/longest.txt, the longest tests with
their seconds (which ``make test`` starts first), from a pytest durations report.

    .venv/bin/python -m pytest -n auto --durations=0 --durations-min=0.1 | tee durations.log
    .venv/bin/python scripts/slow_tests.py durations.log [--over 0.5] [--longest 30]

A test is slow when its setup, call and teardown together took at least ``--over`` seconds (0.5 by default:
what keeps make test-fast under a minute on two cores), and a module whose fixture setup took 2 s or more is
listed whole (its other tests would pay for the fixture). tests/conftest.py marks what is listed ``slow``, and
puts the longest at the head of each pytest-xdist worker's share.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)s (call|setup|teardown)\s+(\S.*?)\s*$")
MODULE_SETUP = 2.0  # a module whose first test's setup took this long builds a costly fixture: listed whole
OUT = Path(__file__).resolve().parents[1] / "tests" / "slow.txt"
LONGEST = OUT.with_name("longest.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="the output of pytest --durations=0")
    parser.add_argument("--over", type=float, default=0.5, help="seconds from which a test is slow (0.5)")
    parser.add_argument("--longest", type=int, default=30, help="how many tests longest.txt lists (30)")
    args = parser.parse_args()
    seconds: defaultdict[str, float] = defaultdict(float)
    modules: set[str] = set()
    for line in args.report.read_text(errors="replace").splitlines():
        found = LINE.match(line)
        if found:
            took, phase, node = float(found.group(1)), found.group(2), found.group(3)
            seconds[node] += took
            if phase == "setup" and took >= MODULE_SETUP:
                modules.add(node.split("::")[0])
    slow = sorted(modules) + sorted(
        node for node, total in seconds.items() if total >= args.over and node.split("::")[0] not in modules
    )
    head = f"# Tests that took {args.over:g} s or more (scripts/slow_tests.py); make test-fast leaves them out.\n"
    OUT.write_text(head + "".join(f"{node}\n" for node in slow))
    print(f"{OUT}: {len(slow)} tests of {len(seconds)} timed")
    longest = sorted(seconds.items(), key=lambda pair: -pair[1])[: args.longest]
    head = "# The longest tests, seconds and id (scripts/slow_tests.py); make test starts them first.\n"
    LONGEST.write_text(head + "".join(f"{took:.1f} {node}\n" for node, took in longest))
    print(f"{LONGEST}: {len(longest)} tests, {sum(t for _, t in longest):.0f} s")


if __name__ == "__main__":
    main()
