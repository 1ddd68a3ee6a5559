"""The hostile recording over the screens ``test_hostile_ui`` does not reach: the trial comparison (runs
table and calibrate grid), fork and its comparison, play setup and play, the gold check, the rollout form
and the tool-call form. Drawn lines hold no raw control character; CR, BS and BEL are shown (rich would drop
them silently); recorded brackets are shown literally, never read as markup."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from textual.widgets import Checkbox

from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tests.hostile import EVIL, MARKUP, raw_controls

from .conftest import open_sim, set_input, settle, wait_until
from .test_hostile_ui import BIG, SHOWN, check, hostile  # noqa: F401 - the fixture

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

OVERWRITE = "␇␈␍X"
"""BEL, backspace, CR: rich's ``Text`` strips them silently unless they are made visible first."""
LINK = "[link=http://evil.example/]L[/link]"


def wide(renderable: RenderableType) -> str:
    """A renderable drawn on a wide console (no folding), as a terminal would get it."""
    console = Console(width=1200, color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(renderable)
    text = capture.get()
    assert not raw_controls(text), f"raw control characters drawn: {raw_controls(text)}"
    return text


def literal(text: str, where: str, marks: tuple[str, ...] = (OVERWRITE, MARKUP, LINK)) -> None:
    for mark in marks:
        assert mark in text, f"{where}: {mark!r} not shown literally\n{text}"


def rows_of(table: RunTable, name: str, task: str) -> list[int]:
    return [i for i, row in enumerate(table.rows) if row.path.name == name and row.task == task]


async def test_trial_comparison_of_two_hostile_runs(make_app: MakeApp, hostile: Path) -> None:
    from tau_tui.tui.screens.trial_compare import TrialCompareScreen

    app = make_app([hostile.parent])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RunTable)
        for index in rows_of(table, "hostile.json", "update_task_1")[:2]:
            table.move_cursor(index)
            await pilot.press("equals_sign")
            await pilot.pause()
        check(app, "runs preview with a marked run", ())
        screen = app.screen
        assert isinstance(screen, TrialCompareScreen)
        await wait_until(pilot, lambda: screen.comparison is not None, "the comparison")
        await pilot.pause()
        text = check(app, "trial comparison", ("demo-clean-pass␛[2J",))
        title = screen.query_one("#trials-view")._border_title
        assert title is not None and MARKUP in title.plain
        assert "demo-user-tools␛[2J" in text  # the side labels (the sim ids) in the column heads and the border
        drawn = wide(screen.query_one("#trials-view", RichPane).content)
        literal(drawn, "trial comparison")
        assert "arg␛[2J" in drawn  # the tool call's hostile argument
        await pilot.press("w")  # writes only: drawn again
        await wait_until(pilot, lambda: screen.comparison is not None and screen.comparison.writes_only, "writes")
        await pilot.pause()
        check(app, "trial comparison, writes only", ())


async def test_fork_form_and_fork_comparison_show_the_hostile_original(
    make_app: MakeApp, hostile: Path, tmp_path: Path
) -> None:
    from tau_tui.tui.screens.compare import CompareScreen
    from tau_tui.tui.screens.fork import ForkScreen

    app = make_app([hostile.parent], runs_dir=tmp_path / "out")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        sim_id = next(
            r.sim_id
            for r in app.runs_screen.query_one("RunTable", RunTable).rows
            if r.path.name == "hostile.json" and r.sim_id.startswith("demo-clean-pass")
        )
        await open_sim(pilot, sim_id)
        await pilot.press("j", "j")  # message 2: the user's request, hostile
        await pilot.press("b")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, ForkScreen)
        text = check(app, "fork form", ("demo-clean-pass␛[2J",))  # the sim id in the border title
        title = form.query_one("#fork-form")._border_title
        assert title is not None and MARKUP in title.plain
        assert OVERWRITE in text and MARKUP in text  # the original's message, in the form
        form.query_one("#k-lenient", Checkbox).value = True  # the recorded prefix carries hostile arguments
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), "the fork comparison")
        await pilot.pause()
        compare = app.screen
        text = check(app, "fork comparison", ("demo-clean-pass␛[2J",))  # the header names the original
        drawn = wide(compare.query_one("#compare-view", RichPane).content)
        literal(drawn, "fork comparison", (OVERWRITE,))  # message lines are clipped before the brackets


