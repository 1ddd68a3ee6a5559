"""Inspect logs of inspect-evals' tau2 port (``tau2_airline``, ``tau2_retail``, ``tau2_telecom``, ``tau2_banking``).

An Inspect ``.eval`` log holds one sample per task and epoch. The port runs the user simulator as the
sample's own conversation and keeps the customer-service agent's side in the sample's store
(``StoredAgentState:<instance>:trajectory``: every message either side generated, and the tool results,
in order, each with the participant that produced it). The final DB of the agent's tools is in the store
too (``<Tools class>:<instance>:db``), and the task (tau2's task definition) in the sample's metadata.

Each sample becomes one tau2 simulation: the trajectory as tau2 messages (the user simulator's tool calls
keep requestor ``user``), the score as the recorded reward (C → 1, I → 0), the termination from how the
user ended (``###STOP###`` and the like → ``user_stop``; a sample error → ``infrastructure_error``;
otherwise ``max_steps``). The log's final DB goes into the simulation's ``info`` (``inspect.final_db``,
``inspect.final_user_db``), where ``analysis`` checks it against the DB our replay ends with.

The log is read with ``inspect_ai``'s own reader (the optional extra ``inspect``); without it, opening a
``.eval`` file is a one-line error. Opening registers with ``model.io.RUN_OPENERS`` (suffix ``.eval``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau_tui.model.io import MAX_READ_SETTING, RUN_OPENERS, RunFile, RunFileError, max_read_bytes

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

EXTRA_HINT = "an Inspect log: install the optional extra 'inspect' (pip install 'tau-tui[inspect]') to read it"
STOP_MARKS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
DOMAINS = {
    "tau2_airline": "airline",
    "tau2_retail": "retail",
    "tau2_telecom": "telecom",
    "tau2_banking": "banking_knowledge",
}
SCORE_VALUES = {"C": 1.0, "I": 0.0}


def domain_of_task(task_name: str) -> str | None:
    """``inspect_evals/tau2_retail`` → ``retail`` (None for a task that is not a tau2 port)."""
    return DOMAINS.get(task_name.rsplit("/", 1)[-1])


def _text(content: Any) -> str | None:
    """A chat message's text: a string, or the text parts of a content list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _tool_calls(message: dict[str, Any], requestor: str) -> list[dict[str, Any]] | None:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    out = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        arguments = call.get("arguments")
        out.append(
            {
                "id": str(call.get("id") or ""),
                "name": str(call.get("function") or ""),
                "arguments": arguments if isinstance(arguments, dict) else {},
                "requestor": requestor,
            }
        )
    return out or None


def convert_trajectory(trajectory: list[Any]) -> list[dict[str, Any]]:
    """The port's stored trajectory as tau2 messages (``turn_idx`` 0..n-1)."""
    messages: list[dict[str, Any]] = []
    for item in trajectory:
        if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
            continue
        who = "user" if item.get("role") == "user" else "assistant"
        message = item["message"]
        role = message.get("role")
        if role == "tool":
            error = message.get("error")
            messages.append(
                {
                    "role": "tool",
                    "id": str(message.get("tool_call_id") or ""),
                    "content": _text(message.get("content")) or "",
                    "requestor": who,
                    "error": bool(error),
                }
            )
        elif role == "assistant":  # what the participant ``who`` generated
            messages.append(
                {"role": who, "content": _text(message.get("content")), "tool_calls": _tool_calls(message, who)}
            )
    for i, message in enumerate(messages):
        message["turn_idx"] = i
    return messages


def _store_part(store: dict[str, Any], suffix: str, skip: str = "expected_db_") -> list[tuple[str, Any]]:
    return [(k, v) for k, v in store.items() if k.endswith(suffix) and skip not in k]


