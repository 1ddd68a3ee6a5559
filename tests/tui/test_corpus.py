"""The inspector on the real corpus: every simulation renders, and the hardest ones open and step without error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from tau_tui.analysis import Analyzer
from tau_tui.catalog import Catalog, ReplaySummary, RunFilter, SortSpec
from tau_tui.domains import DomainError
from tau_tui.model.io import RecordedOnly, RunFile, RunFileError, expand_paths, open_run
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.tui.widgets.state_tree import StateTree
from tau_tui.views.panels import render_changes, render_derived, render_mismatch, render_recorded, render_task
from tau_tui.views.render import RenderContext, render_step
from tau_tui.views.trajectory_doc import TrajectoryDoc
from tests.tui.conftest import build_app

from ..conftest import CORPUS
from .conftest import wait_until

pytestmark = pytest.mark.corpus


def corpus_runs() -> tuple[list[RunFile], list[str]]:
    runs, failures = [], []
    for path in expand_paths([CORPUS]):
        try:
            runs.append(open_run(path))
        except RunFileError as exc:
            failures.append(str(exc))
    return runs, failures


@pytest.fixture(scope="module")
def corpus(analyzer: Analyzer) -> tuple[list[RunFile], list[str]]:
    if not CORPUS.is_dir():
        pytest.fail(f"the tau2 corpus is missing at {CORPUS}")
    runs, failures = corpus_runs()
    return runs, failures


def test_every_corpus_simulation_renders(corpus: tuple[list[RunFile], list[str]], analyzer: Analyzer) -> None:
    runs, failures = corpus
    assert failures == []  # the tau-bench v1 file opens too (recorded only)
    console = Console(width=90, file=open(os.devnull, "w"))
    seen = 0
    for run in runs:
        for entry in run.entries:
            sim = run.simulation(entry.index)
            try:
                analysis = analyzer.analyze(run, entry.index)
            except (DomainError, RecordedOnly):
                analysis = None
            doc = TrajectoryDoc(sim.trajectory, analysis.timeline if analysis else None)
            assert len(doc) == len(sim.trajectory)
            for step in doc.steps:
                assert render_step(step, RenderContext(60)).plain
                render_step(step, RenderContext(60, expanded=True))
            if entry.index < 2:  # the panels, for the first simulations of each file
                console.print(render_task(analysis.task if analysis else None, sim.task_id))
                console.print(render_recorded(sim))
                console.print(render_derived(analysis, None if analysis else "no domain"))
                if analysis is not None:
                    for k in range(len(doc)):
                        agent, user = analysis.timeline.changes_at(k)
                        console.print(render_changes((("agent DB", agent), ("user DB", user)), "none"))
            for call in doc.calls:
                if call.pill == "mismatch":
                    console.print(render_mismatch(call))
            seen += 1
    assert seen > 1500


def test_catalog_of_the_whole_corpus(corpus: tuple[list[RunFile], list[str]]) -> None:
    runs, _ = corpus
    catalog = Catalog()
    for run in runs:
        catalog.add_run(run)
    assert len(catalog.rows) == sum(len(r.entries) for r in runs)
    failed_retail = catalog.view(RunFilter(failed_only=True, domain="retail"), SortSpec())
    assert failed_retail and all(r.status == "fail" and r.domain == "retail" for r in failed_retail)
    assert catalog.view(RunFilter(text="toggle_airplane_mode"), SortSpec())
    assert {r.termination for r in catalog.rows} >= {"user_stop", "agent_stop", "max_steps", "agent_error"}
    longest = catalog.view(RunFilter(), SortSpec("turns", reverse=True))[0]
    assert longest.entry.n_messages >= 200
    for row in catalog.rows[:50]:
        row.replay = ReplaySummary(0, 0, 0, 0, 0, None, True)
    assert len(catalog.view(RunFilter(), SortSpec("mismatches"))) == len(catalog.rows)


def hard_cases(runs: list[RunFile]) -> list[tuple[Path, int]]:
    """The longest trajectory of each domain, a solo run, a dual-control run and a run that ended in an error."""
    picks: dict[str, tuple[int, Path, int]] = {}
    for run in runs:
        for entry in run.entries:
            keys = [f"longest-{run.domain}"]
            if run.solo:
                keys.append("solo")
            if entry.termination in ("agent_error", "too_many_errors"):
                keys.append("error")
            if run.domain == "telecom" and not run.solo:
                keys.append("dual-control")
            for key in keys:
                if key not in picks or entry.n_messages > picks[key][0]:
                    picks[key] = (entry.n_messages, run.path, entry.index)
    return sorted({(path, index) for _, path, index in picks.values()})


async def test_hard_simulations_open_and_step_to_the_end(
    corpus: tuple[list[RunFile], list[str]], tau2_data: Path
) -> None:
    runs, _ = corpus
    cases = hard_cases(runs)
    assert len(cases) >= 5
    app = build_app([path for path, _ in cases], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.session.library.progress is None or app.busy:
            await pilot.pause(0.05)
        for path, index in cases:
            row = app.session.catalog.by_key[Catalog.row_key(path, index)]
            app.open_simulation(row)
            await app.workers.wait_for_complete()
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, TrajectoryScreen) and screen.doc is not None, (path, index)
            for step in range(len(screen.doc)):
                screen.go(step)
            await pilot.press("a", "d", "G", "g", "w", "2", "3", "1")
            await pilot.pause()
            if screen.analysis is not None:
                assert screen.query_one(StateTree).display
            await pilot.press("escape")
            await pilot.pause()


async def test_the_corpus_folder_opens_with_one_notice_for_its_data_folders(tau2_data: Path) -> None:
    """Scanning the corpus lists tau2's data folders once, not each of their ~800 JSON files."""
    app = build_app([CORPUS], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.session.library.progress is None or app.session.library.loading:
            await pilot.pause(0.05)
        notices = app.session.catalog.all_notices()
        folder = [n for n in notices if "tau2 data folder" in n.text]
        assert len(folder) == 1 and "banking_knowledge" in folder[0].text
        assert not [n for n in notices if "domains" in n.path.parts and n is not folder[0]]
        # the two files that name no domain say which it is and how it was told
        inferred = sorted(n.path.name for n in notices if "(the file names none), from the tools it calls" in n.text)
        assert inferred == [
            "sierra-research__tau2-bench__adaptive-agent_airline_claude-opus-4-6_1trial.json",
            "sierra-research__tau2-bench__tau2_retail_example_trajectory.json",
        ]
        # the folder note, the tau-bench v1 file, the empty run, nothing per data file
        assert len(notices) - len(inferred) <= 4


async def test_a_run_of_a_domain_we_do_not_have_yet_shows_its_rows_and_why(tau2_data: Path, tmp_path: Path) -> None:
    # banking_knowledge is a domain now: its gold file, renamed to a domain nobody has
    path = tmp_path / "unknown_domain.json"
    path.write_bytes(
        (CORPUS / "generated" / "tau2-gold_banking_knowledge.json")
        .read_bytes()
        .replace(b'"banking_knowledge"', b'"no_such_domain"')
    )
    app = build_app([path], tau2_data=tau2_data)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.session.library.progress is None or app.busy:
            await pilot.pause(0.05)
        rows = [r for r in app.session.catalog.rows if r.run.path == path]
        assert len(rows) == 291
        app.open_simulation(rows[0])
        # the simulation is parsed from the streamed file off the UI thread: wait for the screen to show it
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, TrajectoryScreen) and app.screen.doc is not None and app.screen.replay_error,
            "the trajectory and its replay error",
        )
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen) and screen.doc is not None
        assert screen.analysis is None and "no_such_domain" in (screen.replay_error or "")
    notice = next(n for n in app.session.catalog.all_notices() if n.path == path)
    assert "unknown domain 'no_such_domain'" in notice.text and str(path) not in notice.text  # named once
