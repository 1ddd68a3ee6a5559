"""What each offline banking_knowledge retrieval variant costs an agent per turn, against no_knowledge.

    LITELLM_LOCAL_MODEL_COST_MAP=True python -m benchmarks.banking_variants [--tau2-data DIR] [--model M]
        [--queries N]

For every offline variant (no_knowledge is the baseline, measured in the same
run): the fixed prompt an agent pays on every turn (policy + tool schemas, in
tokens by ``litellm.token_counter`` for ``--model``, and in dollars at that
model's input price from litellm's local cost map), and, for the search tools
the variant adds, the mean time and the mean tokens one call returns
(queries: the first words of the tasks' user instructions). Also the gold
agent's offline rollout of every task (scripted user), which must score 1.0
on every task that needs no judge, with its time per task.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from tau_tui.calibrate import GoldChecker
from tau_tui.domains import DomainRegistry
from tau_tui.env.tool_schema import toolkit_schemas

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
OFFLINE = ("no_knowledge", "bm25_grep", "bm25", "grep_only", "golden_retrieval", "full_kb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2-data", default=str(CORPUS))
    parser.add_argument("--model", default="gpt-4.1", help="tokenizer and input price (litellm name)")
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    price = (litellm.model_cost.get(args.model) or {}).get("input_cost_per_token") or 0.0
    registry = DomainRegistry(args.tau2_data, use_tau2=False)
    domain = registry.get("banking_knowledge")
    tasks = list(domain.tasks().values())
    queries = [" ".join(str(t.user_scenario.instructions).split()[:12]) for t in tasks[: args.queries]]

    def tokens(text: str) -> int:
        return litellm.token_counter(model=args.model, text=text)

    rows = []
    for name in OFFLINE:
        env = domain.new_environment(variant=name)
        if name == "golden_retrieval":  # its policy depends on the task: the mean over all tasks
            policy_tokens = 0
            for task in tasks:
                env.bind_task(task)
                policy_tokens += tokens(env.policy)
            policy_tokens //= len(tasks)
        else:
            policy_tokens = tokens(env.policy)
        schema_tokens = tokens(json.dumps(toolkit_schemas(env.agent)))
        searches = {}
        for tool in ("KB_search", "grep"):
            if env.agent.has_tool(tool):
                getattr(env.agent, tool)("warm up the index")
                started = time.perf_counter()
                outputs = [getattr(env.agent, tool)(q if tool == "KB_search" else q.split()[-1]) for q in queries]
                elapsed = (time.perf_counter() - started) / len(queries)
                searches[tool] = (1000 * elapsed, sum(tokens(o) for o in outputs) / len(outputs))
        checker = GoldChecker.for_name(registry, f"banking_knowledge-{name}")
        started = time.perf_counter()
        checks = checker.run(tasks)
        seconds = time.perf_counter() - started
        judged = [c for c in checks if "NL_ASSERTION" in (c.to_json()["reward_basis"] or [])]
        ones = sum(1 for c in checks if c not in judged and c.to_json()["gold_reward"] == 1.0)
        rows.append((name, policy_tokens, schema_tokens, searches, ones, len(checks) - len(judged), seconds))

    base = rows[0][1] + rows[0][2]
    print(
        f"per agent turn, fixed prompt (policy + tool schemas), {args.model} tokenizer, "
        f"${price * 1e6:.2f}/M input tokens; baseline no_knowledge = {base} tokens"
    )
    for name, policy, schema, searches, ones, scored, seconds in rows:
        fixed = policy + schema
        line = (
            f"  {name:17s} {fixed:7d} tok/turn ({fixed / base:6.1f}x) ${fixed * price:.4f}/turn"
            f" | gold 1.0 on {ones}/{scored} tasks, {1000 * seconds / len(tasks):.1f} ms/task"
        )
        for tool, (ms, out_tokens) in searches.items():
            line += f" | {tool}: {ms:.1f} ms/call, {out_tokens:.0f} tok/call (${out_tokens * price:.4f})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
