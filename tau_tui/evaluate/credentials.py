"""Model credentials: which API key a litellm model lacks, and telling a refused credential from a passing failure.

A missing or refused key does not fix itself, so nothing retries it: front ends check before they start
(``credentials_problem``, from litellm's ``validate_environment``) and a call the provider refuses raises
``MissingCredentials`` (``refusal``), which stops the run, play session, fork or evaluation with one line.
A model whose arguments give an ``api_base`` or an ``api_key`` (a local server needs no key) is not checked
before it starts. litellm is imported only when a model is checked.
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping

from tau_tui.config import ConfigError
from tau_tui.model.secrets import known_secrets, scrub_text

# Arguments that say where the model is served or which key it uses: then the environment is not consulted.
OWN_ENDPOINT_ARGS = ("api_base", "base_url", "api_key")

_REFUSED_WORDS = re.compile(
    r"missing credentials|(invalid|incorrect|missing|no)\s+(x-)?api[ _-]?key|"
    r"api[ _-]?key\s+(is\s+)?(invalid|not valid|missing|required|must be set|not set|not provided)|unauthori[sz]ed",
    re.IGNORECASE,
)


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
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm

        report = litellm.validate_environment(model=model)
    except Exception:  # noqa: BLE001 - a model litellm cannot place is left to its first call
        return []
    missing = [name for name in report.get("missing_keys") or [] if isinstance(name, str)]
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


def is_refusal(exc: BaseException) -> bool:
    """Whether a provider error means the credentials are missing or refused (no retry helps)."""
    if any(cls.__name__ == "AuthenticationError" for cls in type(exc).__mro__):
        return True
    if getattr(exc, "status_code", None) == 401:
        return True
    return bool(_REFUSED_WORDS.search(str(exc)))


def refusal(model: str, args: Mapping[str, Any] | None, exc: BaseException, role: str = "") -> MissingCredentials:
    """The ``MissingCredentials`` of a refused call: the unset variable when there is one, else the provider's
    first line (keys blanked)."""
    problem = credentials_problem(model, args, role)
    if problem:
        return MissingCredentials(problem)
    lines = str(exc).strip().splitlines()
    said = scrub_text(lines[0] if lines else "", known_secrets(dict(args or {})))
    said = said if len(said) <= 200 else said[:199] + "…"
    who = f"the {role} model {model}" if role else model
    return MissingCredentials(f"{who}: the provider refused the credentials ({type(exc).__name__}: {said})")


__all__ = ["MissingCredentials", "credentials_problem", "is_refusal", "missing_keys", "refusal"]
