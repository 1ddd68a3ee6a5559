"""Wire-level equivalence with tau2-bench 1.0.1: the same runs through tau2's runner and ``tau-tui run``, compared.

    python -m benchmarks.wire_tau2 [--domains mock airline retail telecom banking_knowledge] [--telecom-sample 200]
        [--tau2-python .tau2-101/bin/python] [--concurrency N] [--jobs J] [--no-solo] [--out DIR] [--json]

tau2 1.0.1 needs Python 3.12, so it runs from its own venv (``--tau2-python``; ``TAU2_101_PYTHON`` by
default). One deterministic server (``benchmarks.wire_server``) answers both runners from a hash of each
request body, so as long as the two send the same requests they hold the same conversations: users that call
tools and stop, transfer or go out of scope, agents that call tools well and badly. Each run talks to its own
URL prefix on the server, so the requests of every run are told apart while runs overlap.

For every case (a domain's tasks with the agent and user LLMs; a solo case per domain with ticket tasks), with
the same seed, step and error limits on both sides:

1. requests: the request bodies of tau2's run and of ours as multisets of canonical JSON (scheduling order
   differs), ``N requests tau2, M ours, K equal``; for the first unequal ones the nearest counterpart (same
   model, longest common prefix of messages) and a unified diff of where they part, and a count of the kinds
   of difference (a parameter, a tool's schema, a message's field);
2. results: both saved files as tau2's ``Results`` loads them, field by field, simulations paired by
   (task_id, trial), except the fields of ``EXCLUDED`` (ids, timestamps, durations and other times); a pair
   whose conversations differ (who said and called what, in order) is counted, not walked, since every
   field after the first unequal request differs with it;
3. rewards: tau2's own evaluator (``evaluate_simulation``, ``EvaluationType.ALL``) on our saved file, against
   the rewards in it.

The exit status is 1 when anything differs (or a run fails), 0 when everything is equal.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.wire_server import (
    AGENT_MODEL,
    USER_MODEL,
    WireServer,
    canonical,
    timing_free,
    without_times,
    without_tool_texts,
)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
DEFAULT_TAU2_PYTHON = os.environ.get("TAU2_101_PYTHON") or str(ROOT / ".tau2-101" / "bin" / "python")  # make tau2-101
DOMAINS = ("mock", "airline", "retail", "telecom", "banking_knowledge")
JUDGE_MODEL = "gpt-4.1-2025-04-14"  # tau2 1.0.1's NL-assertion judge (tau2.config.DEFAULT_LLM_NL_ASSERTIONS)
SEED = 300
# Step and error limits per domain: small enough that some conversations end by max_steps or too_many_errors.
LIMITS = {
    "mock": (200, 10),
    "airline": (30, 6),
    "retail": (40, 8),
    "telecom": (30, 6),
    "banking_knowledge": (40, 8),
}
SOLO_DOMAINS = {"mock": 0, "telecom": 30}  # domain: how many of its solo-valid tasks (0: all)
RETRIEVAL = {"banking_knowledge": "bm25_grep"}
SPLIT = {
    "telecom": "full"
}  # tau2's CLI loads telecom's "base" split (114 tasks) unless told; the sample is of all 2285  # tau2's default (alltools) needs OpenAI and a sandbox
# Saved-result fields compared on neither side, wherever they occur: ids and times; the runner's provenance
# (git_commit: tau2's checkout, our version); the endpoint (api_base: each run has its own URL on the server)
# and its key (api_key: tau2 writes it into its results, tau-tui never writes secrets).
EXCLUDED = frozenset(
    {"id", "timestamp", "start_time", "end_time", "duration", "generation_time_seconds"}
    | {"git_commit", "api_base", "api_key"}
    | {"error_traceback"}  # a failed task's placeholder: the call stack of the program that failed (tau2's or ours)
)

LIST_TASKS = r"""
import json, sys
from loguru import logger
logger.remove()
import tau2.agent.llm_agent as llm_agent
from tau2.agent.llm_agent import LLMSoloAgent
from tau2.runner.helpers import get_tasks
out = {"agent_prompt": llm_agent.__file__, "domains": {}}
for domain in sys.argv[1:]:
    name, _, split = domain.partition(":")
    tasks = get_tasks(name, split or None)
    domain = name
    out["domains"][domain] = {
        "all": [t.id for t in tasks],
        "solo": [t.id for t in tasks if LLMSoloAgent.check_valid_task(t)],
    }
