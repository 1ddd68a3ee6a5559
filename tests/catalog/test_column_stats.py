"""The runs table's column facts kept per loaded file (``views.column_stats``) against measuring every row afresh.

What the table used to compute on each rebuild (the longest value of each text column, where each value
differs from its sorted neighbours, which conditional columns have a row) is the reference: the kept facts
must say the same after rows arrive in pieces, after a file is replaced, removed or resolved, and for a
value looked up at any point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.catalog import Catalog
from tau_tui.model.io import Recovered, RunFile, RunResolution, open_run
from tau_tui.views import column_stats
from tau_tui.views.column_stats import MAX_NATURAL, ColumnStats
from tau_tui.views.columns import COLUMNS, plain
from tau_tui.views.layout import distinct_starts
from tests.conftest import CORPUS, corpus_required

if TYPE_CHECKING:
    from tau_tui.catalog import SortSpec
    from tau_tui.catalog.rows import RunRow

pytestmark = pytest.mark.corpus
FILES = [
    "sierra-research__tau2-bench__airline.json",
    "sierra-research__tau2-bench__2025-08-10T02-44-06.496849_telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json",
    "sierra-research__tau-bench__gpt-4o-airline.json",
]
MEASURED = [c for c in COLUMNS if c.flex or c.elide]


def reference(rows: Sequence[RunRow]) -> tuple[dict[str, int], dict[str, dict[str, int]], set[str]]:
    """What the table computed over every row before (per column: longest value, starts; shown columns)."""
    natural, starts = {}, {}
    for column in MEASURED:
        values = {plain(column.cell(row)) for row in rows}
        natural[column.key] = min(max((len(v) for v in values), default=0), MAX_NATURAL)
        if column.elide:
            starts[column.key] = distinct_starts(values)
    shows = {c.key for c in COLUMNS if c.when is not None and any(c.when(r) for r in rows)}
    return natural, starts, shows


def agrees(stats: ColumnStats, rows: Sequence[RunRow]) -> None:
    natural, starts, shows = reference(rows)
    for column in MEASURED:
        assert stats.natural(column) == natural[column.key], column.key
        for value, start in starts.get(column.key, {}).items():
            assert stats.start(column, value) == start, (column.key, value)
    assert {c.key for c in COLUMNS if c.when is not None and stats.shows(c)} == shows


@pytest.fixture
def runs() -> list[RunFile]:
    corpus_required()
    out = []
    for name in FILES:
        out.append(open_run(CORPUS / name))
    return out


def test_rows_fed_at_once_agree_with_measuring_each_row(runs: list[RunFile]) -> None:
    catalog = Catalog()
    for run in runs:
        catalog.add_run(run)
    stats = ColumnStats(COLUMNS)
    stats.feed(catalog.rows)
    agrees(stats, catalog.rows)
    # the names really are shortened somewhere: the test would not notice a start of 0 everywhere otherwise
    assert any(stats.start(c, plain(c.cell(r))) for c in MEASURED if c.elide for r in catalog.rows)


def test_rows_arriving_in_pieces_agree_after_every_piece(runs: list[RunFile], monkeypatch: pytest.MonkeyPatch) -> None:
    """A file indexed piece by piece (``grow_run``): many small sorted runs, merged past ``MAX_SEGMENTS``."""
    monkeypatch.setattr(column_stats, "MAX_SEGMENTS", 2)
    catalog = Catalog()
    stats = ColumnStats(COLUMNS)
    for run in runs:
        size = len(run.entries)
        for count in [1, 2, 3, 5, 8, size // 2, size]:
            catalog.grow_run(run, min(count, size))
            assert stats.sync(catalog.files, catalog.file_rows)
            agrees(stats, catalog.rows)
        catalog.add_run(run)
    assert not stats.sync(catalog.files, catalog.file_rows)  # nothing new: nothing measured again


def test_a_file_replaced_removed_or_resolved_is_measured_again(runs: list[RunFile]) -> None:
    catalog = Catalog()
    for run in runs:
        catalog.add_run(run)
    stats = ColumnStats(COLUMNS)
    stats.sync(catalog.files, catalog.file_rows)
    # replaced: the same path read again, its simulations' ids changed
    first = runs[0]
    again = open_run(first.path)
    for i, entry in enumerate(again.entries):
        entry.id = f"renamed-{i:04d}-{entry.id}"
    catalog.add_run(again)
    assert stats.sync(catalog.files, catalog.file_rows)
    agrees(stats, catalog.rows)
    sim = next(c for c in COLUMNS if c.key == "sim")
    old_ids = {plain(sim.cell(r)) for r in catalog.rows_of(first.path)}
    assert all(v.startswith("renamed-") for v in old_ids)
    # removed
    catalog.remove_file(runs[1].path)
    assert stats.sync(catalog.files, catalog.file_rows)
    agrees(stats, catalog.rows)
    # resolved: the run's recovered fields change what its rows show
    run = runs[2]
    entry = run.entries[0]
    saved = entry.task_id
    entry.task_id = ""
    run.resolve(RunResolution(recovered={0: dataclasses.replace(_recovered(), task_id=saved + "-recovered")}))
    assert stats.sync(catalog.files, catalog.file_rows)
    agrees(stats, catalog.rows)


def test_a_value_between_others_finds_its_neighbours_across_files(tmp_path: Path) -> None:
    """Neighbours come from any file: ``a_b_c`` in one file, ``a_b_d`` in another, ``a_x`` in a third."""
    corpus_required()
    base = open_run(CORPUS / FILES[0])
    catalog = Catalog()
    for n, ids in enumerate((["a_b_c", "zz"], ["a_b_d"], ["a_x", "a_b_c"])):
        run = dataclasses.replace(base, path=tmp_path / f"f{n}.json")
        run.entries = [dataclasses.replace(base.entries[i], id=sim_id, index=i) for i, sim_id in enumerate(ids)]
        catalog.add_run(run)
    stats = ColumnStats(COLUMNS)
    stats.sync(catalog.files, catalog.file_rows)
    sim = next(c for c in COLUMNS if c.key == "sim")
    assert {v: stats.start(sim, v) for v in ("a_b_c", "a_b_d", "a_x", "zz")} == distinct_starts(
        ["a_b_c", "zz", "a_b_d", "a_x"]
    )
    assert stats.start(sim, "a_b_c") == 4  # shares "a_b_" with a_b_d: its own part starts at "c"


def _recovered() -> Recovered:
    return Recovered()


def test_the_load_order_view_needs_no_sort_and_says_the_same(runs: list[RunFile]) -> None:
    """``Catalog.view`` with no sort column copies (or filters) the rows kept in load order: the same rows in
    the same order as sorting them by their load order, reversed included, files added out of order too."""
    from tau_tui.catalog import RunFilter, SortSpec
    from tau_tui.catalog.query import sort_rows

    catalog = Catalog()
    for run in runs:
        catalog.add_run(run)
    catalog.add_run(open_run(runs[0].path))  # read again: its rows keep the file's first place
    for flt in (RunFilter(), RunFilter(failed_only=True), RunFilter(task="1")):
        for reverse in (False, True):
            spec = SortSpec(None, reverse)
            expected = sort_rows([r for r in catalog.rows if flt.matches(r)], spec)
            assert [r.key for r in catalog.view(flt, spec)] == [r.key for r in expected]
            assert expected or flt.active


def _sorted_as_before(rows: list[RunRow], spec: SortSpec) -> list[RunRow]:
    """The sort as it was: (key, load order) pairs, rows without a key last in the order given."""
    from tau_tui.catalog.query import FIELD_BY_KEY

    if spec.column is None:
        return sorted(rows, key=lambda r: r.order, reverse=spec.reverse)
    key = FIELD_BY_KEY[spec.column].sort_key
    known = [(key(r), r) for r in rows if key(r) is not None]
    missing = [r for r in rows if key(r) is None]
    try:
        known.sort(key=lambda kr: (kr[0], kr[1].order), reverse=spec.reverse)
    except TypeError:
        known.sort(key=lambda kr: (str(kr[0]), kr[1].order), reverse=spec.reverse)
    return [r for _, r in known] + missing


@pytest.mark.parametrize("column", ["task", "sim", "reward", "termination", "cost", "file", "model", "trial"])
@pytest.mark.parametrize("reverse", [False, True])
def test_sorting_places_by_key_orders_rows_as_sorting_pairs_did(
    runs: list[RunFile], column: str, reverse: bool
) -> None:
    from tau_tui.catalog import RunFilter, SortSpec

    catalog = Catalog()
    for run in runs:
        catalog.add_run(run)
    spec = SortSpec(column, reverse)
    got = [r.key for r in catalog.view(RunFilter(), spec)]
    assert got == [r.key for r in _sorted_as_before(catalog.rows, spec)]
    assert len(set(got)) == len(catalog.rows)


def test_files_growing_at_once_keep_the_rows_in_load_order(runs: list[RunFile]) -> None:
    """Files indexed in parallel grow in turns: each piece goes into its gap (no sort of every row), and the
    rows stay in load order, a file read again included."""
    import random

    catalog = Catalog()
    rng = random.Random(7)
    have = {id(run): 0 for run in runs}
    for run in runs:
        catalog.grow_run(run, 1)  # every file named (its place in the load order) before the pieces come
    while any(have[id(run)] < len(run.entries) for run in runs):
        run = rng.choice([r for r in runs if have[id(r)] < len(r.entries)])
        have[id(run)] = min(len(run.entries), have[id(run)] + rng.randint(1, 9))
        catalog.grow_run(run, have[id(run)])
        assert [r.order for r in catalog.rows] == sorted(r.order for r in catalog.rows)
    catalog.add_run(open_run(runs[0].path))  # the first file read again: its rows go back to the front
    orders = [r.order for r in catalog.rows]
    assert orders == sorted(orders) and len(orders) == sum(len(r.entries) for r in runs)
    assert catalog.rows[0].path == runs[0].path
