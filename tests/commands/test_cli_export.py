"""``tau-tui export``: tables read back (csv module, jsonl, duckdb, pyarrow) with the row counts we replayed."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.cli import main
from tau_tui.model.csv_table import spreadsheet_safe
from tau_tui.model.io import open_run
from tau_tui.trust.export import SCHEMAS, TABLES, ExportError, write_duckdb
from tests.conftest import CORPUS, ROOT
from tests.helpers import call, greet, result, results_file, say, user

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

SOLO_4 = (
    CORPUS / "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
)
RETAIL = CORPUS / "sierra-research__tau2-bench__e2e_retail_baseline.json"
UPDATE = {"task_id": "task_1", "status": "completed"}
TASK_1_DONE = {"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}


def export_cli(capsys: pytest.CaptureFixture[str], tau2_data: Path, *args: object) -> tuple[int, str, str]:
    code = main(["export", "--tau2-data", str(tau2_data), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def replayed(analyzer: Analyzer) -> dict[str, int]:
    """What we replay of the two corpus files, counted straight from the analyzer."""
    sims = messages = calls = 0
    passed = 0
    for path in (SOLO_4, RETAIL):
        run = open_run(path)
        for index in range(len(run.entries)):
            analysis = analyzer.analyze(run, index)
            sims += 1
            messages += len(analysis.timeline.steps)
            calls += len(analysis.timeline.calls)
            reward = analyzer.assess(analysis).evaluation.reward
            passed += reward is not None and reward >= 1 - 1e-6
    return {"simulations": sims, "messages": messages, "tool_calls": calls, "runs": 2, "passed": passed}


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.corpus
def test_csv_and_jsonl_row_counts_equal_what_was_replayed(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], replayed: dict[str, int]
) -> None:
    for fmt in ("csv", "jsonl"):
        out = tmp_path / fmt
        code, text, err = export_cli(capsys, tau2_data, SOLO_4, RETAIL, "--out", out, "--format", fmt)
        assert code == 0, err
        for table in ("runs", "simulations", "messages", "tool_calls"):
            path = out / f"{table}.{fmt}"
            rows = read_csv(path) if fmt == "csv" else [json.loads(line) for line in path.read_text().splitlines()]
            assert len(rows) == replayed[table], (fmt, table)
            assert list(rows[0]) == [name for name, _ in SCHEMAS[table]]
        assert f"simulations {replayed['simulations']}" in text
    sims = read_csv(tmp_path / "csv" / "simulations.csv")
    calls = read_csv(tmp_path / "csv" / "tool_calls.csv")
    # keyed so they join: every call belongs to an exported simulation of an exported run
    keys = {(s["run_id"], s["sim_id"]) for s in sims}
    assert all((c["run_id"], c["sim_id"]) in keys for c in calls)
    assert {s["run_id"] for s in sims} == {r["run_id"] for r in read_csv(tmp_path / "csv" / "runs.csv")}
    # the retail run's write matched its gold action and changed the order in the DB
    write = next(c for c in calls if c["name"] == "exchange_delivered_order_items")
    assert write["verdict"] == "replayed" and write["matched_action"] == "0_4"
    assert any(p.startswith("orders['#W2378156']") for p in json.loads(write["paths_changed"]))
    checks = read_csv(tmp_path / "csv" / "checks.csv")
    assert {c["kind"] for c in checks} >= {"db", "action", "env_assertion"}
    grid = read_csv(tmp_path / "csv" / "grid.csv")
    assert len(grid) == 6 and sum(int(g["trials"]) for g in grid) == replayed["simulations"]


@pytest.mark.corpus
def test_duckdb_reads_back_and_joins(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], replayed: dict[str, int]
) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb is in the optional 'export' extra")
    out = tmp_path / "db"
    code, _, err = export_cli(capsys, tau2_data, SOLO_4, RETAIL, "--out", out, "--format", "duckdb")
    assert code == 0, err
    con = duckdb.connect(str(out / "tau.duckdb"), read_only=True)
    for table in ("runs", "simulations", "messages", "tool_calls"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == replayed[table]
    joined = con.execute(
        "SELECT count(*) FROM tool_calls JOIN simulations USING (run_id, sim_id) JOIN runs USING (run_id)"
    ).fetchone()[0]
    assert joined == replayed["tool_calls"]
    assert con.execute("SELECT count(*) FROM simulations WHERE reward >= 1").fetchone()[0] == replayed["passed"]
    assert [
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()
    ] == sorted(TABLES)


@pytest.mark.corpus
def test_the_docs_duckdb_example_runs_as_written(tau2_data: Path, tmp_path: Path) -> None:
    """Each ``$`` command of docs/export.md's duckdb example, run in a shell where only tau-tui and its extras are
    installed, prints the lines the page shows."""
    pytest.importorskip("duckdb", reason="duckdb is in the optional 'export' extra")
    page = (ROOT / "docs" / "export.md").read_text()
    start = page.index("$ tau-tui export airline.json --out out --format duckdb")
    example = page[start : page.index("```", start)]
    commands: list[str] = []
    shown: list[str] = []
    for line in example.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
        elif commands and commands[-1].count('"') % 2:  # inside a quoted argument that goes on
            commands[-1] += "\n" + line
        else:
            shown.append(line)
    shutil.copy(CORPUS / "sierra-research__tau2-bench__airline.json", tmp_path / "airline.json")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "TAU2_DATA_DIR": str(tau2_data),
    }
    printed = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (command, done.stderr)
        printed += done.stdout.rstrip().splitlines()
    assert printed == shown


def test_parquet_reads_back(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], replayed: dict[str, int]
) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is in the optional 'export' extra")
    out = tmp_path / "pq"
    code, _, err = export_cli(capsys, tau2_data, SOLO_4, RETAIL, "--out", out, "--format", "parquet")
    assert code == 0, err
    for table in ("simulations", "messages", "tool_calls"):
        assert pq.read_table(out / f"{table}.parquet").num_rows == replayed[table]
    assert str(pq.read_table(out / "simulations.parquet").schema.field("reward").type) == "double"


@pytest.mark.corpus
def test_sft_records_filtered_by_reward(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], replayed: dict[str, int]
) -> None:
    out = tmp_path / "sft"
    code, text, err = export_cli(capsys, tau2_data, SOLO_4, RETAIL, "--out", out, "--format", "sft")
    assert code == 0, err
    records = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    assert len(records) == replayed["passed"] and f"{replayed['passed']} of {replayed['simulations']}" in text
    for record in records:
        assert record["messages"][0]["role"] == "system" and record["tools"]
        assert all(t["type"] == "function" for t in record["tools"])
        called = [c["id"] for m in record["messages"] for c in m.get("tool_calls", [])]
        answered = [m["tool_call_id"] for m in record["messages"] if m["role"] == "tool"]
        assert called == answered  # every agent call is answered, in order; nothing else
        for m in record["messages"]:
            for c in m.get("tool_calls", []):
                assert isinstance(json.loads(c["function"]["arguments"]), dict)
    code, _, _ = export_cli(capsys, tau2_data, SOLO_4, RETAIL, "--out", out, "--format", "sft", "--min-reward", "0")
    assert len((out / "sft.jsonl").read_text().splitlines()) == replayed["simulations"]


def test_csv_neutralises_formulas(tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = [
        greet(),
        user('=HYPERLINK("http://x","click")'),
        call("update_task_status", UPDATE),
        result(TASK_1_DONE),
        say("+1 done"),
        user("@SUM(A1:A2) -2 ok"),
    ]
    path = results_file(tmp_path / "run.json", messages)
    code, _, err = export_cli(capsys, tau2_data, path, "--out", tmp_path / "out")
    assert code == 0, err
    contents = [row["content"] for row in read_csv(tmp_path / "out" / "messages.csv")]
    assert contents[1] == '\'=HYPERLINK("http://x","click")'
    assert contents[4] == "'+1 done" and contents[5] == "'@SUM(A1:A2) -2 ok"
    assert contents[0] == "Hi! How can I help you today?"
    assert spreadsheet_safe(-2.5) == -2.5 and spreadsheet_safe("\tx") == "'\tx"
    # JSONL keeps the text as it was
    code, _, _ = export_cli(capsys, tau2_data, path, "--out", tmp_path / "j", "--format", "jsonl")
    lines = [json.loads(line) for line in (tmp_path / "j" / "messages.jsonl").read_text().splitlines()]
    assert lines[1]["content"].startswith("=HYPERLINK")


def test_bad_input_and_output_are_one_line(tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(tmp_path / "run.json", [greet(), user("hi"), say("hello")])
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = export_cli(capsys, tau2_data, path, "--out", blocker / "sub")
    assert code == 2 and "Traceback" not in err and "not a folder" in err
    code, _, err = export_cli(
        capsys, tau2_data, path, "--out", tmp_path / "o", "--format", "sft", "--exclude-flag", "nonsense"
    )
    assert code == 2 and "unknown flag kind 'nonsense'" in err


def test_missing_optional_dependency_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb now raises ImportError
    with pytest.raises(ExportError, match=r"needs duckdb: pip install 'tau-tui\[export\]'"):
        write_duckdb({t: [] for t in TABLES}, tmp_path / "x.duckdb")


# --- secrets: blanked in the values before any format encodes them -------------------------------------------
PLAIN_KEY = "ExportKeyValue0123456789abcdef"
QUOTED_KEY = 'quo"te\\Key0123456789'  # JSON and CSV escape it: only the value, not the bytes, can be scrubbed


def strings(value: object) -> Iterator[str]:
    """Every string in a decoded value (keys too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def read_back(fmt: str, out: Path) -> dict[str, list[Any]]:
    """Every table of an export as rows, each format read by its own reader."""
    if fmt == "sft":
        return {"sft": [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]}
    if fmt == "duckdb":
        duckdb = pytest.importorskip("duckdb", reason="duckdb is in the optional 'export' extra")
        con = duckdb.connect(str(out / "tau.duckdb"), read_only=True)
        try:
            tables = {}
            for table in TABLES:
                cursor = con.execute(f"SELECT * FROM {table}")
                names = [d[0] for d in cursor.description]
                tables[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            return tables
        finally:
            con.close()
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is in the optional 'export' extra")
        return {table: pq.read_table(out / f"{table}.parquet").to_pylist() for table in TABLES}
    if fmt == "csv":
        return {table: read_csv(out / f"{table}.csv") for table in TABLES}
    return {table: [json.loads(line) for line in (out / f"{table}.jsonl").read_text().splitlines()] for table in TABLES}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "duckdb", "sft"])