print(json.dumps(out))
"""

# tau2 1.0.1's `tau2 run --user dummy_user` fails every task: build_user passes tools, instructions and llm to
# DummyUser(), which takes none (runner/build.py). Solo cases run tau2's own CLI with only that call mended.
TAU2_CLI_SOLO = r"""
import sys
import tau2.runner.build as build
from tau2.user.user_simulator import DummyUser
original = build.build_user
def build_user(user_name, environment, task, **kwargs):
    if user_name == "dummy_user":
        return DummyUser()
    return original(user_name, environment, task, **kwargs)
build.build_user = build_user
from tau2.cli import main
sys.argv = ["tau2", *sys.argv[1:]]
sys.exit(main())
"""

# tau2's checks of every case's results, in one tau2 process (importing tau2 costs seconds of CPU): each job's
# results files loaded and dumped by tau2's ``Results`` (absent fields take tau2's defaults), then our file scored
# by tau2's evaluator. Jobs come as JSON on stdin; one JSON line per job goes out.
TAU2_CHECKS = r"""
import json, os, sys
from types import SimpleNamespace
from loguru import logger
logger.remove()
from tau2.data_model.simulation import Results
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
from tau2.runner.build import _build_env_kwargs


def normalise(pairs):
    failures = []
    for source, target in pairs:
        try:
            data = Results.load(source).model_dump(mode="json")
        except Exception as error:
            failures.append(f"{source}: {type(error).__name__}: {str(error)[:800]}")
            continue
        with open(target, "w") as out:
            json.dump(data, out)
    return failures


def evaluate(path, solo, retrieval):
    try:
        results = Results.load(path)
    except Exception as error:
        return {"load_error": f"{type(error).__name__}: {error}"}
    domain = results.info.environment_info.domain_name
    tasks = {t.id: t for t in results.tasks}
    rows = []
    for sim in results.simulations:
        task = tasks[sim.task_id]
        ours = sim.reward_info.reward if sim.reward_info else None
        if sim.termination_reason.value == "infrastructure_error":  # tau2's runner never scores its placeholders
            rows.append({"task_id": sim.task_id, "trial": sim.trial, "ours": ours, "tau2": None})
            continue
        config = SimpleNamespace(retrieval_config=retrieval, retrieval_config_kwargs=None, domain=domain)
        row = {"task_id": sim.task_id, "trial": sim.trial, "ours": ours}
        try:
            row["tau2"] = evaluate_simulation(
                simulation=sim, task=task, evaluation_type=EvaluationType.ALL, solo_mode=solo, domain=domain,
                env_kwargs=_build_env_kwargs(config, task) or None,
            ).reward
        except Exception as error:
            row["tau2"], row["error"] = None, f"{type(error).__name__}: {error}"
        rows.append(row)
    return {"simulations": rows}


for job in json.load(sys.stdin):
    os.environ["OPENAI_API_BASE"] = job["judge_url"]  # the case's judge (NL assertions) on the wire server
    out = {"normalise_failures": normalise(job["normalise"])}
    out["evaluation"] = evaluate(job["evaluate"], job["solo"], job["retrieval"] or None)
    print(json.dumps(out), flush=True)
"""


@dataclass
class Case:
    """One comparison: a domain's tasks, run the same way by both runners."""

    name: str
    domain: str
    tasks: list[str]
    max_steps: int
    max_errors: int
    solo: bool = False
    seed: int = SEED


@dataclass
class Outcome:
    """What one case measured."""

    name: str
    tasks: int
    requests_tau2: int = 0
    requests_ours: int = 0
    requests_equal: int = 0
    requests_equal_but_tool_texts: int = 0  # equal once tools' descriptions, titles and enums are left out
    difference_kinds: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    simulations_paired: int = 0
    conversations_differing: list[str] = field(default_factory=list)  # simulations whose fields were not walked
    result_differences: dict[str, int] = field(default_factory=dict)
    result_examples: dict[str, str] = field(default_factory=dict)
    evaluator_disagreements: list[dict[str, Any]] = field(default_factory=list)
    terminations_tau2: dict[str, int] = field(default_factory=dict)
    terminations_ours: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    seconds_tau2: float = 0.0
    seconds_ours: float = 0.0

    @property
    def equal(self) -> bool:
        return (
            not self.failures
            and self.requests_tau2 == self.requests_ours == self.requests_equal
            and not self.result_differences
            and not self.conversations_differing
            and not self.evaluator_disagreements
        )


