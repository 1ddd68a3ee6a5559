"""Reviewed results and the newer recorded fields: read tolerantly, placed at their steps, offered as notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau_tui.model.io import open_run, scan_paths
from tau_tui.model.messages import ParticipantMessage
from tau_tui.model.notes import NoteBook, review_suggestion
from tau_tui.model.reviews import read_review
from tau_tui.model.ticks import read_ticks
from tests.review_fixtures import full_duplex_run, reviewed_run

pytestmark = pytest.mark.corpus


def test_scan_prefers_results_reviewed_json_beside_results_json(tmp_path: Path) -> None:
    folder = reviewed_run(tmp_path)
    assert scan_paths([tmp_path]).files == [folder / "results_reviewed.json"]
    assert scan_paths([folder]).files == [folder / "results_reviewed.json"]
    (folder / "results_reviewed.json").unlink()
    assert scan_paths([folder]).files == [folder]


def test_the_reviewed_fields_read_as_tau2_writes_them(tmp_path: Path) -> None:
    run = open_run(reviewed_run(tmp_path) / "results_reviewed.json")
    first = read_review(run.raw_sims[0])
    assert first.reviewed and first.review_kind == "full" and first.summary == "One agent and one user error."
    assert (first.agent_error, first.user_error, first.critical_user_error) == (True, True, True)
    assert [(e.source, e.severity, e.tags, e.turn_idx) for e in first.errors] == [
        ("agent", "critical", ("tool_call_argument_error",), 6),
        ("user", "critical_helped", ("hallucination",), 3),
        ("unknown", "minor", ("other",), None),
    ]
    assert first.errors[0].correct_behavior == "Ask for the order id first." and first.errors[0].critical
    assert first.auth_status == "succeeded" and first.review_cost == 0.0125 and first.problems == []
    second = read_review(run.raw_sims[1])
    assert second.review_kind == "user" and second.errors[0].source == "user" and second.auth_status == "failed"
    third = read_review(run.raw_sims[2])
    assert third.hallucination_found is True and third.hallucination_retries == 1
    assert third.errors[0].origin == "hallucination_check" and third.errors[0].tags == ("hallucination",)
    clean = read_review(run.raw_sims[3])
    assert clean.reviewed and clean.errors == [] and clean.auth_status == "not_needed"
    assert not read_review(run.raw_sims[4]).present


@pytest.mark.parametrize(
    "raw, problem",
    [
        ({"review": "yes"}, "review is not an object: ignored"),
        ({"review": {"errors": "many"}}, "review.errors is not a list: ignored"),
        ({"review": {"errors": [7]}}, "review.errors[0] is not an object: skipped"),
        (
            {"review": {"errors": [{"source": "robot", "reasoning": "x"}]}},
            "review.errors[0].source is not agent, user or unknown: read as unknown",
        ),
        (
            {"review": {"errors": [{"source": "agent", "severity": "apocalyptic"}]}},
            "review.errors[0].severity is not a known severity: dropped",
        ),
        (
            {"review": {"errors": [{"source": "agent", "turn_idx": -3}]}},
            "review.errors[0].turn_idx is not a turn number: dropped",
        ),
        (
            {"auth_classification": {"status": "maybe"}},
            "auth_classification has no status succeeded, failed or not_needed: ignored",
        ),
        ({"hallucination_check": []}, "hallucination_check is not an object: ignored"),
        ({"hallucination_retries_used": "two"}, "hallucination_retries_used is not a count: ignored"),
        (
            {"effect_timeline": {"events": [{"start_ms": "soon"}]}},
            "effect_timeline.events[0] has no effect_type and start_ms: skipped",
        ),
        ({"effect_timeline": 3}, "effect_timeline has no list of events: ignored"),
    ],
)
def test_hostile_review_fields_become_problem_lines(raw: dict[str, Any], problem: str) -> None:
    review = read_review(raw)
    assert problem in review.problems and all("\n" not in p for p in review.problems)


def test_hostile_values_never_raise_and_are_bounded() -> None:
    review = read_review(
        {
            "review": {
                "summary": "s" * 10**6,
                "errors": [{"source": "agent", "reasoning": "r" * 10**6, "error_tags": "one_tag"}] * 2000,
            }
        }
    )
    assert len(review.errors) == 500 and len(review.errors[0].reasoning) == 4000
    assert review.errors[0].tags == ("one_tag",)
    assert not read_review(None).present and not read_review([1, 2]).present


def test_review_errors_are_offered_as_notes_and_kept_once(tmp_path: Path) -> None:
    folder = reviewed_run(tmp_path)
    path = folder / "results_reviewed.json"
    run = open_run(path)
    review = read_review(run.raw_sims[0])
    suggestions = [review_suggestion(e, e.turn_idx) for e in review.errors]
    assert [(s.source, s.error_type, s.step) for s in suggestions] == [
        ("agent", "wrong_arguments", 6),
        ("user", "hallucination", 3),
        ("task", "other", None),
    ]
    assert suggestions[0].text.startswith("[critical · tool_call_argument_error · turn 6] The agent looked up")
    assert suggestions[0].text.endswith("(should have: Ask for the order id first.)")
    user_review = read_review(run.raw_sims[1])
    assert review_suggestion(user_review.errors[0], 1).error_type == "instruction_deviation"
    book = NoteBook(path)
    sim_id = run.entries[0].id
    assert len(book.adopt(sim_id, suggestions, task_id=run.entries[0].task_id)) == 3
    assert book.adopt(sim_id, suggestions) == []  # already noted: nothing added twice
    assert len(NoteBook(path).notes) == 3 and {n.author for n in book.notes} == {"tau2 review"}


def test_runs_table_columns_and_filters_read_the_review(tmp_path: Path) -> None:
    from tau_tui.catalog import Catalog, RunFilter, SortSpec
    from tau_tui.views.columns import COLUMN_BY_KEY

    catalog = Catalog()
    catalog.add_run(open_run(reviewed_run(tmp_path) / "results_reviewed.json"))
    rows = catalog.rows
    cell = COLUMN_BY_KEY["review"].cell
    assert [cell(r).plain for r in rows[:5]] == ["1a 1u 1?", "1u", "1u", "0", ""]
    assert [COLUMN_BY_KEY["auth"].cell(r).plain for r in rows[:5]] == ["✓", "✗", "", "·", ""]
    assert [r.index for r in catalog.view(RunFilter(has_review_error=True), SortSpec())] == [0, 1, 2]
    assert [r.index for r in catalog.view(RunFilter(review_source="agent"), SortSpec())] == [0]
    assert [r.index for r in catalog.view(RunFilter(review_tag="hallucination"), SortSpec())] == [0, 2]
    assert [r.index for r in catalog.view(RunFilter(review_severity="critical_helped"), SortSpec())] == [0]
    assert [r.index for r in catalog.view(RunFilter(auth="failed"), SortSpec())] == [1]
    assert catalog.review_values("auth") == [("failed", 1), ("not_needed", 1), ("succeeded", 1)]
    assert ("hallucination", 2) in catalog.review_values("review_tag")
    assert "has review error" in RunFilter(has_review_error=True).chips()


def test_trajectory_doc_places_review_errors_at_their_steps(tmp_path: Path) -> None:
    from tau_tui.views.trajectory_doc import Event, TrajectoryDoc

    def review_source(event: Event) -> str:
        assert event.review is not None  # a "review" event carries its review error
        return event.review.source

    run = open_run(reviewed_run(tmp_path) / "results_reviewed.json")
    doc = TrajectoryDoc(run.simulation(0).trajectory)
    doc.add_reviews(read_review(run.raw_sims[0]))
    assert doc.targets["review"] == [3, 6]
    assert [review_source(e) for e in doc.steps[6].events if e.kind == "review"] == ["agent"]
    assert [e.source for e in doc.run_reviews] == ["unknown"]
    hallucinated = TrajectoryDoc(run.simulation(2).trajectory)
    hallucinated.add_reviews(read_review(run.raw_sims[2]))
    first_user = next(s.index for s in hallucinated.steps if s.role == "user")
    assert hallucinated.targets["review"] == [first_user]  # placed on the user message it quotes


def test_a_turn_past_the_end_names_no_step(tmp_path: Path) -> None:
    from tau_tui.views.trajectory_doc import TrajectoryDoc

    run = open_run(reviewed_run(tmp_path) / "results_reviewed.json")
    doc = TrajectoryDoc(run.simulation(0).trajectory)
    doc.add_reviews(read_review({"review": {"errors": [{"source": "agent", "turn_idx": 10_000, "reasoning": "x"}]}}))
    assert doc.targets["review"] == [] and len(doc.run_reviews) == 1


# --- full duplex ----------------------------------------------------------------------------------------------


def test_the_tick_timeline_of_a_full_duplex_run(tmp_path: Path) -> None:
    from tau_tui.model.results import flatten_ticks

    run = open_run(full_duplex_run(tmp_path))
    raw = run.raw_sims[0]
    timeline = read_ticks(raw["ticks"])
    assert timeline.tick_seconds == 0.2 and len(timeline) == 51
    sides = [(s.side, s.start, s.end) for s in timeline.segments]
    assert sides == [
        ("agent", 0, 3),
        ("user", 6, 10),
        ("agent", 13, 21),
        ("user", 17, 19),
        ("user", 25, 44),
        ("agent", 30, 42),
        ("agent", 48, 50),
    ]
    assert timeline.overlaps == [(17, 19), (30, 42)]
    kinds = [(i.by, i.of, i.tick, i.kind, i.yielded) for i in timeline.interruptions]
    assert kinds == [("user", "agent", 17, "backchannel", None), ("agent", "user", 30, "interruption", False)]
    counts = timeline.counts()
    assert counts["agent_interrupts_user"] == 1 and counts["user_interrupts_agent"] == 0
    assert counts["backchannels"] == 1 and counts["tool_calls"] == 2
    # steps follow the flattened trajectory, tick by tick
    flat = flatten_ticks(raw["ticks"])
    assert timeline.rows[17].step == 36 and timeline.rows[-1].step + 2 == len(flat)
    assert [r.step for r in timeline.rows] == sorted(r.step for r in timeline.rows)
    step = timeline.step_of_tick(16)
    assert step is not None
    called = flat[step + 2]
    assert isinstance(called, ParticipantMessage) and called.tool_calls is not None
    assert called.tool_calls[0].name == "get_user_details"
    assert timeline.tick_at_step(37) == 17 and timeline.tick_at_step(0) == 0


def test_the_lanes_show_speech_overlap_tools_and_interruptions(tmp_path: Path) -> None:
    from tau_tui.model.ticks import lane_lines

    timeline = read_ticks(
        json.loads((full_duplex_run(tmp_path) / "simulations" / "fd-sim-1.json").read_text())["ticks"]
    )
    lanes = lane_lines(timeline, 0, 60)
    assert lanes["agent"][:5] == "████·" and lanes["user"][6:11] == "▓▓▓▓▓"
    assert lanes["overlap"][17:20] == "▒▒▒" and lanes["overlap"][16] == " "
    assert lanes["tools"][16] == "⚒" and lanes["tools"][44] == "⚒"
    assert lanes["events"][17] == "~" and lanes["events"][30] == "⚡"
    coarse = lane_lines(timeline, 0, 60, bucket=10)
    assert len(coarse["agent"]) == 6 and coarse["tools"][1] == "⚒"


def test_a_voice_runs_review_and_effects_land_on_its_ticks(tmp_path: Path) -> None:
    from tau_tui.views.trajectory_doc import TrajectoryDoc

    run = open_run(full_duplex_run(tmp_path))
    sim = run.simulation(0)
    timeline = read_ticks(run.raw_sims[0]["ticks"])
    review = read_review(run.raw_sims[0])
    doc = TrajectoryDoc(sim.trajectory)
    doc.add_reviews(review, timeline)
    assert doc.targets["review"] == [timeline.step_of_tick(30)]
    effects = {e.text: e.step for s in doc.steps for e in s.events if e.kind == "effect"}
    assert effects == {"burst_noise": timeline.rows[6].step, "frame_drop": timeline.rows[40].step}
    assert review.errors[0].where == "ticks 30-38"


@pytest.mark.parametrize("ticks", [None, "ticks", [1, "x", None], [{"tick_id": "a"}, {"tick_id": 3}, {}]])
def test_hostile_ticks_never_raise(ticks: Any) -> None:
    timeline = read_ticks(ticks)
    assert all(r.tick_id >= 0 for r in timeline.rows)
    ids = [r.tick_id for r in timeline.rows]
    assert ids == sorted(set(ids))


def test_review_and_tick_panels_render_as_text(tmp_path: Path) -> None:
    from tau_tui.views.review_view import render_review, render_ticks

    run = open_run(full_duplex_run(tmp_path))
    timeline = read_ticks(run.raw_sims[0]["ticks"])
    text = render_ticks(timeline, 30, 60).plain
    assert "51 ticks of 0.2 s (10.2 s)" in text and "agent interrupts 1" in text
    assert "6.0 s  agent interrupts user: the user kept talking" in text
    assert "3.2 s  tick 16  agent: get_user_details" in text
    assert "tick 30 at 6.0 s: agent and user speaking" in text
    panel = render_review(read_review(run.raw_sims[0]), []).plain
    assert "review (agent + user)" in panel and "audio effects burst_noise ×1, frame_drop ×1" in panel
    assert "Not a full-duplex run" in render_ticks(None, None).plain


def test_cli_keeps_the_review_errors_as_notes_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tau_tui.cli import main

    folder = reviewed_run(tmp_path, keep=4)
    path = folder / "results_reviewed.json"
    assert main(["notes", "from-review", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: 5 note(s) kept from the reviews of 3 simulation(s) (0 already noted)" in out
    notes = NoteBook(path).notes
    assert len(notes) == 5 and {(n.step, n.source, n.error_type) for n in notes} == {
        (6, "agent", "wrong_arguments"),
        (3, "user", "hallucination"),
        (None, "task", "other"),
        (1, "user", "instruction_deviation"),
        (1, "user", "hallucination"),
    }
    assert {n.author for n in notes} == {"tau2 review", "tau2 hallucination check"}
    assert main(["notes", "from-review", str(path)]) == 0
    assert "0 note(s) kept from the reviews of 3 simulation(s) (5 already noted)" in capsys.readouterr().out
    assert main(["notes", "from-review", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: does not exist" in capsys.readouterr().err


def test_a_zero_retry_count_is_not_a_review_so_the_runs_table_leaves_the_simulation_unparsed() -> None:
    from tau_tui.model.io.runfile import _index_entry

    base: dict[str, Any] = {"id": "s", "task_id": "t", "messages": [], "review": None, "hallucination_check": None}
    assert _index_entry(0, {**base, "hallucination_retries_used": 0}).reviewed is False  # every tau2 1.0.1 sim
    assert _index_entry(0, {**base, "hallucination_retries_used": 2}).reviewed is True
    assert _index_entry(0, {**base, "hallucination_retries_used": "two"}).reviewed is True  # read, and reported
    assert _index_entry(0, {**base, "review": {"summary": "x"}}).reviewed is True


@pytest.mark.parametrize("width, last", [(60, "10s"), (51, "8s")])
def test_the_tick_rulers_show_whole_labels_only(tmp_path: Path, width: int, last: str) -> None:
    import re

    from tau_tui.views.review_view import render_ticks

    timeline = read_ticks(open_run(full_duplex_run(tmp_path)).raw_sims[0]["ticks"])
    rulers = [line for line in render_ticks(timeline, 30, width).plain.splitlines() if re.match(r" {7}\d", line)]
    assert len(rulers) == 2  # the whole run, and the ticks around the cursor
    for ruler in rulers:
        labels = ruler.split()
        assert all(re.fullmatch(r"\d+s", label) for label in labels), ruler
        assert labels[-1] == last and len(ruler) <= 7 + width


def test_a_voice_run_counts_the_messages_its_trajectory_shows(tmp_path: Path) -> None:
    from tau_tui.model.results import is_silent
    from tests.review_fixtures import CALLS, SPEECH

    run = open_run(full_duplex_run(tmp_path))
    shown = [m for m in run.simulation(0).trajectory if not is_silent(m)]
    assert run.entries[0].n_messages == len(shown) > 0
    speaking = sum((who in "ab") + (who in "ub") for who in SPEECH)  # a chunk per side speaking, in each tick
    assert len(shown) == speaking + 2 * len(CALLS)  # and each call with its result


@pytest.mark.parametrize("width", [40, 58, 120])
def test_the_ticks_view_draws_its_lanes_at_the_width_it_is_given(tmp_path: Path, width: int) -> None:
    import io

    from rich.console import Console

    from tau_tui.views.review_view import TicksView

    timeline = read_ticks(open_run(full_duplex_run(tmp_path)).raw_sims[0]["ticks"])
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(TicksView(timeline, 30))
    lines = console.export_text().splitlines()
    agent = [line for line in lines if line.startswith("agent ")]
    assert len(agent) == 2  # the whole run, and around the cursor: each lane on one line, none wrapped
    assert all(len(line.rstrip()) <= width for line in lines)
    assert len(agent[1]) - 7 == min(width - 7, len(timeline))


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "user", "content": None},
        {"role": "assistant", "content": " \n"},
        {"role": "assistant", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "t", "arguments": {}}]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "id": "c", "content": ""},
        {"role": "user", "content": ["a"]},
        "not a message",
    ],
)
def test_the_index_and_the_trajectory_agree_on_what_is_silent(raw: dict[str, Any] | str) -> None:
    from tau_tui.model.messages import parse_message
    from tau_tui.model.results import is_silent, is_silent_raw

    assert is_silent_raw(raw) == is_silent(parse_message(raw))
