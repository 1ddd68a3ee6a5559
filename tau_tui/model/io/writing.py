"""Writing files: atomically (readers see the old file or the new one, never half; ``write_atomic``), new ones
never replacing another (``write_new``), under an advisory lock (``file_lock``), never holding an environment
credential; every failure is one ``WriteError`` line naming the file.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

import orjson

from tau_tui.model.io.names import contained, id_filename, unused_path
from tau_tui.model.io.reading import file_kind
from tau_tui.model.results import Results
from tau_tui.model.secrets import environment_secrets, leaked_credentials, redact


class WriteError(OSError):
    """A file that cannot be written; ``str()`` is one line naming the file and the cause.

    Raised only after cleaning up: no temporary file is left, and the old file, if any, is untouched.
    """

    def __init__(self, path: Path | str, cause: str, code: int = 0):
        super().__init__(code, cause)
        self.path = Path(path)
        self.cause = cause

    def __str__(self) -> str:
        return f"{self.path}: {self.cause}"


_CAUSES = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a folder on its path is not a folder",
}


def _cause(exc: OSError) -> str:
    known = _CAUSES.get(exc.errno) if exc.errno is not None else None
    return known or str(exc.strerror or exc).lower()


# The error classes of libraries that write files themselves (duckdb's; pyarrow's ArrowIOError is an OSError).
LIBRARY_IO_ERRORS = frozenset({"IOException", "PermissionException"})
_LIBRARY_PREFIX = re.compile(r"^[A-Za-z ]*Error: ")


def library_write_error(path: Path | str, exc: BaseException) -> WriteError | None:
    """The ``WriteError`` line for a failure of a library writing ``path`` itself, or None when ``exc`` is
    no I/O failure.

    An ``OSError`` keeps its errno. A library's own exception (duckdb's ``IOException`` on a read-only
    folder, its ``TransactionException`` "Failed to commit: … No space left on device") is one when its
    class is an I/O error or its message names an operating-system cause; the cause is then said as for
    our own writes.
    """
    if isinstance(exc, WriteError):
        return exc
    if isinstance(exc, OSError):
        return WriteError(path, _cause(exc), exc.errno or 0)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = message.lower()
    for code, cause in _CAUSES.items():
        if os.strerror(code).lower() in lowered:
            return WriteError(path, cause, code)
    if type(exc).__name__ in LIBRARY_IO_ERRORS:
        said = _LIBRARY_PREFIX.sub("", message)
        return WriteError(path, said[:1].lower() + said[1:])
    return None


def check_regular(path: Path) -> None:
    """Refuse (``WriteError``) a target that exists and is not a regular file; writing would replace it."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (a folder on its path that is a file is reported by ``make_folder``)
    except OSError as exc:
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    if not stat.S_ISREG(mode):
        kind = file_kind(mode)
        raise WriteError(path, "is a directory" if kind == "directory" else f"not a regular file ({kind})")


