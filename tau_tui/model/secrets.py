"""Secrets kept out of everything we write: one scrubber for results, notes, exports and temp copies.

The secrets are the values of the credential variables of the environment
(``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET`` and a few well-known
names) and of the credential-like keys of the model arguments in use
(``api_key``, ``token``, ``authorization``…). A provider may echo a key
inside a reply, its raw data or an error body, so every value we write is
scrubbed of every known secret before it is encoded (``redact``), in every
format. Encoded bytes are never rewritten: a JSON escape, a compressed page or
a database file cannot be edited in place, so what ``write_atomic`` is given
is only checked (``leaked_credentials``), and refused if it still holds one.
Values shorter than ``MIN_SECRET_LENGTH`` are left alone: they are not real
keys, and blanking them would damage text.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Mapping

REDACTED = "***"
MIN_SECRET_LENGTH = 8

_SECRET_KEY = re.compile(
    r"api[_-]?key|token|secret|password|passwd|authori[sz]ation|credential|access[_-]?key|"
    r"private[_-]?key|cookie",
    re.IGNORECASE,
)
_KEY_SHAPED = re.compile(r"\b(?:sk|pk|rk|xai|gsk|key|AIza|ya29)[-_][A-Za-z0-9_\-]{12,}")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{8,}")
_NUMBER_TEXT = re.compile(r"[0-9.eE+-]+")  # a secret that could be the text of a JSON number
_SECRET_VARIABLE = re.compile(r"(?:_API_KEY|_APIKEY|_KEY|_TOKEN|_SECRET|_PASSWORD)$", re.IGNORECASE)
# Credential variables whose names do not follow the pattern above.
KNOWN_SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHERAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "COHERE_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
    "HUGGINGFACE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "LITELLM_MASTER_KEY",
    "LITELLM_API_KEY",
)


def is_secret_key(name: Any) -> bool:
    return isinstance(name, str) and bool(_SECRET_KEY.search(name))


def is_secret_variable(name: str) -> bool:
    return name.upper() in KNOWN_SECRET_VARIABLES or bool(_SECRET_VARIABLE.search(name))


def environment_credentials(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment's credential variables (long enough to be keys), by name."""
    environ = os.environ if environ is None else environ
    return {
        name: value
        for name, value in environ.items()
        if is_secret_variable(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    }


def credential(name: str) -> str | None:
    """The live value of one credential variable (``OPENAI_API_KEY``), as a provider client takes it; None
    for a variable that is not a credential, or is unset."""
    return os.environ.get(name) if is_secret_variable(name) else None


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The values of the environment's credential variables (long enough to be keys)."""
    return set(environment_credentials(environ).values())


def public_llm_args(args: dict[str, Any] | None) -> dict[str, Any]:
    """``llm_args`` as they may be recorded: every credential-like key removed (nested dicts too)."""
    out: dict[str, Any] = {}
    for key, value in (args or {}).items():
        if is_secret_key(key):
            continue
        out[key] = public_llm_args(value) if isinstance(value, dict) else value
    return out


def secret_values(*args: dict[str, Any] | None) -> set[str]:
    """The values of credential-like keys in some ``llm_args`` (nested dicts included)."""
    found: set[str] = set()
    for mapping in args:
        for key, value in (mapping or {}).items():
            if isinstance(value, dict):
                found |= secret_values(value)
            elif is_secret_key(key) and isinstance(value, str):
                words = value.split()
                # "Bearer <key>": the key alone is a secret too
                found |= {v for v in (value, words[-1] if words else "") if len(v) >= MIN_SECRET_LENGTH}
    return found


def known_secrets(*args: dict[str, Any] | None) -> set[str]:
    """Every secret a write must not contain: the environment's and those of ``args`` (model arguments)."""
    return environment_secrets() | secret_values(*args)


def _ordered(secrets: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True))


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Blank known secrets, bearer tokens and key-shaped strings in free text (error messages)."""
    for secret in _ordered(secrets):
        text = text.replace(secret, REDACTED)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _KEY_SHAPED.sub(REDACTED, text)


def leaked_credentials(payload: bytes, environ: Mapping[str, str] | None = None) -> list[str]:
    """The names of the environment's credential variables whose value ``payload`` holds.

    A check, never a rewrite: encoded bytes (JSON escapes, compressed pages, a number that happens to
    spell a key) cannot be edited safely, so values are scrubbed before they are encoded (``redact``)
    and a write that still holds one is refused (``model.io.write_atomic``).
    """
    return sorted(name for name, value in environment_credentials(environ).items() if value.encode() in payload)


def redact(value: Any, secrets: Iterable[str], *, scrub: bool = False) -> Any:
    """A JSON-like value with every known secret blanked, before it is encoded.

    Strings (keys too) have each secret replaced by ``***``; a number whose text spells a secret
    becomes ``***``. ``scrub`` (for error details, never for trajectories) also blanks key-shaped
    strings and the values of credential-like keys.
    """
    secrets = _ordered(secrets)
    if not secrets and not scrub:
        return value
    numeric = tuple(s for s in secrets if _NUMBER_TEXT.fullmatch(s))

    def text(node: str) -> str:
        if scrub:
            return scrub_text(node, secrets)
        for secret in secrets:
            if secret in node:
                node = node.replace(secret, REDACTED)
        return node

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return text(node)
        if isinstance(node, dict):
            return {
                (text(k) if isinstance(k, str) else k): (
                    REDACTED if scrub and is_secret_key(k) and isinstance(v, str) else walk(v)
                )
                for k, v in node.items()
            }
        if isinstance(node, (list, tuple)):
            return [walk(v) for v in node]
        if numeric and isinstance(node, (int, float)) and not isinstance(node, bool):
            spelled = repr(node)
            return REDACTED if any(s in spelled for s in numeric) else node
        return node

    return walk(value)
