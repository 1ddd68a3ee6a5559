"""The streaming index of large results files (model.stream) reads what the whole-file reader reads."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection

import orjson
import pytest

from tau_tui.model import RunFileError, expand_paths, open_run, runtime
from tau_tui.model.stream import SpanSims
from tests.conftest import CORPUS, corpus_required

if TYPE_CHECKING:
    from tau_tui.model.io import RunFile


def _open(path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, **kwargs: Any) -> RunFile:
    runtime.configure(stream_bytes=threshold)
    return open_run(path, **kwargs)


def _same_run(path: Path, monkeypatch: pytest.MonkeyPatch, must_stream: bool = True) -> bool:
    """Open ``path`` whole and streamed and check both give the same run (or the same error); whether it was
    streamed. ``must_stream``: a results object or a list of simulations must be."""
    try:
        whole = _open(path, monkeypatch, 1 << 40)
    except RunFileError as exc:
        with pytest.raises(RunFileError) as again:
            _open(path, monkeypatch, 0)
        assert str(again.value) == str(exc)
        return False
    streamed = _open(path, monkeypatch, 0)
    assert (streamed.layout, streamed.raw_info, streamed.raw_tasks, streamed.timestamp, streamed.extra_top) == (
        whole.layout,
        whole.raw_info,
        whole.raw_tasks,
        whole.timestamp,
        whole.extra_top,
    ), path
    assert list(streamed.extra_top) == list(whole.extra_top), path  # in the file's order
    assert streamed.entries == whole.entries, path
    assert len(streamed.raw_sims) == len(whole.raw_sims)
    assert list(streamed.raw_sims) == list(whole.raw_sims), path
    if must_stream and whole.layout in ("results", "list"):  # any such file streams, whatever its layout
        assert isinstance(streamed.raw_sims, SpanSims), path
    if not isinstance(streamed.raw_sims, SpanSims):
        return False
    text = path.read_bytes()
    for i in range(len(whole.raw_sims)):  # each span is the simulation's own bytes, byte for byte
        start, end = streamed.raw_sims.starts[i], streamed.raw_sims.ends[i]
        assert streamed.raw_sims.raw_bytes(i) == text[start:end]
        assert text[start : start + 1] == b"{" and text[end - 1 : end] == b"}"
    if whole.raw_sims:
        index = len(whole.raw_sims) // 2
        assert streamed.simulation(index) == whole.simulation(index)
    assert streamed.tasks() == whole.tasks()
    return bool(whole.raw_sims)


def _python_sorted(data: Any) -> bytes:
    """What Python's json module writes with sorted keys: ", " and ": ", non-ASCII as escapes, and the
    members after "simulations" (tasks, timestamp) coming after the simulations."""
    return json.dumps(data, sort_keys=True).encode()


# Re-encodings of a parsed file as other tools save it: one line, or keys sorted.
ENCODINGS: dict[str, Callable[[Any], bytes]] = {"compact": orjson.dumps, "python-sorted": _python_sorted}


def test_every_corpus_file_streams_to_the_same_run(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus_required()
    streamed_files = sum(_same_run(path, monkeypatch) for path in expand_paths([CORPUS]))
    assert streamed_files >= 27  # every results file and list of simulations in the corpus, the compact one too


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_every_corpus_file_reencoded_streams_to_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    corpus_required()
    streamed_files = 0
    for path in expand_paths([CORPUS]):
        if not path.is_file():
            continue
        try:
            data = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        copy = tmp_path / path.name  # the same name: the domain a file name suggests stays the same
        copy.write_bytes(ENCODINGS[encoding](data))
        streamed_files += _same_run(copy, monkeypatch)
        copy.unlink()
    assert streamed_files >= 27


def _big_results(
    tmp_path: Path, n: int = 50, indent: bool = True
) -> tuple[Path, list[dict[str, Collection[Collection[str]]]]]:
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


def test_a_streamed_file_keeps_spans_not_trees_and_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


# Strings that a scanner guessing at JSON's structure would trip on: brackets, separators, quotes,
# backslashes, a closing line as an indented file writes it, and characters of two to four bytes.
HOSTILE = ['}, {"id": "x"}]', '\\"}', "\\", "\n    },\n    {", "é — 日本語 🎉", "\u2028 \x00 \x1f"]


def _hostile_sims(n: int = 30, big_at: int = 11) -> list[dict[str, Any]]:
    sims = []
    for i in range(n):
        text = HOSTILE[i % len(HOSTILE)] * (40_000 if i == big_at else 3)  # one far longer than a window
        sims.append(
            {
                "id": f"s{i}",
                "task_id": str(i % 3),
                "messages": [
                    {"role": "user", "content": text, "turn_idx": 0},
                    {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": {"q": [text, {}]}}]},
                    {"role": "tool", "id": "c", "content": text, "error": i % 2 == 0},
                ],
                "reward_info": {"reward": i % 2, "db_check": {"db_match": True}},
                "trial": i,
            }
        )
    return sims


def _ws_everywhere(data: Any) -> bytes:
    return json.dumps(data, indent=" \t", separators=(" ,\r\n ", " :\t")).encode()


LAYOUTS: dict[str, Callable[[Any], bytes]] = {
    "compact": orjson.dumps,
    "python default": lambda d: json.dumps(d).encode(),
    "utf-8 kept": lambda d: json.dumps(d, ensure_ascii=False).encode(),
    "sorted keys, indent 4": lambda d: json.dumps(d, sort_keys=True, indent=4).encode(),
    "tabs and CRLF": lambda d: json.dumps(d, indent="\t").replace("\n", "\r\n").encode(),
    "whitespace between every token": _ws_everywhere,
    "indent 2": lambda d: orjson.dumps(d, option=orjson.OPT_INDENT_2),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", ["results", "list"])
def test_any_json_layout_streams_to_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, shape: str
) -> None:
    sims = _hostile_sims()
    data = {"timestamp": "t", "info": {"environment_info": {"domain_name": "mock"}}, "tasks": [], "simulations": sims}
    path = tmp_path / "run.json"
    path.write_bytes(LAYOUTS[layout](data if shape == "results" else sims))
    assert _same_run(path, monkeypatch)
    run = _open(path, monkeypatch, 0)
    assert isinstance(run.raw_sims, SpanSims) and run.raw_sims[11] == sims[11] and run.raw_sims[29] == sims[29]


def test_an_odd_indent_whose_first_closing_line_is_not_the_items_still_gives_the_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = (orjson.dumps(s) for s in _hostile_sims(2))
    nested = b'{\n    "id": "odd",\n    "task_id": "0",\n    "info": {\n    },\n    "messages": []\n    }'
    path = tmp_path / "odd.json"
    path.write_bytes(b'{"info": {}, "simulations": [\n    ' + nested + b",\n    " + one + b",  " + two + b"]}")
    assert _same_run(path, monkeypatch)
    assert [e.id for e in _open(path, monkeypatch, 0).entries] == ["odd", "s0", "s1"]


def test_members_after_the_simulations_reach_the_run_once_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sims = _hostile_sims(200, big_at=-1)
    info = {"environment_info": {"domain_name": "mock"}, "agent_info": {"llm": "m"}}
    data = {"simulations": sims, "tasks": [{"id": "0"}], "info": info, "timestamp": "t", "extra": 1}
    path = tmp_path / "sorted.json"
    path.write_bytes(orjson.dumps(data))
    seen: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr("tau_tui.model.stream.time.monotonic", iter(range(0, 10**6)).__next__)
    run = _open(path, monkeypatch, 0, on_progress=lambda r: seen.append((len(r.entries), r.raw_info)))
    assert seen and seen[0][0] < len(sims) and seen[0][1] == {}  # rows came before the members after them
    assert (run.raw_info, run.timestamp, run.extra_top, list(run.tasks())) == (info, "t", {"extra": 1}, ["0"])
    assert run.agent_model == "m" and _same_run(path, monkeypatch)


# Damage done to a compact results file, and what the whole-file reader then says (None: it reads a run).
BROKEN: dict[str, tuple[Callable[[bytes], bytes], str | None]] = {
    "cut short": (lambda text: text[: len(text) * 2 // 3], "is truncated JSON"),
    "trailing garbage": (lambda text: text + b" {}", "is not valid JSON"),
    "invalid UTF-8 in a simulation": (lambda text: text.replace("日本".encode(), b"\xff\xfe", 1), "is not UTF-8"),
    "a bad token in a simulation": (lambda text: text.replace(b'"trial":5', b'"trial":five', 1), "is not valid JSON"),
    "simulations not an array": (lambda text: b'{"info":{},"simulations":{"a":1}}', "'simulations' is an object"),
    "a second simulations array": (lambda text: text[:-1] + b',"simulations":[]}', None),
    "a wrapper": (lambda text: text[:-1] + b',"simulation_run":{"id":"w","task_id":"0","messages":[]}}', None),
}


@pytest.mark.parametrize("damage", sorted(BROKEN))
def test_a_broken_compact_file_gives_what_the_whole_file_reader_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    data = {"info": {}, "tasks": [], "simulations": _hostile_sims()}
    path = tmp_path / "broken.json"
    spoil, problem = BROKEN[damage]
    text = orjson.dumps(data)
    assert spoil(text) != text
    path.write_bytes(spoil(text))
    assert not _same_run(path, monkeypatch, must_stream=False)  # left to the whole-file reader
    if problem is None:
        _open(path, monkeypatch, 1 << 40)
    else:
        with pytest.raises(RunFileError, match=problem):
            _open(path, monkeypatch, 0)


def test_a_file_changed_after_indexing_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _big_results(tmp_path)
    run = _open(path, monkeypatch, 0)
    path.write_bytes(path.read_bytes().replace(b"hello", b"HELLO"))
    os.utime(path, ns=(1, 1))
    with pytest.raises(RunFileError) as exc:
        run.simulation(3)
    assert str(exc.value) == f"{path}: simulation #3: changed on disk since it was read; reload it"


def test_a_broken_span_falls_back_to_the_whole_file_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _big_results(tmp_path)
    text = path.read_bytes()
    cut = text[: len(text) * 2 // 3]
    path.write_bytes(cut)
    with pytest.raises(RunFileError) as exc:
        _open(path, monkeypatch, 0)
    assert "truncated JSON" in str(exc.value)


def test_catalog_rows_grow_while_a_file_is_indexed_then_complete_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.catalog import Catalog

    path, sims = _big_results(tmp_path, 300)
    catalog = Catalog()
    grown: list[int] = []

    def progress(run: RunFile) -> None:
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
