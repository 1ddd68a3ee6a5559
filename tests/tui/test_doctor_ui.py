"""The doctor screen: ``D`` from the runs table; findings grouped by rule as the CLI finds them, Enter opens
the simulation at the finding's step, ``c`` lists the failure clusters, ``t`` adds the task rules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from textual.widgets import DataTable

from tau_tui.tui.screens.doctor import DoctorScreen
from tau_tui.tui.screens.text_view import TextViewScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen

from ..conftest import CORPUS
from .conftest import settle, wait_until

if TYPE_CHECKING:
    from tests.tui.conftest import MakeApp

pytestmark = pytest.mark.corpus

BIG = (170, 50)
GOLD_RETAIL = CORPUS / "generated" / "tau2-gold_retail.json"


async def test_doctor_screen_groups_by_rule_and_opens_the_step(
    make_app: MakeApp, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tau_tui.cli import main

    main(["doctor", "--json", "--tau2-data", str(tau2_data), str(GOLD_RETAIL)])
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = [r for r in expected if r["kind"] == "sim_finding"]
    app = make_app([GOLD_RETAIL])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_until(pilot, lambda: screen.exam is not None, "the examination")
        findings = [f for f in screen.shown if f is not None]
        assert sorted((f.sim, f.rule, f.step, f.detail) for f in findings) == sorted(
            (r["sim"], r["rule"], r["step"], r["detail"]) for r in expected
        )
        headers = [i for i, f in enumerate(screen.shown) if f is None]
        rules = [screen.shown[i + 1].rule for i in headers]
        assert rules == sorted(set(rules), key=rules.index) and rules[0] == "invariant_violated"
        screen.query_one("DataTable", DataTable).move_cursor(row=1)
        first = screen.shown[1]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen), "the trajectory")
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.sim_id == first.sim and app.screen.cursor == first.step
        assert app.screen.report is not None
        flags = [f for f in app.screen.report.flags if f.kind == "invariant_violated"]
        assert flags and all(f.step == first.step for f in flags)  # marked on the trajectory at the write


async def test_doctor_screen_lists_clusters_and_task_findings(make_app: MakeApp) -> None:
    path = CORPUS / "sierra-research__tau2-bench__airline.json"
    other = CORPUS / "sierra-research__tau2-bench__azure-airline-full.json"
    app = make_app([path, other])
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_until(pilot, lambda: screen.exam is not None, "the examination")
        await pilot.press("c")
        await pilot.pause()
        assert screen.shown and screen.shown[0].suspect
        assert screen.shown == screen.exam.clusters
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen), "the cluster's simulation")
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.sim_id == screen.shown[0].members[0].sim
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back on the doctor")
        await pilot.press("c")
        await pilot.press("t")
        await wait_until(pilot, lambda: screen.exam is not None and screen.task_findings, "task findings")
        rules = {f.rule for f in screen.task_findings}
        assert {"passes_on_inaction", "empty_component"} <= rules
        row = next(i for i, f in enumerate(screen.shown) if f is not None and f.rule == "passes_on_inaction")
        screen.query_one("DataTable", DataTable).move_cursor(row=row)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextViewScreen), "the task view")
        assert isinstance(app.screen, TextViewScreen)
        assert '"evaluation_criteria"' in app.screen.text and app.screen.text.startswith("passes_on_inaction")
