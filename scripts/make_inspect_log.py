"""Write a real Inspect log of inspect-evals' tau2 port, made by Inspect itself with its offline mock model.

Nothing is written by hand: Inspect runs the task (``tau2_airline``, ``tau2_retail`` or ``tau2_telecom``
from inspect-evals) on one sample with ``mockllm/model`` for both the agent and the user simulator. The
mock agent is given the sample's own reference actions as its tool calls (so the environment really
changes and the log's store holds a DB worth checking), then says so; the mock user opens the
conversation and then stops with ``###STOP###``. Inspect executes the tools, scores the sample and writes
the ``.eval`` log, whose store holds the final DB (``<Domain>Tools:db``).

Usage: python scripts/make_inspect_log.py DOMAIN OUT_DIR [--task ID]   (needs the optional ``inspect`` extra)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

TASKS = {"airline": "tau2_airline", "retail": "tau2_retail", "telecom": "tau2_telecom"}
# A task with write actions per domain (the first that has some is used when none is asked for).
DEFAULT_TASKS = {"airline": "7", "retail": "0", "telecom": None}


def _offline_tokenizer() -> None:
    """Inspect counts tokens with tiktoken's o200k_base, which it would download; litellm ships that file."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


def _task(domain: str):
    from inspect_evals.tau2 import tau2

    return getattr(tau2, TASKS[domain])(shuffle=False, message_limit=4)


def _pick_sample(task: Any, wanted: str | None) -> Any:
    samples = list(task.dataset)
    if wanted is not None:
        for sample in samples:
            if str(sample.id) == wanted:
                return sample
        raise SystemExit(f"make_inspect_log: no task {wanted!r} in this domain")
    for sample in samples:
        actions = (sample.metadata["task"].get("evaluation_criteria") or {}).get("actions") or []
        if any(a.get("requestor", "assistant") == "assistant" for a in actions):
            return sample
    return samples[0]


def make_log(domain: str, out_dir: Path | str, task_id: str | None = None) -> Path:
    """Run Inspect on one sample of ``domain`` with mock models; returns the path of the ``.eval`` log."""
    _offline_tokenizer()
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, get_model

    task = _task(domain)
    sample = _pick_sample(task, task_id or DEFAULT_TASKS.get(domain))
    actions = (sample.metadata["task"].get("evaluation_criteria") or {}).get("actions") or []

    def calls(requestor: str) -> list[Any]:
        return [
            ModelOutput.for_tool_call("mockllm/model", a["name"], dict(a.get("arguments") or {}))
            for a in actions
            if a.get("requestor", "assistant") == requestor
        ]

    agent_outputs = calls("assistant") + [ModelOutput.from_content("mockllm/model", "I have done what you asked.")]
    # the user simulator makes its own reference calls (telecom's phone), then opens; later it stops
    user_outputs = calls("user") + [
        ModelOutput.from_content("mockllm/model", "Hi, I need help with my account."),
        ModelOutput.from_content("mockllm/model", "Thanks, that is all. ###STOP###"),
    ]
    agent = get_model("mockllm/model", custom_outputs=agent_outputs)
    user = get_model("mockllm/model", custom_outputs=user_outputs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    one = task_with(task, dataset=MemoryDataset([sample], name=f"tau2_{domain}"))  # ids hold glob characters
    logs = inspect_eval(
        one,
        model=agent,
        model_roles={"user": user},
        log_dir=str(out_dir),
        log_format="eval",
        display="none",
        score=True,
        fail_on_error=False,
    )
    location = logs[0].location
    return Path(location.removeprefix("file://"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", choices=sorted(TASKS))
    parser.add_argument("out_dir")
    parser.add_argument("--task", help="sample (task) id; default: one with write actions")
    args = parser.parse_args()
    try:
        print(make_log(args.domain, args.out_dir, args.task))
    except Exception as exc:  # noqa: BLE001 - Inspect's own errors, on one line
        print(
            f"make_inspect_log: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
