"""Notes on recorded simulations, kept in a sidecar file next to the recording.

A note annotates a whole simulation or one step (message index) of it: who
is at fault (``source``: agent, user, environment or task), a short error
type from a fixed list, and free text. The notes of ``run.json`` live in
``run.notes.json`` beside it (for a directory run, ``results.notes.json``
inside the directory; a folder ``tau2 review`` left, ``results.json`` beside
``results_reviewed.json``, keeps them in ``results_reviewed.notes.json``,
whichever of its names is given, and still reads ``results.notes.json``);
the recording itself is never written. A recording
bundled with tau-tui, or one in a folder we cannot write, keeps its notes in
the user's data folder instead (``$XDG_DATA_HOME/tau-tui/notes/``, named
after the recording's absolute path); reading looks in both places. Every
save takes the sidecar's advisory lock (``model.io.file_lock``), merges with
what another process saved in the meantime and rewrites the sidecar
atomically, so concurrent writers (the TUI and ``tau-tui notes``) keep every
note. Notes export as JSON or CSV.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Any, Iterable, Literal

import orjson
from pydantic import BaseModel, Field, ValidationError

from tau_tui.model.csv_table import csv_text
from tau_tui.model.io import RunFileError, file_lock, json_text, read_bytes, run_names, write_atomic
from tau_tui.model.secrets import environment_secrets, redact

if TYPE_CHECKING:
    from tau_tui.model.reviews import ReviewError

NOTES_SUFFIX = ".notes.json"
NOTES_VERSION = 1

SOURCES = ("agent", "user", "environment", "task")
Source = Literal["agent", "user", "environment", "task"]

# The error types a note may carry, with what each means.
ERROR_TYPES: dict[str, str] = {
    "wrong_action": "called a tool it should not have, or the wrong tool",
    "wrong_arguments": "right tool, wrong arguments",
    "missed_action": "did not do something it had to",
    "hallucination": "made up a fact, a tool or a value",
    "policy_violation": "broke the domain policy",
    "communication": "said something wrong, unclear, or left out what it had to say",
    "premature_end": "ended or transferred the conversation too early",
    "instruction_deviation": "did not follow its instructions or scenario (user simulator)",
    "tool_bug": "a tool or the environment behaved wrongly",
    "task_defect": "the task, its gold actions or its criteria are wrong or ambiguous",
    "other": "anything else (say what in the text)",
}
ErrorType = Literal[
    "wrong_action",
    "wrong_arguments",
    "missed_action",
    "hallucination",
    "policy_violation",
    "communication",
    "premature_end",
    "instruction_deviation",
    "tool_bug",
    "task_defect",
    "other",
]

CSV_COLUMNS = (
    "recording",
    "id",
    "sim_id",
    "task_id",
    "trial",
    "step",
    "source",
    "error_type",
    "text",
    "author",
    "created_at",
    "updated_at",
)


class NotesError(Exception):
    """A notes file or a note that cannot be used; ``str()`` is one line."""


class Note(BaseModel):
    """One annotation of a simulation (``step`` None) or of one of its messages."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    sim_id: str
    task_id: str | None = None
    trial: int | None = None
    step: int | None = None
    source: Source
    error_type: ErrorType
    text: str = ""
    author: str | None = None
    created_at: str = Field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))
    updated_at: str | None = None

    @property
    def target(self) -> str:
        return f"{self.sim_id}" + (f" step {self.step}" if self.step is not None else "")


class NotesFile(BaseModel):
    version: int = NOTES_VERSION
    recording: str
    notes: list[Note] = Field(default_factory=list)


def bundled_recordings() -> list[Path]:
    """The folders of the recordings shipped with tau-tui: the checkout's ``recordings/``, the wheel's copy."""
    here = Path(__file__).resolve().parents[1]
    return [p for p in (here.parent / "recordings", here / "_bundled" / "recordings") if p.is_dir()]


