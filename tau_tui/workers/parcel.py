"""``--ship-data``: the domain data a Ray job needs, sent by content to nodes that do not share this machine's files.

The driver packs each domain in play once (``pack_domain``): its tau2 data folder (``domains/<name>/``: DB, tasks,
policy, documents) and, when its package comes from a ``--domains`` folder rather than this project's own (which
every node has with tau-tui), that package folder (``packages/<name>/``). Nothing else goes: no settings, no
variables, no file outside those folders; hidden entries and ``__pycache__`` are left out, a link that leads out of
its folder (or to a folder) is refused, and more than ``limit`` bytes of files is refused, each in one line. The
archive is a gzip'd tar built the same way every time (sorted, no times, no owners), so equal data has an equal
digest (sha256 of the archive).

An actor treats what arrives as untrusted (``unpacked``): the digest must match, every member must be a regular
file under ``domains/<name>/`` or ``packages/<name>/`` of the parcel's own domain, with no absolute path, no ``..``
and no name twice, and the members may not hold more than ``limit`` bytes; one broken rule refuses the parcel.
It is unpacked once per node, into ``<tmp>/tau-tui-<uid>/shipped/<digest>/`` (a folder only that user may enter;
kept for the next command), and the actor's settings point there (``shipped_settings``). A copy used again is
touched; when a new one is unpacked, copies no command used for ``KEEP_UNUSED`` (a week) are removed, and so are
half-unpacked folders an actor that died left behind for a day.

Ray's own ``runtime_env`` (``working_dir``) is not used: it is fixed when an actor starts, while ``replay`` and
``eval`` learn the domains file by file, and it unpacks without these checks.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, NoReturn

from tau_tui.domains import bundled_domain_dirs, split_variant

if TYPE_CHECKING:
    from tau_tui.config import Settings
    from tau_tui.domains import DomainRegistry

SHIP_LIMIT = 256 * 1024**2  # bytes of files in one domain's parcel
MAX_MEMBERS = 100_000
COMPRESS_LEVEL = 1  # JSON shrinks about 8x even so; level 6 costs about three times the time for a few per cent
TOPS = ("domains", "packages")  # an archive's top folders: tau2 data, domain packages
SKIPPED = {"__pycache__"}
KEEP_UNUSED = 7 * 24 * 3600.0  # seconds a node keeps an unpacked copy no command used
KEEP_STAGING = 24 * 3600.0  # seconds before a half-unpacked folder (its actor died) is taken for left behind


class ShipError(Exception):
    """Data that cannot be shipped, or a parcel refused on arrival; ``str()`` is one line."""


@dataclass(frozen=True)
class Packed:
    """One domain's data, packed (``pack_domain``)."""

    domain: str
    blob: bytes  # the gzip'd tar
    digest: str  # sha256 of ``blob``
    files: int
    data_bytes: int  # bytes of the files before packing


@dataclass(frozen=True)
class Parcel:
    """What an actor is given of a packed domain: its digest, and where to fetch the archive if its node has none."""

    domain: str
    digest: str
    size: int  # bytes of the archive
    ref: Any  # the Ray ObjectRef of the archive (inside this object, Ray does not fetch it by itself)


def _size(n: int) -> str:
    return f"{n / 1024**2:.1f} MiB" if n >= 1024**2 else f"{n:,} bytes"


def _inside(path: Path, folder: Path) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(folder)


def _files(folder: Path, prefix: str, limit: int, counted: list[int]) -> list[tuple[str, Path]]:
    """(archive name, path) of every file to ship under ``folder``, in name order; ``counted[0]``: bytes so far."""
    out: list[tuple[str, Path]] = []
    root = Path(os.path.realpath(folder))

    def unreadable(exc: OSError) -> NoReturn:
        raise ShipError(f"--ship-data: cannot read {exc.filename or folder} ({exc.strerror or exc})")

    if not root.is_dir():
        raise ShipError(f"--ship-data: {folder} is not a folder")
    for here, dirs, names in os.walk(root, onerror=unreadable, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED)
        for name in [*dirs, *sorted(n for n in names if not n.startswith("."))]:
            path = Path(here) / name
            if name in dirs:
                if path.is_symlink():
                    raise ShipError(f"--ship-data: {path} is a link to a folder; not shipped")
                continue
            if not _inside(path, root):
                raise ShipError(f"--ship-data: {path} links outside {folder}; not shipped")
            try:
                info = path.stat()
            except OSError as exc:
                unreadable(exc)
            if not stat.S_ISREG(info.st_mode):
                raise ShipError(f"--ship-data: {path} is not a regular file; not shipped")
            counted[0] += info.st_size
            if counted[0] > limit:
                raise ShipError(
                    f"--ship-data: the data to ship is more than the limit of {_size(limit)} ({folder}); "
                    "put it on every node instead (without --ship-data)"
                )
            out.append((f"{prefix}/{path.relative_to(root).as_posix()}", path))
    return out


