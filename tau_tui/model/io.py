"""Reading and writing recorded runs in every tau2 layout.

Layouts read:
  * results object ``{timestamp, info, tasks, simulations}`` (tau2's json format),
  * directory layout: ``results.json`` (metadata, optional ``simulation_index``)
    plus ``simulations/<id>.json``,
  * a bare JSON list of simulations,
  * tau-bench v1 result lists, read-only (``model/tau_bench_v1.py``),
  * single-simulation wrappers: ``{task, simulation_run}`` (``{task_id, reward, simulation_run}``, ``{_about, …}``),
    a lone simulation object (a ``tau2 view`` note's ``*_simulation.json``), and a per-task export
    ``{task_id, task, run_info, reward_info, messages}``; every field read tolerantly (a wrong one is a warning).

What a file leaves out (its domain, a simulation's task id, trial or termination) is worked out one layer up,
where the domain registry is (``tau_tui.resolve``), and handed back as a ``RunResolution`` (``RunFile.resolve``).

Opening a file parses JSON and builds a light index of its simulations; the
pydantic models of a simulation are built only when it is opened.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
import tempfile
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

import orjson
from pydantic import ValidationError

from tau_tui.model.duplex import TICKS, graded_from, tick_messages
from tau_tui.model.results import Results, RunInfo, SimulationRun, is_silent_raw, placeholder_reward
from tau_tui.model.secrets import environment_secrets, leaked_credentials, redact
from tau_tui.model.tasks import Task
from tau_tui.model.tau_bench_v1 import looks_like_v1, open_v1

MAX_READ_SETTING = "TAU_TUI_MAX_READ_BYTES"  # how the user raises the limit (config.resolve reads it)
# Files that live in tau2 data folders and are never runs.
_DATA_FILE_NAMES = {
    "db.json",
    "user_db.json",
    "tasks.json",
    "tasks_small.json",
    "split_tasks.json",
    "split_tasks_small.json",
}


def error_text(exc: BaseException) -> str:
    """An exception's one-line message; a ``KeyError``'s ``str()`` adds quotes, its message is kept as given."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


