"""Write tests/fixtures/wild/: the shapes of recorded runs found in the wild, made from tau2's own trajectories.

    python scripts/make_wild_fixtures.py

Each file is cut from the corpus's ``generated/tau2-gold_*.json`` (tool results exactly as tau2 1.0.1 returned
them) and reshaped into a layout other people publish: a ``tau2 view`` note, a per-task export, wrappers, a bare
list, an old leaderboard upload without task ids, a run.json beside a simulation, a fork's own domain, and files
with bad fields. ``reward_info`` is what tau2's evaluator writes (computed with tau-tui's eval, which agrees with
tau2 1.0.1 on the whole corpus). The files are deterministic: rerunning gives the same bytes.
"""

import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
OUT = ROOT / "tests" / "fixtures" / "wild"


def gold(domain, sim_id):
    data = json.loads((CORPUS / "generated" / f"tau2-gold_{domain}.json").read_text())
    return copy.deepcopy(next(s for s in data["simulations"] if s["id"] == sim_id))


def task(domain, task_id):
    tasks = json.loads((CORPUS / "domains" / domain / "tasks.json").read_text())
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    return copy.deepcopy(next(t for t in tasks if t["id"] == task_id))


def reward_info(domain, sim, the_task):
    """tau2's reward_info for ``sim`` (tau-tui's eval of it, in tau2's field order)."""
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.model.io import RunFile

    run = RunFile(Path(f"{domain}.json"), "results", [sim], {"environment_info": {"domain_name": domain}}, [the_task])
    report = Analyzer(DomainRegistry(CORPUS)).evaluate(run, 0)
    info = report.to_json(str(run.path))["reward_info"]
    assert info["reward"] is not None, report.to_json(str(run.path))
    return info


def renumber(messages):
    for i, m in enumerate(messages):
        m["turn_idx"] = i
    return messages


def write(name, data, indent=2):
    path = OUT / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n")
    print(path.relative_to(ROOT), path.stat().st_size)


def with_reward(domain, sim, task_id):
    sim["reward_info"] = reward_info(domain, sim, task(domain, task_id))
    return sim


