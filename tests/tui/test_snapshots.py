"""SVG snapshots of the key screens at a fixed size, on the bundled mock recordings."""

from __future__ import annotations

from .conftest import SIZE, open_sim, settle


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
