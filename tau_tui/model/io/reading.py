"""Reading a file within the read limit: its bytes (``read_bytes``), its JSON (``read_json``), and the one-line
error of a file that cannot be read (``RunFileError``, ``error_text``).

Only a regular file is read (a FIFO, socket or device is refused before it is opened), never more than
``max_read_bytes()``; a UTF-8 byte-order mark is allowed before JSON.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson

MAX_READ_SETTING = "TAU_TUI_MAX_READ_BYTES"  # how the user raises the limit (config.resolve reads it)


def error_text(exc: BaseException) -> str:
    """An exception's one-line message; a ``KeyError``'s ``str()`` adds quotes, its message is kept as given."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


class RunFileError(Exception):
    """A run file that cannot be read; ``str()`` is one line naming file and problem."""

    def __init__(self, path: Path | str, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def _object(value: Any) -> dict[str, Any]:
    """A JSON object as read, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


_FILE_KINDS = (
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "directory"),
)


def file_kind(mode: int) -> str:
    """'regular' or what else a stat mode says the path is (fifo, socket, device, directory)."""
    if stat.S_ISREG(mode):
        return "regular"
    return next((name for test, name in _FILE_KINDS if test(mode)), "special file")


def max_read_bytes() -> int:
    """The size limit of one file read (the settings' ``max_read_bytes``, 4 GiB by default)."""
    from tau_tui.model import runtime

    return runtime.current().max_read_bytes


def read_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file, at most ``max_read_bytes()``; anything else is a one-line ``RunFileError``.

    A FIFO, socket or device is refused before it is opened (a FIFO would block
    the reader forever). The file is opened non-blocking and checked again on
    the open descriptor, so a path swapped for a FIFO in between is refused too.
    """
    path = Path(path)
    try:
        kind = file_kind(os.stat(path).st_mode)
    except FileNotFoundError:
        raise RunFileError(path, "does not exist") from None
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if kind == "directory":
        raise RunFileError(path, "is a directory")
    if kind != "regular":
        raise RunFileError(path, f"not a regular file ({kind})")
    limit = max_read_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RunFileError(path, f"not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise RunFileError(path, _too_big(info.st_size, limit))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = _read_bounded(handle, info.st_size, limit)
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise RunFileError(path, f"is more than the {limit:,}-byte read limit (raise it with {MAX_READ_SETTING})")
    return data


READ_CHUNK = 1024**2  # bytes read at a time past the size a file's metadata gave


def _read_bounded(handle: Any, size: int, limit: int) -> bytes:
    """The file's bytes, at most ``limit`` and one more: what its size says in one read (nothing the size of
    the limit is allocated), then bounded chunks while there is more (a file growing, or one whose size the
    system does not report, as ``/proc`` files), stopping as soon as it is past the limit."""
    first: bytes = handle.read(min(size, limit) + 1)
    if len(first) <= size:
        return first
    parts, total = [first], len(first)
    while total <= limit:
        part: bytes = handle.read(min(READ_CHUNK, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def _too_big(size: int, limit: int) -> str:
    return f"is {size:,} bytes, more than the {limit:,}-byte read limit (raise it with {MAX_READ_SETTING})"


UTF8_BOM = b"\xef\xbb\xbf"


def json_text(data: bytes) -> bytes | memoryview:
    """The JSON text of a file's bytes: a UTF-8 byte-order mark some editors write (tau2-bench#375) left out,
    without copying the rest."""
    return memoryview(data)[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data


def read_json(path: Path) -> Any:
    """Parse a JSON file (a UTF-8 BOM allowed); any failure becomes a one-line ``RunFileError``."""
    data = read_bytes(path)
    if not data.strip():
        raise RunFileError(path, "is empty")
    try:
        return orjson.loads(json_text(data))  # checks UTF-8 itself: no decoded copy of the whole file
    except orjson.JSONDecodeError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise RunFileError(
                path, f"is not UTF-8 text (byte 0x{data[bad.start]:02x} at offset {bad.start})"
            ) from None
        msg = str(exc)
        if "recursion" in msg.lower() or "depth limit" in msg.lower():
            raise RunFileError(path, "is not readable JSON: nested deeper than 1024 levels") from None
        if exc.pos >= len(data.rstrip()) - 1 or "end of data" in msg.lower() or "EOF" in msg:
            raise RunFileError(path, f"is truncated JSON ({msg})") from None
        raise RunFileError(path, f"is not valid JSON ({msg})") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