# ---------------------------------------------------------------------------------------------------- running


def tau2_data_dir(corpus: Path, work: Path) -> Path:
    """A TAU2_DATA_DIR for tau2 (it reads <dir>/tau2/domains and <dir>/tau2/user_simulator) over the corpus."""
    data = work / "tau2-data"
    (data / "tau2").mkdir(parents=True, exist_ok=True)
    for name in ("domains", "user_simulator"):
        link = data / "tau2" / name
        if not link.exists():
            link.symlink_to((corpus / name).resolve())
    return data


def llm_args(url: str) -> str:
    return json.dumps({"api_base": url, "api_key": "sk-local", "temperature": 0.0})


def tau2_command(case: Case, python: str, url: str, save_dir: Path, concurrency: int) -> list[str]:
    tau2 = [python, "-c", TAU2_CLI_SOLO] if case.solo else [str(Path(python).parent / "tau2")]
    command = [*tau2, "run", "--domain", case.domain, "--agent-llm", f"openai/{AGENT_MODEL}"]
    command += [
        "--agent-llm-args",
        llm_args(url),
        "--user-llm",
        f"openai/{USER_MODEL}",
        "--user-llm-args",
        llm_args(url),
    ]
    command += ["--max-concurrency", str(concurrency), "--seed", str(case.seed), "--max-retries", "0"]
    command += ["--max-steps", str(case.max_steps), "--max-errors", str(case.max_errors)]
    command += ["--save-to", str(save_dir), "--auto-resume", "--log-level", "ERROR"]
    if case.solo:
        command += ["--agent", "llm_agent_solo", "--user", "dummy_user"]
    if case.domain in SPLIT:
        command += ["--task-split-name", SPLIT[case.domain]]
    if case.domain in RETRIEVAL:
        command += ["--retrieval-config", RETRIEVAL[case.domain]]
    return command + ["--task-ids", *case.tasks]


def ours_command(
    case: Case, url: str, out: Path, concurrency: int, corpus: Path, tau2_python: str, protocol: bool
) -> list[str]:
    command = [sys.executable, "-m", "tau_tui", "run", "--domain", case.domain]
    if protocol:  # tau2's agent prompt and tool schemas from the same tau2 1.0.1
        command += ["--protocol", "tau2", "--tau2-python", tau2_python]
    command += ["--agent-llm", f"openai/{AGENT_MODEL}", "--agent-llm-args", llm_args(url)]
    command += ["--user-llm", f"openai/{USER_MODEL}", "--user-llm-args", llm_args(url)]  # recorded even in solo
    if case.solo:
        command += ["--solo"]
    command += ["-k", "1", "--seed", str(case.seed), "--max-steps", str(case.max_steps)]
    command += ["--max-errors", str(case.max_errors), "--concurrency", str(concurrency), "--llm-retries", "0"]
    command += ["--task-retries", "0"]  # tau2's --max-retries 0
    command += ["--judge", f"openai/{JUDGE_MODEL}", "--judge-api-base", url]
    command += ["--quiet", "--out", str(out), "--tau2-data", str(corpus), "--task", *case.tasks]
    return command


def run_logged(command: list[str], env: dict[str, str], log: Path) -> tuple[int, float]:
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent, timeout=3600)
    return done.returncode, time.perf_counter() - start


def has_protocol_flag() -> bool:
    done = subprocess.run([sys.executable, "-m", "tau_tui", "run", "--help"], capture_output=True, text=True)
    return "--protocol" in done.stdout


# ---------------------------------------------------------------------------------------------------- requests


def _message_keys(body: dict[str, Any]) -> list[str]:
    return [canonical(m) for m in body.get("messages") or []]


def _common(left: list[str], right: list[str]) -> int:
    n = 0
    while n < min(len(left), len(right)) and left[n] == right[n]:
        n += 1
    return n


