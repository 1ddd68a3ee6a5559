"""User settings, resolved once: command-line flags over the environment over the settings file.

``resolve(args)`` is the one place tau-tui reads its environment variables; everything below
(the workspace, worker processes, Ray actors) receives the resolved ``Settings`` and reads no
variable itself. The file is ``$TAU_TUI_CONFIG`` if set, else ``$XDG_CONFIG_HOME/tau-tui/config.toml``
(``~/.config/tau-tui/config.toml``). Each setting, with its variable and flag:

| setting | flag | variable |
|---|---|---|
| ``tau2_data`` | ``--tau2-data`` | ``TAU2_DATA_DIR`` |
| ``domain_paths`` | ``--domains`` (repeatable; all three sources add up) | ``TAU_TUI_DOMAINS`` (``os.pathsep``-separated) |
| ``runs_dir`` | | ``TAU_TUI_RUNS_DIR`` |
| ``judge_model``, ``judge_api_base`` | ``--judge``, ``--judge-api-base`` | ``TAU_TUI_JUDGE``, ``TAU_TUI_JUDGE_API_BASE`` |
| ``workers`` | ``--workers`` | ``TAU_TUI_WORKERS`` |
| ``index_workers`` | | ``TAU_TUI_INDEX_WORKERS`` |
| ``max_read_bytes``, ``stream_bytes`` | | ``TAU_TUI_MAX_READ_BYTES``, ``TAU_TUI_STREAM_BYTES`` |
| ``editor``, ``pager`` | | ``VISUAL`` then ``EDITOR``; ``PAGER`` |
| ``upstream_fixes`` | ``--upstream-fixes`` / ``--no-upstream-fixes`` | |
| ``recording_domain`` | ``--domain`` (``replay``, ``eval``, ``show``, the TUI, ``serve``) | ``TAU_TUI_DOMAIN`` |
| ``ship_data`` | ``--ship-data`` / ``--no-ship-data`` (with ``--executor ray``) | |
| ``notes_dir`` | | ``$XDG_DATA_HOME/tau-tui/notes`` |
| ``ray_address`` | | ``RAY_ADDRESS`` (the cluster ``--executor ray`` joins; unset: a local instance) |
| ``protocol`` | ``--protocol`` (``run``, ``calibrate``, ``play``) | ``TAU_TUI_PROTOCOL`` (``auto``: ``tau2`` where tau2's data is found) |
| ``agent_prompt`` | ``--agent-prompt`` | ``TAU_TUI_AGENT_PROMPT`` (tau2's ``agent/llm_agent.py``, or a template) |
| ``tau2_python`` | ``--tau2-python`` | ``TAU_TUI_TAU2_PYTHON`` (a Python with tau2 installed; default: this one's tau2) |
| ``cache_dir`` | | ``$XDG_CACHE_HOME/tau-tui`` (``~/.cache/tau-tui``: tau2's rendered tool schemas) |

``keymap`` remaps keys by binding id (``[keymap]`` table, binding id → comma-separated keys); the TUI
checks the ids when it starts. ``sources`` says where each value that is not a default came from (messages
name it). Secrets (API keys) are never read into the settings or written to the file: litellm takes them
from the environment.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

CONFIG_ENV = "TAU_TUI_CONFIG"
DEFAULT_MAX_READ_BYTES = 4 * 1024**3  # as model.runtime's (config imports nothing of ours)
DEFAULT_STREAM_BYTES = 4 * 1024**2

# setting -> its environment variable (one value each; domain_paths adds up, editor has two)
ENVIRONMENT = {
    "tau2_data": "TAU2_DATA_DIR",
    "runs_dir": "TAU_TUI_RUNS_DIR",
    "judge_model": "TAU_TUI_JUDGE",
    "judge_api_base": "TAU_TUI_JUDGE_API_BASE",
    "workers": "TAU_TUI_WORKERS",
    "index_workers": "TAU_TUI_INDEX_WORKERS",
    "max_read_bytes": "TAU_TUI_MAX_READ_BYTES",
    "stream_bytes": "TAU_TUI_STREAM_BYTES",
    "pager": "PAGER",
    "recording_domain": "TAU_TUI_DOMAIN",
    "ray_address": "RAY_ADDRESS",
    "protocol": "TAU_TUI_PROTOCOL",
    "agent_prompt": "TAU_TUI_AGENT_PROMPT",
    "tau2_python": "TAU_TUI_TAU2_PYTHON",
}
DOMAINS_ENV = "TAU_TUI_DOMAINS"
EDITOR_ENV = ("VISUAL", "EDITOR")
# setting -> (its flag, the argparse attribute the flag lands on)
FLAGS = {
    "tau2_data": ("--tau2-data", "tau2_data"),
    "judge_model": ("--judge", "judge"),
    "judge_api_base": ("--judge-api-base", "judge_api_base"),
    "workers": ("--workers", "workers"),
    "upstream_fixes": ("--upstream-fixes", "upstream_fixes"),
    "recording_domain": ("--domain", "recording_domain"),
    "ship_data": ("--ship-data", "ship_data"),
    "protocol": ("--protocol", "protocol"),
    "agent_prompt": ("--agent-prompt", "agent_prompt"),
    "tau2_python": ("--tau2-python", "tau2_python"),
}
WHOLE_NUMBERS = {"workers": 1, "index_workers": 0, "max_read_bytes": 1, "stream_bytes": 0}  # setting -> minimum


class ConfigError(Exception):
    """An unusable setting (the file, a variable, a flag); ``str()`` is one line naming where it came from."""


class Settings(BaseModel):
    """Every setting tau-tui runs with, resolved (``resolve``); a plain value, so it travels to workers."""

    model_config = ConfigDict(extra="forbid")

    tau2_data: Path | None = None
    domain_paths: list[Path] = []
    runs_dir: Path = Path("runs")
    judge_model: str | None = None
    judge_api_base: str | None = None
    keymap: dict[str, str] = {}  # binding id → comma-separated keys, e.g. {"traj.next_write": "ctrl+w,W"}
    workers: int | None = None  # replay/evaluation processes (None: every core)
    index_workers: int | None = None  # processes that index several large files (None: every core; 0: none)
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES  # the size limit of one file read
    stream_bytes: int = DEFAULT_STREAM_BYTES  # files at least this big are indexed by streaming
    editor: str | None = None  # the command that edits a file (tasks; JSON views before the pager)
    pager: str | None = None  # the command that shows a file when there is no editor
    notes_dir: Path | None = None  # notes on files we must not write beside (None: ~/.local/share/tau-tui/notes)
    sources: dict[str, str] = {}  # setting -> where its value came from ("--tau2-data", "TAU2_DATA_DIR", ...)
    upstream_fixes: bool = False  # replay with the upstream fixes of tau2 1.0.1's tools (--upstream-fixes)
    recording_domain: str | None = None  # the domain of recordings that name none (--domain)
    ship_data: bool = False  # Ray actors read the domain data this process sends them, not their own (--ship-data)
    ray_address: str | None = None  # the Ray cluster --executor ray joins (None: a local instance)
    protocol: str = "auto"  # whose prompts rollouts use: tau2, own, or auto (tau2 where tau2's data is found)
    agent_prompt: Path | None = None  # tau2's agent/llm_agent.py (or a prompt template) for protocol tau2
    tau2_python: Path | None = None  # a Python whose tau2 gives protocol tau2 its texts (None: this one's tau2)
    cache_dir: Path | None = None  # what tau-tui may keep between runs (None: ~/.cache/tau-tui)

    @field_validator("protocol")
    @classmethod
    def _known_protocol(cls, protocol: str) -> str:
        value = protocol.strip().lower()
        if value not in ("auto", "tau2", "own"):
            raise ValueError(f"{protocol!r} is not one of auto, tau2, own")
        return value

    @field_validator("keymap")
    @classmethod
    def _keys_given(cls, keymap: dict[str, str]) -> dict[str, str]:
        for binding_id, keys in keymap.items():
            if not all(k.strip() for k in keys.split(",")):
                raise ValueError(f"{binding_id!r}: {keys!r} is not a comma-separated list of keys")
        return {binding_id: ",".join(k.strip() for k in keys.split(",")) for binding_id, keys in keymap.items()}

    def portable(self) -> Settings:
        """These settings for a process on another machine (Ray actors): relative folders made absolute against
        this process's working folder, which a worker elsewhere does not share."""

        def absolute(path: Path | None) -> Path | None:
            return None if path is None else Path(os.path.abspath(path.expanduser()))

        return self.model_copy(
            update={
                "tau2_data": absolute(self.tau2_data),
                "domain_paths": [absolute(p) for p in self.domain_paths],
                "notes_dir": absolute(self.notes_dir),
                "agent_prompt": absolute(self.agent_prompt),
                "tau2_python": absolute(self.tau2_python),
                "cache_dir": absolute(self.cache_dir),
            }
        )

    def origin(self, name: str) -> str:
        """Where setting ``name`` came from, for messages ("default" when nothing set it)."""
        return self.sources.get(name, "default")


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    explicit = environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit)
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tau-tui" / "config.toml"


