"""Finding and loading domains, and the tau2 data folder they read.

A domain is a folder (``domains/<name>/`` in this project, or any folder the
user adds) holding a Python package whose ``create(data_dir)`` returns a
``Domain``. Domains that implement tau2's domains read tau2's data files
(db, tasks, policy) from a tau2 data folder: ``--tau2-data DIR``, then
``TAU2_DATA_DIR``, then the data inside an installed ``tau2`` package.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import types
from pathlib import Path
from typing import Any, Callable, ClassVar

import orjson

from tau_tui.env.environment import Environment
from tau_tui.env.schema import DBSchema
from tau_tui.model.io import RunFileError, read_bytes
from tau_tui.model.tasks import Task

DOMAIN_PATH_ENV = "TAU_TUI_DOMAINS"
DATA_ENV = "TAU2_DATA_DIR"
_PACKAGE_PREFIX = "tau_tui_domains"


class DomainError(Exception):
    """A domain that cannot be found or loaded; ``str()`` is one line."""


class DataNotFound(DomainError):
    pass


def _installed_tau2_data() -> Path | None:
    """The data folder shipped inside an installed ``tau2`` package, if any."""
    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = Path(next(iter(spec.submodule_search_locations)))
    for candidate in (pkg / "data", pkg.parent / "data", pkg.parent.parent / "data"):
        if (candidate / "tau2" / "domains").is_dir() or (candidate / "domains").is_dir():
            return candidate
    return None


def data_roots(explicit: Path | str | None = None) -> list[tuple[str, Path]]:
    """Candidate tau2 data folders in the order they are tried, with where each came from."""
    roots: list[tuple[str, Path]] = []
    if explicit:
        roots.append(("--tau2-data", Path(explicit)))
    env = os.environ.get(DATA_ENV)
    if env:
        roots.append((DATA_ENV, Path(env)))
    installed = _installed_tau2_data()
    if installed is not None:
        roots.append(("installed tau2", installed))
    return roots


def domain_data_dir(root: Path, name: str) -> Path | None:
    """``root/domains/<name>`` or ``root/tau2/domains/<name>`` if it exists."""
    for candidate in (root / "domains" / name, root / "tau2" / "domains" / name):
        if candidate.is_dir():
            return candidate
    return None


def find_domain_data(name: str, explicit: Path | str | None = None) -> Path:
    """The tau2 data folder of one domain, or ``DataNotFound`` saying how to point at one."""
    roots = data_roots(explicit)
    for _, root in roots:
        found = domain_data_dir(root, name)
        if found is not None:
            return found
    tried = "; ".join(f"{origin}={root}" for origin, root in roots) or "nothing set"
    raise DataNotFound(
        f"no tau2 data for domain '{name}' (tried: {tried}); pass --tau2-data DIR or set {DATA_ENV} to a folder "
        f"holding domains/{name}/ (or tau2's data/ holding tau2/domains/{name}/)"
    )


def read_data_file(path: Path) -> Any:
    """JSON or TOML data file of a domain."""
    try:
        if path.suffix == ".toml":
            import tomllib

            return tomllib.loads(read_bytes(path).decode("utf-8"))
        return orjson.loads(read_bytes(path))
    except RunFileError as exc:
        if exc.problem == "does not exist":
            raise DomainError(f"{path}: missing domain data file") from None
        raise DomainError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any parse failure is reported on one line
        raise DomainError(f"{path}: unreadable domain data ({exc})") from None


class Domain:
    """A domain: its environments, tasks and policy. Subclasses live in domain folders."""

    name: ClassVar[str] = ""
    uses_tau2_data: ClassVar[bool] = True
    # One pristine state tree per (class, data folder, side) for the whole process.
    _pristine: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, data_dir: Path | None):
        self.data_dir = data_dir
        self._tasks: dict[str, Task] | None = None
        self.warnings: list[str] = []  # data problems worth telling the user (shown once)

    # --- to implement ------------------------------------------------------
    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        raise NotImplementedError

    def task_file(self) -> Path:
        return self.require_data() / "tasks.json"

    # --- shared helpers -------------------------------------------------------
    def require_data(self) -> Path:
        if self.data_dir is None:
            raise DataNotFound(f"domain '{self.name}' has no data folder")
        return self.data_dir

    def pristine(self, key: str, schema: DBSchema, load: Callable[[], Any]) -> dict[str, Any]:
        """The validated state tree for ``key``, loaded once per process and shared read-only."""
        cache_key = (type(self), str(self.data_dir), key)
        with self._lock:
            tree = self._pristine.get(cache_key)
            if tree is None:
                tree = self._pristine[cache_key] = schema.tree(load())
        return tree

    def read_text(self, name: str) -> str:
        path = self.require_data() / name
        try:
            return read_bytes(path).decode("utf-8", errors="replace")
        except RunFileError as exc:
            if exc.problem == "does not exist":
                raise DomainError(f"{path}: missing domain data file") from None
            raise DomainError(str(exc)) from None

    def tasks(self) -> dict[str, Task]:
        """The domain's task set, by id."""
        if self._tasks is None:
            raw = read_data_file(self.task_file())
            if isinstance(raw, dict) and "tasks" in raw:
                raw = raw["tasks"]
            if not isinstance(raw, list):
                raise DomainError(f"{self.task_file()}: expected a list of tasks")
            self._tasks = {t.id: t for t in (Task.model_validate(item) for item in raw)}
        return self._tasks

    def splits(self) -> dict[str, list[str]]:
        path = self.task_file().parent / f"split_{self.task_file().stem}.json"
        return read_data_file(path) if path.exists() else {}