def pack_domain(registry: DomainRegistry, name: str, limit: int | None = None) -> Packed:
    """Domain ``name``'s data as ``registry`` reads it, packed (see the module docstring; ``limit``: default
    ``SHIP_LIMIT``). ``DomainError`` as the registry raises it (an unknown domain gives an empty parcel: a
    fallback provider's data is each node's own); ``ShipError`` for what cannot be shipped."""
    limit = SHIP_LIMIT if limit is None else limit
    base, _ = split_variant(name)
    place = registry.where(base)
    folders: list[tuple[str, Path]] = []
    if place is not None:
        package, data = place
        own = any(_inside(package, bundled) for bundled in bundled_domain_dirs())
        if not _inside(data, package):
            folders.append((f"domains/{base}", data))
        if not own:
            folders.append((f"packages/{base}", package))
    counted = [0]
    members = [member for prefix, folder in folders for member in _files(folder, prefix, limit, counted)]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        total = 0
        for arcname, path in sorted(members):
            try:
                content = path.read_bytes()
            except OSError as exc:
                raise ShipError(f"--ship-data: cannot read {path} ({exc.strerror or exc})") from None
            total += len(content)
            if total > limit:  # a file that grew since it was counted
                raise ShipError(f"--ship-data: the data to ship grew past the limit of {_size(limit)} ({path})")
            info = tarfile.TarInfo(arcname)
            info.size, info.mode, info.mtime = len(content), 0o644, 0
            tar.addfile(info, io.BytesIO(content))
    blob = gzip.compress(buffer.getvalue(), compresslevel=COMPRESS_LEVEL, mtime=0)
    return Packed(base, blob, hashlib.sha256(blob).hexdigest(), len(members), total)


def shipped_settings(settings: Settings, root: Path | None) -> Settings:
    """``settings`` for an actor that reads only what it was sent: the tau2 data and the domain packages of the
    unpacked parcel at ``root`` (None: nothing was sent, so none of the driver's folders either)."""
    origin = {"tau2_data": "--ship-data", "domain_paths": "--ship-data"}
    return settings.model_copy(
        update={
            "tau2_data": root,
            "domain_paths": [root / "packages"] if root is not None else [],
            "sources": {**settings.sources, **origin},
        }
    )


