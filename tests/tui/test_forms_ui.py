"""Pilot tests of form fields and pickers: you see where you type, and Enter takes the highlighted option."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.widgets import Input, Label, OptionList

from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.play import PlayScreen
from tau_tui.tui.screens.rollout import RolloutScreen

from .conftest import SIZE, set_input, settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp


def labels_before(field: Input) -> list[str]:
    assert field.parent is not None
    row = list(field.parent.children)
    return [str(w.render()) for w in row[: row.index(field)] if isinstance(w, Label)]


async def test_the_focused_field_and_its_label_stand_out_and_every_field_has_a_label(
    make_app: MakeApp, tmp_path: Path
) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, RolloutScreen)
        await app.workers.wait_for_complete()
        agent, user = form.query_one("#r-agent", Input), form.query_one("#r-user", Input)
        agent.focus()
        await pilot.pause()
        assert agent.styles.background != user.styles.background
        assert agent.styles.border_left[0] and user.styles.border_left[0]  # a visible edge on every field
        assert agent.styles.border_left[1] != user.styles.border_left[1]
        assert agent.parent is not None
        assert user.parent is not None
        focused_label, other_label = agent.parent.query_one(".form-label"), user.parent.query_one(".form-label")
        assert focused_label.styles.text_style.bold and not other_label.styles.text_style.bold
        for field_id in ("#r-agent-args", "#r-user-args"):
            assert labels_before(form.query_one(field_id, Input))[-1] == "args"  # not only a placeholder


async def test_pickers_open_with_the_first_option_highlighted_and_enter_takes_it(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        options = picker.query_one(OptionList)
        assert options.highlighted == 0 and not options.has_focus
        style = options.get_component_rich_style("option-list--option-highlighted")
        assert style.bold and style.bgcolor is not None  # seen while the filter has the focus
        await pilot.press("enter")
        assert app.screen is app.runs_screen and app.runs_screen.sort.column is None  # load order, the first


async def test_enter_in_the_play_task_filter_starts_the_session(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app(runs_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await set_input(pilot, "#p-out", str(tmp_path / "enter-play.json"))
        app.screen.query_one("#p-filter").focus()
        await pilot.press(*"update_task_1", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), "the play screen")
        assert isinstance(app.screen, PlayScreen)
        assert app.screen.session.task.id == "update_task_1"


async def test_filter_form_labels_stand_apart_and_it_fits_80x24_with_a_sign_of_more(make_app: MakeApp) -> None:
    from textual.widgets import Select

    from tau_tui.tui.screens.filters import CHOICES, FilterScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("F")
        screen = app.screen
        assert isinstance(screen, FilterScreen)
        await pilot.pause()
        form = screen.query_one("#filters")
        assert form.region.right <= 80 and form.region.bottom <= 24  # its border on screen
        for name in CHOICES:
            select = screen.query_one(f"#f-{name}", Select)
            assert select.parent is not None
            label = select.parent.query_one(Label)
            text = str(label.render())
            assert text == name.replace("_", " ") and len(text) <= label.content_region.width, text
            assert label.region.right < select.region.x  # a gap between the label and the value
        assert form.max_scroll_y > 0 and "more below" in str(form.border_subtitle)
        screen.query_one("#f-text", Input).focus()  # the last field: the form scrolls to it
        # the scroll is animated: wait for it to arrive rather than for a fixed number of frames
        await wait_until(pilot, lambda: form.scroll_y == form.max_scroll_y, "the form scrolled to its last field")
        assert "more above" in str(form.border_subtitle) and "more below" not in str(form.border_subtitle)
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        await pilot.pause()
        assert form.max_scroll_y == 0 and not form.border_subtitle  # all of it shows: no mark