async def test_play_setup_and_play_with_hostile_text(make_app: MakeApp, hostile: Path, tmp_path: Path) -> None:
    from tau_tui.tui.screens.play import PlayScreen
    from tau_tui.tui.screens.play_setup import PlaySetupScreen
    from tau_tui.tui.screens.tool_form import ToolFormScreen

    app = make_app([hostile.parent], runs_dir=tmp_path / "out")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RunTable)
        table.move_cursor(rows_of(table, "hostile.json", f"task{EVIL}")[0])  # a task the domain does not have
        await pilot.pause()
        await pilot.press("p")
        form = app.screen
        assert isinstance(form, PlaySetupScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        check(app, "play setup", ())
        await set_input(pilot, "#p-filter", "update_task_1")
        await set_input(pilot, "#p-out", str(tmp_path / "play.json"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), "the play screen")
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await wait_until(pilot, lambda: screen.session.pending is not None, "the first turn")
        await pilot.pause()
        check(app, "play", ())
        await set_input(pilot, "#play-input", f"please{EVIL}")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: screen.session.pending is not None and len(screen.session.messages) > 2, "the agent's reply"
        )
        await pilot.pause()
        check(app, "play with a hostile message", ("please␛[2J",))
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert isinstance(app.screen, ToolFormScreen)
        check(app, "tool form", ())


async def test_rollout_form_from_hostile_rows(make_app: MakeApp, hostile: Path, tmp_path: Path) -> None:
    from tau_tui.tui.screens.rollout import RolloutScreen

    app = make_app([hostile.parent], runs_dir=tmp_path / "out")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RunTable)
        for name in ("hostile.json", "hostile_domain.json"):
            table.move_cursor(next(i for i, r in enumerate(table.rows) if r.path.name == name))
            await pilot.pause()
            await pilot.press("n")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, RolloutScreen)
            check(app, f"rollout form ({name})", ())
            await pilot.press("escape")
            await pilot.pause()


async def test_calibrate_trial_comparison_and_gold_check_of_a_hostile_domain(make_app: MakeApp, hostile: Path) -> None:
    from tau_tui.tui.screens.calibrate import CalibrateScreen
    from tau_tui.tui.screens.gold_check import GoldCheckScreen
    from tau_tui.tui.screens.trial_compare import TrialCompareScreen

    app = make_app([hostile.parent])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("C")
        screen = app.screen
        assert isinstance(screen, CalibrateScreen)
        await wait_until(pilot, lambda: screen.ready, "the calibrator")
        await pilot.pause()
        table = screen.table
        cells = [
            (i, k)
            for i, row in enumerate(table.rows)
            for k, cell in enumerate(row.cells)
            if cell.ref is not None and row.task_id == "update_task_1"
        ]
        assert len(cells) >= 2, cells
        for index, k in cells[:2]:
            table.move_to(index, k)
            await pilot.press("equals_sign")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, TrialCompareScreen) and app.screen.comparison is not None,
            "the comparison",
        )
        await pilot.pause()
        check(app, "calibrate trial comparison", ("␛[2J",))
        literal(wide(app.screen.query_one("#trials-view", RichPane).content), "calibrate trial comparison")
        await pilot.press("escape")
        await pilot.pause()
        gold = GoldCheckScreen(f"mock{EVIL}")  # a hostile domain name: it cannot load, the error names it
        app.push_screen(gold)
        await wait_until(pilot, lambda: gold.finished, "the gold check")
        await pilot.pause()
        text = check(app, "gold check of a hostile domain", ("mock␛[2J",))
        assert MARKUP in text


