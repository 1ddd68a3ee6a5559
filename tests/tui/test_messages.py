"""The workers' messages: dataclasses whose fields keep the old positional order, and the two that
coalesce in the message queue (losslessly) when a burst piles up behind a busy UI thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.app import App

from tau_tui.session.events import ReplayOutcome
from tau_tui.session.simulation import OpenedSimulation
from tau_tui.tui.messages import CalibratorReady, ForkFinished, MetricsReady, SimsReplayed, SimulationReady


def test_positional_order_and_defaults() -> None:
    fork = ForkFinished(3, "episode", Path("f.json"), None, None, 2)
    assert (fork.token, fork.episode, fork.path, fork.run, fork.error, fork.step) == (
        3,
        "episode",
        Path("f.json"),
        None,
        None,
        2,
    )
    ready = SimulationReady(1, OpenedSimulation(load_error="bad"))
    assert ready.opened.load_error == "bad" and ready.opened.report is None and ready.opened.doc is None
    assert CalibratorReady(error="x").skipped == []
    assert CalibratorReady(None, 2, ["a"]).skipped == ["a"]
    assert fork.time > 0 and not fork.is_forwarded  # Message.__post_init__ ran


def _outcome(key: str) -> ReplayOutcome:
    return ReplayOutcome(key, None)  # type: ignore[arg-type]


def test_sims_replayed_merges_only_within_a_generation() -> None:
    first, second = SimsReplayed(1, [_outcome("a")]), SimsReplayed(1, [_outcome("b"), _outcome("c")])
    assert first.can_replace(second)
    assert [o.row_key for o in second.outcomes] == ["a", "b", "c"]
    assert not SimsReplayed(1, [_outcome("x")]).can_replace(SimsReplayed(2, [_outcome("y")]))
    assert not SimsReplayed(1, []).can_replace(MetricsReady({}, 1, 2, False))


def test_metrics_progress_is_superseded_but_the_final_report_never_is() -> None:
    progress, final = MetricsReady({}, 1, 3, False), MetricsReady({0: "s"}, 3, 3, True)
    assert progress.can_replace(MetricsReady({}, 2, 3, False))
    assert progress.can_replace(final)
    assert not final.can_replace(MetricsReady({}, 3, 3, True))
    assert not progress.can_replace(SimsReplayed(1, []))


class _Sink(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.progress: list[tuple[int, bool]] = []

    def on_sims_replayed(self, message: SimsReplayed) -> None:
        self.batches.append([o.row_key for o in message.outcomes])

    def on_metrics_ready(self, message: MetricsReady) -> None:
        self.progress.append((message.done, message.final))


def test_a_burst_coalesces_in_the_queue_without_losing_rows() -> None:
    async def run() -> _Sink:
        app = _Sink()
        async with app.run_test() as pilot:
            # posted back to back, with no await in between: all wait in the queue together
            for generation, key in [(1, "a"), (1, "b"), (1, "c"), (2, "d"), (2, "e")]:
                app.post_message(SimsReplayed(generation, [_outcome(key)]))
            for done in (1, 2):
                app.post_message(MetricsReady({}, done, 3, False))
            app.post_message(MetricsReady({0: "s"}, 3, 3, True))
            await pilot.pause()
        return app

    app = asyncio.run(run())
    assert [key for batch in app.batches for key in batch] == ["a", "b", "c", "d", "e"]
    assert len(app.batches) < 5  # merged: fewer refreshes of the runs table
    assert app.progress[-1] == (3, True) and len(app.progress) < 3
