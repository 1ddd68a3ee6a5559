"""What a reply used and what it cost, in one place for both ways a call goes (through litellm, or straight to
its endpoint: ``direct``).

``usage`` reads the token counts off the reply's JSON: the provider's as it came, or litellm's response as a
dict. ``litellm_cost`` is litellm's price of the reply, 0.0 for a model it cannot price (as in tau2), so a cost
never differs with the way the call went. litellm is imported by ``import_litellm``, with its cost map read
from the installed package, never downloaded.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Mapping


def import_litellm() -> Any:
    """litellm, set up as every call uses it: its own cost map, no debug banner, no warning for the coroutine
    of a call cancelled meanwhile."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # litellm makes the provider's coroutine in a worker thread: a call cancelled meanwhile (a run stopped at a
    # refused key, a rollout cancelled in the TUI) leaves it un-awaited, which Python reports on stderr.
    warnings.filterwarnings(
        "ignore", message=r"coroutine '\w+\.acompletion' was never awaited", category=RuntimeWarning
    )

    litellm.suppress_debug_info = True
    return litellm


def usage(reply: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A reply's token counts (whole numbers only) as a message records them; None when the reply has none."""
    counts = reply.get("usage") if reply is not None else None
    if not isinstance(counts, dict):
        return None

    def count(name: str) -> int | None:
        value = counts.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return {"completion_tokens": count("completion_tokens"), "prompt_tokens": count("prompt_tokens")}


def litellm_cost(response: Any, litellm: Any = None) -> float:
    """litellm's cost of a reply, 0.0 when unpriced (as in tau2): litellm's response (custom per-token prices in
    the call's arguments count: litellm priced it already), or the endpoint's JSON object, made one here.
    ``litellm``: the module, when the caller has it; else it is imported here (call this off the event loop)."""
    if litellm is None:
        litellm = import_litellm()
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:  # litellm priced the reply already (None: it found no price)
        cost = hidden["response_cost"]
        return float(cost) if isinstance(cost, (int, float)) else 0.0
    try:
        if isinstance(response, dict):
            response = litellm.ModelResponse(**response)
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - an unpriced model costs 0.0, as in tau2
        return 0.0
