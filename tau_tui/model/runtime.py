"""What this process reads files with: the limits and folders the resolved settings chose.

The model layer reads no environment variable. The workspace (``Workspace.__init__``) sets these from its
``Settings`` in every process that builds one (the command, each worker process, each Ray actor), so a
value given once reaches all of them. Until then the defaults hold (as in a library user's process).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_MAX_READ_BYTES = 4 * 1024**3
DEFAULT_STREAM_BYTES = 4 * 1024**2


@dataclass(frozen=True)
class Runtime:
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES  # the size limit of one file read
    stream_bytes: int = DEFAULT_STREAM_BYTES  # files at least this big are indexed by streaming
    notes_dir: Path | None = None  # notes on files we must not write beside (None: under ~/.local/share)


_current = Runtime()


def current() -> Runtime:
    return _current


def configure(
    max_read_bytes: int | None = None, stream_bytes: int | None = None, notes_dir: Path | None = None
) -> Runtime:
    """Set what is given (None keeps a value); returns the previous values (tests restore them)."""
    global _current
    previous = _current
    changes: dict[str, object] = {}
    if max_read_bytes is not None:
        changes["max_read_bytes"] = max_read_bytes
    if stream_bytes is not None:
        changes["stream_bytes"] = stream_bytes
    if notes_dir is not None:
        changes["notes_dir"] = notes_dir
    _current = replace(_current, **changes)  # type: ignore[arg-type]
    return previous


def restore(values: Runtime) -> None:
    global _current
    _current = values
