"""One loaded run, ``RunFile``: its metadata, its tasks and a light index of its simulations (``SimEntry`` rows
read from raw JSON); the pydantic models of a simulation are built only when it is opened.

What a file leaves out (its domain, a simulation's task id, trial or termination) is worked out one layer up,
where the domain registry is (``tau_tui.recording_gaps``), and handed back as a ``RunResolution`` (``RunFile.resolve``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import ValidationError

from tau_tui.model.duplex import TICKS, graded_from, tick_messages
from tau_tui.model.io.reading import RunFileError, _kind, _object
from tau_tui.model.results import Results, RunInfo, SimulationRun, is_silent_raw, placeholder_reward
from tau_tui.model.tasks import Task


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
    """What was worked out for a run one layer up (``tau_tui.recording_gaps``, where the domain registry is).

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
        """Take what was worked out for this run (``tau_tui.recording_gaps``): the domain of a file that names none and
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


# The layout of a ``{task_results: [...]}`` file and its key (``layouts._task_results`` reads it; a folder scan
# takes a file holding it for a run).
TASK_RESULTS = "task_results"


# Readers of run formats that are not tau2 JSON, by file suffix (``model/inspect_log.py`` adds ".eval").
RUN_OPENERS: dict[str, Callable[[Path], RunFile]] = {}
