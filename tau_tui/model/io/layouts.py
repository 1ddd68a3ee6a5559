"""Every tau2 layout ``open_run`` reads, each built into a ``RunFile``.

Layouts read:
  * results object ``{timestamp, info, tasks, simulations}`` (tau2's json format),
  * directory layout: ``results.json`` (metadata, optional ``simulation_index``)
    plus ``simulations/<id>.json``,
  * a bare JSON list of simulations,
  * tau-bench v1 result lists, read-only (``model/tau_bench_v1.py``),
  * single-simulation wrappers: ``{task, simulation_run}`` (``{task_id, reward, simulation_run}``, ``{_about, …}``),
    a lone simulation object (a ``tau2 view`` note's ``*_simulation.json``), and a per-task export
    ``{task_id, task, run_info, reward_info, messages}``; every field read tolerantly (a wrong one is a warning),
  * a harness's ``{task_results: [...]}`` rows, and a leaderboard ``submission.json`` alone (its claims only);
    other formats by file suffix (``RUN_OPENERS``).

Opening a file parses JSON and builds a light index of its simulations (a large one is indexed by streaming,
``model.stream``).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any, Callable

from tau_tui.model.io.names import contained, id_from_filename
from tau_tui.model.io.paths import TRAJECTORIES_DIR, scan_paths
from tau_tui.model.io.reading import RunFileError, _kind, _object, file_kind, max_read_bytes, read_json
from tau_tui.model.io.runfile import RUN_OPENERS, TASK_RESULTS, RunFile, _index_entry, _num
from tau_tui.model.tau_bench_v1 import looks_like_v1, open_v1


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
_TRAJECTORY = "trajectory"
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


def _array(value: Any) -> list[Any]:
    """A JSON array as read, or an empty one for anything else."""
    return value if isinstance(value, list) else []


def _kind_of(path: Path) -> str:
    try:
        return file_kind(os.stat(path).st_mode)
    except OSError:
        return "regular"  # gone or unreadable: the read that follows says which


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
