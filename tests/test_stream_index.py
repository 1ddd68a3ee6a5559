"""The streaming index of large results files (model.stream) reads what the whole-file reader reads."""

from __future__ import annotations

import os

import orjson
import pytest

from tau_tui.model import RunFileError, expand_paths, open_run, runtime
from tau_tui.model.stream import SpanSims
from tests.conftest import CORPUS, corpus_required


def _open(path, monkeypatch, threshold: int, **kwargs):
    runtime.configure(stream_bytes=threshold)
    return open_run(path, **kwargs)


def test_every_corpus_file_streams_to_the_same_run(monkeypatch):
    corpus_required()
    streamed_files = 0
    for path in expand_paths([CORPUS]):
        try:
            whole = _open(path, monkeypatch, 1 << 40)
        except RunFileError as exc:
            with pytest.raises(RunFileError) as again:
                _open(path, monkeypatch, 0)
            assert str(again.value) == str(exc)
            continue
        streamed = _open(path, monkeypatch, 0)
        assert (streamed.layout, streamed.raw_info, streamed.raw_tasks, streamed.timestamp, streamed.extra_top) == (
            whole.layout,
            whole.raw_info,
            whole.raw_tasks,
            whole.timestamp,
            whole.extra_top,
        ), path
        assert streamed.entries == whole.entries, path
        assert len(streamed.raw_sims) == len(whole.raw_sims)
        assert list(streamed.raw_sims) == list(whole.raw_sims), path
        if isinstance(streamed.raw_sims, SpanSims) and whole.raw_sims:
            streamed_files += 1
            index = len(whole.raw_sims) // 2
            assert streamed.simulation(index) == whole.simulation(index)
    assert streamed_files >= 20  # every indented results file of the corpus (not the compact ones)


def _big_results(tmp_path, n: int = 50, indent: bool = True):
    sims = [
        {
            "id": f"s{i}",
            "task_id": str(i % 3),
            "messages": [{"role": "user", "content": f"hello {i}"}],
            "termination_reason": "user_stop",
            "reward_info": {"reward": i % 2},
            "info": {"error": "boom"} if i == 7 else {},
        }
        for i in range(n)
    ]
    data = {"timestamp": "t", "info": {"environment_info": {"domain_name": "mock"}}, "tasks": [], "simulations": sims}
    path = tmp_path / "big.json"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 if indent else 0))
    return path, sims


def test_a_streamed_file_keeps_spans_not_trees_and_reports_progress(tmp_path, monkeypatch):
    path, sims = _big_results(tmp_path, 400)
    seen: list[int] = []
    run = _open(path, monkeypatch, 0, on_progress=lambda r: seen.append(len(r.entries)))
    assert isinstance(run.raw_sims, SpanSims)
    assert run.raw_sims._parsed == {}  # nothing parsed is kept after indexing
    assert [e.id for e in run.entries] == [s["id"] for s in sims]
    assert run.entries[7].error == "boom" and run.entries[8].error is None
    assert run.raw_sims[123] == sims[123]
    assert run.simulation(5).id == "s5"
    assert seen == sorted(seen)
    # what is kept parsed is bounded
    for i in range(len(sims)):
        run.raw_sims[i]
        run.simulation(i)
    assert len(run.raw_sims._parsed) <= 32 and len(run._sims) <= 32


def test_compact_json_is_read_whole(tmp_path, monkeypatch):
    path, sims = _big_results(tmp_path, indent=False)
    run = _open(path, monkeypatch, 0)
    assert isinstance(run.raw_sims, list) and run.raw_sims == sims


def test_a_file_changed_after_indexing_is_one_line_naming_it(tmp_path, monkeypatch):
    path, _ = _big_results(tmp_path)
    run = _open(path, monkeypatch, 0)
    path.write_bytes(path.read_bytes().replace(b"hello", b"HELLO"))
    os.utime(path, ns=(1, 1))
    with pytest.raises(RunFileError) as exc:
        run.simulation(3)
    assert str(exc.value) == f"{path}: simulation #3: changed on disk since it was read; reload it"


def test_a_broken_span_falls_back_to_the_whole_file_error(tmp_path, monkeypatch):
    path, _ = _big_results(tmp_path)
    text = path.read_bytes()
    cut = text[: len(text) * 2 // 3]
    path.write_bytes(cut)
    with pytest.raises(RunFileError) as exc:
        _open(path, monkeypatch, 0)
    assert "truncated JSON" in str(exc.value)


def test_catalog_rows_grow_while_a_file_is_indexed_then_complete_once(tmp_path, monkeypatch):
    from tau_tui.catalog import Catalog

    path, sims = _big_results(tmp_path, 300)
    catalog = Catalog()
    grown: list[int] = []

    def progress(run):
        catalog.grow_run(run, len(run.entries))
        grown.append(len(catalog.rows))

    monkeypatch.setattr("tau_tui.model.stream.time.monotonic", iter(range(0, 10**6)).__next__)
    run = _open(path, monkeypatch, 0, on_progress=progress)
    assert grown and grown[0] < len(sims)  # rows were there before the index was complete
    first = catalog.rows[0]
    rows = catalog.add_run(run)
    assert len(rows) == len(catalog.rows) == len(catalog.by_key) == len(sims)
    assert catalog.rows[0] is first  # kept, not rebuilt
    assert [r.sim_id for r in catalog.rows] == [s["id"] for s in sims]
    again = catalog.add_run(_open(path, monkeypatch, 0))  # a reload replaces the rows
    assert len(again) == len(catalog.rows) == len(sims) and catalog.rows[0] is not first
