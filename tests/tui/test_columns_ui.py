"""Pilot tests of fitted columns: the runs table at 80 columns and wider, scrolling by column, the sort arrow."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from tau_tui.catalog import RunFilter
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import COLUMN_BY_KEY

from .conftest import MOCK_DEMO, TELECOM_IDS, settle

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

NARROW = (80, 24)


def shown_keys(table: RunTable) -> list[str]:
    return [column.key for column, _ in table.shown_columns]


def header(table: RunTable) -> str:
    return table._header_strip().text


async def test_at_80_columns_the_outcome_comes_before_recorded_detail(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        keys = shown_keys(table)
        for key in ("task", "sim", "reward", "db", "our_reward", "agrees", "our_db", "flags"):
            assert key in keys, keys
        assert "file" not in keys  # one file loaded: its name tells no rows apart
        assert "model" not in keys and "cost" not in keys
        text = header(table)
        assert "rwd*" in text and "flags*" in text and text.rstrip().endswith("›")  # more columns to the right
        assert len(table._row_strip(table.rows[0]).text) <= table.size.width
        assert table.virtual_size.width <= table.size.width  # no character-wise horizontal scrolling


async def test_l_and_h_scroll_one_whole_column(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        table.focus()
        before = shown_keys(table)
        frozen = [c.key for c in table.frozen]
        assert before[: len(frozen)] == frozen
        await pilot.press("l")
        after = shown_keys(table)
        assert after[: len(frozen)] == frozen  # file, task and simulation stay
        assert after[len(frozen)] == before[len(frozen) + 1]  # the first scrolled column went, whole
        assert "‹" in header(table)
        for _ in range(40):
            await pilot.press("l")
        keys = shown_keys(table)
        assert keys[-1] == table.scrolling[-1].key and "model" in keys  # the last column is reachable
        assert not header(table).rstrip().endswith("›")
        last = table.first_column
        await pilot.press("l")
        assert table.first_column == last  # nothing more to the right: l stays
        await pilot.press("h")
        assert table.first_column == last - 1
        assert shown_keys(table)[len(frozen)] == table.scrolling[table.first_column].key


async def test_columns_grow_with_the_terminal(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        narrow = {c.key: w for c, w in table.shown_columns}
        await pilot.resize_terminal(220, 30)
        await pilot.pause()
        wide = {c.key: w for c, w in table.shown_columns}
        assert set(wide) == {c.key for c in table.frozen + table.scrolling}  # everything fits at 220
        # the columns of what only some recordings hold stay out while no row holds it
        # (and the file's while one file is loaded)
        assert {c.key for c in table.columns} - set(wide) == {"submission", "review", "auth", "retrieval", "file"}
        assert wide["task"] >= narrow["task"] and wide["task"] >= max(len(row.task) for row in table.rows)
        assert wide["sim"] > narrow["sim"] and wide["sim"] >= len("cas-reordered-mismatch")
        row = next(r for r in table.rows if r.sim_id == "demo-structural-findings")
        assert "demo-structural-findings" in table._row_strip(row).text


async def test_one_file_loaded_leaves_out_the_file_column_and_its_width_goes_to_the_names(make_app: MakeApp) -> None:
    app = make_app([TELECOM_IDS])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        one = {c.key: w for c, w in table.shown_columns}
        assert "file" not in one and "file" not in header(table)
        table.show_rows(table.rows, files=2)  # as when a second file is loaded
        await pilot.pause()
        two = {c.key: w for c, w in table.shown_columns}
        assert "file" in two
        assert set(one) == set(two) - {"file"}  # no column more: the freed width went to task and sim
        assert one["task"] > two["task"] and one["sim"] > two["sim"]
        assert one["task"] + one["sim"] == two["task"] + two["sim"] + two["file"] + 1  # its cell and its gap
        task_span = table.column_span("task")
        assert task_span is not None and task_span[1] == two["task"]
        table.show_rows(table.rows, files=1)
        await pilot.pause()
        task_span = table.column_span("task")
        assert task_span is not None and task_span[1] == one["task"] and table.column_span("file") is None
        tasks = {table._cell(COLUMN_BY_KEY["task"], row, one["task"]).plain for row in table.rows}
        assert len(tasks) == len(table.rows) == 8  # telecom ids sharing long prefixes, each shown apart


async def test_two_files_loaded_show_the_file_column(make_app: MakeApp, tmp_path: Path) -> None:
    shutil.copy(TELECOM_IDS, tmp_path / "a_telecom.json")
    shutil.copy(TELECOM_IDS, tmp_path / "b_telecom.json")
    app = make_app([tmp_path])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        app.runs_screen.set_filter(RunFilter(file="a_telecom"))  # the rows of one file, yet two are loaded
        await pilot.pause()
        assert {row.path.name for row in table.rows} == {"a_telecom.json"}
        assert "file" in shown_keys(table)


async def test_title_filter_bar_and_footer_fit_80_columns_with_no_word_cut(make_app: MakeApp) -> None:
    from tau_tui.tui.widgets.fitting_footer import FittingFooter

    app = make_app([TELECOM_IDS])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen = app.runs_screen
        title, bar = (screen.query_one(selector, InfoLine).plain for selector in ("#runs-title", "#filter-bar"))
        for line in (title, bar):
            assert len(line) <= 80 and "…" not in line, line
        assert title.rstrip().endswith(("* derived", "sort: load order")) and "8 of 8 simulations" in title
        assert bar.rstrip().endswith("? help") and bar.startswith(" no filter · f failed only")
        footer = screen.query_one(FittingFooter)
        palette = next(child for child in footer.children if child.has_class("-command-palette"))
        shown = [child for child in footer.children if child.display and child is not palette]
        assert shown and len(shown) < len(footer.children) - 1  # some keys gave way, whole
        assert all(child.region.right <= palette.region.x for child in shown)
        assert footer.shown_keys[:2] == ["enter", "slash"]
        narrow_keys = len(shown)
        screen.set_filter(RunFilter(failed_only=True, text="picture messages", task="mms_issue", model="gpt-4.1"))
        await pilot.pause()
        bar = screen.query_one("#filter-bar", InfoLine).plain
        assert len(bar) <= 80 and "…" not in bar and bar.rstrip().endswith("c clears") and "more" in bar
        await pilot.resize_terminal(200, 30)
        await pilot.pause()
        title = screen.query_one("#runs-title", InfoLine).plain
        assert "columns: recorded │ * derived by our replay and evaluator   sort: load order" in title
        shown = [child for child in footer.children if child.display and child is not palette]
        assert len(shown) > narrow_keys and all(child.region.right <= palette.region.x for child in shown)
        assert "more" not in screen.query_one("#filter-bar", InfoLine).plain


async def test_file_names_differing_only_at_the_end_are_told_apart(make_app: MakeApp, tmp_path: Path) -> None:
    names = ["calibrate_20261201_053850", "calibrate_20261201_053934"]
    for name in names:
        shutil.copy(MOCK_DEMO, tmp_path / f"{name}.json")
    app = make_app([tmp_path])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        file_span = table.column_span("file")
        assert file_span is not None
        start, width = file_span
        cells = {table._row_strip(row).text[start : start + width].strip() for row in table.rows}
        assert len(cells) == 2 and width < len(names[0])
        assert {cell[-6:] for cell in cells} == {"053850", "053934"}


async def test_the_sorted_column_makes_room_for_its_arrow(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen = app.runs_screen
        table = screen.query_one(RunTable)
        screen._sort_by("our_reward")
        await pilot.pause()
        assert "rwd*↑" in header(table)
        screen._sort_by("our_reward")
        await pilot.pause()
        assert "rwd*↓" in header(table)
        screen._sort_by("reward")
        await pilot.pause()
        assert "reward↑" in header(table) and "rwd*" in header(table)


async def test_calibrate_grid_shares_the_width_and_keeps_setups_apart(make_app: MakeApp) -> None:
    from tau_tui.tui.widgets.calibration_table import CalibrationTable
    from tau_tui.views.calibration_view import grid_line

    from .test_calibrate_ui import OUR_RECORDINGS, open_calibrate

    app = make_app([OUR_RECORDINGS])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen = await open_calibrate(pilot)
        table = screen.query_one(CalibrationTable)
        width = {c.key: c.width for c in table.columns}
        setups = {row.setup.label for row in table.rows}
        assert len(setups) > 1 and width["setup"] < max(len(s) for s in setups)
        lines = {row.setup.label: grid_line(row, table.columns, table.k).plain for row in table.rows}
        start = 2 + sum(c.width + 1 for c in table.columns[:2])
        shown = {label: line[start : start + width["setup"]] for label, line in lines.items()}
        assert len(set(shown.values())) == len(setups), shown  # elided, yet told apart
        await pilot.resize_terminal(220, 30)
        await pilot.pause()
        wide = {c.key: c.width for c in table.columns}
        assert wide["task"] >= max(len(row.task_id) for row in table.rows)
        assert wide["setup"] >= max(len(s) for s in setups)


async def test_compare_labels_name_each_side_by_its_whole_simulation_id(make_app: MakeApp) -> None:
    from tau_tui.tui.screens.trial_compare import TrialCompareScreen

    from .conftest import wait_until
    from .test_calibrate_ui import OUR_RECORDINGS

    app = make_app([OUR_RECORDINGS])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        for sim in ("wh-gold-timeouts", "wh-gives-up"):
            table.move_cursor(next(i for i, r in enumerate(table.rows) if r.sim_id == sim))
            await pilot.press("equals_sign")
        screen = app.screen
        assert isinstance(screen, TrialCompareScreen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        left, right = screen.comparison.left.label, screen.comparison.right.label
        assert left.startswith("wh-gold-timeouts") and right.startswith("wh-gives-up")
        assert "scripted/gold" not in left  # the same file-level model on both sides says nothing
        title = screen.query_one("#trials-view").border_title
        assert title is not None
        assert "wh-gold-timeouts" in title and "wh-gives-up" in title


async def test_notes_list_shows_simulation_ids_that_differ_late_apart(make_app: MakeApp, tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from tau_tui.model.notes import NoteBook
    from tau_tui.tui.screens.notes import NotesScreen

    from .test_notes_ui import copy_recordings

    folder = copy_recordings(tmp_path)
    book = NoteBook(folder / "warehouse_cassette.json")
    book.add("cas-reordered-mismatch", "agent", "wrong_action", "reordered", task_id="split_across_warehouses")
    book.add("cas-greedy-refused", "agent", "wrong_action", "greedy", task_id="split_across_warehouses")
    app = make_app([folder], runs_dir=tmp_path)
    async with app.run_test(size=(140, 24)) as pilot:
        await settle(pilot)
        await pilot.press("N")
        screen = app.screen
        assert isinstance(screen, NotesScreen)
        table = screen.query_one(DataTable)
        sims = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert sorted(sims) == ["cas-greedy-refused", "cas-reordered-mismatch"]  # whole: the width allows it
        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        sims = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert len(set(sims)) == 2 and all(len(s) < len("cas-greedy-refused") for s in sims)
        assert {s[:6] for s in sims} == {"cas-gr", "cas-re"}


async def test_recorded_detail_gives_way_to_whole_names_beside_the_outcome(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        keys = shown_keys(table)
        assert "flags" in keys and "cost" not in keys  # the outcome stays, the cost gives way
        for row in table.rows:
            text = table._row_strip(row).text
            assert row.sim_id in text and row.task in text  # whole names
        table.focus()
        while table.more_right:
            await pilot.press("l")
        assert "cost" in shown_keys(table) and "model" in shown_keys(table)


async def test_a_filter_keeps_the_columns_widths_fitted_to_every_loaded_row(make_app: MakeApp, tmp_path: Path) -> None:
    """The text columns are measured over the loaded rows as they arrive, not again per view: a filter to
    fewer (shorter) names leaves every column where it was, and clearing it measures nothing again."""
    shutil.copy(TELECOM_IDS, tmp_path / "a_telecom.json")
    shutil.copy(MOCK_DEMO, tmp_path / "b_mock.json")
    app = make_app([tmp_path])
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        screen = app.runs_screen
        table = screen.query_one(RunTable)
        before = list(table.shown_columns)
        screen.set_filter(RunFilter(file="b_mock"))
        await pilot.pause()
        assert {row.path.name for row in table.rows} == {"b_mock.json"}
        assert table.shown_columns == before
        assert not table.stats.sync(app.session.catalog.files, app.session.catalog.file_rows)


async def test_a_replayed_row_off_screen_is_not_looked_up_among_all_rows(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.runs_screen.query_one(RunTable)
        table.show_rows(list(table.rows), catalog=app.session.catalog)
        assert table._row_index is None  # made only when asked
        last = table.rows[-1]
        table._row_strip(last)
        table.update_rows([last])
        assert last.key not in table._cache and table._row_index is None
        assert table.row_index[last.key] == len(table.rows) - 1