def _message_prefix(a: dict[str, Any], b: dict[str, Any]) -> int:
    return _common(_message_keys(a), _message_keys(b))


Prepared = tuple[str, list[str], str]  # a request's model, canonical messages and canonical tools


def prepare(body: dict[str, Any]) -> Prepared:
    return str(body.get("model")), _message_keys(body), canonical(body.get("tools"))


def nearest(body: dict[str, Any], others: list[Prepared]) -> int | None:
    """The index in ``others`` (``prepare``d requests) of the one most like ``body``: same model, then the
    longest common prefix of messages, then the same tools."""
    if not others:
        return None
    model, mine, tools = prepare(body)
    return max(
        range(len(others)),
        key=lambda i: (others[i][0] == model, _common(mine, others[i][1]), others[i][2] == tools),
    )


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def _unified(a: Any, b: Any, limit: int = 40) -> list[str]:
    lines = list(difflib.unified_diff(_pretty(a), _pretty(b), "tau2", "ours", n=2, lineterm=""))
    return lines[:limit] + ([f"... {len(lines) - limit} more diff lines"] if len(lines) > limit else [])


def differences(a: dict[str, Any], b: dict[str, Any], detail: bool = True) -> list[tuple[str, list[str]]]:
    """Where two request bodies part: (kind, diff lines) for each parameter, tool and the first message
    (without ``detail``, the kinds alone: diffs take time)."""

    def _diff(x: Any, y: Any) -> list[str]:
        return _unified(x, y) if detail else []

    found: list[tuple[str, list[str]]] = []
    for key in sorted(set(a) | set(b) - {"messages", "tools"}):
        if key in ("messages", "tools"):
            continue
        if canonical(a.get(key, "<absent>")) != canonical(b.get(key, "<absent>")):
            found.append(
                (
                    f"parameter {key}",
                    [f"tau2: {json.dumps(a.get(key, '<absent>'))}", f"ours: {json.dumps(b.get(key, '<absent>'))}"],
                )
            )
    tools_a = {str(t.get("function", {}).get("name")): t for t in a.get("tools") or []}
    tools_b = {str(t.get("function", {}).get("name")): t for t in b.get("tools") or []}
    if ("tools" in a) != ("tools" in b):
        found.append(
            ("tools present on one side", [f"tau2 has tools: {'tools' in a}", f"ours has tools: {'tools' in b}"])
        )
    for name in sorted(set(tools_a) | set(tools_b)):
        if name not in tools_a or name not in tools_b:
            found.append(
                (f"tool only on one side: {name}", [f"in tau2: {name in tools_a}, in ours: {name in tools_b}"])
            )
        elif canonical(tools_a[name]) != canonical(tools_b[name]):
            found.append((f"tool schema {name}", _diff(tools_a[name], tools_b[name])))
    if list(tools_a) != list(tools_b) and set(tools_a) == set(tools_b):
        found.append(("tool order", [f"tau2: {list(tools_a)}", f"ours: {list(tools_b)}"]))
    left, right = a.get("messages") or [], b.get("messages") or []
    at = _message_prefix(a, b)
    if at < max(len(left), len(right)):
        one = left[at] if at < len(left) else None
        other = right[at] if at < len(right) else None
        if one is None or other is None:
            kind = "message count (one side's conversation goes on)"
        else:
            keys = sorted(k for k in set(one) | set(other) if canonical(one.get(k)) != canonical(other.get(k)))
            absent = sorted(k for k in set(one) ^ set(other))
            role = one.get("role")
            kind = f"message[{'system' if role == 'system' else role}] " + ",".join(keys or absent)
            if absent:
                kind += f" (keys only on one side: {','.join(absent)})"
        found.append((kind, [f"messages[{at}] of {len(left)} / {len(right)}:", *_diff(one, other)]))
    return found


