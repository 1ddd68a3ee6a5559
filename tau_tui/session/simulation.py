"""Opening one simulation for the inspector, headlessly: read it, replay it, assess it, build its document.

``open_simulation`` is what the trajectory screen runs on a thread; it never raises for a broken
simulation (each failure is a one-line reason beside whatever could be built). ``judged`` puts a judge's
verdicts on the catalog's row, so that no screen writes rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tau_tui.domains import DomainError
from tau_tui.model.io import RunFileError
from tau_tui.model.reviews import read_review
from tau_tui.model.ticks import read_ticks
from tau_tui.session.events import Changes
from tau_tui.views.trajectory_doc import TrajectoryDoc

if TYPE_CHECKING:
    from tau_tui.analysis import SimAnalysis
    from tau_tui.catalog import Catalog
    from tau_tui.evaluate import SimReport
    from tau_tui.model.io import RunFile
    from tau_tui.session.replay_service import ReplayService


@dataclass(frozen=True)
class OpenedSimulation:
    """One simulation as the inspector shows it, or why a part of it is missing."""

    doc: TrajectoryDoc | None = None  # None: the simulation could not be read (``load_error``)
    analysis: SimAnalysis | None = None
    replay_error: str | None = None
    load_error: str | None = None
    report: SimReport | None = None
    eval_error: str | None = None


def open_simulation(service: ReplayService, run: RunFile, index: int) -> OpenedSimulation:
    """Read simulation ``index`` of ``run``, replay and assess it, and build the inspector's document."""
    try:
        sim = run.simulation(index)
    except RunFileError as exc:
        return OpenedSimulation(load_error=str(exc))
    analysis, replay_error = None, None
    try:
        analysis = service.analyze(run, index)
    except (DomainError, RunFileError) as exc:
        replay_error = str(exc)
    except Exception as exc:  # noqa: BLE001 - the trajectory is still worth showing
        replay_error = f"replay failed: {type(exc).__name__}: {exc}"
    doc = TrajectoryDoc(sim.trajectory, analysis.timeline if analysis is not None else None)
    try:
        raw = run.raw_simulation(index)
    except RunFileError:  # changed on disk after it was parsed: its reviews are left out, the rest stands
        raw = {}
    raw = raw if isinstance(raw, dict) else {}
    review = read_review(raw)
    ticks = read_ticks(sim.raw_ticks) if sim.graded_from == "ticks" else None
    if review.present or ticks is not None:
        doc.add_reviews(review, ticks)
    report, eval_error = None, None
    if analysis is None:
        eval_error = f"no replay ({replay_error})"
    else:
        try:
            report = service.assess(analysis)
        except Exception as exc:  # noqa: BLE001 - the replay is still worth showing
            eval_error = f"evaluation failed: {type(exc).__name__}: {exc}"
        else:
            doc.add_assessment(report.flags, report.explanation.divergence)
    return OpenedSimulation(doc, analysis, replay_error, None, report, eval_error)


def judged(catalog: Catalog, run: RunFile, sim_id: str, report: SimReport) -> Changes:
    """A judge's verdicts on a simulation reach its row in the runs table."""
    from tau_tui.catalog import EvalSummary

    row = catalog.find(run.path, sim_id)
    if row is None:
        return Changes()
    kept = row.evaluation.validity if row.evaluation is not None else None
    row.evaluation, row.eval_error = EvalSummary.of(report, kept), None
    return Changes(replayed=[row])
