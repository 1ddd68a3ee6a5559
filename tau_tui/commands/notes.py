"""``tau-tui notes``: annotate simulations and steps, list and export notes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from tau_tui.commands.common import (
    EXIT_INPUT,
    EXIT_OK,
    Subparsers,
    err,
    no_simulation,
    print_json,
    say,
    sim_candidates,
    whole,
)

if TYPE_CHECKING:
    from tau_tui.model.notes import NoteBook
    from tau_tui.workspace import Workspace

NAME = "notes"
SHARED_FLAGS = False  # notes name recordings only: no domains, no tau2 data


def register(sub: Subparsers, running: bool = False) -> argparse.ArgumentParser:
    """The notes sub-command; its vocabulary (pydantic models) is imported only when it runs."""
    notes = sub.add_parser(
        NAME,
        help="annotate simulations and steps (sidecar <recording>.notes.json), list and export notes",
        description="Notes on recorded simulations, stored in <recording stem>.notes.json beside the recording "
        "(the recording itself is never written).",
    )
    if not running:
        return notes
    from tau_tui.model.notes import ERROR_TYPES, SOURCES

    actions = notes.add_subparsers(dest="notes_command", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="annotate a simulation or one of its steps",
        description="Error types: " + "; ".join(f"{k}: {v}" for k, v in ERROR_TYPES.items()),
    )
    add.add_argument("path", metavar="PATH", help="the recording (run file or run directory)")
    add.add_argument("--sim", required=True, metavar="ID", help="simulation id (or a unique prefix)")
    add.add_argument(
        "--step", type=whole(0), metavar="N", help="message index in the trajectory (default: the whole simulation)"
    )
    add.add_argument("--source", required=True, choices=SOURCES, help="whose fault or doing it is")
    add.add_argument(
        "--type",
        dest="error_type",
        required=True,
        choices=tuple(ERROR_TYPES),
        metavar="TYPE",
        help="error type: " + ", ".join(ERROR_TYPES),
    )
    add.add_argument("--text", default="", help="free text")
    add.add_argument("--author", help="who wrote the note")
    add.add_argument("--json", action="store_true", help="print the note as JSON")

    def filters(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="recordings (files or folders)")
        parser.add_argument("--sim", metavar="ID", help="only notes on this simulation (id or prefix)")
        parser.add_argument("--task", metavar="ID", help="only notes on simulations of this task")
        parser.add_argument("--source", choices=SOURCES, help="only notes with this source")
        parser.add_argument(
            "--type",
            dest="error_type",
            choices=tuple(ERROR_TYPES),
            metavar="TYPE",
            help="only notes of this error type",
        )
        parser.add_argument("--grep", dest="text", metavar="TEXT", help="only notes whose text contains TEXT")

    listing = actions.add_parser("list", help="show notes")
    filters(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per note, one per line")
    export = actions.add_parser("export", help="export notes of several recordings as JSON or CSV")
    filters(export)
    export.add_argument("--format", choices=("json", "csv"), default="json", help="default json")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    adopt = actions.add_parser(
        "from-review",
        help="keep a recorded review's errors as notes (tau2 review, hallucination checks)",
        description="Every error a recorded review (review, user_only_review, hallucination_check) found becomes a "
        "note at its step, by 'tau2 review'; errors already noted are skipped.",
    )
    adopt.add_argument("paths", nargs="+", metavar="PATH", help="reviewed recordings (files or folders)")
    adopt.add_argument("--sim", metavar="ID", help="only this simulation (id or prefix)")
    remove = actions.add_parser("remove", help="delete a note")
    remove.add_argument("path", metavar="PATH", help="the recording")
    remove.add_argument("note_id", metavar="NOTE", help="note id (or a unique prefix)")
    return notes


def run(args: argparse.Namespace, workspace: Workspace) -> int:
    from tau_tui.model.io import RunFileError
    from tau_tui.model.notes import NotesError

    try:
        handler = {
            "add": _notes_add,
            "list": _notes_list,
            "export": _notes_export,
            "remove": _notes_remove,
            "from-review": _notes_from_review,
        }[args.notes_command]
        return handler(args)
    except (NotesError, RunFileError) as exc:
        err(str(exc))
        return EXIT_INPUT


def _notes_add(args: argparse.Namespace) -> int:
    from tau_tui.model.io import open_run
    from tau_tui.model.notes import NoteBook

    run = open_run(args.path)
    index = run.find(args.sim)
    if index is None:
        err(f"{args.path}: " + no_simulation(str(args.sim), "this file", sim_candidates(run, str(args.sim))))
        return EXIT_INPUT
    entry = run.entries[index]
    if args.step is not None and not 0 <= args.step < entry.n_steps:
        err(f"{args.path}: simulation {entry.id} has {entry.n_steps} steps; no step {args.step}")
        return EXIT_INPUT
    book = NoteBook(run.path)
    note = book.add(
        entry.id,
        args.source,
        args.error_type,
        args.text,
        step=args.step,
        task_id=entry.task_id,
        trial=entry.trial,
        author=args.author,
    )
    if args.json:
        print_json(note.model_dump(mode="json"))
    else:
        say(f"note {note.id} added to {book.path}")
    return EXIT_OK


def _notes_from_review(args: argparse.Namespace) -> int:
    from tau_tui.commands.common import open_all
    from tau_tui.model.io import RunFileError
    from tau_tui.model.notes import NoteBook, review_suggestion
    from tau_tui.model.reviews import error_step, read_review
    from tau_tui.model.ticks import read_ticks

    status = EXIT_OK
    for path, run, error in open_all(args.paths):
        if run is None:
            err(error or f"{path}: unreadable")
            status = EXIT_INPUT
            continue
        indices = (
            [e.index for e in run.entries] if args.sim is None else [i for i in [run.find(args.sim)] if i is not None]
        )
        book = NoteBook(run.path)
        reviewed = added = offered = 0
        for index in indices:
            try:
                review = read_review(run.raw_simulation(index))
                sim = run.simulation(index) if review.errors else None
            except RunFileError as exc:  # the file changed on disk while it was read
                err(str(exc))
                status = EXIT_INPUT
                continue
            if sim is None:
                continue
            ticks = read_ticks(sim.raw_ticks) if sim.graded_from == "ticks" else None
            messages = sim.trajectory
            suggestions = [review_suggestion(e, error_step(e, messages, ticks)) for e in review.errors]
            entry = run.entries[index]
            reviewed += 1
            offered += len(suggestions)
            added += len(book.adopt(entry.id, suggestions, task_id=entry.task_id, trial=entry.trial))
        say(
            f"{run.path}: {added} note(s) kept from the reviews of {reviewed} simulation(s) "
            f"({offered - added} already noted) in {book.path}"
        )
    return status


def _notebooks(paths: Sequence[str]) -> list[NoteBook]:
    """The notebooks of every recording under ``paths`` that has a notes file."""
    from tau_tui.model.io import expand_paths
    from tau_tui.model.notes import NoteBook

    books: dict[Path, NoteBook] = {}
    for path in expand_paths(paths):
        book = NoteBook(path)
        if book.exists:
            books.setdefault(book.path, book)  # two names of one run: its notes once
    return list(books.values())


def _note_filters(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "sim_id": args.sim,
        "task_id": args.task,
        "source": args.source,
        "error_type": args.error_type,
        "text": args.text,
    }


def _notes_list(args: argparse.Namespace) -> int:
    from tau_tui.model.notes import note_rows

    rows = note_rows(_notebooks(args.paths), **_note_filters(args))
    for row in rows:
        if args.json:
            print_json(row)
        else:
            where = f"step {row['step']}" if row["step"] is not None else "simulation"
            text = f": {row['text']}" if row["text"] else ""
            say(
                f"{row['id']}  {row['recording']}  sim {row['sim_id']} (task {row['task_id']}) {where}  "
                f"[{row['source']}/{row['error_type']}]{text}"
            )
    if not args.json:
        say(f"{len(rows)} note(s)", file=sys.stderr)
    return EXIT_OK


def _notes_export(args: argparse.Namespace) -> int:
    from tau_tui.model.io import write_atomic
    from tau_tui.model.notes import export_csv, export_json, note_rows
    from tau_tui.textsafe import json_visible, visible

    rows = note_rows(_notebooks(args.paths), **_note_filters(args))
    text = export_csv(rows) if args.format == "csv" else export_json(rows)
    if args.out:
        write_atomic(Path(args.out), text.encode())
        say(f"{len(rows)} note(s) written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(visible(text) if args.format == "csv" else json_visible(text))
    return EXIT_OK


def _notes_remove(args: argparse.Namespace) -> int:
    from tau_tui.model.notes import NoteBook

    note = NoteBook(args.path).remove(args.note_id)
    say(f"note {note.id} removed")
    return EXIT_OK