def beside_path(recording: Path | str) -> Path:
    """``<stem>.notes.json`` beside a recording file; inside the directory for a directory run."""
    recording = Path(recording)
    if recording.is_dir():
        return recording / f"results{NOTES_SUFFIX}"
    return recording.with_name(recording.stem + NOTES_SUFFIX)


def user_notes_dir() -> Path:
    """The settings' ``notes_dir`` (``$XDG_DATA_HOME/tau-tui/notes``, default ``~/.local/share/tau-tui/notes``)."""
    from tau_tui.model import runtime

    return runtime.current().notes_dir or Path.home() / ".local" / "share" / "tau-tui" / "notes"


def user_notes_path(recording: Path | str) -> Path:
    """The sidecar in the user's data folder: a digest of the absolute path keeps same-named files apart."""
    recording = Path(recording).resolve()
    digest = hashlib.sha256(str(recording).encode()).hexdigest()[:12]
    return user_notes_dir() / f"{digest}-{beside_path(recording).name}"


def notes_beside(recording: Path | str) -> bool:
    """Whether the notes of ``recording`` go beside it: not a bundled recording, and its folder writable."""
    recording = Path(recording).resolve()
    if any(recording.is_relative_to(root) for root in bundled_recordings()):
        return False
    folder = beside_path(recording).parent
    return os.access(folder, os.W_OK)


def notes_path(recording: Path | str) -> Path:
    """Where the notes of ``recording`` are saved (beside it, else in the user's data folder).

    Every name of one run (its folder, results.json, a reviewed results_reviewed.json: ``run_names``) saves to
    the same file, the sidecar of the name ``scan_paths`` opens.
    """
    key = run_names(recording)[0]
    return beside_path(key) if notes_beside(key) else user_notes_path(key)


def notes_paths(recording: Path | str) -> list[Path]:
    """Every place notes of ``recording`` may be, the one saved to first: both places of each name of its run."""
    key, aliases = run_names(recording)
    places = [notes_path(key)]
    for name in (key, *aliases):
        places.extend(p for p in (beside_path(name), user_notes_path(name)) if p not in places)
    return places


def _read(path: Path) -> NotesFile | None:
    if not os.path.exists(path):
        return None
    try:
        data = read_bytes(path)
    except RunFileError as exc:
        raise NotesError(str(exc)) from None
    try:
        return NotesFile.model_validate(orjson.loads(json_text(data)))
    except (orjson.JSONDecodeError, ValidationError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        detail = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}" if first else str(exc)
        raise NotesError(f"{path}: not a notes file ({detail})") from None