def test_an_environment_key_in_a_run_is_blanked_in_every_export_format_and_the_files_read_back(
    fmt: str, tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.model.notes import NoteBook

    library = {"parquet": "pyarrow.parquet", "duckdb": "duckdb"}.get(fmt)
    if library:
        pytest.importorskip(library, reason=f"{fmt} needs the optional 'export' extra")
    messages = [
        greet(),
        user(f"my key is {PLAIN_KEY} and the other one {QUOTED_KEY}, please finish task_1"),
        call("update_task_status", UPDATE),
        result(TASK_1_DONE),
        say(f"Done. Never share {PLAIN_KEY}."),
    ]
    path = results_file(tmp_path / "run.json", messages)
    NoteBook(path).add("sim-1", "agent", "other", f"the user pasted {QUOTED_KEY}")  # before the keys are set
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", PLAIN_KEY)
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", QUOTED_KEY)
    out = tmp_path / fmt
    code, _, err = export_cli(capsys, tau2_data, path, "--out", out, "--format", fmt, "--min-reward", "0")
    assert code == 0, err
    tables = read_back(fmt, out)
    found = list(strings(tables))
    for key in (PLAIN_KEY, QUOTED_KEY):
        assert not [s for s in found if key in s], (fmt, key)
    assert "my key is *** and the other one ***, please finish task_1" in found, fmt
    if fmt == "sft":
        assert len(tables["sft"]) == 1 and any(s == "Done. Never share ***." for s in found)
        return
    assert [r["content"] for r in tables["messages"]][4] == "Done. Never share ***.", fmt
    assert [r["text"] for r in tables["notes"]] == ["the user pasted ***"], fmt
    assert [r["n_tool_calls"] for r in tables["simulations"]] in ([1], ["1"]), fmt  # the rest is intact
    on_disk = b"".join(p.read_bytes() for p in out.iterdir())
    if fmt in ("csv", "jsonl"):  # text formats: not even an escaped spelling of a key is left
        for key in (PLAIN_KEY, QUOTED_KEY):
            for spelling in (key, json.dumps(key)[1:-1], key.replace('"', '""')):
                assert spelling.encode() not in on_disk, (fmt, spelling)
