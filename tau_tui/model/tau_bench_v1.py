"""tau-bench v1 result lists, opened read-only as runs: the conversation, the recorded reward and its info.

tau-bench v1 (``sierra-research/tau-bench``, ``run.py``) saves a JSON list of ``EnvRunResult`` records:
``{task_id (int), reward, info, traj, trial}``. ``traj`` holds the agent's OpenAI-style chat messages
(``system``, ``user``, ``assistant`` with ``tool_calls[{id, type, function{name, arguments (JSON text)}}]``,
``tool`` with ``tool_call_id`` and ``name``); ``info`` holds the task (``user_id``, ``actions[{name, kwargs}]``,
``instruction``, ``outputs``), ``source``, ``user_cost`` and ``reward_info`` (``reward``, ``info`` with
``r_actions`` and ``gt_data_hash`` when the task has no outputs, else ``r_outputs`` and ``outputs``, and the
expected ``actions``). A run that raised keeps ``info = {error, traceback}`` and an empty ``traj``.

v1's environments and data are not tau2's, so such a run is never replayed or re-scored: each record becomes a
tau2-shaped simulation (messages, recorded reward, the v1 reward info) and the run is ``recorded_only``. How the
episode ended is not recorded; it is read from the trajectory by v1's own rules (the user's ``###STOP###``, a
terminating ``transfer_to_human_agents`` call, else the step limit). v1 has two domains, airline and retail,
whose tool sets tell them apart; the file name decides when the tools do not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, TypeVar

import orjson

R = TypeVar("R")

FORMAT = "tau-bench-v1"
RECORDED_ONLY = "shown as recorded (conversation, reward and its info); tau-tui replays and re-scores tau2 runs only"
STOP = "###STOP###"
TERMINATING_TOOL = "transfer_to_human_agents"
ERROR_PREFIXES = ("Error:", "Unknown action ")  # what v1's environment answers for a failed or unknown tool
RESPOND = "respond"  # v1's pseudo-action for a text reply: never a tool call
# v1's tools per domain (tau_bench/envs/<domain>/tools); calculate, think, get_user_details and the transfer are
# in both and decide nothing.
DOMAIN_TOOLS = {
    "airline": frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "get_reservation_details",
            "list_all_airports",
            "search_direct_flight",
            "search_onestop_flight",
            "send_certificate",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
        }
    ),
    "retail": frozenset(
        {
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "list_all_product_types",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "return_delivered_order_items",
        }
    ),
}
# v1's checkpoint name (run.py): <strategy>-<model>-<temperature>_range_<start>-<end>_user-<user model>-<strategy>_<time>
RUN_NAME = re.compile(
    r"^(?P<strategy>tool-calling|act|react|few-shot)-(?P<model>.+)-(?P<temperature>\d+(?:\.\d+)?)"
    r"_range_-?\d+--?\d+_user-(?P<user>.+)-(?P<user_strategy>llm|react|verify|reflection)_\d+$"
)


def looks_like_v1(items: list[Any]) -> bool:
    """A list whose first item is a v1 record (``task_id`` and ``traj``, no tau2 ``messages``)."""
    first = items[0] if items else None
    return isinstance(first, dict) and "traj" in first and "task_id" in first and "messages" not in first


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _arguments(text: Any) -> Any:
    """A v1 call's arguments: the JSON text parsed, or kept as it is when it is not a JSON object."""
    if not isinstance(text, str):
        return text if isinstance(text, dict) else {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


class _Ids:
    """Tool-call ids made unique within one trajectory (v1 agents reuse ids; tau2 pairs results by id)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def fresh(self, raw: Any, position: int) -> str:
        base = str(raw) if raw not in (None, "") else f"call_{position}"
        n = self.seen.get(base, 0) + 1
        self.seen[base] = n
        return base if n == 1 else f"{base}~{n}"


def _messages(traj: list[Any]) -> list[Any]:
    """v1's chat messages in tau2's shape: tool calls with parsed arguments, each result paired by position."""
    ids = _Ids()
    out: list[Any] = []
    pending: list[str] = []  # ids of the last call message's calls, in order, for the results after it
    for position, raw in enumerate(traj):
        if not isinstance(raw, dict):
            out.append(raw)  # parse_message turns it into a finding-bearing message
            continue
        role = raw.get("role")
        content = raw.get("content")
        if role == "tool":
            call_id = pending.pop(0) if pending else ids.fresh(raw.get("tool_call_id"), position)
            text = content if isinstance(content, str) else "" if content is None else str(content)
            out.append(
                {
                    "role": "tool",
                    "id": call_id,
                    "content": text,
                    "requestor": "assistant",
                    "error": text.startswith(ERROR_PREFIXES),
                }
            )
            continue
        message: dict[str, Any] = {"role": role, "content": content}
        calls = [c for c in _list(raw.get("tool_calls")) if isinstance(c, dict)]
        if role == "assistant" and calls:
            message["tool_calls"] = []
            pending = []
            for call in calls:
                function = _object(call.get("function"))
                call_id = ids.fresh(call.get("id"), position)
                pending.append(call_id)
                message["tool_calls"].append(
                    {
                        "id": call_id,
                        "name": str(function.get("name") or ""),
                        "arguments": _arguments(function.get("arguments")),
                        "requestor": "assistant",
                    }
                )
        out.append(message)
    return out


def _termination(traj: list[Any], error: Any) -> str | None:
    """How the episode ended, by v1's rules: the user's stop, a terminating tool, else the step limit."""
    if not traj:
        return None
    last = traj[-1] if isinstance(traj[-1], dict) else {}
    if last.get("role") == "user" and STOP in str(last.get("content") or ""):
        return "user_stop"
    if last.get("role") == "tool" and last.get("name") == TERMINATING_TOOL:
        return "agent_stop"
    return "max_steps"


def _reward_info(record: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded reward in tau2's shape, v1's own reward fields kept under ``info``."""
    reward = _number(record.get("reward"))
    v1 = _object(_object(record.get("info")).get("reward_info"))
    detail = _object(v1.get("info"))
    out: dict[str, Any] = {"reward": reward, "info": {"source": FORMAT, **detail}}
    if "r_actions" in detail:
        out["db_check"] = {"db_match": _number(detail["r_actions"]) == 1.0, "db_reward": _number(detail["r_actions"])}
    outputs = _object(detail.get("outputs"))
    if outputs:
        out["communicate_checks"] = [
            {"info": str(text), "met": bool(met), "justification": None} for text, met in outputs.items()
        ]
    return out if reward is not None or detail else None


def _simulation(index: int, record: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    info = _object(record.get("info"))
    traj = _list(record.get("traj"))
    task_id = record.get("task_id")
    trial = record.get("trial") if isinstance(record.get("trial"), int) else None
    sim_id = f"v1-task-{task_id}-trial-{trial if trial is not None else '?'}"
    if sim_id in taken:
        sim_id = f"{sim_id}-#{index}"
    taken.add(sim_id)
    sim: dict[str, Any] = {
        "id": sim_id,
        "task_id": "" if task_id is None else str(task_id),
        "trial": trial,
        "termination_reason": _termination(traj, info.get("error")),
        "user_cost": _number(info.get("user_cost")),
        "reward_info": _reward_info(record),
        "messages": _messages(traj),
    }
    if info.get("error"):
        sim["info"] = {
            "error": str(info["error"]),
            "error_type": "tau-bench v1 run error",
            "error_traceback": info.get("traceback"),
        }
    return sim


def _task(task_id: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A v1 task as a tau2 task, for the Task tab: the instruction, the expected actions and outputs."""
    actions = [
        {"action_id": f"{task_id}_{n}", "name": str(a.get("name")), "arguments": _object(a.get("kwargs"))}
        for n, a in enumerate(a for a in _list(raw.get("actions")) if isinstance(a, dict))
        if a.get("name") != RESPOND
    ]
    user_id = raw.get("user_id")
    return {
        "id": task_id,
        "description": {"notes": f"tau-bench v1 task{f' (user {user_id})' if user_id else ''}"},
        "user_scenario": {"instructions": str(raw.get("instruction") or "")},
        "evaluation_criteria": {
            "actions": actions,
            "communicate_info": [str(o) for o in _list(raw.get("outputs"))],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    }


def _tools_used(records: list[dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for record in records:
        for message in _list(record.get("traj")):
            for call in _list(_object(message).get("tool_calls")):
                names.add(str(_object(_object(call).get("function")).get("name")))
        task = _object(_object(record.get("info")).get("task"))
        names.update(str(_object(a).get("name")) for a in _list(task.get("actions")))
    return names


def infer_domain(records: list[dict[str, Any]], path: Path) -> tuple[str | None, str]:
    """(domain or None, what decided it): v1's tool sets, else the file name."""
    used = _tools_used(records)
    hits = {domain: sorted(used & tools) for domain, tools in DOMAIN_TOOLS.items()}
    found = [domain for domain, tools in hits.items() if tools]
    if len(found) == 1:
        tools = hits[found[0]]
        more = f" and {len(tools) - 2} more" if len(tools) > 2 else ""
        return found[0], f"domain {found[0]} (from the tools it calls: {', '.join(tools[:2])}{more})"
    named = [domain for domain in DOMAIN_TOOLS if domain in path.name.lower()]
    if len(named) == 1:
        why = "its tools are both domains'" if found else "it calls no domain's own tool"
        return named[0], f"domain {named[0]} (from the file name: {why})"
    candidates = " or ".join(found or list(DOMAIN_TOOLS))
    return None, f"domain unknown ({candidates}: neither its tools nor the file name decide)"


def _run_info(records: list[dict[str, Any]], path: Path, domain: str | None) -> dict[str, Any]:
    trials = {r.get("trial") for r in records if isinstance(r.get("trial"), int)}
    info: dict[str, Any] = {
        "num_trials": len(trials) or None,
        "environment_info": {"domain_name": domain},
        "agent_info": {"implementation": FORMAT},
        "user_info": {"implementation": FORMAT},
    }
    named = RUN_NAME.match(path.stem)
    if named:
        info["agent_info"] = {
            "implementation": f"{FORMAT} {named['strategy']}",
            "llm": named["model"],
            "llm_args": {"temperature": float(named["temperature"])},
        }
        info["user_info"] = {"implementation": f"{FORMAT} {named['user_strategy']}", "llm": named["user"]}
    return info


def open_v1(path: Path, records: list[Any], run_file: Callable[..., R]) -> R:
    """The recorded-only run of a v1 result list (``run_file``: ``io.RunFile``, which imports this module).

    An item that is not an object is a problem line on its index row (``io``'s indexer), never an exception.
    """
    usable = [r for r in records if isinstance(r, dict)]
    domain, decided = infer_domain(usable, path)
    taken: set[str] = set()
    sims = [_simulation(i, r, taken) if isinstance(r, dict) else r for i, r in enumerate(records)]
    tasks: dict[str, dict[str, Any]] = {}
    for record in usable:
        task = _object(_object(record.get("info")).get("task"))
        task_id = "" if record.get("task_id") is None else str(record.get("task_id"))
        if task and task_id not in tasks:
            tasks[task_id] = _task(task_id, task)
    reason = f"tau-bench v1 results, {decided}: {RECORDED_ONLY}"
    return run_file(path, FORMAT, sims, _run_info(usable, path, domain), list(tasks.values()), recorded_only=reason)
