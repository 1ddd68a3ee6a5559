"""Pilot tests of notes: added from the runs and trajectory screens, shown, filtered, exported, reloaded,
and always kept in the sidecar: the recording's bytes never change."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from textual.widgets import Checkbox, Input, Select

from tau_tui.catalog import RunRow
from tau_tui.model.notes import Note, NoteBook, notes_path
from tau_tui.tui.screens.note_form import NoteFormScreen
from tau_tui.tui.screens.notes import NotesScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.trajectory_doc import Event

from .conftest import ROOT, current_screen, open_sim, set_input, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp

BIG = (160, 45)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def note_of(event: Event) -> Note:
    """The note a "note" event shows."""
    assert event.note is not None
    return event.note


def shown_cell(table: RunTable, row: RunRow, key: str) -> str:
    """The text a column of the runs table shows for ``row`` (as drawn, not as computed)."""
    span = table.column_span(key)
    if span is None:
        raise KeyError(key)
    start, width = span
    return table._row_strip(row).text[start : start + width].strip()


def copy_recordings(tmp_path: Path) -> Path:
    """The bundled recordings, without any notes a user may have left beside them."""
    folder = tmp_path / "recordings"
    shutil.copytree(ROOT / "recordings", folder, ignore=shutil.ignore_patterns("*.notes.json"))
    return folder


async def fill_note(
    pilot: Pilot[None], error_type: str, text: str, source: str | None = None, whole: bool = False
) -> None:
    """The note form is open: pick, type, save (ctrl+s) and wait for the sidecar write."""
    app = pilot.app
    form = app.screen
    assert isinstance(form, NoteFormScreen)
    form.query_one("#n-type", Select).value = error_type
    if source is not None:
        form.query_one("#n-source", Select).value = source
    if whole:
        form.query_one("#n-whole", Checkbox).value = True
    await set_input(pilot, "#n-text", text)
    await pilot.press("ctrl+s")
    assert app.screen is not form
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_a_note_is_added_shown_reloaded_and_the_recording_never_changes(
    make_app: MakeApp, tmp_path: Path
) -> None:
    folder = copy_recordings(tmp_path)
    recording = folder / "aftersales.json"
    before = digest(recording)
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        table.move_cursor(next(i for i, r in enumerate(table.rows) if r.sim_id == "as-hasty-refund"))
        table.focus()
        await pilot.press("A")
        await fill_note(pilot, "policy_violation", "refunded 449.00 without the approval the policy asks for")
        row = app.session.catalog.find(recording, "as-hasty-refund")
        assert row is not None
        assert [(n.source, n.error_type, n.step) for n in row.notes] == [("agent", "policy_violation", None)]
        assert notes_path(recording).is_file() and digest(recording) == before
        assert shown_cell(app.runs_screen.query_one(RunTable), row, "notes") == "1"
        assert "✐ simulation · agent · policy_violation" in app.runs_screen.query_one("#row-preview", InfoLine).plain
        # a note on a step, from the trajectory screen
        await open_sim(pilot, "as-hasty-refund")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("w")  # the issue_refund write (its result, step 9)
        await pilot.press("A")
        assert isinstance(app.screen, NoteFormScreen)
        assert app.screen.step == 9 and app.screen.source == "environment"
        await fill_note(pilot, "wrong_action", "should have asked for approval", source="agent")
        assert screen.doc is not None
        assert screen.doc.targets["note"] == [9]
        assert [note_of(e).error_type for e in screen.doc.steps[9].events if e.kind == "note"] == ["wrong_action"]
        assert "note 1/1" in screen.query_one("#traj-status", InfoLine).plain
        assert "✐ 2 notes" in screen.query_one("#traj-header", InfoLine).plain
        await pilot.press("5")
        pane = screen.query_one("#notes-view", RichPane).plain
        assert "simulation · agent · policy_violation" in pane and "step 9 · agent · wrong_action" in pane
        # reload: the notes come back from the sidecar, the cursor stays
        await pilot.press("r")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.doc is not None and screen.doc.targets["note"] == [9], "the reload")
        row = app.session.catalog.find(recording, "as-hasty-refund")
        assert row is not None
        assert len(row.notes) == 2 and screen.cursor == 9
        await pilot.press("escape")
        # the notes filter keeps only annotated runs
        app.runs_screen.set_filter(app.runs_screen.filter.with_(has_note=True))
        assert [r.sim_id for r in app.runs_screen.query_one(RunTable).rows] == ["as-hasty-refund"]
        app.runs_screen.set_filter(app.runs_screen.filter.with_(has_note=False, note_type="wrong_action"))
        assert [r.sim_id for r in app.runs_screen.query_one(RunTable).rows] == ["as-hasty-refund"]
        app.runs_screen.set_filter(app.runs_screen.filter.with_(note_type="tool_bug"))
        assert app.runs_screen.query_one(RunTable).rows == []
    assert digest(recording) == before
    book = NoteBook(recording)
    assert sorted(n.error_type for n in book.notes) == ["policy_violation", "wrong_action"]
    assert {n.task_id for n in book.notes} == {"large_refund_needs_approval"}


async def test_notes_list_opens_the_step_exports_and_deletes(make_app: MakeApp, tmp_path: Path) -> None:
    folder = copy_recordings(tmp_path)
    before = {p.name: digest(p) for p in folder.glob("*.json")}
    NoteBook(folder / "warehouse.json").add(
        "wh-gives-up", "agent", "premature_end", "backordered on a timeout", step=7, task_id="south_times_out_twice"
    )
    NoteBook(folder / "aftersales.json").add("as-hasty-refund", "task", "task_defect", "limit not in the task")
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        assert {r.sim_id: len(r.notes) for r in app.session.catalog.rows if r.notes} == {
            "wh-gives-up": 1,
            "as-hasty-refund": 1,
        }
        await pilot.press("N")
        screen = app.screen
        assert isinstance(screen, NotesScreen) and len(screen.shown) == 2
        await set_input(pilot, "#notes-filter", "timeout")
        assert [n.sim_id for _, _, n in screen.shown] == ["wh-gives-up"]
        screen.query_one("#notes-table").focus()
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: isinstance(app.screen, TrajectoryScreen) and app.screen.doc is not None, "the trajectory"
        )
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.sim_id == "wh-gives-up" and app.screen.cursor == 7
        await pilot.press("escape")
        assert current_screen(app) is screen
        await set_input(pilot, "#notes-filter", "")
        for fmt in ("json", "csv"):
            await pilot.press("e")
            assert isinstance(app.screen, PickerScreen)
            await pilot.press(*fmt, "enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
        exported = json.loads(next(tmp_path.glob("notes_*.json")).read_text())
        assert sorted(n["error_type"] for n in exported) == ["premature_end", "task_defect"]
        rows = list(csv.DictReader(io.StringIO(next(tmp_path.glob("notes_*.csv")).read_text())))
        assert {r["sim_id"]: r["step"] for r in rows} == {"wh-gives-up": "7", "as-hasty-refund": ""}
        # delete one, after a yes
        screen.query_one("#notes-table").focus()
        await pilot.press("x", "y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.shown) == 1 and len(app.session.catalog.all_notes()) == 1
    assert {p.name: digest(p) for p in folder.glob("*.json") if not p.name.endswith(".notes.json")} == before


async def test_a_note_that_cannot_be_written_is_a_notification_and_the_sidecar_stays(
    make_app: MakeApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    folder = copy_recordings(tmp_path)
    recording = folder / "aftersales.json"
    NoteBook(recording).add("as-hasty-refund", "agent", "other", "already there")
    before = notes_path(recording).read_bytes()
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        table.move_cursor(next(i for i, r in enumerate(table.rows) if r.sim_id == "as-hasty-refund"))
        table.focus()
        shown: list[str] = []
        real_notify = app.notify

        def notify(message: str, **kw: Any) -> None:
            shown.append(str(message))
            real_notify(message, **kw)

        monkeypatch.setattr(app, "notify", notify)

        def read_only(*args: object, **kwargs: object) -> NoReturn:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        monkeypatch.setattr(os, "replace", read_only)
        await pilot.press("A")
        await fill_note(pilot, "other", "this one cannot be saved")
        monkeypatch.undo()
        assert f"note not saved: {notes_path(recording)}: read-only file system" in shown
        assert notes_path(recording).read_bytes() == before
        assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


async def test_a_note_on_the_bundled_recordings_goes_to_the_user_data_folder(
    make_app: MakeApp, tmp_path: Path, user_data_home: Path
) -> None:
    folder = ROOT / "recordings"
    before = sorted(p.name for p in folder.iterdir())
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        table.move_cursor(next(i for i, r in enumerate(table.rows) if r.sim_id == "cas-reordered-mismatch"))
        table.focus()
        await pilot.press("A")
        await fill_note(pilot, "tool_bug", "a note on a bundled recording")
        row = app.session.catalog.find(folder / "warehouse_cassette.json", "cas-reordered-mismatch")
        assert row is not None
        assert "a note on a bundled recording" in [n.text for n in row.notes]
    assert sorted(p.name for p in folder.iterdir()) == before
    saved = list((user_data_home / "tau-tui" / "notes").glob("*-warehouse_cassette.notes.json"))
    assert len(saved) == 1 and "a note on a bundled recording" in saved[0].read_text()


async def test_the_note_form_takes_typed_text_first_and_keeps_its_lists_inside_its_border(
    make_app: MakeApp, tmp_path: Path
) -> None:
    from textual.widgets import Select

    folder = copy_recordings(tmp_path)
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("A")
        form = app.screen
        assert isinstance(form, NoteFormScreen)
        await pilot.press(*"refunded without approval", "enter")  # no error type yet: asked for, text kept
        assert app.screen is form and form.query_one("#n-text", Input).value == "refunded without approval"
        assert "error type: pick one" in str(form.query_one("#n-error").render())
        assert form.focused is form.query_one("#n-type")
        box = form.query_one("#note-form").region
        inside = box.shrink((1, 1, 1, 1))
        for select_id in ("#n-type", "#n-source"):
            select = form.query_one(select_id, Select)
            select.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert select.expanded
            overlay = select.query_one("SelectOverlay")
            assert inside.contains_region(overlay.region), (select_id, overlay.region, inside)
            await pilot.press("escape")
            await pilot.pause()
