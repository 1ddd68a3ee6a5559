"""Pilot tests of the evaluation in the inspector: runs-table columns, flag filter, the Eval tab, the metrics screen."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from textual.widget import Widget
from textual.widgets import DataTable, Static, TabbedContent

from tau_tui.catalog import FLAG_CODES, RunFilter
from tau_tui.evaluate import FLAG_KINDS, MetricOutcome, compute_metrics
from tau_tui.model.io import open_run
from tau_tui.tui.screens.metrics import MetricsScreen
from tau_tui.tui.screens.picker import PickerScreen
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.tui.widgets.rich_pane import RichPane
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import flags_cell, recomputed_cell

from ..conftest import CORPUS
from .conftest import SIZE, notified, open_sim, settle, wait_until

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.tui.app import TauTuiApp
    from tests.evaluate.support import FakeOpenAI
    from tests.tui.conftest import MakeApp

FOUR_TRIALS = (
    CORPUS / "sierra-research__tau2-bench__gpt-4.1-2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
)


def plain(screen: Widget, selector: str) -> str:
    console = Console(width=150, record=True, file=io.StringIO())
    pane = screen.query_one(selector)
    assert isinstance(pane, (Static, RichPane))
    console.print(pane.content)
    return console.export_text()


def shown_ids(app: TauTuiApp) -> list[str]:
    return [row.sim_id for row in app.runs_screen.query_one(RunTable).rows]


def test_every_flag_kind_has_a_letter() -> None:
    assert set(FLAG_CODES) == set(FLAG_KINDS)
    assert len(set(FLAG_CODES.values())) == len(FLAG_CODES)


async def test_background_worker_fills_recomputed_reward_agreement_and_flags(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = {r.sim_id: r for r in app.session.catalog.rows}
        assert all(r.evaluation is not None for r in rows.values())
        user_tools = rows["demo-user-tools"].evaluation
        assert user_tools is not None
        assert user_tools.reward == 0.0 and user_tools.agrees is True
        assert user_tools.first_reason is not None
        assert "DB differs from gold" in user_tools.first_reason
        findings = rows["demo-structural-findings"].evaluation
        assert findings is not None
        assert findings.reward == 1.0 and findings.agrees is False  # recorded 0: highlighted as a disagreement
        assert findings.flags == {"write_before_read": 2}
        assert flags_cell(rows["demo-structural-findings"]).plain == "2 W"
        assert recomputed_cell(rows["demo-user-tools"]).plain == "0"
        assert rows["demo-hallucinated-tool"].evaluation is not None
        assert rows["demo-hallucinated-tool"].evaluation.flags == {"transfer_to_human": 1}
        # the preview names what the derived columns found
        app.runs_screen.query_one(RunTable).move_cursor(3)
        await pilot.pause()
        assert "recomputed reward 1 ≠ recorded 0" in app.runs_screen.query_one("#row-preview", InfoLine).plain


async def test_filter_by_process_flag_and_by_disagreement(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x")
        assert isinstance(app.screen, PickerScreen)
        await pilot.press(*"write_before", "enter")
        assert app.runs_screen.filter.flag == "write_before_read"
        assert shown_ids(app) == ["demo-mismatch", "demo-structural-findings"]
        assert "flag:write_before_read" in app.runs_screen.query_one("#filter-bar", InfoLine).plain
        await pilot.press("x", *"transfer", "enter")
        assert shown_ids(app) == ["demo-hallucinated-tool"]
        await pilot.press("x", *"no process", "enter")
        assert len(shown_ids(app)) == 5
        app.runs_screen.set_filter(RunFilter(flag="any"))
        assert shown_ids(app) == ["demo-mismatch", "demo-hallucinated-tool", "demo-structural-findings"]
        app.runs_screen.set_filter(RunFilter(disagrees=True))
        assert shown_ids(app) == ["demo-structural-findings"]


async def test_eval_tab_names_the_cause_and_jumps_to_the_divergence(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-user-tools")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("4")
        assert screen.query_one("#side", TabbedContent).active == "tab-eval"
        text = " ".join(screen.query_one("#eval-view", RichPane).plain.split())
        assert "RECORDED reward 0" in text and "RECOMPUTED* reward 0" in text
        assert "DB differs from gold at 0 agent path(s) and 1 user path(s)" in text
        assert "dismiss_notification" in text and 'user notifications.notif_1.status: "read" vs gold "unread"' in text
        assert screen.doc is not None
        assert screen.doc.targets["divergence"] == [7]
        await pilot.press("D")
        assert screen.cursor == 7
        assert "left the gold path" in screen.query_one("#traj-status", InfoLine).plain


async def test_eval_tab_highlights_disagreement_and_jumps_between_flags(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await open_sim(pilot, "demo-structural-findings")
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("4")
        text = " ".join(screen.query_one("#eval-view", RichPane).plain.split())
        assert "DIFFER" in text and "tau2 cannot replay this trajectory" in text
        assert "step 3 write_before_read" in text and "step 7 write_before_read" in text
        assert "≠ recorded" in screen.query_one("#traj-header", InfoLine).plain
        await pilot.press("p")
        assert screen.cursor == 3
        await pilot.press("p")
        assert screen.cursor == 7
        await pilot.press("P")
        assert screen.cursor == 3
        # a flag is an event of its step in the message list too
        assert screen.doc is not None
        assert any(e.kind == "flag" for e in screen.doc.steps[3].events)
        await pilot.press("D")  # the final DB matches gold: nowhere to go
        assert screen.cursor == 3


async def test_metrics_screen_shows_pass_hat_k_for_every_k(make_app: MakeApp, analyzer: Analyzer) -> None:
    app = make_app([FOUR_TRIALS])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, MetricsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.complete
        run = open_run(FOUR_TRIALS)
        expected = compute_metrics(
            [
                MetricOutcome(e.task_id, analyzer.evaluate(run, e.index).evaluation.reward, e.termination)
                for e in run.entries
            ],
            4,
        )
        assert screen.recomputed is not None
        assert screen.recomputed.pass_hat_k == expected.pass_hat_k and set(expected.pass_hat_k) == {1, 2, 3, 4}
        assert screen.recorded is not None
        assert screen.recorded.avg_reward == 0.8
        summary = plain(screen, "#metrics-summary")
        assert "pass^4" in summary and "pass@4" in summary and "average reward" in summary
        # confidence under the metrics: the bootstrap over the 5 tasks (seed printed), flip rate, noise floor
        assert "avg reward 80.0% [40.0, 100.0]  (95% bootstrap over 5 tasks)" in summary
        assert "bootstrap seed 0" in summary and "noise floor" in summary and "flip rate: 0/5" in summary
        assert abs(screen.confidence.intervals.pass_hat_k[4].estimate - expected.pass_hat_k[4]) < 1e-9
        assert "agent_stop 20" in plain(screen, "#metrics-terminations")
        table = screen.query_one("#metrics-tasks", DataTable)
        assert table.row_count == 5
        assert [str(c.label) for c in table.columns.values()][-4:] == ["pass^1*", "pass^2*", "pass^3*", "pass^4*"]
        await pilot.press("escape")
        assert app.screen is app.runs_screen


async def test_metrics_keep_infrastructure_errors_and_unscored_runs_apart(make_app: MakeApp, tmp_path: Path) -> None:
    from tests.helpers import call, greet, result, results_file, say, user

    nl_task = {
        "id": "t_nl",
        "user_scenario": {"instructions": "Say hi."},
        "evaluation_criteria": {"nl_assertions": ["The agent greets the user."], "reward_basis": ["NL_ASSERTION"]},
    }
    done = [
        greet(),
        user("finish task_1"),
        call("update_task_status", {"task_id": "task_1", "status": "completed"}),
        result({"task_id": "task_1", "status": "completed"}),
        say("done"),
    ]
    infra = {
        "id": "sim-infra",
        "task_id": "t_update",
        "trial": 1,
        "termination_reason": "infrastructure_error",
        "messages": [],
        "info": {"error": "provider down"},
    }
    unscored = {
        "id": "sim-nl",
        "task_id": "t_nl",
        "trial": 0,
        "termination_reason": "user_stop",
        "messages": [greet(), user("hi"), say("hello")],
    }
    path = results_file(tmp_path / "mixed.json", done, extra_sims=[infra, unscored])
    data = json.loads(path.read_text())
    data["tasks"].append(nl_task)
    path.write_text(json.dumps(data))
    app = make_app([path])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        rows = {r.sim_id: r for r in app.session.catalog.rows}
        assert recomputed_cell(rows["sim-infra"]).plain == "infra"  # never a fail
        assert recomputed_cell(rows["sim-nl"]).plain == "n/a"  # NL without a judge: not computable
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MetricsScreen)
        assert screen.recomputed is not None
        assert screen.recomputed.infrastructure_errors == 1 and screen.recomputed.n_unscored == 1
        assert screen.recomputed.n_scored == 1 and screen.recomputed.avg_reward == 1.0
        summary = plain(screen, "#metrics-summary")
        assert "infrastructure errors (left out)" in summary and "unscored (left out)" in summary
        side = plain(screen, "#metrics-terminations")
        assert "infrastructure_error 1" in side and "never counted as failures" in " ".join(side.split())


async def test_j_asks_the_judge_and_the_eval_tab_and_runs_table_follow(
    make_app: MakeApp, tmp_path: Path, server: tuple[type[FakeOpenAI], str]
) -> None:
    """NL assertions are "not evaluated" until J asks the judge model (a local OpenAI-compatible server)."""
    from tests.evaluate.support import TASK_1_DONE, UPDATE, mock_task
    from tests.helpers import call, greet, result, results_file, say, user

    handler, base = server
    handler.content = json.dumps(
        {"results": [{"expectedOutcome": "The agent was polite", "reasoning": "said please", "metExpectation": True}]}
    )
    task = mock_task(nl=["The agent was polite"], basis=["NL_ASSERTION"], task_id="t_update")
    messages = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
    path = results_file(tmp_path / "run.json", messages, task=task)
    before = path.read_bytes()
    app = make_app([path], judge_model="openai/judge", judge_api_base=base)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        row = app.session.catalog.rows[0]
        assert row.evaluation is not None and row.evaluation.reward is None  # not computable without a verdict
        await open_sim(pilot, row.sim_id)
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        await pilot.press("4")
        assert "not evaluated" in plain(screen, "#eval-view")
        await pilot.press("J")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(handler.requests) == 1 and handler.requests[0]["body"]["model"] == "judge"
        text = plain(screen, "#eval-view")
        assert "The agent was polite" in text and "not evaluated" not in text
        assert screen.report is not None
        assert screen.report.evaluation.reward == 1.0
        assert row.evaluation.reward == 1.0  # the runs table shows the judged reward too
        # reopening the simulation reuses the verdict instead of asking again
        await pilot.press("escape")
        await open_sim(pilot, row.sim_id)
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.report is not None
        assert app.screen.report.evaluation.reward == 1.0 and len(handler.requests) == 1
    assert path.read_bytes() == before


async def test_j_without_a_judge_model_says_how_to_give_one(make_app: MakeApp, tmp_path: Path) -> None:
    from tests.evaluate.support import TASK_1_DONE, UPDATE, mock_task
    from tests.helpers import call, greet, result, results_file, say, user

    task = mock_task(nl=["The agent was polite"], basis=["NL_ASSERTION"], task_id="t_update")
    messages = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]
    path = results_file(tmp_path / "run.json", messages, task=task)
    app = make_app([path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_sim(pilot, app.session.catalog.rows[0].sim_id)
        await pilot.press("J")
        await pilot.pause()
        await wait_until(pilot, lambda: notified(app, "--judge MODEL"), "the toast")
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.report is not None
        assert app.screen.report.evaluation.reward is None
