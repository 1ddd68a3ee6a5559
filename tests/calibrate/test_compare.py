"""Comparing two trajectories of one task: aligned by turn, first differing call, DB diff at that point."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.calibrate import compare_simulations, render_comparison
from tau_tui.model.io import RunFile, open_run
from tau_tui.rollout import ParticipantSpec, RunConfig, Runner
from tests.calibrate.test_workbench import TELECOM_4_TRIALS

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry

TASK = "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]"


@pytest.fixture(scope="module")
def telecom_run() -> RunFile:
    return open_run(TELECOM_4_TRIALS)


def trial(run: RunFile, task_id: str, number: int) -> int:
    return next(e.index for e in run.entries if e.task_id == task_id and e.trial == number)


def test_two_corpus_trials_of_one_task(analyzer: Analyzer, telecom_run: RunFile) -> None:
    comparison = compare_simulations(
        analyzer, (telecom_run, trial(telecom_run, TASK, 0)), (telecom_run, trial(telecom_run, TASK, 2))
    )
    d = comparison.divergence
    assert d is not None and d.position == 4  # the first four calls are the same on both sides
    assert d.left is not None
    assert d.right is not None
    assert (d.left.name, d.right.name) == ("check_status_bar", "check_sim_status")
    assert (d.left.requestor, d.right.requestor) == ("assistant", "assistant")  # solo run: the agent does it all
    marked = [t for t in comparison.turns if t.divergent]
    assert marked[0].left is not None
    assert marked[0].right is not None
    assert len(marked) == 1 and marked[0].left.calls[0] is d.left and marked[0].right.calls[0] is d.right
    before = comparison.turns[marked[0].index - 1]
    assert before.left is not None and before.right is not None
    assert before.left.calls[0].signature == before.right.calls[0].signature
    # both are reads: the DB states right after them, and at the end, are the same
    assert d.agent_diff == [] and d.user_diff == []
    assert comparison.final_agent_diff == [] and comparison.final_user_diff == []
    assert d.left_step == d.left.result_step and d.right_step == d.right.result_step

    text = render_comparison(comparison, width=140)
    divergent_line = next(line for line in text.splitlines() if line.startswith(">>"))
    assert "check_status_bar()" in divergent_line and "check_sim_status()" in divergent_line
    assert "first differing tool call: #5" in text and "final DB: same" in text
    data = comparison.to_json()
    assert data["divergence"]["turn"] == marked[0].index and data["divergence"]["left"]["name"] == "check_status_bar"


def test_identical_trials_have_no_divergence(analyzer: Analyzer, telecom_run: RunFile) -> None:
    comparison = compare_simulations(
        analyzer, (telecom_run, trial(telecom_run, TASK, 0)), (telecom_run, trial(telecom_run, TASK, 1))
    )
    assert comparison.same_calls and not any(t.divergent for t in comparison.turns)
    assert len(comparison.turns) == 12
    assert "same tool calls on both sides" in render_comparison(comparison)


def test_only_writes_are_compared_when_asked(analyzer: Analyzer, telecom_run: RunFile) -> None:
    comparison = compare_simulations(
        analyzer,
        (telecom_run, trial(telecom_run, TASK, 0)),
        (telecom_run, trial(telecom_run, TASK, 2)),
        writes_only=True,
    )
    assert comparison.divergence is None  # the trials differ only in what they read


def test_different_tasks_are_refused_unless_allowed(analyzer: Analyzer, telecom_run: RunFile) -> None:
    other = next(e.index for e in telecom_run.entries if e.task_id != TASK)
    with pytest.raises(ValueError, match="different tasks"):
        compare_simulations(analyzer, (telecom_run, trial(telecom_run, TASK, 0)), (telecom_run, other))
    assert (
        compare_simulations(
            analyzer, (telecom_run, trial(telecom_run, TASK, 0)), (telecom_run, other), allow_other_tasks=True
        ).divergence
        is not None
    )


def test_a_dropped_write_shows_in_the_db_diff(registry: DomainRegistry, analyzer: Analyzer, tmp_path: Path) -> None:
    """Gold vs flaky on a retail task: where the flaky agent skips a write, the DB states differ."""
    runs = {}
    for name, agent in (("gold", "scripted/gold"), ("flaky", "scripted/flaky:0.5")):
        path = tmp_path / f"{name}.json"
        config = RunConfig(
            domain="retail",
            agent=ParticipantSpec(agent),
            user=ParticipantSpec("scripted/user"),
            task_ids=["4"],
            num_trials=3,
        )
        asyncio.run(Runner(config, path, registry).run())
        runs[name] = open_run(path)
    by_trial: defaultdict[int | None, dict[str, int]] = defaultdict(dict)
    for name, run in runs.items():
        for entry in run.entries:
            by_trial[entry.trial][name] = entry.index
    comparisons = [
        compare_simulations(
            analyzer,
            (runs["gold"], pair["gold"]),
            (runs["flaky"], pair["flaky"]),
            labels=("gold", "flaky"),
            writes_only=True,
        )
        for pair in by_trial.values()
    ]
    diverging = [c for c in comparisons if c.divergence is not None]
    assert diverging
    for comparison in diverging:
        d = comparison.divergence
        assert d is not None
        assert d.left is not None  # gold made the call the flaky agent left out (or made later)
        assert d.agent_diff, "a different write leaves different DBs right after it"
        assert comparison.final_agent_diff
        assert all(c.path[0] in ("orders", "users") for c in d.agent_diff)
        assert "first differing write tool call" in render_comparison(comparison)
