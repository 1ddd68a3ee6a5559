"""Evaluation of one very long trajectory, as a ratio to its replay in the same run.

    python -m benchmarks.long_trajectory [--messages N] [--tau2-data DIR]

Builds a mock-domain simulation of N messages (default 100,000) whose recorded
tool results come from running the calls, written to a temporary results file:
blocks of a user request, a read, a successful write, a backed claim, a write to
an id never looked up that fails, an unbacked claim and a thank-you. Every
process detector has work on every block. Prints the time to load, to replay
(``Analyzer.analyze``) and to assess (evaluation, explanation, diagnostics)
the same simulation, each diagnostic's own time, and assess / replay. Linear
diagnostics keep the ratio about the same at every N.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import orjson

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainRegistry
from tau_tui.evaluate import diagnostics
from tau_tui.model import open_run
from tau_tui.model.messages import ToolCall

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
BLOCK = 10  # messages per block
TASK = {
    "id": "long",
    "user_scenario": {"instructions": "Ask to finish task_1, again and again."},
    "evaluation_criteria": {
        "actions": [
            {"action_id": "a1", "name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}
        ],
        "communicate_info": ["task_1"],
        "reward_basis": ["DB", "ACTION", "COMMUNICATE"],
    },
}


def build(registry: DomainRegistry, n_messages: int) -> dict:
    """A results object holding one simulation of ``n_messages`` messages."""
    env = registry.get("mock").new_environment()

    def run(name: str, arguments: dict, call_id: str) -> tuple[dict, dict]:
        call = ToolCall(id=call_id, name=name, arguments=arguments)
        result = env.call(call)
        return (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}],
            },
            {"role": "tool", "id": call_id, "content": result.content, "requestor": "assistant", "error": result.error},
        )

    messages: list[dict] = []
    block = 0
    while len(messages) < n_messages:
        status = "completed" if block % 2 == 0 else "pending"
        messages.append({"role": "user", "content": f"Please set task_1 to {status}."})
        messages += run("get_users", {}, f"r{block}")
        messages += run("update_task_status", {"task_id": "task_1", "status": status}, f"w{block}")
        messages.append({"role": "assistant", "content": f"task_1 has been updated to {status}."})
        messages += run("update_task_status", {"task_id": f"task_x{block}", "status": status}, f"e{block}")
        messages.append({"role": "assistant", "content": "All done: your old task has been cancelled."})
        messages.append({"role": "user", "content": "Thanks."})
        block += 1
    messages = messages[:n_messages]
    sim = {
        "id": "long-sim",
        "task_id": "long",
        "trial": 0,
        "start_time": "2025-01-01T00:00:00",
        "end_time": "2025-01-01T01:00:00",
        "duration": 3600.0,
        "termination_reason": "user_stop",
        "messages": messages,
    }
    return {
        "timestamp": "2025-01-01T00:00:00",
        "info": {
            "num_trials": 1,
            "agent_info": {"implementation": "llm_agent", "llm": "bench"},
            "user_info": {"implementation": "user_simulator", "llm": "bench"},
            "environment_info": {"domain_name": "mock", "policy": "one tool call at a time"},
        },
        "tasks": [TASK],
        "simulations": [sim],
    }


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--tau2-data", default=str(CORPUS))
    args = parser.parse_args(argv)
    registry = DomainRegistry(args.tau2_data)
    data, built = timed(build, registry, args.messages)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long_mock.json"
        path.write_bytes(orjson.dumps(data))
        run, loaded = timed(lambda: (lambda r: (r.simulation(0), r)[1])(open_run(path)))
    analyzer = Analyzer(registry)
    analyzer.analyze(run, 0)  # pristine DBs and the gold state, loaded once as in any long session
    analysis, replayed = timed(analyzer.analyze, run, 0)
    report, assessed = timed(analyzer.assess, analysis)
    timeline = analysis.timeline
    detectors = [
        ("message_flags", lambda: diagnostics.message_flags(timeline, 0, "one tool call at a time")),
        ("repeated_calls", lambda: diagnostics.repeated_calls(timeline, 0)),
        ("writes_before_reads", lambda: diagnostics.writes_before_reads(timeline, 0)),
        ("ignored_errors", lambda: diagnostics.ignored_errors(timeline, 0)),
        ("unbacked_claims", lambda: diagnostics.unbacked_claims(timeline, 0)),
        ("transfers", lambda: diagnostics.transfers(timeline, 0)),
    ]
    print(
        f"{args.messages:,} messages, {len(timeline.calls):,} tool calls "
        f"(built in {built:.2f} s, loaded and validated in {loaded:.2f} s)"
    )
    print(f"replay  {replayed:8.3f} s")
    print(f"assess  {assessed:8.3f} s  ({len(report.flags):,} flags)")
    for name, fn in detectors:
        flags, seconds = timed(fn)
        print(f"  {name:20s} {seconds:8.3f} s  {len(flags):7,} flags")
    print(f"assess / replay = {assessed / replayed:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