def make_folder(folder: Path, for_path: Path) -> None:
    """``mkdir -p folder``; a failure is a ``WriteError`` naming ``for_path``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        raise WriteError(for_path, f"cannot create its folder: {blocker} is not a folder") from None
    except OSError as exc:
        raise WriteError(for_path, f"cannot create its folder {folder}: {_cause(exc)}", exc.errno or 0) from None


def check_no_credentials(path: Path, payload: bytes) -> None:
    """Refuse (``WriteError``) a payload that holds the value of one of the environment's credential
    variables. Values are scrubbed before they are encoded (``model.secrets.redact``); encoded bytes are
    never edited, as that would corrupt them, so one that still holds a key is not written at all."""
    leaked = leaked_credentials(payload)
    if leaked:
        raise WriteError(path, f"would hold the value of the credential variable {leaked[0]}; not written")


def id_file(folder: Path | str, identifier: str, suffix: str = ".json") -> Path:
    """``<folder>/<id_filename(identifier)><suffix>``, checked to stay inside ``folder``.

    Raises ``WriteError`` naming the folder for an id that cannot be mapped or a name that leads outside
    (a symlink planted in the folder).
    """
    folder = Path(folder)
    try:
        path = folder / f"{id_filename(identifier)}{suffix}"
    except ValueError as exc:
        raise WriteError(folder, str(exc)) from None
    if folder.exists() and not contained(folder, path):
        raise WriteError(path, f"leads outside {folder} (a link?); refused")
    return path


def write_atomic(path: Path | str, payload: bytes, *, replace: bool = True) -> None:
    """Write ``payload`` to ``path`` so readers see the old or the new file, never half.

    A temporary file in the same folder is written, flushed to disk and renamed over ``path``
    (permissions of an existing file kept). Any failure (read-only folder, full disk, ``path`` a
    directory or a FIFO...) raises ``WriteError`` with the temporary file removed and the old file
    intact, as does a payload that holds an environment credential (``check_no_credentials``).
    With ``replace=False`` the file must be new: it is linked into place, which fails (``WriteError``
    with ``errno.EEXIST``) when another writer created ``path`` in the meantime, so a file someone
    else made is never replaced.
    """
    path = Path(path)
    check_no_credentials(path, payload)
    check_regular(path)
    make_folder(path.parent, path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    try:
        os.fchmod(fd, _file_mode(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(
            path, "already exists (made by another writer meanwhile); not replaced", errno.EEXIST
        ) from None
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(path, _cause(exc), exc.errno or 0) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _link_new(tmp: str, path: Path) -> None:
    """Put ``tmp`` at ``path`` only if nothing is there (a hard link cannot replace), then drop ``tmp``."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: reserve the name, then rename over the reservation
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def write_new(folder: Path | str, stem: str, suffix: str, payload: bytes) -> Path:
    """Write ``payload`` to a new file ``<folder>/<stem><suffix>`` (or ``_2``, ``_3``… when taken) and
    return it; two writers at the same moment get two files, never one replacing the other."""
    for _ in range(1000):
        path = unused_path(folder, stem, suffix)
        try:
            write_atomic(path, payload, replace=False)
        except WriteError as exc:
            if exc.errno == errno.EEXIST:
                continue  # taken between the look and the write: the next name
            raise
        return path
    raise WriteError(Path(folder) / f"{stem}{suffix}", "no free name")


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def file_lock(path: Path | str, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive advisory lock for the writers of ``path`` (read-merge-replace, a whole run).

    The lock is ``flock`` on ``<path>.lock`` beside it, not on ``path`` itself: ``write_atomic``
    replaces ``path`` by a new file, and a lock on the old one would not exclude a writer that opened
    the new one. The holder removes the lock file before releasing it; a waiter that then gets the lock
    on the removed file sees it is gone and locks the new one. Without ``wait`` a held lock raises
    ``WriteError`` at once. Where ``fcntl`` is missing (Windows) writes stay atomic but are not locked.
    """
    path = Path(path)
    lock = path.with_name(path.name + ".lock")
    if fcntl is None:
        yield
        return
    make_folder(lock.parent, path)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise WriteError(lock, f"cannot lock: {_cause(exc)}", exc.errno or 0) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise WriteError(path, f"is being written by another process (locked by {lock.name})") from None
        except OSError as exc:
            os.close(fd)
            raise WriteError(lock, f"cannot lock: {_cause(exc)}", exc.errno or 0) from None
        try:
            held, current = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder before us removed this lock file: lock the new one
    try:
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)


def _file_mode(path: Path) -> int:
    """Keep an existing file's permissions; new files get the usual 0666 minus the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _dump_bytes(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"


def results_to_dict(results: Results) -> dict[str, Any]:
    return results.model_dump(mode="json")


def save_results(results: Results | dict[str, Any], path: Path | str) -> None:
    """Save in the standard results-object layout, atomically, the environment's credentials blanked."""
    data = results if isinstance(results, dict) else results_to_dict(results)
    write_atomic(path, _dump_bytes(redact(data, environment_secrets())))