def compare_requests(tau2: list[dict[str, Any]], ours: list[dict[str, Any]], outcome: Outcome, shown: int = 8) -> None:
    left = Counter(canonical(b) for b in tau2)
    right = Counter(canonical(b) for b in ours)
    outcome.requests_tau2, outcome.requests_ours = len(tau2), len(ours)
    outcome.requests_equal = sum((left & right).values())
    loose = Counter(canonical(without_tool_texts(b)) for b in tau2) & Counter(
        canonical(without_tool_texts(b)) for b in ours
    )
    outcome.requests_equal_but_tool_texts = sum(loose.values())
    only_tau2 = [json.loads(text) for text, n in (left - right).items() for _ in range(n)]
    only_ours = [json.loads(text) for text, n in (right - left).items() for _ in range(n)]
    kinds: Counter[str] = Counter()
    prepared = [prepare(o) for o in only_ours]
    for body in only_tau2:
        index = nearest(body, prepared)
        if index is None:
            kinds["no counterpart in ours"] += 1
            continue
        found = differences(body, only_ours[index], detail=False)
        if len(outcome.examples) < shown and any(not kinds[kind] for kind, _ in found):
            found = differences(body, only_ours[index])
        for kind, lines in found:
            if not kinds[kind] and len(outcome.examples) < shown:
                head = f"-- {kind} (tau2 request to {body.get('model')}, {len(body.get('messages') or [])} messages,"
                outcome.examples.append(
                    "\n".join([f"{head} vs the nearest of ours):", *("   " + line for line in lines)])
                )
            kinds[kind] += 1
    if only_ours and not only_tau2:
        kinds["requests only in ours"] += len(only_ours)
    outcome.difference_kinds = dict(kinds.most_common())


# ---------------------------------------------------------------------------------------------------- results


# Fields tau-tui adds to a simulation's ``info`` (tau2 keeps ``info`` open): the task's fingerprint, so results of
# different task versions are never pooled. Compared with them left out.
OUR_SIM_INFO = ("task_fingerprint", "task_fingerprint_parts")
# Fields of ``raw_data`` (the provider's reply as the client library holds it) that litellm fills with null or
# {} when the provider did not send them; which it fills depends on litellm's version (tau2 1.0.1 pins an older
# one) and tau-tui's direct client keeps the reply as it came. Absent on one side and empty on the other counts
# as equal there; every value the provider did send is compared.
EMPTY = (None, {}, {"refusal": None})


def without_our_additions(sim: dict[str, Any]) -> dict[str, Any]:
    info = {k: v for k, v in (sim.get("info") or {}).items() if k not in OUR_SIM_INFO}
    return {**sim, "info": info or None}


def times_read_as_hash(value: Any) -> Any:
    """``value`` with the search times of banking's tool results read as "#" (``wire_server.TIMING``)."""
    if isinstance(value, str):
        return timing_free(value) if "[Timing: " in value else value
    if isinstance(value, list):
        return [times_read_as_hash(v) for v in value]
    if isinstance(value, dict):
        return {k: times_read_as_hash(v) for k, v in value.items()}
    return value