class RunFileError(Exception):
    """A run file that cannot be read; ``str()`` is one line naming file and problem."""

    def __init__(self, path: Path | str, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class RecordedOnly(RunFileError):
    """A run that is shown as recorded and never replayed (``RunFile.recorded_only`` says why)."""


@dataclass
class SimEntry:
    """Index row of one simulation, read from raw JSON without building models."""

    index: int
    id: str
    task_id: str
    trial: int | None
    seed: int | None
    termination: str | None
    reward: float | None
    db_match: bool | None
    agent_cost: float | None
    user_cost: float | None
    duration: float | None
    n_messages: int  # the messages the trajectory shows (a voice run's silent chunks left out)
    n_tool_calls: int
    n_tool_errors: int
    problem: str | None = None
    error: str | None = None  # the error an infrastructure failure left in ``info``
    n_steps: int = 0  # the trajectory's steps, silent ones included: what a note's step indexes
    reviewed: bool = False  # the simulation holds a review, auth classification, hallucination check or effects
    unpriced: tuple[str, ...] = ()  # the sides whose cost is recorded as null ("agent", "user"): not priced, not 0


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    """A recorded id as text; a missing one is empty (as ``SimulationRun`` reads it)."""
    return "" if value is None else str(value)


def _object(value: Any) -> dict[str, Any]:
    """A JSON object as read, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    """A JSON array as read, or an empty one for anything else."""
    return value if isinstance(value, list) else []


# The newer recorded fields ``model.reviews.read_review`` reads; the index notes whether a simulation has any.
REVIEW_KEYS = (
    "review",
    "user_only_review",
    "auth_classification",
    "hallucination_check",
    "hallucination_retries_used",
    "effect_timeline",
)


def _holds_review(value: Any) -> bool:
    """Whether a review field says anything: tau2 1.0.1 writes ``hallucination_retries_used: 0`` into every
    simulation, and a row whose review is only that need not parse its simulation for the runs table."""
    return value is not None and not (type(value) is int and value == 0)


def _index_entry(i: int, raw: Any) -> SimEntry:
    if not isinstance(raw, dict):
        return SimEntry(
            i,
            f"#{i}",
            "?",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            0,
            problem=f"simulation #{i} is a {type(raw).__name__}, not an object",
        )
    reward_info = _object(raw.get("reward_info"))
    db_check = _object(reward_info.get("db_check"))
    messages = raw.get("messages")
    ticks = raw.get("ticks")
    shown: int | None = None
    if isinstance(ticks, list) and graded_from(raw.get("mode"), messages, ticks) == TICKS:
        messages = tick_messages(ticks)
        shown = sum(not is_silent_raw(m) for m in messages)  # a voice run's trajectory folds the rest
    elif not isinstance(messages, list):
        messages = []
    n_calls = n_errors = 0
    for m in messages:
        if isinstance(m, dict):
            calls = m.get("tool_calls")
            if isinstance(calls, list):
                n_calls += len(calls)
            if m.get("role") == "tool" and m.get("error") is True:
                n_errors += 1
    db_match = db_check.get("db_match")
    info = raw.get("info")
    return SimEntry(
        index=i,
        id=str(raw.get("id") or f"#{i}"),
        task_id=_text(raw.get("task_id")),
        trial=_int(raw.get("trial")),
        seed=_int(raw.get("seed")),
        termination=raw.get("termination_reason") if isinstance(raw.get("termination_reason"), str) else None,
        reward=_num(reward_info.get("reward")),
        db_match=db_match if isinstance(db_match, bool) else None,
        agent_cost=_num(raw.get("agent_cost")),
        user_cost=_num(raw.get("user_cost")),
        duration=_num(raw.get("duration")),
        n_messages=len(messages) if shown is None else shown,
        n_steps=len(messages),
        n_tool_calls=n_calls,
        n_tool_errors=n_errors,
        error=str(info.get("error")) if isinstance(info, dict) and info.get("error") else None,
        reviewed=any(_holds_review(raw.get(key)) for key in REVIEW_KEYS),
        unpriced=tuple(side for side in ("agent", "user") if f"{side}_cost" in raw and raw[f"{side}_cost"] is None),
    )


_FILE_KINDS = (
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "directory"),
)


def file_kind(mode: int) -> str:
    """'regular' or what else a stat mode says the path is (fifo, socket, device, directory)."""
    if stat.S_ISREG(mode):
        return "regular"
    return next((name for test, name in _FILE_KINDS if test(mode)), "special file")


def max_read_bytes() -> int:
    """The size limit of one file read (the settings' ``max_read_bytes``, 4 GiB by default)."""
    from tau_tui.model import runtime

    return runtime.current().max_read_bytes


def read_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file, at most ``max_read_bytes()``; anything else is a one-line ``RunFileError``.

    A FIFO, socket or device is refused before it is opened (a FIFO would block
    the reader forever). The file is opened non-blocking and checked again on
    the open descriptor, so a path swapped for a FIFO in between is refused too.
    """
    path = Path(path)
    try:
        kind = file_kind(os.stat(path).st_mode)
    except FileNotFoundError:
        raise RunFileError(path, "does not exist") from None
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if kind == "directory":
        raise RunFileError(path, "is a directory")
    if kind != "regular":
        raise RunFileError(path, f"not a regular file ({kind})")
    limit = max_read_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RunFileError(path, f"not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise RunFileError(path, _too_big(info.st_size, limit))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = _read_bounded(handle, info.st_size, limit)
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise RunFileError(path, f"is more than the {limit:,}-byte read limit (raise it with {MAX_READ_SETTING})")
    return data


READ_CHUNK = 1024**2  # bytes read at a time past the size a file's metadata gave


def _read_bounded(handle: Any, size: int, limit: int) -> bytes:
    """The file's bytes, at most ``limit`` and one more: what its size says in one read (nothing the size of
    the limit is allocated), then bounded chunks while there is more (a file growing, or one whose size the
    system does not report, as ``/proc`` files), stopping as soon as it is past the limit."""
    first: bytes = handle.read(min(size, limit) + 1)
    if len(first) <= size:
        return first
    parts, total = [first], len(first)
    while total <= limit:
        part: bytes = handle.read(min(READ_CHUNK, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def _too_big(size: int, limit: int) -> str:
    return f"is {size:,} bytes, more than the {limit:,}-byte read limit (raise it with {MAX_READ_SETTING})"


UTF8_BOM = b"\xef\xbb\xbf"


def json_text(data: bytes) -> bytes | memoryview:
    """The JSON text of a file's bytes: a UTF-8 byte-order mark some editors write (tau2-bench#375) left out,
    without copying the rest."""
    return memoryview(data)[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data


def read_json(path: Path) -> Any:
    """Parse a JSON file (a UTF-8 BOM allowed); any failure becomes a one-line ``RunFileError``."""
    data = read_bytes(path)
    if not data.strip():
        raise RunFileError(path, "is empty")
    try:
        return orjson.loads(json_text(data))  # checks UTF-8 itself: no decoded copy of the whole file
    except orjson.JSONDecodeError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise RunFileError(
                path, f"is not UTF-8 text (byte 0x{data[bad.start]:02x} at offset {bad.start})"
            ) from None
        msg = str(exc)
        if "recursion" in msg.lower() or "depth limit" in msg.lower():
            raise RunFileError(path, "is not readable JSON: nested deeper than 1024 levels") from None
        if exc.pos >= len(data.rstrip()) - 1 or "end of data" in msg.lower() or "EOF" in msg:
            raise RunFileError(path, f"is truncated JSON ({msg})") from None
        raise RunFileError(path, f"is not valid JSON ({msg})") from None


def _kind_of(path: Path) -> str:
    try:
        return file_kind(os.stat(path).st_mode)
    except OSError:
        return "regular"  # gone or unreadable: the read that follows says which


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


@dataclass(frozen=True)
class Recovered:
    """What one simulation leaves out (its task id, trial, termination), recovered from what it holds, and how.

    ``how`` says it in one phrase per field, a field that could not be recovered included; a recording's own
    value always wins (``fill`` sets a field only where the simulation has none).
    """

    task_id: str | None = None
    trial: int | None = None
    termination: str | None = None
    how: tuple[str, ...] = ()

    def fill(self, raw: dict[str, Any]) -> dict[str, Any]:
        """``raw`` with the recovered fields where it has none (a copy; the file's own dict is left alone)."""
        out = dict(raw)
        for key, value in (("task_id", self.task_id), ("trial", self.trial), ("termination_reason", self.termination)):
            if value is not None and out.get(key) in (None, ""):
                out[key] = value
        return out


@dataclass(frozen=True)
class RunResolution:
    """What was worked out for a run one layer up (``tau_tui.resolve``, where the domain registry is).

    ``domain`` is the domain of a file that names none (``source`` says where it came from: ``--domain``, a file
    beside it, the tools it calls), or None with ``problem``, the one line why it cannot be told; a file that names
    its domain has ``domain`` None and no problem. ``recovered`` holds, by simulation index, the fields recovered
    for simulations without them. A plain value: it travels to Ray actors with the file's head.
    """

    domain: str | None = None
    source: str | None = None
    problem: str | None = None
    recovered: dict[int, Recovered] = field(default_factory=dict)


@dataclass
class RunFile:
    """One loaded run (file or directory): metadata, tasks and an index of simulations."""

    path: Path
    layout: str
    raw_sims: Sequence[Any]  # a list, or a streamed file's spans (model.stream.SpanSims)
    raw_info: dict[str, Any]
    raw_tasks: list[Any]
    timestamp: str | None = None
    extra_top: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    entries: list[SimEntry] = field(default_factory=list)
    recorded_only: str | None = None  # why this run is shown as recorded and never replayed (None: it is replayed)
    resolution: RunResolution | None = None  # None: not worked out yet (``resolve``)
    _sims: dict[int, SimulationRun] = field(default_factory=dict, repr=False)
    _tasks: dict[str, Task] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if getattr(self.raw_sims, "indexed_lazily", False):  # a streamed file (model.stream): entries grow as read
            from tau_tui.model.stream import KEEP_PARSED, LRU

            self._sims = LRU(KEEP_PARSED)
            return
        self.entries = [_index_entry(i, raw) for i, raw in enumerate(self.raw_sims)]

    def set_header(
        self, info: dict[str, Any], tasks: list[Any], timestamp: str | None, extra_top: dict[str, Any]
    ) -> None:
        """Replace the file's top-level fields: a streamed file's members that come after its simulations are
        known only once they are read (``model.stream``)."""
        self.raw_info, self.raw_tasks, self.timestamp, self.extra_top = info, tasks, timestamp, extra_top
        self._tasks = None

    # --- metadata -------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path.name

    @property
    def label(self) -> str:
        """A short name: the file's stem (its folder for the dir layout), without the corpus prefix."""
        name = self.path.parent.name if self.layout == "dir" else self.path.stem
        for prefix in ("sierra-research__tau2-bench__", "sierra-research__"):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        return name

    def _info_part(self, key: str) -> dict[str, Any]:
        value = self.raw_info.get(key)
        return value if isinstance(value, dict) else {}

    def _info_text(self, part: str, key: str, top: str | None = None) -> str | None:
        """``info.<part>.<key>`` (else the top-level ``top``) when it is text; anything else reads as unknown."""
        for value in (self._info_part(part).get(key), self.extra_top.get(top) if top else None):
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def agent_model(self) -> str | None:
        return self._info_text("agent_info", "llm", "model")

    @property
    def agent_implementation(self) -> str | None:
        return self._info_text("agent_info", "implementation", "agent")

    @property
    def user_model(self) -> str | None:
        return self._info_text("user_info", "llm")

    @property
    def user_implementation(self) -> str | None:
        return self._info_text("user_info", "implementation")

    @property
    def solo(self) -> bool:
        """tau2 marks solo runs by the solo agent and the dummy user."""
        agent = self.agent_implementation or ""
        return "solo" in agent or self.user_implementation == "dummy_user"

    @property
    def forked_from(self) -> dict[str, Any] | None:
        """What this run continues, when it is a fork (``tau-tui fork``, the trajectory's ``b``): the recorded
        file, simulation and message it was cut after; None for any other run."""
        ours = self.raw_info.get("tau_tui")
        value = ours.get("forked_from") if isinstance(ours, dict) else None
        return value if isinstance(value, dict) else None

    @property
    def domain_name(self) -> str | None:
        """Domain as the file states it (``telecom-workflow`` included)."""
        name = self._info_part("environment_info").get("domain_name")
        if isinstance(name, str) and name:
            return name
        top = self.extra_top.get("domain")
        return top if isinstance(top, str) and top else None

    @property
    def domain(self) -> str | None:
        """The domain this run belongs to: as the file states it, else as worked out for it (``resolution``:
        ``--domain``, a file beside it, the tools it calls); None until then, or when nothing tells."""
        return self.domain_name or (self.resolution.domain if self.resolution is not None else None)

    def resolve(self, resolution: RunResolution) -> None:
        """Take what was worked out for this run (``tau_tui.resolve``): the domain of a file that names none and
        the recovered fields of simulations that lack them; their index rows show the recovered fields too."""
        self.resolution = resolution
        for index, recovered in resolution.recovered.items():
            if index < len(self.entries):
                entry = self.entries[index]
                entry.task_id = entry.task_id or recovered.task_id or ""
                entry.trial = recovered.trial if entry.trial is None else entry.trial
                entry.termination = entry.termination or recovered.termination
            self._sims.pop(index, None)

    def recovered(self, index: int) -> Recovered | None:
        """What was recovered for simulation ``index`` (None: nothing was missing, or not worked out yet)."""
        return self.resolution.recovered.get(index) if self.resolution is not None else None

    # --- lazy models ------------------------------------------------------
    def tasks(self) -> dict[str, Task]:
        """Tasks embedded in the file, by id (unreadable ones are skipped with a warning)."""
        if self._tasks is None:
            tasks: dict[str, Task] = {}
            for i, raw in enumerate(self.raw_tasks):
                try:
                    task = Task.model_validate(raw)
                except ValidationError as exc:
                    self.warnings.append(f"task #{i} unreadable: {exc.errors()[0].get('msg')}")
                    continue
                tasks[task.id] = task
            self._tasks = tasks
        return self._tasks

    def raw_simulation(self, index: int) -> Any:
        """The raw JSON of simulation ``index``: the one read of a span that a streamed file changed on disk since
        it was indexed turns into a ``RunFileError`` line ("changed on disk since it was read; reload it")."""
        try:
            return self.raw_sims[index]
        except OSError as exc:  # a streamed file gone or changed since it was indexed
            raise RunFileError(self.path, f"simulation #{index}: {exc.strerror or exc}") from None
        except ValueError as exc:  # its span no longer parses (rewritten in place, same size and time)
            raise RunFileError(self.path, f"simulation #{index} is no longer valid JSON ({exc}); reload it") from None

    def placeholder(self, index: int) -> str | None:
        """What the file's own ``info`` says of simulation ``index``'s recorded reward being a placeholder
        (``model.results.placeholder_reward``); None when nothing, or the simulation cannot be read."""
        try:
            raw = self.raw_simulation(index)
        except RunFileError:
            return None
        return placeholder_reward(raw, self.raw_info) if isinstance(raw, dict) else None

    def simulation(self, index: int) -> SimulationRun:
        """The full model of simulation ``index`` (built once, then cached)."""
        cached = self._sims.get(index)
        if cached is None:
            raw = self.raw_simulation(index)
            if not isinstance(raw, dict):
                raise RunFileError(self.path, f"simulation #{index} is {_kind(raw)}, not an object")
            recovered = self.recovered(index)
            if recovered is not None:
                raw = recovered.fill(raw)
            try:
                self._sims[index] = SimulationRun.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ()))
                raise RunFileError(
                    self.path, f"simulation #{index} unreadable at {where}: {first.get('msg')}"
                ) from None
            cached = self._sims[index]
        return cached

    def find(self, sim_id: str) -> int | None:
        """Index of the simulation whose id equals or starts with ``sim_id``."""
        matches = self.matches(sim_id)
        return matches[0].index if len(matches) == 1 else None

    def matches(self, sim_id: str) -> list[SimEntry]:
        """The simulation whose id is ``sim_id``, else every one whose id starts with it (several: ambiguous)."""
        exact = [entry for entry in self.entries if entry.id == sim_id]
        return exact[:1] if exact else [e for e in self.entries if e.id.startswith(sim_id)]

    def to_results(self) -> Results:
        """The whole run as a ``Results`` model in the standard layout."""
        return Results(
            timestamp=self.timestamp,
            info=RunInfo.model_validate(self.raw_info),
            tasks=list(self.tasks().values()),
            simulations=[self.simulation(i) for i in range(len(self.raw_sims))],
        )