def whole_number(text: str, minimum: int = 0) -> int | None:
    """``text`` as a whole number of at least ``minimum`` (ASCII digits only: ``²`` is not 2), else None."""
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value >= minimum else None


def id_order(text: str) -> tuple[int, int, str]:
    """Sort key for ids: those that are whole numbers (``whole_number``) in numeric order ("2" before "10"),
    then the rest by name."""
    number = whole_number(text)
    return (0, number, "") if number is not None else (1, 0, text)


def _read_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: unreadable settings ({exc})") from None


def _from_environment(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, variable in ENVIRONMENT.items():
        raw = environ.get(variable, "").strip()
        if not raw:
            continue
        if name in WHOLE_NUMBERS:
            number = whole_number(raw, WHOLE_NUMBERS[name])
            if number is None:
                raise ConfigError(f"{variable}={raw!r}: expected a whole number of at least {WHOLE_NUMBERS[name]}")
            values[name] = number
        else:
            values[name] = raw
        sources[name] = variable
    editor = next(((v, environ[v].strip()) for v in EDITOR_ENV if environ.get(v, "").strip()), None)
    if editor is not None:
        values["editor"], sources["editor"] = editor[1], editor[0]
    cache_home = environ.get("XDG_CACHE_HOME", "").strip()
    if cache_home:
        values["cache_dir"], sources["cache_dir"] = str(Path(cache_home) / "tau-tui"), "XDG_CACHE_HOME"
    data_home = environ.get("XDG_DATA_HOME", "").strip()
    if data_home:
        values["notes_dir"], sources["notes_dir"] = str(Path(data_home) / "tau-tui" / "notes"), "XDG_DATA_HOME"
    return values, sources


def resolve(args: Any = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The settings for this run: ``args`` (parsed flags; attributes that are missing or None are unset) over
    ``environ`` (default ``os.environ``) over the settings file. ``ConfigError`` names the bad source."""
    environ = os.environ if environ is None else environ
    path = config_path(environ)
    data = _read_file(path)
    sources = {name: "settings file" for name in data}
    env_values, env_sources = _from_environment(environ)
    extra_domains = [p for p in environ.get(DOMAINS_ENV, "").split(os.pathsep) if p]
    flag_domains = [str(p) for p in getattr(args, "domains", None) or []]
    data.update(env_values)
    sources.update(env_sources)
    for name, (flag, attribute) in FLAGS.items():
        value = getattr(args, attribute, None)
        if value is not None and value != "":
            data[name], sources[name] = value, flag
    if extra_domains or flag_domains:
        data["domain_paths"] = flag_domains + extra_domains + list(data.get("domain_paths", []))
        sources["domain_paths"] = "--domains" if flag_domains else DOMAINS_ENV
    data["sources"] = sources
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        origin = sources.get(where.split(".")[0], str(path))
        place = str(path) if origin == "settings file" else origin
        raise ConfigError(f"{place}: {where}: {first.get('msg')}") from None


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings of the file and the environment, with no flags."""
    return resolve(None, environ)
