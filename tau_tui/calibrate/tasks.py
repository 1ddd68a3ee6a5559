"""Where a task is defined, so it can be opened in ``$EDITOR``, edited, and read back.

A task lives in its domain's task file (``tasks.json``: a list, or an object
with a ``tasks`` list) or embedded in a run file (the ``tasks`` list of a
results file, or the ``task`` of a single-simulation wrapper).
``find_task_source`` returns the file and the lines of the task's object;
``read_task`` reads the definition back from there after an edit;
``reload_domain_tasks`` makes a domain re-read its task file.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from tau_tui.domains import Domain, DomainError
from tau_tui.model.io import RunFile, RunFileError, read_bytes
from tau_tui.model.tasks import Task

DOMAIN, RUN = "domain", "run"
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class TaskSourceError(Exception):
    """A task whose definition cannot be located; ``str()`` is one line."""


@dataclass(frozen=True)
class TaskSource:
    """The file holding a task's definition and where in it: 1-based lines of its JSON object."""

    task_id: str
    path: Path
    kind: str  # "domain" (the domain's task file) or "run" (embedded in a run file)
    line: int  # the line of the object's opening brace
    end_line: int
    id_line: int  # the line of its "id" key
    offset: int  # character offset of the opening brace

    def editor_command(self, editor: str | None = None) -> list[str]:
        """``editor`` (the settings': ``$VISUAL``, ``$EDITOR``; else vi) opened at the task's id line (``+N``,
        which most editors take)."""
        command = (editor or "").strip() or "vi"
        return [*shlex.split(command), f"+{self.id_line}", str(self.path)]


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


def _expect(text: str, pos: int, char: str, path: Path) -> int:
    pos = _skip(text, pos)
    if pos >= len(text) or text[pos] != char:
        raise TaskSourceError(f"{path}: expected {char!r} at offset {pos}")
    return pos + 1


def _array_items(text: str, pos: int, path: Path) -> Iterator[tuple[int, int, Any]]:
    """(start, end, value) of each item of the JSON array opening at ``pos``."""
    pos = _expect(text, pos, "[", path)
    pos = _skip(text, pos)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        pos = _skip(text, pos)
        value, end = _DECODER.raw_decode(text, pos)
        yield pos, end, value
        pos = _skip(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        _expect(text, pos, "]", path)
        return


def _object_member(text: str, pos: int, names: tuple[str, ...], path: Path) -> tuple[str, int] | None:
    """The first top-level key of the object at ``pos`` among ``names``, and where its value starts."""
    pos = _expect(text, pos, "{", path)
    while True:
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == "}":
            return None
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, _expect(text, pos, ":", path))
        if key in names:
            return key, pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos += 1


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _locate(path: Path, task_id: str, kind: str) -> TaskSource:
    try:
        text = read_bytes(path).decode("utf-8")
    except RunFileError as exc:
        raise TaskSourceError(str(exc)) from None
    except UnicodeDecodeError:
        raise TaskSourceError(f"{path}: is not UTF-8 text") from None
    try:
        start = _skip(text, 0)
        candidates: Iterator[tuple[int, int, Any]]
        if text[start : start + 1] == "[":
            candidates = _array_items(text, start, path)
        else:
            member = _object_member(text, start, ("tasks", "task"), path)
            if member is None:
                raise TaskSourceError(f"{path}: holds no task definitions")
            key, pos = member
            if key == "task":
                value, end = _DECODER.raw_decode(text, pos)
                candidates = iter([(pos, end, value)])
            else:
                candidates = _array_items(text, pos, path)
        for begin, end, value in candidates:
            if isinstance(value, dict) and str(value.get("id")) == task_id:
                return TaskSource(
                    task_id,
                    path,
                    kind,
                    _line_of(text, begin),
                    _line_of(text, end - 1),
                    _id_line(text, begin, end),
                    begin,
                )
    except json.JSONDecodeError as exc:
        raise TaskSourceError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    raise TaskSourceError(f"{path}: no task {task_id!r}")


def _id_line(text: str, begin: int, end: int) -> int:
    """The line of the object's own ``"id"`` key (the first one at depth 1 of the object)."""
    depth, pos, in_string = 0, begin, False
    while pos < end:
        char = text[pos]
        if in_string:
            if char == "\\":
                pos += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            after = _skip(text, pos + 4)
            if depth == 1 and text.startswith('"id"', pos) and text[after : after + 1] == ":":
                return _line_of(text, pos)
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        pos += 1
    return _line_of(text, begin)


def find_task_source(task_id: str, *, run: RunFile | None = None, domain: Domain | None = None) -> TaskSource:
    """Where ``task_id`` is defined: embedded in ``run`` if it holds it, else in ``domain``'s task file."""
    task_id = str(task_id)
    if run is not None and task_id in run.tasks():
        return _locate(run.path, task_id, RUN)
    if domain is not None:
        try:
            path = domain.task_file()
        except DomainError as exc:
            raise TaskSourceError(str(exc)) from None
        return _locate(path, task_id, DOMAIN)
    raise TaskSourceError(f"task {task_id!r}: no run file holds it and no domain was given")


def read_task(source: TaskSource) -> Task:
    """The task's definition as its file holds it now (after an edit)."""
    located = _locate(source.path, source.task_id, source.kind)
    text = read_bytes(source.path).decode("utf-8")
    value, _ = _DECODER.raw_decode(text, located.offset)
    try:
        return Task.model_validate(value)
    except Exception as exc:  # noqa: BLE001 - a broken edit is reported on one line
        raise TaskSourceError(f"{source.path}: task {source.task_id!r} is not a valid task ({exc})") from None


def reload_domain_tasks(domain: Domain) -> dict[str, Task]:
    """Make ``domain`` read its task file again (its tasks are cached after the first read)."""
    domain._tasks = None  # Domain has no public reload; the cache is this one attribute
    return domain.tasks()