def _from_object(path: Path, data: dict[str, Any]) -> RunFile:
    if "simulation_run" in data and isinstance(data["simulation_run"], dict):
        return _lone(path, "wrapper", data, dict(data["simulation_run"]), ("simulation_run", "task", "run_info"))
    if "simulations" in data:
        sims = data["simulations"]
        if not isinstance(sims, list):
            raise RunFileError(path, f"'simulations' is {_kind(sims)}, expected a list")
        warnings: list[str] = []
        return _results_run(path, "results", sims, data, _part(data, "info", dict, warnings), warnings)
    if isinstance(data.get("messages"), list) or isinstance(data.get("ticks"), list):
        return _lone(
            path, "single", data, {k: v for k, v in data.items() if k not in ("task", "run_info")}, ("task", "run_info")
        )
    if isinstance(data.get(TASK_RESULTS), list):
        return _task_results(path, data)
    if _is_submission(data):
        return RunFile(path, SUBMISSION_LAYOUT, [], {}, [], recorded_only=lone_submission_note(path))
    keys = ", ".join(list(data)[:6]) or "no keys"
    raise RunFileError(path, f"not a tau2 run: an object without 'simulations' or 'simulation_run' (keys: {keys})")


# ``{task_results: [{task_id, reward, trajectory}, …]}``: a harness's per-task rows, each with its simulation (or
# only its messages) under ``trajectory``; the row's ``task_id`` and ``reward`` are the recorded ones.
TASK_RESULTS, _TRAJECTORY = "task_results", "trajectory"
_ROW_FIELDS = ("task_id", "trial", "seed", "termination_reason", "agent_cost", "user_cost", "duration")


