"""User settings: one pydantic model read from a TOML file, with environment overrides.

The file is ``$TAU_TUI_CONFIG`` if set, else ``$XDG_CONFIG_HOME/tau-tui/config.toml``
(``~/.config/tau-tui/config.toml``). Environment variables win over the file:
``TAU2_DATA_DIR``, ``TAU_TUI_DOMAINS`` (``os.pathsep``-separated),
``TAU_TUI_RUNS_DIR``, ``TAU_TUI_JUDGE``, ``TAU_TUI_JUDGE_API_BASE``. Command-line
flags win over both. ``keymap`` remaps keys by binding id (``[keymap]`` table, binding id →
comma-separated keys); the TUI checks the ids when it starts. Secrets (API keys) are never read from or written to this
file: litellm takes them from the environment.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

CONFIG_ENV = "TAU_TUI_CONFIG"


class ConfigError(Exception):
    """An unreadable settings file; ``str()`` is one line naming it."""


class Settings(BaseModel):
    """What the settings file and the environment set; command-line flags win over it."""

    model_config = ConfigDict(extra="forbid")

    tau2_data: Path | None = None
    domain_paths: list[Path] = []
    runs_dir: Path = Path("runs")
    judge_model: str | None = None
    judge_api_base: str | None = None
    keymap: dict[str, str] = {}  # binding id → comma-separated keys, e.g. {"traj.next_write": "ctrl+w,W"}
    upstream_fixes: bool = False  # replay with the upstream fixes of tau2 1.0.1's tools (--upstream-fixes)

    @field_validator("keymap")
    @classmethod
    def _keys_given(cls, keymap: dict[str, str]) -> dict[str, str]:
        for binding_id, keys in keymap.items():
            if not all(k.strip() for k in keys.split(",")):
                raise ValueError(f"{binding_id!r}: {keys!r} is not a comma-separated list of keys")
        return {binding_id: ",".join(k.strip() for k in keys.split(",")) for binding_id, keys in keymap.items()}


def config_path() -> Path:
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tau-tui" / "config.toml"


def load_settings() -> Settings:
    """Settings from the file (if any) with environment overrides applied."""
    path = config_path()
    data: dict = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: unreadable settings ({exc})") from None
    overrides = {
        "tau2_data": os.environ.get("TAU2_DATA_DIR"),
        "runs_dir": os.environ.get("TAU_TUI_RUNS_DIR"),
        "judge_model": os.environ.get("TAU_TUI_JUDGE"),
        "judge_api_base": os.environ.get("TAU_TUI_JUDGE_API_BASE"),
    }
    data.update({k: v for k, v in overrides.items() if v})
    extra_domains = [p for p in os.environ.get("TAU_TUI_DOMAINS", "").split(os.pathsep) if p]
    if extra_domains:
        data["domain_paths"] = extra_domains + list(data.get("domain_paths", []))
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ConfigError(f"{path}: {where}: {first.get('msg')}") from None
