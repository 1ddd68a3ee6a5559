"""Opening JSON in the user's editor or pager (the settings'): always a temp copy, never the input file."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import orjson

from tau_tui.model.io import check_no_credentials
from tau_tui.model.nesting import bounded
from tau_tui.model.secrets import environment_secrets, redact


def viewer_command(editor: str | None = None, pager: str | None = None) -> list[str]:
    """The settings' editor ($VISUAL, $EDITOR), else their pager ($PAGER), else less, more or vi."""
    for value in (editor, pager):
        if value and value.strip():
            return shlex.split(value)
    for fallback in ("less", "more", "vi"):
        if shutil.which(fallback):
            return [fallback]
    return ["vi"]


def safe_stem(hint: str) -> str:
    """A file-name stem from ``hint`` (an id from a recording, say): only ``[A-Za-z0-9._-]``, at most 80."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", hint)[:80].lstrip(".") or "data"


def download_name(hint: str, suffix: str) -> str:
    """The name a browser download of ``hint`` is offered under (never a path)."""
    return safe_stem(hint) + suffix


def write_temp_json(data: Any, hint: str) -> Path:
    """Write ``data`` as indented JSON to a fresh file under the temp dir; returns its path.

    Values nested past ``MAX_NESTING`` levels are cut there (orjson writes at most 255). The environment's
    credentials are blanked in the values before they are encoded, and a payload that still holds one is
    refused (``WriteError``) before any file is made.
    """
    folder = Path(tempfile.gettempdir()) / "tau-tui"
    safe = safe_stem(hint)
    payload = orjson.dumps(
        redact(bounded(data), environment_secrets()), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    )
    check_no_credentials(folder / f"{safe}.json", payload)
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{safe}.", suffix=".json", dir=folder)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload + b"\n")
    return Path(name)


def run_viewer(path: Path, editor: str | None = None, pager: str | None = None) -> int:
    """Run the viewer on ``path`` in the foreground (the app is suspended around this)."""
    return subprocess.call([*viewer_command(editor, pager), str(path)])