def _task_results(path: Path, data: dict[str, Any]) -> RunFile:
    """A ``task_results`` wrapper: one simulation per row, the row's fields filling what its simulation lacks."""
    warnings: list[str] = []
    sims: list[Any] = []
    for i, row in enumerate(data[TASK_RESULTS]):
        if not isinstance(row, dict):
            warnings.append(f"task_results[{i}] is {_kind(row)}, expected an object; skipped")
            continue
        trajectory = row.get(_TRAJECTORY)
        if isinstance(trajectory, dict):
            sim = dict(trajectory)
        elif isinstance(trajectory, list):  # the messages alone
            sim = {"messages": trajectory}
        else:
            if trajectory is not None:
                warnings.append(f"task_results[{i}].trajectory is {_kind(trajectory)}, expected a simulation; ignored")
            sim = {}  # a row with a reward and no messages: shown as recorded, never re-graded
        for key in _ROW_FIELDS:
            if sim.get(key) in (None, "") and row.get(key) not in (None, ""):
                sim[key] = row[key]
        if sim.get("id") in (None, ""):
            sim["id"] = str(row.get("id") or row.get("simulation_id") or f"task_results[{i}]")
        _recorded_reward(sim, row.get("reward"), warnings)
        sims.append(sim)
    info = _part(data, "info", dict, warnings) or _run_info(data.get("run_info"), warnings)
    return _results_run(path, TASK_RESULTS, sims, data, info, warnings, also=(TASK_RESULTS, "run_info"))


