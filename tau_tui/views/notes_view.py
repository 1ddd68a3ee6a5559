"""Notes as the TUI shows them: one line per note, a simulation's notes pane, a sensible default source.

Pure Python (rich for styling). Notes are ``model.notes.Note`` objects read
from the sidecar beside a recording; they are the user's own annotations,
shown apart from what the recording says and from what we derived.
"""

from __future__ import annotations

from typing import Iterable

from rich.text import Text

from tau_tui.model.notes import ERROR_TYPES, Note

NOTE_STYLE = "yellow"

# Whose doing a message usually is: the default source of a note on it.
ROLE_SOURCES = {"assistant": "agent", "user": "user", "tool": "environment", "system": "task"}


def default_source(role: str | None) -> str:
    """The source a note on a message of ``role`` most likely has (agent for a whole simulation)."""
    return ROLE_SOURCES.get(role or "", "agent")


def note_label(note: Note) -> str:
    """``step 7 · agent · wrong_action`` (``simulation`` when the note is on the whole simulation)."""
    where = "simulation" if note.step is None else f"step {note.step}"
    return f"{where} · {note.source} · {note.error_type}"


def note_line(note: Note) -> Text:
    """One line: where, whose, what kind, and the text."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("✐ ", style="bold " + NOTE_STYLE)
    text.append(note_label(note), style=NOTE_STYLE)
    if note.text:
        text.append(f"  {note.text}")
    return text


def render_notes(run_notes: Iterable[Note], step_notes: Iterable[Note]) -> Text:
    """The notes pane of a trajectory: notes on the simulation, then notes on its steps in step order."""
    run_notes = list(run_notes)
    step_notes = sorted(step_notes, key=lambda n: (n.step, n.created_at))
    out = Text()
    out.append("NOTES", style=f"bold {NOTE_STYLE} reverse")
    out.append(
        "  your annotations, kept in a sidecar (beside the recording, or in your data folder for a bundled or "
        "read-only one), never in the recording\n\n",
        style="dim",
    )
    if not run_notes and not step_notes:
        out.append("No notes on this simulation.\n", style="dim italic")
    for title, notes in (("on the simulation", run_notes), ("on steps", step_notes)):
        if not notes:
            continue
        out.append(f"{title}\n", style="bold underline")
        for note in notes:
            out.append_text(note_line(note))
            out.append("\n")
            meta = f"    {ERROR_TYPES.get(note.error_type, '')} · {note.created_at}"
            if note.author:
                meta += f" · {note.author}"
            out.append(meta + "\n", style="dim")
        out.append("\n")
    out.append("A: add a note on the step under the cursor (or on the whole simulation)", style="dim")
    return out