def node_cache(base: Path | None = None) -> Path:
    """``<base or tmp>/tau-tui-<uid>/shipped``: made only this user may enter; one left by someone else, or a
    link, is refused."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    private = Path(base or tempfile.gettempdir()) / f"tau-tui-{uid}"
    for folder in (private, private / "shipped"):
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            info = folder.lstat()
        except OSError as exc:
            raise ShipError(f"--ship-data: cannot make {folder} ({exc.strerror or exc})") from None
        mine = not hasattr(os, "getuid") or info.st_uid == uid
        if not stat.S_ISDIR(info.st_mode) or not mine or info.st_mode & 0o077:
            raise ShipError(f"--ship-data: {folder} is not a private folder of this user; refused")
    return private / "shipped"


def _member_path(name: str, domain: str) -> PurePosixPath:
    """The relative path of archive member ``name`` (``ShipError`` for one that could land outside its place)."""
    parts = name.split("/")
    if not name or "\0" in name or "\\" in name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ShipError(f"--ship-data: the parcel of '{domain}' has a member outside its folder ({name!r}); refused")
    if len(parts) < 3 or parts[0] not in TOPS or parts[1] != domain:
        raise ShipError(f"--ship-data: the parcel of '{domain}' has a member of another place ({name!r}); refused")
    return PurePosixPath(name)


def extract(blob: bytes, target: Path, domain: str, limit: int = SHIP_LIMIT) -> int:
    """Unpack ``blob`` (a parcel of ``domain``) into the empty folder ``target`` with the arrival checks of the
    module docstring; the number of files. Files are written by this code, never by ``tarfile``'s extraction."""
    if not domain or domain.startswith(".") or any(sep in domain for sep in ("/", "\\", "\0")):
        raise ShipError(f"--ship-data: a parcel names no plain domain ({domain!r}); refused")
    seen: set[str] = set()
    total = 0
    real_target = os.path.realpath(target)
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            for number, member in enumerate(tar, 1):
                relative = _member_path(member.name, domain)
                if not member.isreg():
                    raise ShipError(f"--ship-data: {member.name!r} of the parcel of '{domain}' is not a file; refused")
                if member.name in seen or number > MAX_MEMBERS:
                    raise ShipError(f"--ship-data: the parcel of '{domain}' repeats {member.name!r}; refused")
                seen.add(member.name)
                total += member.size
                if total > limit:
                    raise ShipError(f"--ship-data: the parcel of '{domain}' holds more than {_size(limit)}; refused")
                path = target.joinpath(*relative.parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                if os.path.commonpath([os.path.realpath(path.parent), real_target]) != real_target:
                    raise ShipError(f"--ship-data: {member.name!r} would land outside {target}; refused")
                source = tar.extractfile(member)
                assert source is not None  # a regular file has content
                content = source.read(member.size + 1)
                if len(content) != member.size:
                    raise ShipError(f"--ship-data: {member.name!r} of the parcel of '{domain}' is cut short; refused")
                with open(path, "xb") as out:
                    out.write(content)
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, OSError) as exc:
        raise ShipError(f"--ship-data: the parcel of '{domain}' cannot be unpacked ({exc}); refused") from None
    return len(seen)


def forget_unused(cache: Path, now: float | None = None) -> list[str]:
    """Remove the copies in ``cache`` no command used for ``KEEP_UNUSED``, and half-unpacked folders older than
    ``KEEP_STAGING``; returns their names. Only folders of the cache's own shapes (a digest, ``.unpacking-*``) are
    touched, never a link; one that cannot be removed is left."""
    import time

    now = time.time() if now is None else now
    gone: list[str] = []
    try:
        entries = list(os.scandir(cache))
    except OSError:
        return gone
    for entry in entries:
        name = entry.name
        if name.startswith(".unpacking-"):
            keep = KEEP_STAGING
        elif len(name) == 64 and all(c in "0123456789abcdef" for c in name):
            keep = KEEP_UNUSED
        else:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or now - entry.stat(follow_symlinks=False).st_mtime < keep:
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.lexists(entry.path):
            gone.append(name)
    return gone


def unpacked(parcel: Parcel, fetch: Callable[[Any], bytes], base: Path | None = None, limit: int = SHIP_LIMIT) -> Path:
    """The folder holding ``parcel``'s data on this node: unpacked by an earlier actor or command, else fetched
    (``fetch(parcel.ref)``), checked and unpacked now (in a folder beside it, then renamed: another actor
    unpacking the same parcel at once finds it whole or not at all)."""
    digest = parcel.digest
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ShipError(f"--ship-data: the parcel of '{parcel.domain}' has no sha256 digest; refused")
    cache = node_cache(base)
    final = cache / digest
    if final.is_dir():
        try:
            os.utime(final)  # used again: not removed as unused
        except OSError:
            pass
        return final
    forget_unused(cache)
    blob = fetch(parcel.ref)
    if hashlib.sha256(blob).hexdigest() != digest:
        raise ShipError(f"--ship-data: the data of '{parcel.domain}' does not match its digest; refused")
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=cache))
    try:
        extract(blob, staging, parcel.domain, limit)
        try:
            os.rename(staging, final)
        except OSError:
            if not final.is_dir():
                raise
    except OSError as exc:
        raise ShipError(f"--ship-data: cannot unpack the data of '{parcel.domain}' ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