def _results_run(
    path: Path,
    layout: str,
    sims: list[Any],
    data: dict[str, Any],
    info: dict[str, Any],
    warnings: list[str],
    also: tuple[str, ...] = ("simulations",),
) -> RunFile:
    """A run of many simulations from a results-like object: its ``tasks`` and ``timestamp``, and the top-level
    fields other than those, ``info`` and ``also`` kept as naming fields (``_named_fields``)."""
    tasks = _part(data, "tasks", list, warnings)
    extra = {k: v for k, v in data.items() if k not in ("timestamp", "info", "tasks", *also)}
    run = RunFile(
        path,
        layout,
        sims,
        info,
        tasks,
        timestamp=data.get("timestamp") if isinstance(data.get("timestamp"), str) else None,
        extra_top=_named_fields(extra, warnings),
    )
    run.warnings.extend(warnings)
    return run


# A leaderboard ``submission.json`` opened alone (no ``trajectories/`` beside it): its claims, nothing to replay.
SUBMISSION_LAYOUT = "submission"


def _is_submission(data: dict[str, Any]) -> bool:
    """tau2 submit's metadata: a model name and claimed results, and no simulation."""
    return isinstance(data.get("model_name"), str) and isinstance(data.get("results"), dict)


def lone_submission_note(path: Path) -> str:
    """Why a lone ``submission.json`` shows claims only."""
    where = path.parent / TRAJECTORIES_DIR
    return (
        f"a leaderboard submission: its claims only; trajectories not here ({where} does not exist), "
        "so nothing is recomputed; open the submission folder with its trajectories/"
    )


def _part(data: dict[str, Any], key: str, kind: type, warnings: list[str]) -> Any:
    """``data[key]`` when it is of ``kind`` (an empty one when absent or null); anything else is a warning."""
    value = data.get(key)
    if isinstance(value, kind):
        return value
    if value is not None:
        warnings.append(f"'{key}' is {_kind(value)}, expected {_kind(kind())}; ignored")
    return kind()


# Top-level fields of custom wrappers that name something (``{domain, agent, model, …, simulations}``): text only.
_NAMED_TOP = ("domain", "agent", "model")


