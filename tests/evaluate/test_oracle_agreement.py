"""Agreement with ORACLE.jsonl: what tau2 1.0.1 computes for every corpus simulation.

For each domain, every simulation's strict replay verdict, predicted and gold
DB hashes (agent and user) and db_match must equal the oracle's. The counts
are printed per domain (run with ``-s`` to see them).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.model import open_run
from tests.conftest import CORPUS

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

FIELDS = ("strict_ok", "pred_db", "pred_user_db", "gold_db", "gold_user_db", "db_match")


def _locate(name: str) -> Path:
    for candidate in (CORPUS / name, CORPUS / "generated" / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(name)


def agreement(
    domain: str, oracle_rows: list[dict[str, Any]], analyzer: Analyzer
) -> tuple[dict[str, int], int, list[str]]:
    rows = [r for r in oracle_rows if r["domain"] == domain and "oracle_error" not in r]
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_file[row["file"]].append(row)
    agree = {f: 0 for f in FIELDS}
    problems: list[str] = []
    for name, file_rows in sorted(by_file.items()):
        run = open_run(_locate(name))
        for row in file_rows:
            index = run.find(row["sim"])
            assert index is not None, f"{name}: simulation {row['sim']} not found"
            ours = analyzer.analyze(run, index).to_json()
            bad = [f for f in FIELDS if ours[f] != row[f]]
            for f in FIELDS:
                agree[f] += f not in bad
            if bad:
                problems.append(f"{name} {row['sim']} task={row['task']}: {', '.join(bad)}")
    return agree, len(rows), problems


@pytest.mark.parametrize("domain", ["mock", "banking_knowledge"])
def test_oracle_agreement(
    domain: str, oracle_rows: list[dict[str, Any]], analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    agree, total, problems = agreement(domain, oracle_rows, analyzer)
    with capsys.disabled():
        counts = ", ".join(f"{f} {n}/{total}" for f, n in agree.items())
        print(f"\n[oracle] {domain}: {total} simulations; {counts}")
    assert total > 0
    assert not problems, "\n".join(problems[:20])
