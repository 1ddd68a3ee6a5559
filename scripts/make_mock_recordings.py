"""Write tests/fixtures/mock_recordings/mock_demo.json: mock-domain runs that show every replay verdict.

Tool results are produced by our own mock environment, so clean runs replay
cleanly; the mismatch and the structural faults are then introduced on purpose.
Usage: python scripts/make_mock_recordings.py [--tau2-data DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tau_tui.domains import DomainRegistry
from tau_tui.model import ToolCall, save_results

TIME = "2025-06-01T10:00:{:02d}"


def messages_for(env, script):
    out = []
    for item in script:
        if item[0] == "call":
            _, role, name, args, cid = item
            requestor = "user" if role == "user" else "assistant"
            out.append(
                {
                    "role": role,
                    "content": None,
                    "tool_calls": [{"id": cid, "name": name, "arguments": args, "requestor": requestor}],
                }
            )
            reply = env.call(ToolCall(id=cid, name=name, arguments=args, requestor=requestor))
            out.append({"role": "tool", "id": cid, "content": reply.text, "requestor": requestor, "error": reply.error})
        else:
            out.append({"role": item[0], "content": item[1]})
    for i, m in enumerate(out):
        m["turn_idx"] = i
        m["timestamp"] = TIME.format(i)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tau2-data")
    parser.add_argument("--out", default="tests/fixtures/mock_recordings/mock_demo.json")
    args = parser.parse_args()
    domain = DomainRegistry(args.tau2_data).get("mock")
    tasks = domain.tasks()
    greet = ("assistant", "Hi! How can I help you today?")
    sims = []

    def sim(sim_id, task_id, script, reward, termination="user_stop", tamper=None):
        msgs = messages_for(domain.new_environment(), script)
        if tamper:
            tamper(msgs)
        sims.append(
            {
                "id": sim_id,
                "task_id": task_id,
                "trial": 0,
                "seed": 7,
                "start_time": TIME.format(0),
                "end_time": TIME.format(len(msgs)),
                "duration": float(len(msgs)),
                "termination_reason": termination,
                "agent_cost": 0.0,
                "user_cost": 0.0,
                "messages": msgs,
                "reward_info": {"reward": reward, "reward_basis": ["DB"], "info": {"note": "demo recording"}},
            }
        )

    sim(
        "demo-clean-pass",
        "update_task_1",
        [
            greet,
            ("user", "Please mark task_1 as completed."),
            ("call", "assistant", "get_users", {}, "call_users"),
            ("call", "assistant", "update_task_status", {"task_id": "task_1", "status": "completed"}, "call_update"),
            ("assistant", "Done: task_1 is now completed."),
            ("user", "Thanks! ###STOP###"),
        ],
        1.0,
    )

    def tamper_output(msgs):
        for m in msgs:
            if m.get("id") == "call_update" and m["role"] == "tool":
                m["content"] = m["content"].replace('"completed"', '"done"')

    sim(
        "demo-mismatch",
        "update_task_1",
        [
            greet,
            ("user", "Please mark task_1 as completed."),
            ("call", "assistant", "update_task_status", {"task_id": "task_1", "status": "completed"}, "call_update"),
            ("assistant", "It is done."),
            ("user", "Great. ###STOP###"),
        ],
        1.0,
        tamper=tamper_output,
    )

    sim(
        "demo-hallucinated-tool",
        "impossible_task_1",
        [
            greet,
            ("user", "Delete task_1 for me."),
            ("call", "assistant", "delete_task", {"task_id": "task_1"}, "call_delete"),
            (
                "call",
                "assistant",
                "transfer_to_human_agents",
                {"summary": "User wants task_1 deleted."},
                "call_transfer",
            ),
            ("assistant", "I have transferred you to a human agent."),
            ("user", "###TRANSFER###"),
        ],
        1.0,
    )

    def break_structure(msgs):
        msgs.insert(
            2,
            {
                "role": "tool",
                "id": "call_ghost",
                "content": "orphan result",
                "requestor": "assistant",
                "error": False,
                "turn_idx": 2,
                "timestamp": TIME.format(2),
            },
        )
        del msgs[-2]  # drop the last tool result: its call has no result

    sim(
        "demo-structural-findings",
        "create_task_1",
        [
            greet,
            ("user", "Create a task 'Important Meeting' for user_1."),
            ("call", "assistant", "create_task", {"user_id": "user_1", "title": "Important Meeting"}, "call_create"),
            ("assistant", "Created."),
            ("user", "And one more."),
            ("call", "assistant", "create_task", {"user_id": "user_1", "title": "Follow-up"}, "call_second"),
            ("user", "###STOP###"),
        ],
        0.0,
        tamper=break_structure,
    )

    sim(
        "demo-user-tools",
        "update_task_1",
        [
            greet,
            ("call", "user", "check_notifications", {}, "call_inbox"),
            ("user", "I finished task_1, please mark it completed."),
            ("call", "assistant", "update_task_status", {"task_id": "task_1", "status": "completed"}, "call_update"),
            ("assistant", "task_1 is completed."),
            ("call", "user", "dismiss_notification", {"notification_id": "notif_1"}, "call_dismiss"),
            ("user", "Thanks ###STOP###"),
        ],
        0.0,
    )

    used = {s["task_id"] for s in sims}
    missing = used - set(tasks)
    if missing:
        raise SystemExit(f"tasks not in the data folder: {sorted(missing)}")
    results = {
        "timestamp": "2025-06-01T10:00:00",
        "info": {
            "git_commit": "tau-tui demo",
            "num_trials": 1,
            "max_steps": 200,
            "max_errors": 10,
            "seed": 7,
            "agent_info": {"implementation": "hand_written", "llm": "demo"},
            "user_info": {"implementation": "hand_written", "llm": "demo"},
            "environment_info": {
                "domain_name": "mock",
                "policy": "(tau2's mock policy; read from the data folder)",
                "tool_defs": None,
            },
        },
        # Tasks are not embedded: they are read from the tau2 data folder by id.
        "tasks": [],
        "simulations": sims,
    }
    save_results(results, Path(args.out))
    print(f"wrote {args.out}: {len(sims)} simulations over tasks {json.dumps(sorted(used))}")


if __name__ == "__main__":
    main()
