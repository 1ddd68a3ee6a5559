"""SVG snapshots of the key screens at a fixed size, on the bundled mock recordings."""

from __future__ import annotations

from .conftest import SIZE, open_play, open_sim, settle, wait_until


def test_runs_screen(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_trajectory_after_first_write(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        await pilot.press("w")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_mismatch_side_by_side(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        await pilot.press("m", "space")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_dual_control_user_db_and_gold_diff(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        await pilot.press("G", "d")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_reward_tab_recorded_apart_from_derived(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await open_sim(pilot, "demo-structural-findings")
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_eval_tab_at_the_divergence(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        await pilot.press("4", "D")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_metrics_screen(snap_compare, make_app):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("m")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_play_as_user_after_the_agent_acted(snap_compare, make_app, tmp_path):
    async def run_before(pilot):
        await settle(pilot)
        screen = await open_play(pilot, "user", "create_task_1", tmp_path / "snap-play.json")
        await pilot.press(*"Please create a task called 'Important Meeting' for user_1.", "enter")
        session = screen.session
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) > 2
                         and screen.doc is not None and len(screen.doc) == len(session.messages)
                         and not screen.query_one("#play-input").disabled, "the agent's answer, shown")
        await pilot.press("ctrl+b")
        screen.query_one("#play-conversation").focus()  # no blinking input cursor in the picture
        await pilot.pause()

    assert snap_compare(make_app(runs_dir=tmp_path), terminal_size=SIZE, run_before=run_before)
