"""What paths name: the run files and folders a scan finds (``scan_paths``, ``expand_paths``), the names of one
run (``run_names``), the files beside recordings that are never runs (tau2 data, our sidecars, ``INDEX_FILES``),
the tau2 data and submission folders, and the domain a file beside a recording names (``sidecar_domain``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import orjson

from tau_tui.model.io.names import _resolved, within
from tau_tui.model.io.reading import RunFileError, _object, read_bytes, read_json
from tau_tui.model.io.runfile import RUN_OPENERS, TASK_RESULTS

# Files that live in tau2 data folders and are never runs.
_DATA_FILE_NAMES = {
    "db.json",
    "user_db.json",
    "tasks.json",
    "tasks_small.json",
    "split_tasks.json",
    "split_tasks_small.json",
}


# Sidecar files we write next to recordings (scorer specs, notes); never runs themselves.
SIDECAR_SUFFIXES = (".scorer.json", ".notes.json")


def _is_data_file(path: Path) -> bool:
    return (
        path.name in _DATA_FILE_NAMES
        or path.name.endswith(SIDECAR_SUFFIXES)
        or _is_run_config(path)
        or _is_view_note(path)
        or (path.parent / "policy.md").exists()
    )


# tau2 view's notes: ``task_<task>_<note>_note.json`` (the note) beside ``…_simulation.json`` (the simulation).
_NOTE_SUFFIX, _NOTE_SIMULATION_SUFFIX = "_note.json", "_simulation.json"


def _is_view_note(path: Path) -> bool:
    """The note half of a ``tau2 view`` note: its simulation beside it is the run, the note is not."""
    name = path.name
    return (
        name.endswith(_NOTE_SUFFIX) and path.with_name(name[: -len(_NOTE_SUFFIX)] + _NOTE_SIMULATION_SUFFIX).is_file()
    )


# --- the domain a file beside a recording names -------------------------------------------------------------
RUN_CONFIG_FILE = "run.json"  # a run's configuration beside the simulations it made (or a run saved by that name)
_RUN_KEYS = ("simulations", "simulation_run", "messages", "ticks")


# Files a harness writes beside its runs that list or describe them (an index of the run files, a manifest):
# left out of a folder scan when they hold no simulation, as ``run.json`` is.
INDEX_FILES = (RUN_CONFIG_FILE, "index.json", "manifest.json")


def _is_run_config(path: Path) -> bool:
    """A small ``run.json``, ``index.json`` or ``manifest.json`` that holds no simulation: a run's configuration or
    an index of the runs beside it, which a folder scan leaves out (named alone, it is opened and says why not)."""
    if path.name not in INDEX_FILES:
        return False
    try:
        if os.stat(path).st_size > _SIDECAR_HEAD_BYTES:
            return False
        data = orjson.loads(read_bytes(path))
    except (OSError, RunFileError, orjson.JSONDecodeError):
        return False
    if isinstance(data, list):  # a list of names or rows: an index unless its rows are simulations
        return not any(isinstance(row, dict) and any(key in row for key in _RUN_KEYS) for row in data)
    return isinstance(data, dict) and not any(key in data for key in (*_RUN_KEYS, TASK_RESULTS))


_DOMAIN_SIDECARS = ("results.json", RUN_CONFIG_FILE)
_WHOLE_SIDECAR_BYTES = 8 * 1024**2  # read whole up to this size; a bigger results.json is searched at its head
_SIDECAR_HEAD_BYTES = 1024**2
_DOMAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_DOMAIN_NAME_FIELD = re.compile(rb'"domain_name"\s*:\s*"([A-Za-z0-9][A-Za-z0-9_.-]{0,99})"')


def sidecar_domain(path: Path | str) -> tuple[str, Path] | None:
    """The domain a ``results.json`` or ``run.json`` beside ``path`` names, and that file: in the same folder, or in
    the run folder above a ``simulations/`` folder; None when none does (an unreadable one names nothing)."""
    path = Path(path)
    folders = [path.parent] + ([path.parent.parent] if path.parent.name == "simulations" else [])
    for folder in folders:
        for name in _DOMAIN_SIDECARS:
            candidate = folder / name
            if candidate == path or not candidate.is_file():
                continue
            found = _named_domain(candidate)
            if found is not None:
                return found, candidate
    return None


def _named_domain(path: Path) -> str | None:
    """The domain a run's metadata or configuration names: ``info.environment_info.domain_name``, or a top-level
    ``domain`` (``domain_name``, ``environment_info.domain_name``); a name of letters, digits and ``_.-`` only."""
    try:
        size = os.stat(path).st_size
        if size > _WHOLE_SIDECAR_BYTES:  # a big results.json: tau2 writes its info before its simulations
            with open(path, "rb") as handle:
                found = _DOMAIN_NAME_FIELD.search(handle.read(_SIDECAR_HEAD_BYTES))
            return found.group(1).decode("ascii") if found else None
        data = read_json(path)
    except (OSError, RunFileError):
        return None
    if not isinstance(data, dict):
        return None
    info = _object(data.get("info"))
    for value in (
        _object(info.get("environment_info")).get("domain_name"),
        _object(data.get("environment_info")).get("domain_name"),
        data.get("domain"),
        data.get("domain_name"),
    ):
        if isinstance(value, str) and _DOMAIN_NAME.fullmatch(value):
            return value
    return None


_DB_FILES = ("db.json", "db.toml", "user_db.json", "user_db.toml")


def is_tau2_data_folder(folder: Path) -> bool:
    """A tau2 domain data folder (``domains/<name>/``): a DB file beside its tasks (``tasks.json`` or ``tasks/``)."""
    return any((folder / name).is_file() for name in _DB_FILES) and (
        (folder / "tasks.json").is_file() or (folder / "tasks").is_dir()
    )


# A leaderboard submission folder (tau2 submit prepare): submission.json beside trajectories/ (model/submission.py).
SUBMISSION_FILE, TRAJECTORIES_DIR = "submission.json", "trajectories"


def is_submission_folder(folder: Path) -> bool:
    return (folder / SUBMISSION_FILE).is_file() and (folder / TRAJECTORIES_DIR).is_dir()


REVIEWED_FILE = "results_reviewed.json"  # tau2 review's copy of a run's results.json, with its reviews


def _run_entry(folder: Path) -> Path:
    """A run folder, or its ``results_reviewed.json`` when ``tau2 review`` wrote one beside a one-file results.json."""
    reviewed = folder / REVIEWED_FILE
    return reviewed if reviewed.is_file() and not (folder / "simulations").is_dir() else folder


def run_names(path: Path | str) -> tuple[Path, list[Path]]:
    """The one name of the run ``path`` names, and its other names.

    A run folder and its ``results.json`` name one run, and so does ``results_reviewed.json`` when ``tau2 review``
    wrote it beside a one-file results.json; the one name is the file ``scan_paths`` opens for the folder (what the
    notes of the run are kept by). Any other path is its own one name.
    """
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if not (folder / "results.json").is_file() or (path != folder and path.name not in ("results.json", REVIEWED_FILE)):
        return path, []
    entry = _run_entry(folder)
    first = folder / "results.json" if entry == folder else entry
    names = [folder, folder / "results.json", *([entry] if entry != folder else [])]
    if path not in names:  # results_reviewed.json beside a directory-layout run: a file of its own
        return path, []
    return first, [name for name in names if name != first]


@dataclass
class PathScan:
    """What a scan of the given paths found: run files and directories, and the tau2 data folders it skipped."""

    files: list[Path] = field(default_factory=list)
    data_folders: list[Path] = field(default_factory=list)
    submissions: list[Path] = field(default_factory=list)  # submission folders: their trajectories are in files
    links_outside: list[Path] = field(default_factory=list)  # links in a searched folder leading out of it: not read

    def link_notices(self) -> list[str]:
        """One line per link that leads outside the folder searched (never followed)."""
        return [f"{link}: a link leading outside the folder searched; not read" for link in self.links_outside]

    def data_folder_notice(self) -> str | None:
        """One line for every tau2 data folder skipped (their JSON files are domain data, not runs)."""
        if not self.data_folders:
            return None
        parents = sorted({str(p.parent) for p in self.data_folders})
        names = ", ".join(sorted(p.name for p in self.data_folders))
        where = parents[0] if len(parents) == 1 else f"{len(parents)} folders"
        count = len(self.data_folders)
        return (
            f"{where}: skipped {count} tau2 data folder{'s' if count != 1 else ''} ({names}): "
            "domain data (DB, tasks, documents), not runs"
        )


def scan_paths(paths: Iterable[Path | str]) -> PathScan:
    """Files and run directories named by ``paths``; folders are searched recursively.

    A folder holding ``results.json`` is one run; a tau2 data folder is skipped
    whole (and listed); other folders contribute every ``*.json`` under them
    except domain data files and the sidecars we write.
    """
    scan = PathScan()
    for raw in paths:
        path = Path(raw)
        if path.name == SUBMISSION_FILE and is_submission_folder(path.parent):
            path = path.parent  # submission.json names its folder
        if not path.is_dir() or (path / "results.json").is_file():
            scan.files.append(_run_entry(path) if path.is_dir() else path)
            continue
        found: list[Path] = []
        skipped_before = len(scan.data_folders) + len(scan.links_outside)
        root = _resolved(path)
        for dirpath, dirnames, filenames in os.walk(path):
            here = Path(dirpath)
            if (here / "results.json").is_file() and here != path:
                found.append(_run_entry(here))
                dirnames[:] = []
                continue
            if is_tau2_data_folder(here):
                scan.data_folders.append(here)
                dirnames[:] = []
                continue
            if is_submission_folder(here):
                scan.submissions.append(here)
                dirnames[:] = [TRAJECTORIES_DIR]
                continue
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                candidate = here / name
                if not (name.endswith(".json") or candidate.suffix.lower() in RUN_OPENERS):
                    continue
                if root is None or not within(root, candidate):
                    scan.links_outside.append(candidate)
                elif not _is_data_file(candidate):
                    found.append(candidate)
        if not found and len(scan.data_folders) + len(scan.links_outside) == skipped_before:
            scan.files.append(path)  # open_run reports the empty directory
        scan.files.extend(sorted(found))
    return scan


def expand_paths(paths: Iterable[Path | str]) -> list[Path]:
    """The run files and directories under ``paths`` (see ``scan_paths``)."""
    return scan_paths(paths).files
