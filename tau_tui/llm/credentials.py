"""Model credentials: which API key a model lacks, and the one-line stop of a call whose key was refused.

A missing or refused key does not fix itself, so nothing retries it: front ends check before they start
(``credentials_problem``, asking litellm's ``validate_environment``) and a call the provider refuses raises
``MissingCredentials`` (``refusal``), which stops the run, play session, fork or evaluation with one line.
A model whose arguments give an ``api_base`` or an ``api_key`` (a local server needs no key) is not checked
before it starts. litellm is imported only when a model is checked.
"""

from __future__ import annotations

from typing import Any, Mapping

from tau_tui.config import ConfigError
from tau_tui.llm.failures import ProviderFailure
from tau_tui.llm.litellm_transport import missing_keys as litellm_missing_keys
from tau_tui.model.secrets import known_secrets, scrub_text

# Arguments that say where the model is served or which key it uses: then the environment is not consulted.
OWN_ENDPOINT_ARGS = ("api_base", "base_url", "api_key")


class MissingCredentials(ConfigError):
    """A model call that cannot succeed until the user sets or fixes a key; ``str()`` is one line.

    A setting to fix, so the command line reports it as it reports a bad settings file (exit status 2).
    """


def missing_keys(model: str, args: Mapping[str, Any] | None = None) -> list[str]:
    """The API-key variables litellm says ``model`` needs and the environment lacks.

    Only ``*_API_KEY`` variables count: a provider that also needs a base URL or version (Azure), or reads
    credentials from elsewhere (AWS, Vertex), is left to fail on its first call. None when ``args`` name
    an endpoint or a key of their own.
    """
    if args and any(args.get(name) for name in OWN_ENDPOINT_ARGS):
        return []
    missing = litellm_missing_keys(model)
    return missing if missing and all(name.endswith("_API_KEY") for name in missing) else []


def credentials_problem(model: str, args: Mapping[str, Any] | None = None, role: str = "") -> str | None:
    """One line naming the key variable ``model`` needs and that is not set, or None."""
    missing = missing_keys(model, args)
    if not missing:
        return None
    who = f"the {role} model {model}" if role else model
    if len(missing) == 1:
        return f"{missing[0]} is not set ({who} needs it)"
    return f"none of {', '.join(missing)} is set ({who} needs one)"


def refusal(model: str, args: Mapping[str, Any] | None, exc: ProviderFailure, role: str = "") -> MissingCredentials:
    """The ``MissingCredentials`` of a refused call: the unset variable when there is one, else the provider's
    first line (keys blanked)."""
    problem = credentials_problem(model, args, role)
    if problem:
        return MissingCredentials(problem)
    lines = str(exc).strip().splitlines()
    said = scrub_text(lines[0] if lines else "", known_secrets(dict(args or {})))
    said = said if len(said) <= 200 else said[:199] + "…"
    who = f"the {role} model {model}" if role else model
    return MissingCredentials(f"{who}: the provider refused the credentials ({exc.name}: {said})")


__all__ = ["MissingCredentials", "credentials_problem", "missing_keys", "refusal"]