def test_gold_check_detail_shows_hostile_task_text_literally() -> None:
    from tau_tui.tui.screens.gold_check import check_option, render_check

    difference = SimpleNamespace(
        to_json=lambda: {
            "side": f"agent{EVIL}",
            "path": f"tasks.t{EVIL}",
            "gold": f"g{EVIL}",
            "live": {f"k{EVIL}": f"v{EVIL}"},
        }
    )
    check = SimpleNamespace(
        ok=False,
        task_id=f"task{EVIL}",
        fingerprint="abcdef0123",
        gold_reward=0.0,
        gold_agent_ok=False,
        termination=f"stop{EVIL}",
        breakdown={f"DB{EVIL}": 0.0},
        not_evaluated=[f"NL{EVIL}"],
        gold_consistent=False,
        inconsistency_matters=True,
        reasons=[f"because{EVIL}"],
        differences=[difference],
    )
    text = wide(render_check(check))
    assert min(text.count(OVERWRITE), text.count(MARKUP), text.count(LINK)) >= 6, text
    literal(wide(check_option(check)), "gold check option")


def test_fork_comparison_shows_hostile_labels_and_terminations_literally() -> None:
    from tau_tui.tui.screens.compare import ForkSide, render_comparison

    original = ForkSide(f"original{EVIL}", 1.0, 0.0, f"user_stop{EVIL}", [], None, None)
    fork = ForkSide(f"fork{EVIL}", None, 1.0, f"max_steps{EVIL}", [], None, None)
    text = wide(render_comparison(original, fork, -1))
    assert min(text.count(OVERWRITE), text.count(MARKUP), text.count(LINK)) >= 4, text


async def test_runs_preview_and_trajectory_header_show_cr_bs_bel(make_app: MakeApp, hostile: Path) -> None:
    """Composed lines: rich drops CR, BS and BEL from recorded text unless it goes through textsafe first."""
    app = make_app([hostile.parent])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RunTable)
        index = rows_of(table, "hostile.json", f"task{EVIL}")[0]
        table.move_cursor(index)
        await pilot.pause()
        preview = app.screen.query_one("#row-preview", InfoLine).plain
        assert f"task task{OVERWRITE}" in preview.replace(
            "␛[2J␛]0;PWNED␇␛]52;c;cHduZWQ=␇␛]8;;http://evil.example/␛\\link␛]8;;␛\\", ""
        )
        assert preview.count(OVERWRITE) >= 2 and not raw_controls(preview), preview  # task and sim id
        sim_id = table.rows[index].sim_id
        await open_sim(pilot, sim_id)
        header = app.screen.query_one("#traj-header", InfoLine).plain
        assert header.count(OVERWRITE) >= 3 and MARKUP in header and not raw_controls(header), header


def test_recorded_brackets_alone_are_never_read_as_markup() -> None:
    """Without any control character (the cleaning leaves such text as it is), tables and heads still show it."""
    from tau_tui.replay.diff import Change
    from tau_tui.tui.screens.compare import ForkSide, render_comparison
    from tau_tui.tui.screens.gold_check import render_check
    from tau_tui.views.compare_view import changes_table
    from tau_tui.views.panels import side_by_side

    bold, link = "[bold red]x[/]", "[link=http://e]y[/link]"
    m = bold + link
    change = Change(path=("tasks", f"t{m}"), kind="changed", before=f"a{m}", after="b")
    difference = SimpleNamespace(to_json=lambda: {"side": "agent", "path": f"p{m}", "gold": f"g{m}", "live": "l"})
    gold = SimpleNamespace(
        ok=False,
        task_id=f"t{m}",
        fingerprint=None,
        gold_reward=0.0,
        gold_agent_ok=False,
        termination="x",
        breakdown={},
        not_evaluated=[],
        gold_consistent=False,
        inconsistency_matters=True,
        reasons=[f"r{m}"],
        differences=[difference],
    )
    drawn = {
        "changes table": (wide(changes_table([("agent", change)], f"L{m}", f"R{m}")), 4),
        "side by side": (wide(side_by_side([f"a{m}"], [f"b{m}"], (f"T{m}", f"U{m}"))), 4),
        "fork comparison": (
            wide(
                render_comparison(
                    ForkSide(f"o{m}", 1.0, 0.0, f"s{m}", [], None, None),
                    ForkSide(f"f{m}", None, 1.0, f"u{m}", [], None, None),
                    -1,
                )
            ),
            4,
        ),
        "gold check": (wide(render_check(gold)), 4),
    }
    for where, (text, times) in drawn.items():
        assert text.count(bold) >= times and text.count(link) >= times, f"{where}\n{text}"