def _score(scores: Any) -> tuple[float | None, dict[str, Any]]:
    if not isinstance(scores, dict) or not scores:
        return None, {}
    name, score = next(iter(scores.items()))
    value = getattr(score, "value", None)
    reward = (
        SCORE_VALUES.get(value)
        if isinstance(value, str)
        else (float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
    )
    return reward, {"scorer": name, "value": value, "explanation": getattr(score, "explanation", None)}


def _termination(messages: list[dict[str, Any]], error: Any) -> str:
    if error is not None:
        return "infrastructure_error"
    for message in reversed(messages):
        if message["role"] == "user" and message.get("content"):
            return "user_stop" if any(mark in message["content"] for mark in STOP_MARKS) else "max_steps"
    return "max_steps"


def sample_simulation(path: Path, sample: EvalSample) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(raw tau2 simulation, raw task) of one Inspect sample."""
    metadata = sample.metadata if isinstance(sample.metadata, dict) else {}
    instance = metadata.get("instance")
    store = sample.store if isinstance(sample.store, dict) else {}
    trajectory = store.get(f"StoredAgentState:{instance}:trajectory") if isinstance(instance, str) else None
    if not isinstance(trajectory, list):
        found = _store_part(store, ":trajectory")
        trajectory = found[0][1] if found and isinstance(found[0][1], list) else []
    messages = convert_trajectory(trajectory)
    reward, score = _score(sample.scores)
    dbs = [(k, v) for k, v in _store_part(store, ":db") if isinstance(v, dict)]
    agent_dbs = [v for k, v in dbs if "User" not in k.split(":", 1)[0]]
    user_dbs = [v for k, v in dbs if "User" in k.split(":", 1)[0]]
    task = metadata.get("task") if isinstance(metadata.get("task"), dict) else None
    error = getattr(sample, "error", None)
    epoch = sample.epoch if isinstance(sample.epoch, int) else 1
    sim = {
        "id": f"{sample.id}#{epoch}",
        "task_id": str(task.get("id") if task and task.get("id") is not None else sample.id),
        "trial": epoch - 1,
        "termination_reason": _termination(messages, error),
        "duration": sample.total_time,
        "messages": messages,
        "reward_info": {"reward": reward, "info": {"inspect_score": score}} if reward is not None else None,
        "info": {
            "inspect": {
                "log": str(path),
                "sample_id": sample.id,
                "epoch": epoch,
                "final_db": agent_dbs[0] if len(agent_dbs) == 1 else None,
                "final_user_db": user_dbs[0] if len(user_dbs) == 1 else None,
            },
            **({"error": getattr(error, "message", str(error))} if error is not None else {}),
        },
    }
    return sim, task


INFLATE_CHUNK = 1024**2


def check_inflated_size(path: Path) -> None:
    """Refuse an ``.eval`` log (a zip) that inflates to more than the read limit, before its reader holds it in
    memory: the sizes its members declare, summed, and then what they really inflate to, counted chunk by
    chunk (a declared size can lie); ``RunFileError`` in one line."""
    import zipfile

    limit = max_read_bytes()
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            declared = sum(member.file_size for member in members)
            if declared > limit:
                raise RunFileError(
                    path,
                    f"inflates to {declared:,} bytes, more than the {limit:,}-byte read limit "
                    f"(raise it with {MAX_READ_SETTING})",
                )
            total = 0
            for member in members:
                with archive.open(member) as data:
                    while chunk := data.read(INFLATE_CHUNK):
                        total += len(chunk)
                        if total > limit:
                            raise RunFileError(
                                path,
                                f"inflates to more than the {limit:,}-byte read limit "
                                f"(raise it with {MAX_READ_SETTING})",
                            )
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise RunFileError(path, f"not a readable Inspect log ({type(exc).__name__}: {str(exc)[:200]})") from None


def open_inspect_log(path: Path) -> RunFile:
    """An Inspect ``.eval`` log of a tau2 task as a run; ``RunFileError`` (one line) when it cannot be read."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise RunFileError(path, EXTRA_HINT) from None
    check_inflated_size(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any failure of the reader is this file's problem, on one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunFileError(path, f"not a readable Inspect log ({type(exc).__name__}: {first[:200]})") from None
    task_name = log.eval.task or ""
    domain = domain_of_task(task_name)
    if domain is None:
        raise RunFileError(
            path,
            f"an Inspect log of {task_name or 'an unnamed task'}, not of a tau2 task ({', '.join(sorted(DOMAINS))})",
        )
    sims: list[dict[str, Any]] = []
    tasks: dict[str, dict[str, Any]] = {}
    for sample in log.samples or []:
        sim, task = sample_simulation(path, sample)
        sims.append(sim)
        if task is not None:
            tasks.setdefault(str(task.get("id")), task)
    roles = log.eval.model_roles or {}
    user = roles.get("user")
    info = {
        "num_trials": log.eval.config.epochs if log.eval.config and log.eval.config.epochs else 1,
        "agent_info": {"implementation": "inspect_evals", "llm": log.eval.model},
        "user_info": {
            "implementation": "inspect_evals_user_simulator",
            "llm": getattr(user, "model", None) or log.eval.model,
        },
        "environment_info": {"domain_name": domain},
        "inspect": {"task": task_name, "status": log.status, "task_args": log.eval.task_args},
    }
    run = RunFile(path, "inspect", sims, info, list(tasks.values()), timestamp=log.eval.created)
    if log.status != "success":
        run.warnings.append(f"the Inspect run ended with status {log.status}")
    if not sims:
        run.warnings.append("the log holds no samples (a header-only log)")
    return run


RUN_OPENERS[".eval"] = open_inspect_log