def main():
    OUT.mkdir(parents=True, exist_ok=True)

    # 1. tau2 view's note: task_<task>_<note>_simulation.json (a lone SimulationRun) and task_<task>_<note>_note.json
    sim = with_reward("mock", gold("mock", "gold-mock-create_task_1-gold"), "create_task_1")
    write("note/task_create_task_1_5f3c2a1e_simulation.json", sim)
    write(
        "note/task_create_task_1_5f3c2a1e_note.json",
        {
            "id": "5f3c2a1e",
            "note": "the agent created the task without asking for a description",
            "author_email": None,
            "created_at": "2026-11-30T10:12:00",
            "simulation_id": sim["id"],
            "task_id": "create_task_1",
            "trial": 0,
            "source_results_file": "data/simulations/mock_run/results.json",
            "simulation_file": "task_create_task_1_5f3c2a1e_simulation.json",
        },
    )

    # 2. a per-task export {task_id, task, run_info, reward_info, messages}
    sim = with_reward("retail", gold("retail", "gold-retail-5-gold"), "5")
    write(
        "per_task_export.json",
        {
            "task_id": "5",
            "task": task("retail", "5"),
            "run_info": {"agent": "llm_agent", "agent_llm": "gpt-4.1", "user_llm": "gpt-4.1", "seed": 300},
            "reward_info": sim["reward_info"],
            "messages": sim["messages"],
        },
    )

    # 3. {task_id, reward, simulation_run}: the reward is the wrapper's, the simulation has none
    sim = gold("mock", "gold-mock-update_task_1-gold")
    reward = reward_info("mock", sim, task("mock", "update_task_1"))["reward"]
    sim["reward_info"] = None
    write("reward_wrapper.json", {"task_id": "update_task_1", "reward": reward, "simulation_run": sim})

    # 4. a bare list of simulations (airline), compact as a re-saving tool writes it
    sims = [with_reward("airline", gold("airline", f"gold-airline-{t}-gold"), t) for t in ("1", "2")]
    write("simulations_list.json", sims, indent=None)

    # 5. {domain, agent, model, ..., simulations}
    sims = [
        with_reward("mock", gold("mock", "gold-mock-create_task_1-gold"), "create_task_1"),
        with_reward("mock", gold("mock", "gold-mock-update_task_1-repeat_write"), "update_task_1"),
    ]
    passed = sum(s["reward_info"]["reward"] == 1.0 for s in sims)
    write(
        "custom_wrapper.json",
        {
            "domain": "mock",
            "agent": "llm_agent",
            "model": "gpt-4.1",
            "total_tasks": 2,
            "passed": passed,
            "pass_rate": passed / 2,
            "simulations": sims,
        },
    )

    # 6. an old upload: only {id, reward_info, messages}; two trials of task 1 (action checks), one of task 5
    # whose reward_info has no action checks (its first user message says who the user is)
    old = []
    for sim_id, task_id in (("gold-retail-1-gold", "1"), ("gold-retail-1-extra_hallucinated", "1")):
        sim = with_reward("retail", gold("retail", sim_id), task_id)
        old.append({"id": f"upload-{len(old)}", "reward_info": sim["reward_info"], "messages": sim["messages"]})
    sim = with_reward("retail", gold("retail", "gold-retail-69-gold"), "69")
    first_user = next(m for m in sim["messages"] if m["role"] == "user")
    first_user["content"] = "Hi! I'm Emma Smith from New York, zip 10192. I'd like to return a laptop I just received."
    info = dict(sim["reward_info"])
    info["action_checks"] = None
    old.append({"id": "upload-2", "reward_info": info, "messages": sim["messages"]})
    write("old_upload.json", old)

    # 7. a simulation that calls only a tool every domain has: no domain can be told from it
    sim = gold("airline", "gold-airline-0-gold")
    msgs = sim["messages"]
    user = next(m for m in msgs if m["role"] == "user")
    agent = msgs[0]
    call = {
        **copy.deepcopy(agent),
        "content": None,
        "tool_calls": [
            {
                "id": "call_t1",
                "name": "transfer_to_human_agents",
                "arguments": {"summary": "The user wants to change a basic economy flight."},
                "requestor": "assistant",
            }
        ],
    }
    result = {
        "id": "call_t1",
        "role": "tool",
        "content": "Transfer successful",
        "requestor": "assistant",
        "error": False,
        "turn_idx": 0,
        "timestamp": agent["timestamp"],
    }
    stop = {**copy.deepcopy(user), "content": "###TRANSFER###"}
    sim["messages"] = renumber([copy.deepcopy(agent), copy.deepcopy(user), call, result, stop])
    sim = with_reward("airline", sim, "0")
    write("transfer_only.json", sim)
    # ... and the same beside the run.json of its run, which names the domain
    write("sidecar/run.json", {"domain": "airline", "agent": "llm_agent", "llm_agent": "gpt-4.1", "num_trials": 1})
    write("sidecar/transfer_only.json", sim)

    # 8. a fork's own domain (a course's hotel domain), named and unnamed
    def hotel_messages():
        base = gold("mock", "gold-mock-create_task_1-gold")["messages"]
        greet, ask, call, result, done, stop = (copy.deepcopy(base[i]) for i in range(6))
        ask["content"] = "Please book room 101 for Ana."
        call["tool_calls"] = [
            {
                "id": "call_h1",
                "name": "book_room",
                "arguments": {"room": "101", "guest": "Ana"},
                "requestor": "assistant",
            }
        ]
        result["id"] = "call_h1"
        result["content"] = json.dumps({"room": "101", "guest": "Ana"})
        return renumber([greet, ask, call, result, done, stop])

    hotel = gold("mock", "gold-mock-create_task_1-gold")
    hotel.update(id="hotel-1", task_id="book_101", messages=hotel_messages(), reward_info=None)
    write(
        "fork_domain.json",
        {
            "timestamp": hotel["timestamp"],
            "info": {
                "num_trials": 1,
                "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1"},
                "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
                "environment_info": {
                    "domain_name": "hotel_calle",
                    "policy": "Book rooms for guests.",
                    "tool_defs": None,
                },
            },
            "tasks": [],
            "simulations": [hotel],
        },
    )
    write("fork_domain_unnamed.json", [hotel])

    # 9. bad fields: each is one warning, never an exception
    sims = [with_reward("mock", gold("mock", "gold-mock-create_task_1-gold"), "create_task_1")]
    write(
        "bad_fields.json",
        {"domain": 7, "agent": ["x"], "model": {"name": "m"}, "info": "oops", "tasks": {"t": 1}, "simulations": sims},
    )
    sim = gold("mock", "gold-mock-update_task_1-gold")
    write(
        "bad_export.json",
        {
            "task_id": ["update_task_1"],
            "task": "update_task_1",
            "run_info": 5,
            "reward": "high",
            "messages": sim["messages"],
            "termination_reason": "user_stop",
        },
    )


if __name__ == "__main__":
    main()
