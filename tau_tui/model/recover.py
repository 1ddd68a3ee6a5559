"""What a recording leaves out, recovered from what it holds: pure functions on raw simulations.

* **The domain**, from the tools it calls: ``tool_calls`` counts them, ``match_domain`` finds the one domain
  whose tools they are (tau2's domains share only generic tools such as ``transfer_to_human_agents``) against
  an index of each domain's tools, which the caller builds from the domain registry (``model/`` imports none).
* **Task ids, trials and terminations** of old uploads (a leaderboard's first upload held only
  ``{id, reward_info, messages}``): ``recover_simulations`` takes a task from the recorded action checks
  (their ``action_id`` set is the task's; ``<task>_<n>`` names it), else from the scenario the first user
  message matches; numbers trials by order; and reads a termination from the stop token that ended the
  conversation. Each recovered field says how (``Recovered.how``), and so does each that was not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from tau_tui.model.duplex import tick_messages
from tau_tui.model.io import Recovered, SimEntry
from tau_tui.model.tasks import Task

SCAN_SIMULATIONS = 50  # simulations whose tool calls are counted to tell a file's domain


def messages_of(raw: Any) -> list[Any]:
    """A raw simulation's messages (a full-duplex one's flattened from its ticks); nothing for anything else."""
    if not isinstance(raw, dict):
        return []
    messages = raw.get("messages")
    if isinstance(messages, list):
        return messages
    ticks = raw.get("ticks")
    return tick_messages(ticks) if isinstance(ticks, list) else []


def tool_calls(raws: Sequence[Any], limit: int = SCAN_SIMULATIONS) -> Counter[str]:
    """How often each tool is called in the first ``limit`` simulations (one that cannot be read is passed over)."""
    counts: Counter[str] = Counter()
    for index in range(min(len(raws), limit)):
        try:
            raw = raws[index]
        except (OSError, ValueError):  # a streamed file's span that no longer reads: its replay says so
            continue
        for message in messages_of(raw):
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            for call in calls if isinstance(calls, list) else []:
                name = call.get("name") if isinstance(call, dict) else None
                if isinstance(name, str) and name:
                    counts[name] += 1
    return counts


def checked_tools(raws: Sequence[Any], limit: int = SCAN_SIMULATIONS) -> Counter[str]:
    """How often each tool is named by the recorded action checks (``reward_info.action_checks[].action``) of
    the first ``limit`` simulations: the gold actions, which name the domain's tools though the agent called
    none (a voice note where it never acted)."""
    counts: Counter[str] = Counter()
    for index in range(min(len(raws), limit)):
        try:
            raw = raws[index]
        except (OSError, ValueError):
            continue
        info = raw.get("reward_info") if isinstance(raw, dict) else None
        checks = info.get("action_checks") if isinstance(info, dict) else None
        for check in checks if isinstance(checks, list) else []:
            action = check.get("action") if isinstance(check, dict) else None
            name = action.get("name") if isinstance(action, dict) else None
            if isinstance(name, str) and name:
                counts[name] += 1
    return counts


@dataclass(frozen=True)
class DomainMatch:
    """Which domain a recording's tool calls belong to.

    ``domain``: the one domain whose tools most of the calls are (None: no domain has them, or several alike);
    ``deciding``: the tools called that only it has (or, when each is shared, those it has all of);
    ``candidates``: the domains tied, when none decided; ``unknown``: tools called that no domain has.
    """

    domain: str | None
    deciding: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    calls: int = 0


def match_domain(calls: Counter[str], index: Mapping[str, frozenset[str]]) -> DomainMatch:
    """The domain of ``index`` (name → its tools) that holds the most of ``calls``; ties decide nothing."""
    unknown = tuple(sorted(name for name in calls if not any(name in tools for tools in index.values())))
    total = sum(calls.values())
    scores = {domain: sum(n for name, n in calls.items() if name in tools) for domain, tools in index.items()}
    best = max(scores.values(), default=0)
    if best == 0:
        return DomainMatch(None, unknown=unknown, calls=total)
    top = sorted(domain for domain, score in scores.items() if score == best)
    if len(top) > 1:
        return DomainMatch(None, candidates=tuple(top), unknown=unknown, calls=total)
    domain = top[0]
    others = frozenset().union(*(tools for name, tools in index.items() if name != domain))
    held = sorted(name for name in calls if name in index[domain])
    deciding = tuple(name for name in held if name not in others) or tuple(held)
    return DomainMatch(domain, deciding=deciding, unknown=unknown, calls=total)


# --- task ids, trials, terminations -----------------------------------------------------------------------
# The stop tokens tau2's participants end a conversation with (user simulator: stop, transfer, out of scope).
USER_STOPS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
AGENT_STOP = "###STOP###"
_ID = re.compile(r"[a-z0-9][a-z0-9_@.#-]*[a-z0-9]")  # ids as written: mei_kovacs_8020, #w2378156, a@b.com
_WORD = re.compile(r"[a-z0-9]+")  # and their parts: mei, kovacs, 8020
_ACTION_NUMBER = re.compile(r"_\d+$")
CLEAR_LEAD = 1.25  # a scenario match counts when it scores this much more than the next task
RARE_IN, RARE_WORDS = 2, 3  # so many words of at most so many tasks' scenarios identify one (or one number)
# How a recovered field begins its ``how`` phrase: what ``summary`` counts by.
BY_ACTIONS, BY_SCENARIO, TASK_LOST = "from its action checks", "the scenario", "task not recovered"
TERMINATION_LOST, TRIAL_BY_ORDER = "termination not recovered", "by its order in the file"


def lacks(entry: SimEntry) -> bool:
    """Whether an index row misses a task id, a trial or a termination (the fields ``recover_simulations`` fills)."""
    return not entry.task_id or entry.trial is None or entry.termination is None


def recover_simulations(
    raws: Sequence[Any], entries: Sequence[SimEntry], tasks: Mapping[str, Task], tasks_from: str
) -> dict[int, Recovered]:
    """By index, what simulations without a task id, trial or termination get back, and how.

    ``tasks`` are what task ids are recovered against (the file's own, else its domain's), ``tasks_from`` says
    which (``"the file's tasks"``). Only the simulations ``entries`` (their index rows) show to lack a field are
    read again. Trials are numbered in file order per task, after the ones recorded.
    """
    missing = [entry for entry in entries if lacks(entry)]
    if not missing:
        return {}
    scenarios = _ScenarioIndex(tasks)  # words are read the first time a scenario is matched
    found: dict[int, dict[str, Any]] = {}
    for entry in missing:
        try:
            raw = raws[entry.index]
        except (OSError, ValueError):
            continue
        if not isinstance(raw, dict):
            continue
        fields: dict[str, Any] = {"how": []}
        if not entry.task_id:
            task_id, how = _recover_task(raw, tasks, scenarios, tasks_from)
            fields["task_id"] = task_id
            fields["how"].append(how)
        if entry.termination is None:
            termination, how = recover_termination(messages_of(raw))
            fields["termination"] = termination
            fields["how"].append(how)
        found[entry.index] = fields
    _number_trials(entries, found)
    return {
        index: Recovered(fields.get("task_id"), fields.get("trial"), fields.get("termination"), tuple(fields["how"]))
        for index, fields in found.items()
    }


def _number_trials(entries: Sequence[SimEntry], found: dict[int, dict[str, Any]]) -> None:
    """Give every simulation of a known task without a trial the next free trial number of that task, in order."""
    used: dict[str, set[int]] = {}
    for entry in entries:
        if entry.trial is not None:
            used.setdefault(entry.task_id or str(found.get(entry.index, {}).get("task_id") or ""), set()).add(
                entry.trial
            )
    for entry in entries:
        if entry.trial is not None:
            continue
        fields = found.setdefault(entry.index, {"how": []})
        task = entry.task_id or fields.get("task_id")
        if not task:
            fields["how"].append("trial not numbered (no task)")
            continue
        taken = used.setdefault(task, set())
        trial = next(n for n in range(len(taken) + 1) if n not in taken)
        taken.add(trial)
        fields["trial"] = trial
        fields["how"].append(f"trial {trial} {TRIAL_BY_ORDER}")


def recover_termination(messages: Sequence[Any]) -> tuple[str | None, str]:
    """How the conversation ended, from the stop token of its last text message (as tau2's participants stop):
    ``user_stop`` for the user's stop, transfer or out-of-scope token, ``agent_stop`` for the agent's stop."""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        if message.get("tool_calls") or not isinstance(content, str) or not content.strip():
            continue
        if message["role"] == "user" and any(token in content for token in USER_STOPS):
            token = next(token for token in USER_STOPS if token in content)
            return "user_stop", f"termination user_stop from the user's last message ({token})"
        if message["role"] == "assistant" and AGENT_STOP in content:
            return "agent_stop", f"termination agent_stop from the agent's last message ({AGENT_STOP})"
        break
    return None, f"{TERMINATION_LOST} (the conversation does not end with a stop token)"


def _recorded_actions(raw: dict[str, Any]) -> list[dict[str, Any]]:
    info = raw.get("reward_info")
    checks = info.get("action_checks") if isinstance(info, dict) else None
    actions = [check.get("action") for check in checks if isinstance(check, dict)] if isinstance(checks, list) else []
    return [action for action in actions if isinstance(action, dict) and isinstance(action.get("action_id"), str)]


def _action_key(name: Any, arguments: Any) -> bytes:
    return orjson.dumps([name, arguments], option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _task_actions(task: Task) -> list[tuple[str, bytes]]:
    return [(a.action_id, _action_key(a.name, a.arguments)) for a in task.expected_actions]


def _recover_task(
    raw: dict[str, Any], tasks: Mapping[str, Task], scenarios: _ScenarioIndex, tasks_from: str
) -> tuple[str | None, str]:
    """A simulation's task, and how it was found (or why not)."""
    if not tasks:
        return None, f"{TASK_LOST} ({tasks_from}: none to match)"
    actions = _recorded_actions(raw)
    candidates = list(tasks.values())
    via = ""
    if actions:
        ids = sorted({a["action_id"] for a in actions})
        shown = ", ".join(ids[:4]) + (", …" if len(ids) > 4 else "")
        same_ids = [t for t in candidates if sorted({i for i, _ in _task_actions(t)}) == ids]
        if not same_ids:
            prefixes = {_ACTION_NUMBER.sub("", i) for i in ids}
            named = next(iter(prefixes)) if len(prefixes) == 1 else None
            if named is not None and named in tasks:
                return named, f"task {named} {BY_ACTIONS}: the task id they name ({shown})"
        recorded = sorted(_action_key(a.get("name"), a.get("arguments")) for a in actions)
        same_actions = [t for t in same_ids if sorted(key for _, key in _task_actions(t)) == recorded]
        narrowed = same_actions or same_ids
        if len(narrowed) == 1:
            return narrowed[0].id, f"task {narrowed[0].id} {BY_ACTIONS} ({shown})"
        if narrowed:
            candidates, via = narrowed, f"among the {len(narrowed)} tasks its action checks ({shown}) fit, "
    for texts, what in ((user_texts(raw)[:1], "the first user message"), (user_texts(raw), "the user's messages")):
        best = scenarios.best(" ".join(texts), candidates)
        if best is not None:
            return best, f"task {best} from {via}{BY_SCENARIO} {what} matches"
    return None, f"{TASK_LOST} ({via}no scenario of {tasks_from} matches its user messages clearly)"


def user_texts(raw: dict[str, Any]) -> list[str]:
    """The user's text messages, in order."""
    return [
        m["content"]
        for m in messages_of(raw)
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"]
    ]


class _ScenarioIndex:
    """Each task's scenario as words, weighted by how few tasks use them (a name or an id counts, 'order' not)."""

    def __init__(self, tasks: Mapping[str, Task]):
        self.tasks = tasks

    @cached_property
    def words(self) -> dict[str, set[str]]:
        return {task_id: _words(_scenario_text(task)) for task_id, task in self.tasks.items()}

    @cached_property
    def df(self) -> Counter[str]:
        return Counter(word for words in self.words.values() for word in words)

    @cached_property
    def weight(self) -> dict[str, float]:
        return {word: math.log((1 + len(self.words)) / n) for word, n in self.df.items()}

    def best(self, text: str, candidates: Sequence[Task]) -> str | None:
        """The candidate whose scenario ``text`` matches clearly better than every other, or None.

        Clearly: it scores ``CLEAR_LEAD`` times the next one, and the words it shares with ``text`` include what
        identifies a scenario: a number (a zip code, an order id) or three words at most two tasks use.
        """
        said = _words(text)
        scores = sorted(
            ((sum(self.weight[w] for w in said & self.words.get(t.id, set())), t.id) for t in candidates), reverse=True
        )
        if not scores or scores[0][0] <= 0:
            return None
        if len(scores) > 1 and scores[0][0] < CLEAR_LEAD * scores[1][0]:
            return None
        rare = [w for w in said & self.words[scores[0][1]] if self.df[w] <= RARE_IN]
        if len(rare) < RARE_WORDS and not any(ch.isdigit() for w in rare for ch in w):
            return None
        return scores[0][1]


def _scenario_text(task: Task) -> str:
    scenario = task.user_scenario
    return "" if scenario is None else orjson.dumps(scenario.model_dump(mode="json")).decode()


def _words(text: str) -> set[str]:
    lowered = text.lower()
    return {word for word in (*_ID.findall(lowered), *_WORD.findall(lowered)) if len(word) >= 3}


def summary(recovered: Mapping[int, Recovered]) -> str | None:
    """One line of what was recovered in a file: task ids (from action checks, from the scenario, not at all),
    trials numbered, terminations read from stop tokens; None when nothing was missing, or only trials (many tau2
    files record none: each simulation's ``how`` says its number came from its order, and no reward depends on it)."""
    phrases = [how for item in recovered.values() for how in item.how]
    if all(TRIAL_BY_ORDER in p for p in phrases):
        return None
    tasks = [p for p in phrases if p.startswith(("task ", TASK_LOST))]
    parts = []
    if tasks:
        counts = [
            (sum(BY_ACTIONS in p for p in tasks), "from their action checks"),
            (
                sum(BY_SCENARIO in p and BY_ACTIONS not in p for p in tasks),
                "from the scenario their user messages match",
            ),
            (sum(p.startswith(TASK_LOST) for p in tasks), "not recovered"),
        ]
        said = ", ".join(f"{n} {what}" for n, what in counts if n)
        parts.append(f"{len(tasks)} simulation{'s' if len(tasks) != 1 else ''} without a task id: {said}")
    trials = sum(TRIAL_BY_ORDER in p for p in phrases)
    if trials:
        parts.append(f"{trials} trial{'s' if trials != 1 else ''} numbered by order")
    ended = [p for p in phrases if p.startswith(("termination", TERMINATION_LOST))]
    if ended:
        lost = sum(p.startswith(TERMINATION_LOST) for p in ended)
        text = f"{len(ended) - lost} of {len(ended)} missing terminations read from their stop tokens"
        parts.append(text + (f" ({lost} not: no reward for {'them' if lost != 1 else 'it'})" if lost else ""))
    return "; ".join(parts) or None
