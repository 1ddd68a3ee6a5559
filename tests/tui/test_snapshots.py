"""SVG snapshots of the key screens at a fixed size, on the bundled mock recordings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import ROOT, SIZE, TELECOM_IDS, open_play, open_sim, set_input, settle, wait_until

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tests.tui.conftest import MakeApp


def test_runs_screen(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_trajectory_after_first_write(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "demo-clean-pass")
        await pilot.press("w")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_mismatch_side_by_side(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "demo-mismatch")
        await pilot.press("m", "space")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_dual_control_user_db_and_gold_diff(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        await pilot.press("G", "d")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_reward_tab_recorded_apart_from_derived(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "demo-structural-findings")
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_eval_tab_at_the_divergence(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        await pilot.press("4", "D")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_metrics_screen(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("m")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_play_as_user_after_the_agent_acted(
    snap_compare: Callable[..., bool], make_app: MakeApp, tmp_path: Path
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        screen = await open_play(pilot, "user", "create_task_1", tmp_path / "snap-play.json")
        await pilot.press(*"Please create a task called 'Important Meeting' for user_1.", "enter")
        session = screen.session
        await wait_until(
            pilot,
            lambda: (
                session.pending is not None
                and len(session.messages) > 2
                and screen.doc is not None
                and len(screen.doc) == len(session.messages)
                and not screen.query_one("#play-input").disabled
            ),
            "the agent's answer, shown",
        )
        await pilot.press("ctrl+b")
        screen.query_one("#play-conversation").focus()  # no blinking input cursor in the picture
        await pilot.pause()

    assert snap_compare(make_app(runs_dir=tmp_path), terminal_size=SIZE, run_before=run_before)


# --- our own domains: calibration, injected faults and cassette refusals ---------------------------------

OUR_RECORDINGS = ROOT / "recordings"
WIDE = (160, 40)


def test_calibrate_grid_with_all_three_bands(
    snap_compare: Callable[..., bool], make_app: MakeApp, tmp_path: Path
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        from tau_tui.tui.screens.calibrate import CalibrateScreen
        from tau_tui.tui.screens.rollout import RolloutScreen

        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, CalibrateScreen)
        await wait_until(pilot, lambda: screen.ready, "the calibrator")
        await pilot.press("n")
        form = pilot.app.screen
        assert isinstance(form, RolloutScreen)
        await wait_until(pilot, lambda: len(form.tasks) == 14, "the task list")
        await set_input(pilot, "#r-agent", "scripted/flaky:0.5")
        await set_input(pilot, "#r-out", str(tmp_path / "snap-calibrate.json"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not screen.running, "the calibration")
        await wait_until(pilot, lambda: not screen.refresh_pending, "the grid redraw")
        await pilot.app.workers.wait_for_complete()
        table = screen.table
        table.move_to(
            next(
                i
                for i, r in enumerate(table.rows)
                if r.task_id == "south_times_out_twice" and "gives-up" in (r.setup.agent or "")
            ),
            1,
        )  # a recorded trial: a stable name below
        pilot.app.clear_notifications()  # the toast names the temporary folder
        await pilot.pause()

    app = make_app([OUR_RECORDINGS], runs_dir=tmp_path, calibrate="warehouse")
    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_trajectory_with_an_injected_fault_and_a_cassette_refusal(
    snap_compare: Callable[..., bool], make_app: MakeApp
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await open_sim(pilot, "cas-greedy-refused")
        await pilot.press("u")
        await pilot.pause()

    assert snap_compare(make_app([OUR_RECORDINGS]), terminal_size=SIZE, run_before=run_before)


# --- the runs table at 80 columns on telecom task ids (the fixture alone: no tau2 data, no ../shared) ----------


def test_runs_table_at_80x24_on_telecom_ids(snap_compare: Callable[..., bool], monkeypatch: pytest.MonkeyPatch) -> None:
    """One file (so no file column), task ids sharing long prefixes shortened apart; not replayed (no data)."""
    from tests.tui.conftest import build_app

    monkeypatch.chdir(ROOT)  # relative paths: the picture names no checkout folder
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)  # the fixture's folder is the only data folder tried
    monkeypatch.setattr("tau_tui.domains._installed_tau2_data", lambda: None)  # nor an installed tau2's data
    fixture = TELECOM_IDS.relative_to(ROOT)
    app = build_app([fixture], tau2_data=Path(fixture.parent), viewer=lambda path: None)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


# --- the corpus: a long audit, and reviewed runs -------------------------------------------------------------


def test_audit_screen_with_a_long_summary(snap_compare: Callable[..., bool], make_app: MakeApp) -> None:
    from tests.conftest import CORPUS

    toolorchestra = CORPUS / "sierra-research__tau2-bench__toolorchestra_airline_gpt-5_1trial.json"

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("u")
        screen = pilot.app.screen
        await wait_until(pilot, lambda: getattr(screen, "audit", None) is not None, "the audit")
        await pilot.pause()

    assert snap_compare(make_app([toolorchestra]), terminal_size=SIZE, run_before=run_before)


def test_review_tab_after_switching_simulations(
    snap_compare: Callable[..., bool], make_app: MakeApp, tmp_path: Path
) -> None:
    from tests.review_fixtures import reviewed_run

    reviewed_run(tmp_path, keep=6)

    async def run_before(pilot: Pilot[None]) -> None:
        from tau_tui.tui.app import TauTuiApp

        await settle(pilot)
        assert isinstance(pilot.app, TauTuiApp)
        first, second = (row.sim_id for row in pilot.app.session.catalog.rows[:2])
        await open_sim(pilot, first)
        await pilot.press("6")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await open_sim(pilot, second)
        await pilot.press("6")
        await pilot.pause()

    assert snap_compare(make_app([tmp_path], runs_dir=tmp_path), terminal_size=SIZE, run_before=run_before)
