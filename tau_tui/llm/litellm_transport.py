"""litellm: the transport for every model the HTTP transport does not serve, and the one module that imports it.

litellm takes seconds to import, so nothing imports it until a call, a price or a key check needs it
(``import_litellm``). Its price map is read from the installed package, never downloaded: the setting that
says so is made here once (``local_cost_map``), before any import. litellm's own retries are off (the
client retries); a failure is classified into our kinds (``failures.classify``) under litellm's class
name, which is what recordings hold.

Pricing without importing: the HTTP transport must know whether litellm could price a model before it
decides to bypass it. When litellm is imported already its map is asked through its API
(``litellm.model_cost``); otherwise the map file the installed litellm ships is read (litellm has no API
that gives the map without importing itself).
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from tau_tui.llm.failures import classify
from tau_tui.llm.transport import JSON, Reply, Request, Route, first_message

COST_MAP_VARIABLE = "LITELLM_LOCAL_MODEL_COST_MAP"
PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"  # the map the installed litellm ships


def local_cost_map() -> bool:
    """Tell litellm to read its own price map (unless the user said otherwise); whether it will."""
    return os.environ.setdefault(COST_MAP_VARIABLE, "True").strip().lower() in ("true", "1")


def import_litellm() -> Any:
    """litellm, set up as every call uses it: its own cost map, no debug banner, no warning for the coroutine
    of a call cancelled meanwhile."""
    local_cost_map()
    import litellm

    # litellm makes the provider's coroutine in a worker thread: a call cancelled meanwhile (a run stopped at a
    # refused key, a rollout cancelled in the TUI) leaves it un-awaited, which Python reports on stderr.
    warnings.filterwarnings(
        "ignore", message=r"coroutine '\w+\.acompletion' was never awaited", category=RuntimeWarning
    )
    litellm.suppress_debug_info = True
    return litellm


def import_frozen() -> Any:
    """litellm, imported with the collector off (its import makes some hundred thousand objects, and the
    collections they set off cost a fifth of the import), and what it made frozen after, so later collections
    no longer walk litellm's modules. No thread is started: a process may fork after it (the forkserver of
    local process rollouts imports litellm this way once for all its workers)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        litellm = import_litellm()
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    return litellm


def warm_up() -> None:
    """Import litellm, then make one offline call (``mock_response``: nothing leaves the process) so the
    modules litellm imports on its first real call (some 50: a quarter of a second) are loaded before a
    run's first wave of calls instead of in its way."""
    litellm = import_frozen()
    try:
        litellm.completion(
            model="openai/tau-tui-warm-up",
            messages=[{"role": "user", "content": "-"}],
            mock_response="-",
            api_key="-",
        )
    except Exception:  # noqa: BLE001 - a warm-up only: the real call reports its own errors
        pass


def missing_keys(model: str) -> list[str]:
    """The variables litellm says ``model`` needs and the environment lacks ([] when litellm cannot place it)."""
    try:
        report = import_litellm().validate_environment(model=model)
    except Exception:  # noqa: BLE001 - a model litellm cannot place is left to its first call
        return []
    found = report.get("missing_keys") if isinstance(report, dict) else None
    return [name for name in found or [] if isinstance(name, str)]


def _price_table() -> Any:
    if "litellm" in sys.modules:  # imported already: ask it
        return getattr(sys.modules["litellm"], "model_cost", None)
    spec = importlib.util.find_spec("litellm")
    origin = spec.origin if spec is not None else None
    if not origin:
        return None
    return json.loads((Path(origin).parent / PRICE_MAP_FILE).read_bytes())


_PRICED: list[frozenset[str] | None] = []  # once read: [the names]


def price_names() -> frozenset[str] | None:
    """Every name litellm's price map may price a model by (lower case: each key, the key without its
    provider, and its last path segment); None when the map cannot be read."""
    if _PRICED:
        return _PRICED[0]
    names: frozenset[str] | None = None
    try:
        table = _price_table()
        if isinstance(table, dict):
            found: set[str] = set()
            for key in table:
                low = str(key).lower()
                found.update((low, low.split("/", 1)[-1], low.rsplit("/", 1)[-1]))
            names = frozenset(found)
    except (OSError, ValueError, ImportError):
        names = None
    _PRICED.append(names)
    return names


def maybe_priced(name: Any) -> bool:
    """Whether litellm may put a price on a model called ``name`` (True when the map cannot be read)."""
    if not isinstance(name, str):
        return False
    names = price_names()
    if names is None:
        return True
    low = name.lower()
    if low.startswith("ft:"):  # a fine-tuned model: litellm prices it as its base
        return True
    candidates = {low, low.split("/", 1)[-1], low.rsplit("/", 1)[-1], low.removeprefix("openai/")}
    return any(candidate in names for candidate in candidates)


def price(response: Any, litellm: Any = None, provider: str | None = None) -> float:
    """litellm's cost of a reply, 0.0 when unpriced (as in tau2): litellm's response (custom per-token prices in
    the call's arguments count: litellm priced it already), or an endpoint's JSON reply, made one here.
    ``litellm``: the module, when the caller has it; else it is imported here (call this off the event loop).
    ``provider``: the provider that answered (``openai`` for the direct transport). litellm then prices the
    reply's model as that provider's, as it does a reply to its own call; without it, litellm finds the provider
    from the model name the endpoint wrote, and for some names (``github_copilot/…``) that starts an OAuth login
    over the network."""
    if litellm is None:
        litellm = import_litellm()
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:  # litellm priced the reply already (None: it found no price)
        cost = hidden["response_cost"]
        return float(cost) if isinstance(cost, (int, float)) else 0.0
    try:
        if isinstance(response, dict):
            response = litellm.ModelResponse(**response)
        return float(litellm.completion_cost(completion_response=response, custom_llm_provider=provider))
    except Exception:  # noqa: BLE001 - an unpriced model costs 0.0, as in tau2
        return 0.0


def _as_json(response: Any) -> JSON:
    for method in ("to_dict", "model_dump"):
        dump = getattr(response, method, None)
        if callable(dump):
            found = dump()
            if isinstance(found, dict):
                return found
    return {}


class LiteLLMTransport:
    """Calls through ``litellm.acompletion``; it holds no session of its own (litellm keeps its clients)."""

    name = "litellm"

    def prepare(self, model: str, messages: list[JSON], params: JSON, timeout: float, route: Route | None) -> Request:
        return Request(model=model, messages=messages, params=params, timeout=timeout)

    async def send(self, request: Request) -> Reply:
        litellm = import_litellm()
        try:
            response = await litellm.acompletion(model=request.model, messages=request.messages, **request.params)
        except Exception as exc:  # noqa: BLE001 - every failure is classified into our kinds
            raise classify(exc) from None
        raw = _as_json(response)
        return Reply(message=first_message(raw), raw=raw, cost=price(response, litellm))

    async def aclose(self) -> None:
        return None


__all__ = [
    "COST_MAP_VARIABLE",
    "LiteLLMTransport",
    "import_frozen",
    "import_litellm",
    "local_cost_map",
    "maybe_priced",
    "missing_keys",
    "price",
    "price_names",
    "warm_up",
]
