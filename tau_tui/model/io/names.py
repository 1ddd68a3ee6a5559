"""File names: one from an identifier (``id_filename``, reversible, never a path), the checks that a path stays
in its folder (``within``, ``contained``), and the one naming rule for new output files (``new_output_path``,
never an existing one).
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

# An id from a recording is data, never a path: it is percent-encoded into one file name.
_SAFE_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
MAX_NAME_LENGTH = 200  # bytes of an encoded name; file systems allow 255 with the suffix


def id_filename(identifier: str) -> str:
    """A file name for ``identifier``: every byte outside ``[A-Za-z0-9._-]`` (and a leading dot) as ``%XX``.

    Reversible (``id_from_filename``), never a path, a dot name or a hidden file. Raises ``ValueError``
    for an id that cannot be mapped (empty, or longer than ``MAX_NAME_LENGTH`` once encoded).
    """
    if not identifier:
        raise ValueError("an empty id cannot name a file")
    name = _encode(identifier)
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"id {identifier[:40]!r}… is too long to name a file ({len(name)} bytes encoded, at most {MAX_NAME_LENGTH})"
        )
    return name


def _encode(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        if char in _SAFE_NAME_CHARS and not (i == 0 and char == "."):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def name_part(text: str, limit: int = 40) -> str:
    """A piece of a new file's name taken from ``text`` (an id, a task, a model): encoded as ``id_filename``
    does, cut at ``limit`` (not reversible; for names like ``<stamp>_fork_<file>_<sim>``)."""
    return _encode(text)[:limit] or "_"


def id_from_filename(name: str) -> str:
    """The id ``id_filename`` encoded into ``name`` (a file stem)."""
    return urllib.parse.unquote(name, errors="surrogatepass")


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def within(root: Path, path: Path) -> bool:
    """Whether ``path``, every link resolved, stays under the resolved folder ``root`` (a link loop: no)."""
    resolved = _resolved(path)
    return resolved is not None and resolved.is_relative_to(root)


def contained(folder: Path, path: Path) -> bool:
    """Whether ``path``, symlinks resolved, is a direct child of ``folder`` (resolved too)."""
    try:
        return path.resolve().parent == folder.resolve()
    except (OSError, RuntimeError):
        return False


def new_output_path(folder: Path | str, kind: str, *parts: str, suffix: str = ".json", when: Any = None) -> Path:
    """The one naming rule for new results files, never an existing one (``unused_path``).

    ``<folder>/<YYYYmmdd_HHMMSS>_<kind>_<part>_…``; kind ``run`` is left out of the name
    (``<stamp>_<domain>_<agent>_<user>``, tau2's run name) and kind ``calibrate`` goes first
    (``calibrate_<stamp>_<domain>``). Each part is encoded (``name_part``), never a path.
    """
    from datetime import datetime

    stamp = f"{when or datetime.now():%Y%m%d_%H%M%S}"
    pieces = [name_part(str(p).replace("/", "-").replace(":", "-"), 60) for p in parts]
    if kind == "calibrate":
        head = [kind, stamp]
    elif kind == "run":
        head = [stamp]
    else:
        head = [stamp, name_part(kind, 20)]
    return unused_path(folder, "_".join(head + pieces), suffix)


def unused_path(folder: Path | str, stem: str, suffix: str) -> Path:
    """``<folder>/<stem><suffix>``, or ``<stem>_2``, ``_3``… when taken: a file we create never replaces one."""
    folder = Path(folder)
    path, n = folder / f"{stem}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}_{n}{suffix}"
    return path