class NoteBook:
    """The notes of one recording: load, add, edit, remove, filter; every change is saved at once."""

    def __init__(self, recording: Path | str):
        self.recording = Path(recording)
        self.path = notes_path(self.recording)
        self.others = notes_paths(self.recording)[1:]  # read too (notes saved before the recording moved…)
        self.notes: list[Note] = []
        self.reload()

    def reload(self) -> None:
        self.notes = list(self._merged().values())

    def _merged(self) -> dict[str, Note]:
        """The notes of every place, by id; the file saved to wins."""
        merged: dict[str, Note] = {}
        for path in (*reversed(self.others), self.path):
            loaded = _read(path)
            merged.update((n.id, n) for n in (loaded.notes if loaded else []))
        return merged

    @property
    def where(self) -> str:
        """The sidecar's name when it is beside the recording, else its whole path."""
        return self.path.name if self.path == beside_path(run_names(self.recording)[0]) else str(self.path)

    @property
    def exists(self) -> bool:
        return any(p.exists() for p in (self.path, *self.others))

    # --- changes --------------------------------------------------------------------
    def add(
        self,
        sim_id: str,
        source: str,
        error_type: str,
        text: str = "",
        *,
        step: int | None = None,
        task_id: str | None = None,
        trial: int | None = None,
        author: str | None = None,
    ) -> Note:
        """Add a note and save; an unknown source or error type raises ``NotesError``."""
        try:
            note = Note.model_validate(
                {
                    "sim_id": sim_id,
                    "source": source,
                    "error_type": error_type,
                    "text": text,
                    "step": step,
                    "task_id": task_id,
                    "trial": trial,
                    "author": author,
                }
            )
        except ValidationError as exc:
            raise NotesError(_validation_message(exc)) from None
        if step is not None and step < 0:
            raise NotesError(f"step must be 0 or more, not {step}")
        self._save(added=[note])
        return note

    def update(self, note_id: str, **changes: Any) -> Note:
        """Change a note's source, error_type, text or step, and save."""
        note = self.get(note_id)
        allowed = {"source", "error_type", "text", "step", "author"}
        unknown = set(changes) - allowed
        if unknown:
            raise NotesError(f"cannot change {', '.join(sorted(unknown))} of a note")
        try:
            updated = Note.model_validate(
                {**note.model_dump(), **changes, "updated_at": datetime.now().isoformat(timespec="seconds")}
            )
        except ValidationError as exc:
            raise NotesError(_validation_message(exc)) from None
        self._save(added=[updated])
        return updated

    def remove(self, note_id: str) -> Note:
        note = self.get(note_id)
        self._save(removed={note.id})
        return note

    def _save(self, added: Iterable[Note] = (), removed: AbstractSet[str] = frozenset()) -> None:
        """Under the sidecar's lock: merge with the files as they are now (another process may have written
        them), apply, write atomically. Changes are written to ``path``; a removed note is also taken out of
        the other file holding it. A failure raises ``WriteError`` and leaves the sidecar as it was."""
        for other in self.others:
            loaded = _read(other)
            if loaded is None or not any(n.id in removed for n in loaded.notes):
                continue  # only a file that holds a removed note is locked and written
            with file_lock(other):
                loaded = _read(other) or loaded
                self._write(other, [n for n in loaded.notes if n.id not in removed])
        with file_lock(self.path):
            on_disk = _read(self.path)
            own: dict[str, Note] = {n.id: n for n in (on_disk.notes if on_disk else [])}
            for note in added:
                own[note.id] = note
            for note_id in removed:
                own.pop(note_id, None)
            self._write(self.path, list(own.values()))
        self.reload()

    def _write(self, path: Path, notes: list[Note]) -> None:
        book = NotesFile(recording=self.recording.name, notes=notes)
        data = redact(book.model_dump(mode="json"), environment_secrets())
        write_atomic(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")

    # --- reading --------------------------------------------------------------------
    def get(self, note_id: str) -> Note:
        hits = [n for n in self.notes if n.id == note_id or n.id.startswith(note_id)]
        if len(hits) != 1:
            raise NotesError(f"{'no' if not hits else 'more than one'} note {note_id!r} in {self.path}")
        return hits[0]

    def filter(self, **criteria: Any) -> list[Note]:
        return filter_notes(self.notes, **criteria)

    def adopt(
        self,
        sim_id: str,
        suggestions: Iterable[ReviewSuggestion],
        *,
        task_id: str | None = None,
        trial: int | None = None,
    ) -> list[Note]:
        """Add the suggested notes this simulation does not hold yet (same step, source, type and text), in one
        save; returns the notes added."""
        have = {(n.step, n.source, n.error_type, n.text) for n in self.notes if n.sim_id == sim_id}
        added = []
        for suggestion in suggestions:
            key = (suggestion.step, suggestion.source, suggestion.error_type, suggestion.text)
            if key in have:
                continue
            have.add(key)
            added.append(
                Note(
                    sim_id=sim_id,
                    task_id=task_id,
                    trial=trial,
                    step=suggestion.step,
                    source=suggestion.source,
                    error_type=suggestion.error_type,
                    text=suggestion.text,
                    author=suggestion.author,
                )
            )
        if added:
            self._save(added=added)
        return added

    def by_simulation(self) -> dict[str, list[Note]]:
        """Notes grouped by simulation id (for a runs table's notes column and filter)."""
        out: dict[str, list[Note]] = {}
        for note in self.notes:
            out.setdefault(note.sim_id, []).append(note)
        return out


def _validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"])
    if field == "source":
        return f"source must be one of: {', '.join(SOURCES)}"
    if field == "error_type":
        return f"error type must be one of: {', '.join(ERROR_TYPES)}"
    return f"{field}: {first['msg']}"


def filter_notes(
    notes: Iterable[Note],
    *,
    sim_id: str | None = None,
    task_id: str | None = None,
    source: str | None = None,
    error_type: str | None = None,
    step: int | None = None,
    text: str | None = None,
) -> list[Note]:
    """Notes matching every criterion given (``sim_id`` also matches a prefix; ``text`` any substring)."""
    needle = text.lower() if text else None
    return [
        n
        for n in notes
        if (sim_id is None or n.sim_id.startswith(sim_id))
        and (task_id is None or n.task_id == task_id)
        and (source is None or n.source == source)
        and (error_type is None or n.error_type == error_type)
        and (step is None or n.step == step)
        and (needle is None or needle in n.text.lower())
    ]


def note_rows(books: Iterable[NoteBook], **criteria: Any) -> list[dict[str, Any]]:
    """Flat rows (one per note, with its recording's path) over several recordings."""
    rows = []
    for book in books:
        for note in filter_notes(book.notes, **criteria):
            rows.append({"recording": str(book.recording), **note.model_dump(mode="json")})
    return rows


def export_json(rows: list[dict[str, Any]]) -> str:
    """``rows`` as indented JSON text, the environment's credentials blanked."""
    return orjson.dumps(redact(rows, environment_secrets()), option=orjson.OPT_INDENT_2).decode() + "\n"


def export_csv(rows: list[dict[str, Any]]) -> str:
    """``rows`` as CSV text (``model.csv_table``: formula-like cells neutralised), credentials blanked."""
    return csv_text(CSV_COLUMNS, redact(rows, environment_secrets()))


# --- notes offered from a recorded review (``model.reviews``) ---------------------------------------------------

# tau2 review tags → our error types; the first tag of an error that maps decides.
REVIEW_TAG_TYPES: dict[str, ErrorType] = {
    "hallucination": "hallucination",
    "incorrect_interpretation": "communication",
    "guideline_violation": "policy_violation",
    "revealed_info_early": "policy_violation",
    "inconsistent_behavior": "communication",
    "tool_call_schema_error": "wrong_arguments",
    "tool_call_argument_error": "wrong_arguments",
    "irrelevant_tool_call": "wrong_action",
    "premature_termination": "premature_end",
    "missed_required_action": "missed_action",
    "wrong_sequence": "wrong_action",
    "interruption_error": "communication",
    "other": "other",
}


class ReviewSuggestion(BaseModel):
    """A note a recorded review suggests: where, who, which type, and the review's own words."""

    step: int | None
    source: Source
    error_type: ErrorType
    text: str
    author: str = "tau2 review"


def review_suggestion(error: ReviewError, step: int | None) -> ReviewSuggestion:
    """The note a ``model.reviews.ReviewError`` suggests at ``step``.

    A user simulator's guideline violation is an instruction deviation; an error whose source the review
    left unknown is filed under the task, for a person to assign.
    """
    source: Source = "agent" if error.source == "agent" else "user" if error.source == "user" else "task"
    error_type: ErrorType = next((REVIEW_TAG_TYPES[t] for t in error.tags if t in REVIEW_TAG_TYPES), "other")
    if source == "user" and error_type == "policy_violation":
        error_type = "instruction_deviation"
    head = " · ".join(p for p in (error.severity, ", ".join(error.tags), error.where) if p)
    text = f"[{head}] {error.reasoning}".strip() if head else error.reasoning
    if error.correct_behavior:
        text += f" (should have: {error.correct_behavior})"
    return ReviewSuggestion(
        step=step,
        source=source,
        error_type=error_type,
        text=text[:4000],
        author="tau2 hallucination check" if error.origin == "hallucination_check" else "tau2 review",
    )