def _walk(a: Any, b: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in EXCLUDED:
                continue
            if ".raw_data" in path and (key not in a or key not in b) and a.get(key, b.get(key)) in EMPTY:
                continue
            if key not in a or key not in b:
                out.append((f"{path}.{key}", a.get(key, "<absent>"), b.get(key, "<absent>")))
            else:
                _walk(a[key], b[key], f"{path}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((f"{path}[len]", len(a), len(b)))
        for item_a, item_b in zip(a, b, strict=False):
            _walk(item_a, item_b, f"{path}[]", out)
    elif a != b or type(a) is not type(b):
        out.append((path, a, b))


def conversation(sim: dict[str, Any]) -> str:
    """What was said and called in a simulation, in order: who, text, calls, results."""
    said = [
        (m.get("role"), m.get("content"), [(c.get("name"), c.get("arguments")) for c in m.get("tool_calls") or []])
        for m in sim.get("messages") or []
    ]
    return canonical(said)


def compare_results(tau2_file: Path, ours_file: Path, outcome: Outcome) -> None:
    try:
        theirs, ours = json.loads(tau2_file.read_text()), json.loads(ours_file.read_text())
    except (OSError, ValueError) as error:
        outcome.failures.append(f"results not readable: {error}")
        return
    theirs, ours = times_read_as_hash(theirs), times_read_as_hash(ours)
    found: list[tuple[str, Any, Any]] = []
    _walk(theirs.get("info"), ours.get("info"), "info", found)
    tasks_a = {t["id"]: t for t in theirs.get("tasks") or []}
    tasks_b = {t["id"]: t for t in ours.get("tasks") or []}
    if set(tasks_a) != set(tasks_b):
        found.append(("tasks[ids]", sorted(set(tasks_a) - set(tasks_b))[:5], sorted(set(tasks_b) - set(tasks_a))[:5]))
    for task_id in sorted(set(tasks_a) & set(tasks_b)):
        _walk(tasks_a[task_id], tasks_b[task_id], "tasks[]", found)
    sims_a = {(s["task_id"], s.get("trial")): s for s in theirs.get("simulations") or []}
    sims_b = {(s["task_id"], s.get("trial")): s for s in ours.get("simulations") or []}
    if set(sims_a) != set(sims_b):
        found.append(
            (
                "simulations[(task_id, trial)]",
                sorted(set(sims_a) - set(sims_b), key=str)[:5],
                sorted(set(sims_b) - set(sims_a), key=str)[:5],
            )
        )
    paired = sorted(set(sims_a) & set(sims_b), key=str)
    for key in paired:
        if conversation(sims_a[key]) == conversation(sims_b[key]):
            _walk(sims_a[key], without_our_additions(sims_b[key]), "simulations[]", found)
        else:  # a consequence of unequal requests (or of the environment's answers): its fields say nothing more
            outcome.conversations_differing.append(f"{key[0]} (trial {key[1]})")
    outcome.simulations_paired = len(paired)
    counts: Counter[str] = Counter(path for path, _, _ in found)
    outcome.result_differences = dict(counts.most_common())
    for path, a, b in found:
        outcome.result_examples.setdefault(
            path, f"tau2 {json.dumps(a, default=str)[:300]}  ours {json.dumps(b, default=str)[:300]}"
        )
    for side, data in (("tau2", theirs), ("ours", ours)):
        ends = Counter(str(s.get("termination_reason")) for s in data.get("simulations") or [])
        setattr(outcome, f"terminations_{side}", dict(sorted(ends.items())))


@dataclass
class Checks:
    """What tau2 is asked of a case once both runners are done: its results files, and its judge's address."""

    outcome: Outcome
    tau2_file: Path
    ours_file: Path
    solo: bool
    retrieval: str
    judge_url: str

    @property
    def targets(self) -> list[Path]:
        return [f.with_name(f.stem + ".tau2-normalised.json") for f in (self.tau2_file, self.ours_file)]


def run_checks(python: str, checks: list[Checks], env: dict[str, str]) -> None:
    """Every case's tau2 checks in one tau2 process: the results as tau2 loads them compared field by field, and
    our rewards against tau2's evaluator on our file. A check that cannot be made is a failure of its case."""
    if not checks:
        return
    jobs = [
        {
            "normalise": [[str(f), str(t)] for f, t in zip((c.tau2_file, c.ours_file), c.targets, strict=True)],
            "evaluate": str(c.ours_file),
            "solo": c.solo,
            "retrieval": c.retrieval,
            "judge_url": c.judge_url,
        }
        for c in checks
    ]
    done = subprocess.run(
        [python, "-c", TAU2_CHECKS], input=json.dumps(jobs), env=env, capture_output=True, text=True, timeout=3600
    )
    answers = []
    for line in done.stdout.splitlines():
        try:
            answers.append(json.loads(line))
        except ValueError:
            continue  # tau2's own prints
    for index, check in enumerate(checks):
        outcome = check.outcome
        if index >= len(answers):
            outcome.failures.append(f"tau2's checks did not answer (exit {done.returncode}): {done.stderr[-800:]}")
            continue
        answer = answers[index]
        outcome.failures.extend(f"tau2's Results does not load {line}" for line in answer["normalise_failures"])
        files = [t if t.exists() else f for f, t in zip((check.tau2_file, check.ours_file), check.targets, strict=True)]
        compare_results(files[0], files[1], outcome)
        report = answer["evaluation"]
        if "load_error" in report:
            outcome.failures.append(f"tau2's Results does not load our file: {report['load_error'][:800]}")
            continue
        for row in report["simulations"]:
            if row.get("error") or row["tau2"] != row["ours"]:
                outcome.evaluator_disagreements.append(row)


# ---------------------------------------------------------------------------------------------------- cases


def sample(ids: list[str], n: int) -> list[str]:
    """``n`` of ``ids`` spread by hash (the same on every machine), in their original order."""
    if n <= 0 or n >= len(ids):
        return list(ids)
    chosen = set(sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())[:n])
    return [i for i in ids if i in chosen]


def build_cases(
    listing: dict[str, Any], domains: list[str], telecom_sample: int, per_domain: int, solo: bool
) -> list[Case]:
    cases = []
    for domain in domains:
        ids = listing["domains"][domain]["all"]
        chosen = sample(ids, telecom_sample) if domain == "telecom" else list(ids)
        if per_domain and domain != "mock":
            chosen = sample(chosen, per_domain)
        steps, errors = LIMITS.get(domain, (200, 10))
        cases.append(Case(domain, domain, chosen, steps, errors))
        if solo and domain in SOLO_DOMAINS:
            valid = [i for i in listing["domains"][domain]["solo"] if i in set(chosen)] or listing["domains"][domain][
                "solo"
            ]
            picked = sample(valid, per_domain or SOLO_DOMAINS[domain])
            if picked:
                cases.append(Case(f"{domain}-solo", domain, picked, steps, errors, solo=True))
    return cases


def run_case(
    case: Case,
    server: WireServer,
    args: argparse.Namespace,
    listing: dict[str, Any],
    base_env: dict[str, str],
    protocol: bool,
) -> tuple[Outcome, Checks | None]:
    """Both runners on one case and their requests compared; the tau2 checks of its results are left to
    ``run_checks``, which makes every case's in one process."""
    outcome = Outcome(case.name, len(case.tasks))
    work = args.out / case.name
    work.mkdir(parents=True, exist_ok=True)
    tau2_dir, ours_file = work / "tau2", work / "ours.json"
    for stale in (tau2_dir / "results.json", ours_file, *work.glob("*.tau2-normalised.json")):
        stale.unlink(missing_ok=True)
    tags = {side: f"{case.name}-{side}-{os.getpid()}-{time.monotonic_ns()}" for side in ("tau2", "ours")}
    tau2_env = {**base_env, "OPENAI_API_BASE": server.url(tags["tau2"]), "OPENAI_API_KEY": "sk-local"}
    jobs = {
        "tau2": (tau2_command(case, args.tau2_python, server.url(tags["tau2"]), tau2_dir, args.concurrency), tau2_env),
        "ours": (
            ours_command(
                case,
                server.url(tags["ours"]),
                ours_file,
                args.concurrency,
                args.tau2_data,
                args.tau2_python,
                protocol,
            ),
            base_env,
        ),
    }
    with ThreadPoolExecutor(2) as pool:
        futures = {
            side: pool.submit(run_logged, command, env, work / f"{side}.log") for side, (command, env) in jobs.items()
        }
        for side, future in futures.items():
            code, seconds = future.result()
            setattr(outcome, f"seconds_{side}", seconds)
            if code and not (side == "ours" and code == 1):  # ours: 1 says some task ended infrastructure_error
                outcome.failures.append(f"{side} exited {code} (see {work / (side + '.log')})")
    # banking's search results say how long each search took: those numbers are compared as "#" (wire_server)
    bodies = {side: [without_times(e["body"]) for e in server.tagged(tag)] for side, tag in tags.items()}
    for side, found in bodies.items():
        with (work / f"requests-{side}.jsonl").open("w") as out:
            out.writelines(canonical(b) + "\n" for b in found)
    compare_requests(bodies["tau2"], bodies["ours"], outcome)
    if not ((tau2_dir / "results.json").exists() and ours_file.exists()):
        outcome.failures.append("a results file is missing")
        return outcome, None
    for stale in work.glob("*.tau2-normalised.json"):
        stale.unlink()
    judge = server.url(f"{case.name}-eval")
    return outcome, Checks(
        outcome, tau2_dir / "results.json", ours_file, case.solo, RETRIEVAL.get(case.domain, ""), judge
    )


def print_outcome(outcome: Outcome) -> None:
    print(
        f"{outcome.name}: {outcome.tasks} tasks; {outcome.requests_tau2} requests tau2, {outcome.requests_ours} ours,"
        f" {outcome.requests_equal} equal ({outcome.requests_equal_but_tool_texts} but for tools' texts)  (tau2 {outcome.seconds_tau2:.0f} s, ours {outcome.seconds_ours:.0f} s)"
    )
    print(f"  terminations tau2 {outcome.terminations_tau2}  ours {outcome.terminations_ours}")
    for failure in outcome.failures:
        print(f"  FAILED: {failure}")
    for kind, n in outcome.difference_kinds.items():
        print(f"  request difference x{n}: {kind}")
    for example in outcome.examples:
        print("  " + example.replace("\n", "\n  "))
    if outcome.simulations_paired:
        same = outcome.simulations_paired - len(outcome.conversations_differing)
        print(
            f"  results: {same} of {outcome.simulations_paired} simulations hold the same conversation (fields compared)"
        )
    for path, n in list(outcome.result_differences.items())[:40]:
        print(f"  result field differs x{n}: {path}: {outcome.result_examples.get(path, '')}")
    for row in outcome.evaluator_disagreements[:10]:
        print(f"  evaluator: {row}")
    if len(outcome.evaluator_disagreements) > 10:
        print(f"  evaluator: ... {len(outcome.evaluator_disagreements) - 10} more disagreements")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    parser.add_argument("--telecom-sample", type=int, default=200, help="telecom tasks compared (of 2285)")
    parser.add_argument("--per-domain", type=int, default=0, help="at most N tasks of each domain but mock (0: all)")
    parser.add_argument("--tau2-python", default=DEFAULT_TAU2_PYTHON, help="a Python with tau2-bench 1.0.1")
    parser.add_argument("--tau2-data", type=Path, default=CORPUS, help="the corpus (holding domains/, user_simulator/)")
    parser.add_argument("--concurrency", type=int, default=8, help="simulations at once in each runner")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (each runs both runners at once)")
    parser.add_argument("--no-solo", dest="solo", action="store_false", help="skip the solo-mode cases")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "wire_tau2")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    parser.add_argument(
        "--lenient-tools",
        action="store_true",
        help="the server answers as if tools had no descriptions, titles or enums: conversations go on past a"
        " difference in tool wording, so the differences behind it show too (they still count as unequal)",
    )
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    base_env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TAU2_DATA_DIR": str(tau2_data_dir(args.tau2_data, args.out)),
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": "sk-local",  # the judge's key on both sides (tau2's judge is a plain OpenAI model)
    }
    listed = subprocess.run(
        [args.tau2_python, "-c", LIST_TASKS, *(f"{d}:{SPLIT.get(d, '')}" for d in args.domains)],
        env=base_env,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode:
        print(f"tau2 at {args.tau2_python} could not list the tasks:\n{listed.stderr[-2000:]}", file=sys.stderr)
        return 2
    listing = json.loads(listed.stdout.strip().splitlines()[-1])
    protocol = has_protocol_flag()
    if not protocol:
        print(
            "note: this tau-tui has no `run --protocol`; ours runs without --protocol/--agent-prompt", file=sys.stderr
        )
    cases = build_cases(listing, args.domains, args.telecom_sample, args.per_domain, args.solo)
    start = time.perf_counter()
    with WireServer(lenient=args.lenient_tools) as server, ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_case, case, server, args, listing, base_env, protocol) for case in cases]
        ran = [future.result() for future in futures]
        run_checks(args.tau2_python, [checks for _, checks in ran if checks is not None], base_env)
    outcomes = [outcome for outcome, _ in ran]
    if not args.json:
        for outcome in outcomes:
            print_outcome(outcome)
    total = {k: sum(getattr(o, k) for o in outcomes) for k in ("requests_tau2", "requests_ours", "requests_equal")}
    ok = all(o.equal for o in outcomes)
    if args.json:
        print(json.dumps({"equal": ok, "total": total, "cases": [asdict(o) for o in outcomes]}, indent=1))
    else:
        print(
            f"all: {total['requests_tau2']} requests tau2, {total['requests_ours']} ours, {total['requests_equal']} equal;"
            f" {'EQUAL' if ok else 'DIFFERENT'} ({time.perf_counter() - start:.0f} s)"
        )
        print(f"excluded from the results comparison: {', '.join(sorted(EXCLUDED))}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
