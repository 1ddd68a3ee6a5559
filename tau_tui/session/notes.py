"""Changes to a recording's sidecar notes, as values a front end hands to ``Session.change_notes``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from tau_tui.model.notes import NoteBook, ReviewSuggestion


@dataclass(frozen=True)
class NoteChange:
    """What to do to a ``NoteBook`` (``apply``), and the line that says it was done."""

    apply: Callable[[NoteBook], Any]
    done: str


def add_note(
    sim_id: str,
    source: str,
    error_type: str,
    text: str,
    *,
    step: int | None = None,
    task_id: str | None = None,
    trial: int | None = None,
) -> NoteChange:
    """A note on simulation ``sim_id`` (at ``step``, when it names one)."""
    return NoteChange(
        lambda book: book.add(sim_id, source, error_type, text, step=step, task_id=task_id, trial=trial), "note saved"
    )


def adopt_review(
    sim_id: str, suggestions: list[ReviewSuggestion], *, task_id: str | None = None, trial: int | None = None
) -> NoteChange:
    """A recorded review's errors kept as notes (``NoteBook.adopt``: the ones not noted yet)."""
    return NoteChange(
        lambda book: book.adopt(sim_id, suggestions, task_id=task_id, trial=trial),
        f"{len(suggestions)} review error(s) kept as notes (already noted ones skipped)",
    )


def remove_note(note_id: str) -> NoteChange:
    return NoteChange(lambda book: book.remove(note_id), "note deleted")
