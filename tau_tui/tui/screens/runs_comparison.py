"""What the two-way and the many-way comparisons of run files share (``RunCompareScreen``, ``ManyCompareScreen``).

The run files are scored in a thread worker through the replay service (``trust.Sides``, one run a file: the runs
the catalog holds, the others opened afresh) and compared there; the screen shows the result or, when a file
cannot be read, says so and goes back. ``r`` switches between recomputed and recorded rewards; Esc cancels and goes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from textual import on, work
from textual.screen import Screen
from textual.worker import get_current_worker

from tau_tui.model.io import RunFile, RunFileError
from tau_tui.tui.context import context
from tau_tui.tui.messages import RunsComparisonReady
from tau_tui.tui.widgets.info_line import InfoLine
from tau_tui.views.compare_labels import fitted_line

if TYPE_CHECKING:  # trust is imported in the worker, off the screen's start-up
    from tau_tui.trust import Sides


class RunsComparisonScreen(Screen[None]):
    """A comparison of ``paths``: a subclass says what its title shows meanwhile (``loading_pieces``), compares
    the loaded sides (``compare``, in the worker thread) and shows ``comparison`` (``_show``)."""

    TITLE_ID = ""  # the id of the screen's title line (an ``InfoLine``)

    def __init__(self, paths: Sequence[Path]) -> None:
        super().__init__()
        self.paths = paths
        self.recorded = False
        self.comparison: Any = None

    def loading_pieces(self) -> list[tuple[str, str, bool]]:
        """The title's pieces (``fitted_line``'s) while the runs are compared."""
        raise NotImplementedError

    def compare(self, sides: Sides) -> Any:
        """The comparison of the loaded ``sides``, in the worker thread."""
        raise NotImplementedError

    def _show(self) -> None:
        """Show ``comparison``, once computed."""
        raise NotImplementedError

    def _start(self) -> None:
        self.query_one(self.TITLE_ID, InfoLine).set(fitted_line(self.loading_pieces(), self.size.width or 120))
        catalog = context(self).session.catalog
        self.compare_worker([catalog.run_of(path) for path in self.paths], self.recorded)

    @work(thread=True, exclusive=True, group="runs-comparison", name="compare runs")
    def compare_worker(self, known: list[RunFile | None], recorded: bool) -> None:
        from tau_tui.trust import Sides

        worker = get_current_worker()
        service = context(self).session.service
        sides = Sides(service.analyzer, recorded=recorded, via=service, cancelled=lambda: worker.is_cancelled)
        try:
            for path, run in zip(self.paths, known, strict=False):
                sides.add(str(path), [(path, run)])
        except RunFileError as exc:
            self.post_message(RunsComparisonReady(error=str(exc)))
            return
        if worker.is_cancelled:
            return
        self.post_message(RunsComparisonReady(self.compare(sides), sides.errors))

    @on(RunsComparisonReady)
    def _ready(self, message: RunsComparisonReady) -> None:
        if message.error is not None:
            self.notify(f"cannot compare: {message.error}", severity="error", timeout=8)
            self.dismiss(None)
            return
        self.comparison = message.comparison
        for problem in message.errors[:3]:
            self.notify(problem, severity="warning", timeout=6)
        self._show()

    def action_toggle_rewards(self) -> None:
        self.recorded = not self.recorded
        self.comparison = None
        self._start()

    def action_back(self) -> None:
        self.workers.cancel_group(self, "runs-comparison")
        self.dismiss(None)