def _named_fields(extra: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """``extra`` without the naming fields that are not text (each a warning)."""
    out = dict(extra)
    for key in _NAMED_TOP:
        value = out.get(key)
        if value is not None and not (isinstance(value, str) and value):
            warnings.append(f"top-level '{key}' is {_kind(value)}, expected a name; ignored")
            out.pop(key)
    return out


# ``run_info`` of a per-task export: its key -> (the part of tau2's ``info`` it fills, that part's key).
_RUN_INFO = {
    "domain": ("environment_info", "domain_name"),
    "domain_name": ("environment_info", "domain_name"),
    "agent": ("agent_info", "implementation"),
    "agent_implementation": ("agent_info", "implementation"),
    "agent_llm": ("agent_info", "llm"),
    "agent_model": ("agent_info", "llm"),
    "llm": ("agent_info", "llm"),
    "model": ("agent_info", "llm"),
    "user": ("user_info", "implementation"),
    "user_implementation": ("user_info", "implementation"),
    "user_llm": ("user_info", "llm"),
    "user_model": ("user_info", "llm"),
}


def _run_info(value: Any, warnings: list[str]) -> dict[str, Any]:
    """tau2's ``info`` from a per-task export's ``run_info`` (the names it gives: domain, agent, user, models)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        warnings.append(f"'run_info' is {_kind(value)}, expected an object; ignored")
        return {}
    info: dict[str, dict[str, Any]] = {}
    for key, (part, name) in _RUN_INFO.items():
        given = value.get(key)
        if given is None:
            continue
        if not (isinstance(given, str) and given):
            warnings.append(f"run_info.{key} is {_kind(given)}, expected a name; ignored")
            continue
        info.setdefault(part, {}).setdefault(name, given)
    return info


# What a per-task export's ``run_info`` may hold of the simulation's own recorded fields.
_RUN_INFO_SPEND = ("agent_cost", "user_cost", "duration")


def _run_info_spend(sim: dict[str, Any], value: Any, warnings: list[str]) -> None:
    """A per-task export's costs and duration kept in ``run_info``: they fill the simulation's own fields where
    it records none (a simulation's own value wins)."""
    if not isinstance(value, dict):
        return
    for key in _RUN_INFO_SPEND:
        given = value.get(key)
        if given is None or sim.get(key) is not None:
            continue
        if _num(given) is None or not math.isfinite(float(given)) or float(given) < 0:
            warnings.append(f"run_info.{key} is {_kind(given)}, expected a number ≥ 0; ignored")
            continue
        sim[key] = float(given)


def _lone(path: Path, layout: str, data: dict[str, Any], sim: dict[str, Any], wrapping: tuple[str, ...]) -> RunFile:
    """A file holding one simulation: a wrapper (``{task, simulation_run}``, ``{task_id, reward, simulation_run}``),
    a per-task export (``{task_id, task, run_info, reward_info, messages}``) or a lone simulation.

    The wrapper's ``task`` is the run's task; its ``task_id`` and the task's id name the simulation's task when the
    simulation does not; its ``reward`` is the recorded reward; ``run_info`` gives tau2's ``info``.
    """
    warnings: list[str] = []
    task = data.get("task")
    tasks = [task] if isinstance(task, dict) else []
    if task is not None and not tasks:
        warnings.append(f"'task' is {_kind(task)}, expected a task object; ignored")
    ids = [("task_id", sim.pop("task_id", None))]  # the simulation's own, then the wrapper's, then its task's
    if layout == "wrapper":
        ids.append(("task_id", data.get("task_id")))
    ids.append(("task.id", tasks[0].get("id") if tasks else None))
    stated = []
    for where, value in ids:
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            stated.append(str(value))
        elif value not in (None, ""):
            warnings.append(f"'{where}' is {_kind(value)}, expected an id; ignored")
    if stated:
        sim["task_id"] = stated[0]
    if tasks and sim.get("task_id") not in (None, "") and str(tasks[0].get("id")) != str(sim["task_id"]):
        warnings.append(f"its task is '{tasks[0].get('id')}' but its simulation names task '{sim['task_id']}'")
    if layout == "wrapper" or "reward" in data:
        _recorded_reward(sim, data.get("reward"), warnings)
    info = _run_info(data.get("run_info"), warnings)
    _run_info_spend(sim, data.get("run_info"), warnings)
    if layout == "wrapper":
        extra = {k: v for k, v in data.items() if k not in wrapping}
    else:  # a lone simulation keeps its fields; only the names of its run count as the file's
        extra = {k: data[k] for k in _NAMED_TOP if k in data}
    run = RunFile(path, layout, [sim], info, tasks, extra_top=_named_fields(extra, warnings))
    run.warnings.extend(warnings)
    return run


def _recorded_reward(sim: dict[str, Any], reward: Any, warnings: list[str]) -> None:
    """A wrapper's top-level ``reward`` is the recorded reward: it fills the simulation's ``reward_info.reward``
    (a different one there is named in a warning, and the wrapper's is kept)."""
    if reward is None:
        return
    if _num(reward) is None:
        warnings.append(f"top-level 'reward' is {_kind(reward)}, expected a number; ignored")
        return
    info = sim.get("reward_info")
    if info is not None and not isinstance(info, dict):
        return  # the simulation's own reward_info is unreadable: reading the simulation says so
    own = _num(info.get("reward")) if info else None
    if own is not None and own != float(reward):
        warnings.append(
            f"top-level reward {reward} differs from its simulation's reward_info.reward {own}; the top-level one is "
            "taken as recorded"
        )
    sim["reward_info"] = {**(info or {}), "reward": float(reward)}


def _open_dir(root: Path, meta_path: Path) -> RunFile:
    meta = read_json(meta_path)
    if not isinstance(meta, dict):
        raise RunFileError(meta_path, f"top level is {_kind(meta)}, expected a results object")
    sim_dir = root / "simulations"
    warnings: list[str] = []
    files = []
    for part in sorted(sim_dir.glob("*.json")) if sim_dir.is_dir() else []:
        kind = _kind_of(part)
        if not contained(sim_dir, part):
            warnings.append(f"simulations/{part.name} skipped: it leads outside the run's folder")
        elif kind == "regular":
            files.append(part)
        else:
            warnings.append(f"simulations/{part.name}: not a regular file ({kind}), skipped")
    sims = [read_json(f) for f in files]
    index = meta.get("simulation_index")
    if isinstance(index, list):
        listed = {str(row.get("id")) for row in index if isinstance(row, dict)}
        found = {id_from_filename(f.stem) for f in files}
        if listed - found:
            warnings.append(f"{len(listed - found)} simulation(s) in simulation_index have no file in simulations/")
        if found - listed:
            warnings.append(f"{len(found - listed)} file(s) in simulations/ are not in simulation_index")
    if isinstance(meta.get("simulations"), list):
        sims = list(meta["simulations"]) + sims
    extra = {k: v for k, v in meta.items() if k not in ("timestamp", "info", "tasks", "simulations", "format_version")}
    run = RunFile(
        meta_path,
        "dir",
        sims,
        _object(meta.get("info")),
        _array(meta.get("tasks")),
        timestamp=meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None,
        extra_top=extra,
    )
    run.warnings.extend(warnings)
    return run


# Readers of run formats that are not tau2 JSON, by file suffix (``model/inspect_log.py`` adds ".eval").
RUN_OPENERS: dict[str, Callable[[Path], RunFile]] = {}


def open_run(path: Path | str, on_progress: Callable[[RunFile], None] | None = None) -> RunFile:
    """Open one run file or run directory; raises ``RunFileError`` with a one-line reason.

    A large results file is indexed by streaming (``model.stream``): spans and index rows, not the parsed
    tree; ``on_progress(run)`` is then called while its ``entries`` grow (from this thread).
    """
    path = Path(path)
    if not path.exists():
        raise RunFileError(path, "does not exist")
    opener = RUN_OPENERS.get(path.suffix.lower()) if path.is_file() else None
    if opener is not None:
        return opener(path)
    if path.is_dir():
        meta = path / "results.json"
        if not meta.is_file():
            # a scan of a folder without any run file gives the folder back: say so, unless it looks like a run
            nothing = not (path / "simulations").is_dir() and scan_paths([path]).files == [path]
            raise RunFileError(path, "no run files found in it" if nothing else "is a directory without results.json")
        return _open_dir(path, meta)
    if path.name == "results.json" and (path.parent / "simulations").is_dir():
        return _open_dir(path.parent, path)
    streamed = _open_streamed(path, on_progress)
    if streamed is not None:
        return streamed
    data = read_json(path)
    if isinstance(data, dict):
        return _from_object(path, data)
    if isinstance(data, list):
        if looks_like_v1(data):
            return open_v1(path, data, RunFile)
        bad = next((i for i, s in enumerate(data) if not isinstance(s, dict)), None)
        if bad is not None:
            raise RunFileError(path, f"a list whose item #{bad} is {_kind(data[bad])}, expected simulation objects")
        if data and not any("messages" in s or "ticks" in s for s in data):
            raise RunFileError(path, "a list of objects that are not simulations (no 'messages')")
        return RunFile(path, "list", data, {}, [])
    raise RunFileError(path, f"top level is {_kind(data)}, expected a results object or a list of simulations")


def _open_streamed(path: Path, on_progress: Callable[[RunFile], None] | None) -> RunFile | None:
    """The streamed index of a large regular file (``model.stream``), or None to read it whole."""
    from tau_tui.model.stream import FileChanged, open_streamed, stream_threshold

    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size < stream_threshold() or info.st_size > max_read_bytes():
        return None
    try:
        return open_streamed(path, RunFile, _index_entry, on_progress)
    except FileChanged as exc:
        raise RunFileError(path, str(exc)) from None


def describe_empty(run: RunFile) -> str | None:
    """A note for runs that hold no simulation at all, or None."""
    if run.raw_sims or run.layout == SUBMISSION_LAYOUT:
        return None
    what = {"list": "an empty list of simulations", "dir": "a run folder with 0 simulations"}.get(
        run.layout, f"a results object with 0 simulations ({len(run.raw_tasks)} tasks defined)"
    )
    return f"{run.path}: an empty run: {what}"


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


def _dump_bytes(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


def new_output_path(folder: Path | str, kind: str, *parts: str, suffix: str = ".json", when: Any = None) -> Path:
    """The one naming rule for new results files, never an existing one (``unused_path``).

    ``<folder>/<YYYYmmdd_HHMMSS>_<kind>_<part>_…``; kind ``run`` is left out of the name
    (``<stamp>_<domain>_<agent>_<user>``, tau2's run name) and kind ``calibrate`` goes first
    (``calibrate_<stamp>_<domain>``). Each part is encoded (``name_part``), never a path.
    """
    from datetime import datetime

    stamp = f"{when or datetime.now():%Y%m%d_%H%M%S}"
    pieces = [name_part(str(p).replace("/", "-").replace(":", "-"), 60) for p in parts]
    if kind == "calibrate":
        head = [kind, stamp]
    elif kind == "run":
        head = [stamp]
    else:
        head = [stamp, name_part(kind, 20)]
    return unused_path(folder, "_".join(head + pieces), suffix)


def unused_path(folder: Path | str, stem: str, suffix: str) -> Path:
    """``<folder>/<stem><suffix>``, or ``<stem>_2``, ``_3``… when taken: a file we create never replaces one."""
    folder = Path(folder)
    path, n = folder / f"{stem}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}_{n}{suffix}"
    return path


# --- file names from identifiers --------------------------------------------------------------
# An id from a recording is data, never a path: it is percent-encoded into one file name.
_SAFE_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
MAX_NAME_LENGTH = 200  # bytes of an encoded name; file systems allow 255 with the suffix


def id_filename(identifier: str) -> str:
    """A file name for ``identifier``: every byte outside ``[A-Za-z0-9._-]`` (and a leading dot) as ``%XX``.

    Reversible (``id_from_filename``), never a path, a dot name or a hidden file. Raises ``ValueError``
    for an id that cannot be mapped (empty, or longer than ``MAX_NAME_LENGTH`` once encoded).
    """
    if not identifier:
        raise ValueError("an empty id cannot name a file")
    name = _encode(identifier)
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"id {identifier[:40]!r}… is too long to name a file ({len(name)} bytes encoded, at most {MAX_NAME_LENGTH})"
        )
    return name


def _encode(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        if char in _SAFE_NAME_CHARS and not (i == 0 and char == "."):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def name_part(text: str, limit: int = 40) -> str:
    """A piece of a new file's name taken from ``text`` (an id, a task, a model): encoded as ``id_filename``
    does, cut at ``limit`` (not reversible; for names like ``<stamp>_fork_<file>_<sim>``)."""
    return _encode(text)[:limit] or "_"


def id_from_filename(name: str) -> str:
    """The id ``id_filename`` encoded into ``name`` (a file stem)."""
    return urllib.parse.unquote(name, errors="surrogatepass")


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def within(root: Path, path: Path) -> bool:
    """Whether ``path``, every link resolved, stays under the resolved folder ``root`` (a link loop: no)."""
    resolved = _resolved(path)
    return resolved is not None and resolved.is_relative_to(root)


def contained(folder: Path, path: Path) -> bool:
    """Whether ``path``, symlinks resolved, is a direct child of ``folder`` (resolved too)."""
    try:
        return path.resolve().parent == folder.resolve()
    except (OSError, RuntimeError):
        return False


def id_file(folder: Path | str, identifier: str, suffix: str = ".json") -> Path:
    """``<folder>/<id_filename(identifier)><suffix>``, checked to stay inside ``folder``.

    Raises ``WriteError`` naming the folder for an id that cannot be mapped or a name that leads outside
    (a symlink planted in the folder).
    """
    folder = Path(folder)
    try:
        path = folder / f"{id_filename(identifier)}{suffix}"
    except ValueError as exc:
        raise WriteError(folder, str(exc)) from None
    if folder.exists() and not contained(folder, path):
        raise WriteError(path, f"leads outside {folder} (a link?); refused")
    return path


# --- writing ------------------------------------------------------------------------------------------
class WriteError(OSError):
    """A file that cannot be written; ``str()`` is one line naming the file and the cause.

    Raised only after cleaning up: no temporary file is left, and the old file, if any, is untouched.
    """

    def __init__(self, path: Path | str, cause: str, code: int = 0):
        super().__init__(code, cause)
        self.path = Path(path)
        self.cause = cause

    def __str__(self) -> str:
        return f"{self.path}: {self.cause}"


_CAUSES = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a folder on its path is not a folder",
}


def _cause(exc: OSError) -> str:
    known = _CAUSES.get(exc.errno) if exc.errno is not None else None
    return known or str(exc.strerror or exc).lower()


# The error classes of libraries that write files themselves (duckdb's; pyarrow's ArrowIOError is an OSError).
LIBRARY_IO_ERRORS = frozenset({"IOException", "PermissionException"})
_LIBRARY_PREFIX = re.compile(r"^[A-Za-z ]*Error: ")


def library_write_error(path: Path | str, exc: BaseException) -> WriteError | None:
    """The ``WriteError`` line for a failure of a library writing ``path`` itself, or None when ``exc`` is
    no I/O failure.

    An ``OSError`` keeps its errno. A library's own exception (duckdb's ``IOException`` on a read-only
    folder, its ``TransactionException`` "Failed to commit: … No space left on device") is one when its
    class is an I/O error or its message names an operating-system cause; the cause is then said as for
    our own writes.
    """
    if isinstance(exc, WriteError):
        return exc
    if isinstance(exc, OSError):
        return WriteError(path, _cause(exc), exc.errno or 0)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = message.lower()
    for code, cause in _CAUSES.items():
        if os.strerror(code).lower() in lowered:
            return WriteError(path, cause, code)
    if type(exc).__name__ in LIBRARY_IO_ERRORS:
        said = _LIBRARY_PREFIX.sub("", message)
        return WriteError(path, said[:1].lower() + said[1:])
    return None


def check_regular(path: Path) -> None:
    """Refuse (``WriteError``) a target that exists and is not a regular file; writing would replace it."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (a folder on its path that is a file is reported by ``make_folder``)
    except OSError as exc:
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    if not stat.S_ISREG(mode):
        kind = file_kind(mode)
        raise WriteError(path, "is a directory" if kind == "directory" else f"not a regular file ({kind})")


def make_folder(folder: Path, for_path: Path) -> None:
    """``mkdir -p folder``; a failure is a ``WriteError`` naming ``for_path``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        raise WriteError(for_path, f"cannot create its folder: {blocker} is not a folder") from None
    except OSError as exc:
        raise WriteError(for_path, f"cannot create its folder {folder}: {_cause(exc)}", exc.errno or 0) from None


def check_no_credentials(path: Path, payload: bytes) -> None:
    """Refuse (``WriteError``) a payload that holds the value of one of the environment's credential
    variables. Values are scrubbed before they are encoded (``model.secrets.redact``); encoded bytes are
    never edited, as that would corrupt them, so one that still holds a key is not written at all."""
    leaked = leaked_credentials(payload)
    if leaked:
        raise WriteError(path, f"would hold the value of the credential variable {leaked[0]}; not written")


def write_atomic(path: Path | str, payload: bytes, *, replace: bool = True) -> None:
    """Write ``payload`` to ``path`` so readers see the old or the new file, never half.

    A temporary file in the same folder is written, flushed to disk and renamed over ``path``
    (permissions of an existing file kept). Any failure (read-only folder, full disk, ``path`` a
    directory or a FIFO...) raises ``WriteError`` with the temporary file removed and the old file
    intact, as does a payload that holds an environment credential (``check_no_credentials``).
    With ``replace=False`` the file must be new: it is linked into place, which fails (``WriteError``
    with ``errno.EEXIST``) when another writer created ``path`` in the meantime, so a file someone
    else made is never replaced.
    """
    path = Path(path)
    check_no_credentials(path, payload)
    check_regular(path)
    make_folder(path.parent, path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    try:
        os.fchmod(fd, _file_mode(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(
            path, "already exists (made by another writer meanwhile); not replaced", errno.EEXIST
        ) from None
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _link_new(tmp: str, path: Path) -> None:
    """Put ``tmp`` at ``path`` only if nothing is there (a hard link cannot replace), then drop ``tmp``."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: reserve the name, then rename over the reservation
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def write_new(folder: Path | str, stem: str, suffix: str, payload: bytes) -> Path:
    """Write ``payload`` to a new file ``<folder>/<stem><suffix>`` (or ``_2``, ``_3``… when taken) and
    return it; two writers at the same moment get two files, never one replacing the other."""
    for _ in range(1000):
        path = unused_path(folder, stem, suffix)
        try:
            write_atomic(path, payload, replace=False)
        except WriteError as exc:
            if exc.errno == errno.EEXIST:
                continue  # taken between the look and the write: the next name
            raise
        return path
    raise WriteError(Path(folder) / f"{stem}{suffix}", "no free name")


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def file_lock(path: Path | str, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive advisory lock for the writers of ``path`` (read-merge-replace, a whole run).

    The lock is ``flock`` on ``<path>.lock`` beside it, not on ``path`` itself: ``write_atomic``
    replaces ``path`` by a new file, and a lock on the old one would not exclude a writer that opened
    the new one. The holder removes the lock file before releasing it; a waiter that then gets the lock
    on the removed file sees it is gone and locks the new one. Without ``wait`` a held lock raises
    ``WriteError`` at once. Where ``fcntl`` is missing (Windows) writes stay atomic but are not locked.
    """
    path = Path(path)
    lock = path.with_name(path.name + ".lock")
    if fcntl is None:
        yield
        return
    make_folder(lock.parent, path)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise WriteError(lock, f"cannot lock: {_cause(exc)}", exc.errno or 0) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise WriteError(path, f"is being written by another process (locked by {lock.name})") from None
        except OSError as exc:
            os.close(fd)
            raise WriteError(lock, f"cannot lock: {_cause(exc)}", exc.errno or 0) from None
        try:
            held, current = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder before us removed this lock file: lock the new one
    try:
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)


def _file_mode(path: Path) -> int:
    """Keep an existing file's permissions; new files get the usual 0666 minus the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def results_to_dict(results: Results) -> dict[str, Any]:
    return results.model_dump(mode="json")


def save_results(results: Results | dict[str, Any], path: Path | str) -> None:
    """Save in the standard results-object layout, atomically, the environment's credentials blanked."""
    data = results if isinstance(results, dict) else results_to_dict(results)
    write_atomic(path, _dump_bytes(redact(data, environment_secrets())))
