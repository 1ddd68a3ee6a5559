"""A new kind costs one registry entry: a process detector (letters, legend, filter, CLI), a reward component
(reward, reward_info, why, CLI, Eval tab)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from tau_tui.catalog import RunFilter, flag_options
from tau_tui.cli import main
from tau_tui.evaluate import (
    FLAG_KINDS,
    FLAG_LETTERS,
    REWARD_COMPONENTS,
    Detector,
    Flag,
    RewardComponent,
    assess,
    register_component,
    register_detector,
    unregister_component,
    unregister_detector,
)
from tau_tui.evaluate.judge import Judge
from tau_tui.evaluate.reward import CheckLine, Component, Evaluation, Replayed
from tau_tui.model.results import RewardInfo
from tau_tui.model.tasks import EvaluationCriteria
from tau_tui.replay import Timeline
from tau_tui.tui.widgets.run_table import RunTable
from tau_tui.views.columns import flags_cell
from tau_tui.views.eval_panels import RecordedChecks, render_breakdown, render_checks
from tau_tui.views.legend import help_legend
from tests.evaluate.support import TASK_1_DONE, UPDATE, action, mock_task, replayed
from tests.helpers import call, greet, result, results_file, say, user

from .conftest import RECORDINGS, SIZE, settle

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tests.tui.conftest import MakeApp


def _greeting(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    """Flags the first message of the agent's own doing (every trajectory has one)."""
    return [Flag("greeting", step.index, "the agent spoke first") for step in timeline.steps[start : start + 1]]


@pytest.fixture
def greeting() -> Iterator[Detector]:
    detector = register_detector(Detector("greeting", "G", "the first agent message (a test detector)", _greeting))
    yield detector
    unregister_detector("greeting")
    assert "greeting" not in FLAG_KINDS and "greeting" not in FLAG_LETTERS


def test_letters_must_be_unique_and_kinds_new(greeting: Detector) -> None:
    with pytest.raises(ValueError, match="letter 'G'"):
        register_detector(Detector("other", "G", "", _greeting))
    with pytest.raises(ValueError, match="already registered"):
        register_detector(greeting)


async def test_one_registration_reaches_letters_legend_filter_and_cli(
    greeting: Detector, make_app: MakeApp, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert list(FLAG_KINDS)[-1] == "greeting" and FLAG_LETTERS["greeting"] == "G"
    legend = help_legend().plain
    assert "G  greeting  the first agent message (a test detector)" in legend
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = app.session.catalog.rows
        assert rows and all(r.evaluation is not None and r.evaluation.flags.get("greeting") == 1 for r in rows)
        structural = next(r for r in rows if r.sim_id == "demo-structural-findings")
        assert flags_cell(structural).plain == "3 WG"
        counts = dict(app.runs_screen._flag_values())
        assert ("greeting", f"G  greeting  ·  {len(rows)} runs") in flag_options(counts)
        app.runs_screen.set_filter(RunFilter(flag="greeting"))
        await pilot.pause()
        assert len(app.runs_screen.query_one("RunTable", RunTable).rows) == len(rows)

    path = next(RECORDINGS.glob("*.json"))
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) in (0, 1)
    out = capsys.readouterr().out
    assert "greeting ×1 (step" in out
    assert main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)]) in (0, 1)
    sims = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    flagged = [s for s in sims if "diagnostics" in s]
    assert flagged and all(any(f["kind"] == "greeting" for f in s["diagnostics"]["flags"]) for s in flagged)


# --- a reward component --------------------------------------------------------------------------


def _polite_run(
    criteria: EvaluationCriteria, replayed: Replayed, basis: list[str], judge: Judge | None, evaluation: Evaluation
) -> Component | None:
    """POLITE: the agent says "please" somewhere (a test component)."""
    if "POLITE" not in basis:
        return None
    said = [
        i
        for i, step in enumerate(replayed.timeline.steps)
        if step.message.role == "assistant" and "please" in step.message.text.lower()
    ]
    evaluation.results["polite"] = said
    reward = 1.0 if said else 0.0
    return Component(reward, {"POLITE": reward}, None)


def _polite_lines(evaluation: Evaluation, recorded_info: RewardInfo | None) -> list[CheckLine]:
    said = evaluation.results.get("polite")
    recorded = (recorded_info.model_extra or {}).get("polite_check") if recorded_info is not None else None
    return [] if said is None else [CheckLine(bool(said), recorded, "agent says please")]


DONE = [greet(), user("finish task_1"), call("update_task_status", UPDATE), result(TASK_1_DONE), say("Done.")]


@pytest.fixture
def polite() -> Iterator[RewardComponent]:
    component = register_component(
        RewardComponent(
            "polite",
            ("POLITE",),
            _polite_run,
            reward_info=lambda ev: {"polite_check": None if "polite" not in ev.results else bool(ev.results["polite"])},
            checks_json=lambda ev: {"polite": ev.results.get("polite")},
            why=lambda ev, reasons: (
                ["the agent never said please"] if "POLITE" in reasons.basis and ev.results.get("polite") == [] else []
            ),
            check_lines=_polite_lines,
        )
    )
    yield component
    unregister_component("polite")
    assert "polite" not in REWARD_COMPONENTS


def test_one_registration_reaches_reward_reward_info_why_cli_and_eval_tab(
    polite: RewardComponent,
    tmp_path: Path,
    tau2_data: Path,
    registry: DomainRegistry,
    capsys: pytest.CaptureFixture[str],
) -> None:
    task = mock_task(actions=[action("update_task_status", UPDATE)], basis=["DB", "POLITE"])
    ours = replayed(registry, DONE, task)
    report = assess(ours)
    ev = report.evaluation
    assert ev.info is not None
    assert ev.reward == 0.0 and ev.breakdown == {"DB": 1.0, "POLITE": 0.0} and ev.info["polite"] is None
    assert ev.to_reward_info()["polite_check"] is False and ev.checks_json()["polite"] == []
    assert report.explanation.failed == ["the agent never said please"]
    assert not any("unknown component" in note for note in ev.notes)
    recorded = RecordedChecks(RewardInfo.model_validate({"reward": 1.0, "polite_check": True}))
    checks = render_checks(report, recorded).plain
    assert "agent says please  ≠ recorded" in checks
    table = Console(width=80, record=True, file=io.StringIO())
    table.print(render_breakdown(report, recorded))
    assert "POLITE" in table.export_text()

    path = results_file(tmp_path / "run.json", DONE, task=task)
    assert main(["eval", str(path), "--tau2-data", str(tau2_data)]) == 0
    out = capsys.readouterr().out
    assert "breakdown: DB 1, POLITE 0" in out and "the agent never said please" in out
    main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    sim = json.loads(capsys.readouterr().out.splitlines()[0])
    assert sim["reward"] == 0.0 and sim["reward_info"]["polite_check"] is False and sim["checks"]["polite"] == []


def test_without_the_component_its_basis_is_unknown(registry: DomainRegistry) -> None:
    task = mock_task(actions=[action("update_task_status", UPDATE)], basis=["DB", "POLITE"])
    ev = assess(replayed(registry, DONE, task)).evaluation
    assert ev.reward is None and "reward_basis names unknown component(s): POLITE" in ev.notes