def bundled_domain_dirs() -> list[Path]:
    """Where this project's own domains live (the repo's ``domains/``, or inside the wheel)."""
    here = Path(__file__).resolve().parent
    return [p for p in (here.parent / "domains", here / "_bundled" / "domains") if p.is_dir()]


def domain_search_path(extra: list[Path] | None = None) -> list[Path]:
    paths = list(extra or [])
    env = os.environ.get(DOMAIN_PATH_ENV)
    if env:
        paths += [Path(p) for p in env.split(os.pathsep) if p]
    return list(dict.fromkeys(paths + bundled_domain_dirs()))  # in order, each folder once


def _import_domain_package(folder: Path) -> types.ModuleType:
    if _PACKAGE_PREFIX not in sys.modules:
        parent = types.ModuleType(_PACKAGE_PREFIX)
        parent.__path__ = []
        sys.modules[_PACKAGE_PREFIX] = parent
    module_name = f"{_PACKAGE_PREFIX}.{folder.name}"
    existing = sys.modules.get(module_name)
    if existing is not None and Path(existing.__file__ or "").parent == folder:
        return existing
    spec = importlib.util.spec_from_file_location(
        module_name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise DomainError(f"{folder}: not a domain package (no __init__.py)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - a broken user domain is reported, not raised through
        sys.modules.pop(module_name, None)
        raise DomainError(f"{folder}: domain failed to import ({type(exc).__name__}: {exc})") from None
    return module


def split_variant(name: str) -> tuple[str, str | None]:
    """``telecom-workflow`` → (``telecom``, ``workflow``)."""
    base, _, variant = name.partition("-")
    return base, (variant or None)


class DomainRegistry:
    """Finds domains by name; one loaded ``Domain`` per name and data folder."""

    def __init__(self, tau2_data: Path | str | None = None, extra_paths: list[Path] | None = None,
                 use_tau2: bool = True):
        self.tau2_data = tau2_data
        self.search_path = domain_search_path(extra_paths)
        self.use_tau2 = use_tau2
        self._loaded: dict[str, Domain] = {}

    def new_warnings(self) -> list[str]:
        """Data warnings of loaded domains not returned before (each is reported once)."""
        out = []
        for domain in self._loaded.values():
            seen = getattr(domain, "_warned", 0)
            out += [f"domain {domain.name}: {w}" for w in domain.warnings[seen:]]
            domain._warned = len(domain.warnings)
        return out

    def folder(self, name: str) -> Path | None:
        for base in self.search_path:
            candidate = base / name
            if (candidate / "__init__.py").is_file():
                return candidate
        return None

    def names(self) -> list[str]:
        seen: list[str] = []
        for base in self.search_path:
            for child in sorted(base.iterdir()) if base.is_dir() else []:
                if (child / "__init__.py").is_file() and child.name not in seen:
                    seen.append(child.name)
        return seen

    def get(self, name: str) -> Domain:
        base, _ = split_variant(name)
        if base in self._loaded:
            return self._loaded[base]
        folder = self.folder(base)
        if folder is None:
            adapted = self._adapted(name)
            if adapted is not None:
                self._loaded[base] = adapted
                return adapted
            raise DomainError(f"unknown domain '{name}' (known: {', '.join(self.names()) or 'none'})")
        module = _import_domain_package(folder)
        create = getattr(module, "create", None)
        if create is None:
            raise DomainError(f"{folder}: domain package has no create(data_dir)")
        domain_cls = getattr(module, "DOMAIN", None)
        uses_data = getattr(domain_cls, "uses_tau2_data", True)
        data_dir = find_domain_data(base, self.tau2_data) if uses_data else folder / "data"
        domain = create(data_dir)
        self._loaded[base] = domain
        return domain

    def _adapted(self, name: str) -> Domain | None:
        """A domain registered in an installed tau2 (native domains always win)."""
        if not self.use_tau2:
            return None
        from tau_tui.tau2_adapter import adapted_domain

        return adapted_domain(name)
