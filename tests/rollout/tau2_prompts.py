"""Run under tau2 1.0.1's Python: the system prompts and tools tau2's own builders give its agent and user.

    TAU2_DATA_DIR=... python tau2_prompts.py '{"DOMAIN": [TASK_ID, ...] or N, ...}'

Prints one JSON object: domain -> task id -> {"agent", "agent_tools", "user", "user_tools", "solo"} (a number N
in place of the ids: the domain's first N tasks; one interpreter for every domain, as tau2 1.0.1 takes seconds
to import). ``solo`` is the solo
agent's prompt and tool schemas, or null when tau2 refuses the task for solo mode); banking_knowledge is built
with the bm25_grep retrieval variant, tau-tui's default. Never imported by the suite: it runs in the other
interpreter.
"""

import json
import sys
from collections.abc import Callable
from typing import Any


def main() -> None:
    from loguru import logger

    logger.remove()
    from tau2.registry import registry
    from tau2.runner.build import build_agent, build_environment, build_user

    wanted = json.loads(sys.argv[1])
    print(
        json.dumps(
            {
                domain: prompts(domain, ids, registry, build_agent, build_environment, build_user)
                for domain, ids in wanted.items()
            }
        )
    )


def prompts(
    domain: str,
    ids: list[str] | int,
    registry: Any,  # tau2 1.0.1's registry, in the other interpreter: not the tau2 this venv type-checks against
    build_agent: Callable[..., Any],
    build_environment: Callable[..., Any],
    build_user: Callable[..., Any],
) -> dict[str, dict[str, Any]]:
    tasks = {t.id: t for t in registry.get_tasks_loader(domain)()}
    task_ids = list(tasks)[:ids] if isinstance(ids, int) else ids
    kwargs = {"retrieval_variant": "bm25_grep"} if domain == "banking_knowledge" else None
    out: dict[str, dict[str, Any]] = {}
    for task_id in task_ids:
        task = tasks[task_id]
        env = build_environment(domain, solo_mode=False, env_kwargs=kwargs)
        agent = build_agent("llm_agent", env, llm="x", llm_args={}, task=task, solo_mode=False)
        user = build_user("user_simulator", env, task, llm="x", llm_args={}, solo_mode=False)
        solo: dict[str, Any] | None = None
        try:
            solo_env = build_environment(domain, solo_mode=True, env_kwargs=kwargs)
            solo_agent = build_agent("llm_agent_solo", solo_env, llm="x", llm_args={}, task=task, solo_mode=True)
            solo = {"prompt": solo_agent.system_prompt, "tools": [t.openai_schema for t in solo_agent.tools]}
        except (AssertionError, ValueError):
            solo = None
        out[task_id] = {
            "agent": agent.system_prompt,
            "agent_tools": [t.openai_schema for t in agent.tools],
            "user": user.system_prompt,
            "user_tools": [t.openai_schema for t in user.tools or []],
            "solo": solo,
        }
    return out


if __name__ == "__main__":
    main()
