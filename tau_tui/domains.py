"""Finding and loading domains, and the tau2 data folder they read.

A domain is a folder (``domains/<name>/`` in this project, or any folder the
user adds) holding a Python package whose ``create(data_dir)`` returns a
``Domain``. Domains that implement tau2's domains read tau2's data files
(db, tasks, policy) from a tau2 data folder: the settings' ``tau2_data``
(``--tau2-data DIR``, ``TAU2_DATA_DIR``, the settings file, or a data folder found
in the paths opened: ``data_root_near``), then the data inside an installed
``tau2`` package. Nothing here reads the environment (``config.resolve`` does).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from collections.abc import Iterable
from pathlib import Path

from tau_tui.env.domain import DataNotFound, Domain, DomainError, DomainProvider, read_data_file
from tau_tui.tau2_adapter import adapted_domain

__all__ = [
    "DataNotFound",
    "Domain",
    "DomainError",
    "DomainProvider",
    "DomainRegistry",
    "data_root_near",
    "data_roots",
    "default_fallbacks",
    "default_registry",
    "domain_data_dir",
    "domain_search_path",
    "find_domain_data",
    "read_data_file",
    "split_variant",
    "unknown_domain",
    "unknown_variant",
]

DATA_FLAGS = "pass --tau2-data DIR or set TAU2_DATA_DIR"  # how a user points at tau2 data
_PACKAGE_PREFIX = "tau_tui_domains"
# One import of a domain package at a time: a package is in sys.modules before its code has run, and a second
# thread (the TUI's loader beside its calibrator) must wait for it rather than take the half-made module.
_IMPORT_LOCK = threading.RLock()


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


def data_roots(explicit: Path | str | None = None, origin: str = "--tau2-data") -> list[tuple[str, Path]]:
    """Candidate tau2 data folders in the order they are tried, with where each came from (``origin``: where
    ``explicit`` came from, as the settings' ``sources`` say)."""
    roots: list[tuple[str, Path]] = []
    if explicit:
        roots.append((origin, Path(explicit)))
    installed = _installed_tau2_data()
    if installed is not None:
        roots.append(("installed tau2", installed))
    return roots


def domain_data_dir(root: Path, name: str) -> Path | None:
    """``root/domains/<name>`` or ``root/tau2/domains/<name>`` if it exists; ``root/<name>`` when ``root`` is
    itself a ``domains`` folder (``--tau2-data …/domains`` means that folder, not the installed tau2's data)."""
    candidates = [root / "domains" / name, root / "tau2" / "domains" / name]
    if root.name == "domains":
        candidates.insert(0, root / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


def find_domain_data(name: str, explicit: Path | str | None = None, origin: str = "--tau2-data") -> Path:
    """The tau2 data folder of one domain, or ``DataNotFound`` saying how to point at one."""
    roots = data_roots(explicit, origin)
    for _, root in roots:
        found = domain_data_dir(root, name)
        if found is not None:
            return found
    tried = "; ".join(f"{origin}={root}" for origin, root in roots) or "nothing set"
    raise DataNotFound(
        f"no tau2 data for domain '{name}' (tried: {tried}); {DATA_FLAGS} to a folder "
        f"holding domains/{name}/ (or tau2's data/ holding tau2/domains/{name}/)"
    )


def bundled_domain_dirs() -> list[Path]:
    """Where this project's own domains live (the repo's ``domains/``, or inside the wheel)."""
    here = Path(__file__).resolve().parent
    return [p for p in (here.parent / "domains", here / "_bundled" / "domains") if p.is_dir()]


def domain_search_path(extra: list[Path] | None = None) -> list[Path]:
    """``extra`` (the settings' ``domain_paths``), then this project's domains; each folder once."""
    return list(dict.fromkeys(list(extra or []) + bundled_domain_dirs()))


def _holds_domain_data(folder: Path) -> bool:
    """``folder`` is a ``domains`` folder of tau2 data: some ``<name>/`` in it holds a DB beside its tasks."""
    from tau_tui.model.io import is_tau2_data_folder

    try:
        return folder.is_dir() and any(is_tau2_data_folder(child) for child in folder.iterdir() if child.is_dir())
    except OSError:
        return False


def data_root_near(paths: Iterable[Path | str], levels: int = 3) -> Path | None:
    """A tau2 data folder in or above the paths opened: ``D`` with ``D/domains/<name>/`` (this project's corpus
    layout), or tau2's own ``data/`` (``data/tau2/domains/<name>/`` beside ``data/simulations``), looked for in
    each path and up to ``levels`` folders above it; the first found, in the order of ``paths``."""
    for raw in paths:
        here = Path(raw).resolve()
        start = here if here.is_dir() else here.parent
        for folder in [start, *start.parents][: levels + 1]:
            if folder.name == "domains" and _holds_domain_data(folder):
                return folder.parent
            for root in (folder, folder / "data"):
                if _holds_domain_data(root / "domains"):
                    return root
                if _holds_domain_data(root / "tau2" / "domains"):
                    return root
    return None


def _import_domain_package(folder: Path) -> types.ModuleType:
    with _IMPORT_LOCK:
        return _import_domain_package_locked(folder)


def _import_domain_package_locked(folder: Path) -> types.ModuleType:
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
    """Finds domains by name; one loaded ``Domain`` per name and data folder.

    Domain folders on the search path come first; a name none of them holds is
    asked of each fallback provider in order (``fallbacks``). Without
    ``fallbacks`` the registry uses ``default_fallbacks(use_tau2)``: the tau2
    adapter, unless ``use_tau2`` is false.
    """

    def __init__(
        self,
        tau2_data: Path | str | None = None,
        extra_paths: list[Path] | None = None,
        use_tau2: bool = True,
        *,
        fallbacks: Iterable[DomainProvider] | None = None,
        data_origin: str = "--tau2-data",
    ):
        """``data_origin``: where ``tau2_data`` came from (named when a domain's data is not found)."""
        self.tau2_data = tau2_data
        self.data_origin = data_origin
        self.search_path = domain_search_path(extra_paths)
        self.fallbacks: list[DomainProvider] = list(default_fallbacks(use_tau2) if fallbacks is None else fallbacks)
        self._loaded: dict[str, Domain] = {}
        # The TUI asks from several threads (file loading, replay, the calibrator): a domain is built once, and
        # the loaded ones are not read while another is being added.
        self._lock = threading.RLock()
        self._reported: dict[str, int] = {}  # per loaded name: how many of its warnings were returned

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_lock")  # a lock does not pickle (a registry shipped to a worker process gets its own)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def new_warnings(self) -> list[str]:
        """Data warnings of loaded domains not returned before (each is reported once)."""
        out = []
        with self._lock:
            loaded = list(self._loaded.items())
        for key, domain in loaded:
            seen = self._reported.get(key, 0)
            out += [f"domain {domain.name}: {w}" for w in domain.warnings[seen:]]
            self._reported[key] = len(domain.warnings)
        return out

    def folder(self, name: str) -> Path | None:
        """The domain folder of ``name`` on the search path; a name from a recording is never a path (one with a
        separator or a leading dot names no folder)."""
        if not name or name.startswith(".") or any(sep in name for sep in ("/", "\\", "\0")):
            return None
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

    def tool_index(self, fallbacks: bool = False) -> dict[str, frozenset[str]]:
        """Each domain's tools, by domain name: what a recording that names no domain is matched by.

        The domain folders' tools are read from their toolkit classes (``Domain.declared_tool_names``: no data
        needed); a domain that declares none, or fails to load, is built (or left out). With ``fallbacks``, the
        domains a fallback provider can list (``domain_names()``: an installed tau2's registry, a fork's own
        domains among them) are added, each built once; a name the folders hold keeps the folder's tools, as
        ``get`` prefers the folders too.
        """
        index: dict[str, frozenset[str]] = {}
        for name in self.names():
            folder = self.folder(name)
            try:
                declared = getattr(_import_domain_package(folder), "DOMAIN", None) if folder else None
                tools = (
                    declared.declared_tool_names()
                    if isinstance(declared, type) and issubclass(declared, Domain)
                    else frozenset()
                )
                index[name] = tools or self.get(name).tool_names()
            except Exception:  # noqa: BLE001 - a domain that cannot load is no candidate; using it says why
                continue
        for provider in self.fallbacks if fallbacks else []:
            listing = getattr(provider, "domain_names", None)
            for name in listing() if callable(listing) else []:
                if name in index:
                    continue
                try:
                    found = provider(name)
                    if found is not None:
                        index[name] = found.tool_names()
                except Exception:  # noqa: BLE001 - a fork's domain that cannot be built is no candidate
                    continue
        return index

    def where(self, name: str) -> tuple[Path, Path] | None:
        """(the package folder, the data folder ``create`` is given) of domain ``name``, without building it; None
        when no domain folder holds it (a fallback provider may). ``DomainError`` when its package does not
        import, ``DataNotFound`` when its tau2 data is missing."""
        base, _ = split_variant(name)
        folder = self.folder(base)
        if folder is None:
            return None
        return folder, self._data_dir(folder, base)

    def get(self, name: str) -> Domain:
        """The domain ``name`` names; a variant (``telecom-workflow``) only where the domain serves it."""
        return self.resolve(name)[0]

    def resolve(self, name: str) -> tuple[Domain, str | None]:
        """(the domain, the variant) ``name`` names. A variant the base domain does not serve (``airline-relaxed``:
        a fork's changed policy) is asked of the fallback providers by its full name, and is otherwise unknown:
        never graded as its base domain (``DomainError``)."""
        with self._lock:
            return self._resolve(name)

    def _resolve(self, name: str) -> tuple[Domain, str | None]:
        base, variant = split_variant(name)
        if variant is None:
            return self._base(base), None
        if name in self._loaded:
            return self._loaded[name], (None if self._loaded[name].name == name else variant)
        own = self.folder(name)  # a fork's domain of its own under the full name (DIR/airline-relaxed/)
        if own is not None:
            self._loaded[name] = self._create(own, self._data_dir(own, name))
            return self._loaded[name], None
        served = self._base(base) if self.folder(base) is not None else None
        if served is not None and variant in served.variants:
            return served, variant
        for provider in self.fallbacks:
            found = provider(name)
            if found is not None and (found.name == name or variant in found.variants):
                self._loaded[name] = found
                if found.name == base:  # the base domain, serving this variant: loaded once by either name
                    self._loaded.setdefault(base, found)
                return found, (None if found.name == name else variant)
        known = served if served is not None else self._known_base(base)
        raise DomainError(unknown_variant(name, known))

    def _known_base(self, base: str) -> Domain | None:
        try:
            return self._base(base)
        except DomainError:
            return None

    def _base(self, base: str) -> Domain:
        if base in self._loaded:
            return self._loaded[base]
        place = self.where(base)
        if place is None:
            for provider in self.fallbacks:  # native domains always win
                found = provider(base)
                if found is not None:
                    self._loaded[base] = found
                    return found
            raise DomainError(unknown_domain(base, self.names()))
        self._loaded[base] = self._create(*place)
        return self._loaded[base]

    def _data_dir(self, folder: Path, name: str) -> Path:
        domain_cls = getattr(_import_domain_package(folder), "DOMAIN", None)
        uses_data = getattr(domain_cls, "uses_tau2_data", True)
        return find_domain_data(name, self.tau2_data, self.data_origin) if uses_data else folder / "data"

    @staticmethod
    def _create(folder: Path, data_dir: Path) -> Domain:
        create = getattr(_import_domain_package(folder), "create", None)
        if create is None:
            raise DomainError(f"{folder}: domain package has no create(data_dir)")
        domain = create(data_dir)
        if not isinstance(domain, Domain):
            raise DomainError(f"{folder}: create(data_dir) gave a {type(domain).__name__}, not a Domain")
        return domain


def unknown_variant(name: str, base: Domain | None) -> str:
    """The one line for a variant no domain serves: named, with the variants its base has, and never graded as
    the base (its policy, tools or tasks may differ)."""
    stem, variant = split_variant(name)
    if base is None:
        return unknown_domain(name, [])
    has = ", ".join(f"{stem}-{v}" for v in base.variants)
    lacks = f"no variant '{variant}' (its variants: {has})" if has else "no variants"
    return (
        f"unknown domain '{name}': {stem} has {lacks}, and a variant's policy, "
        f"tools or tasks may differ, so it is not graded as {stem}; if it is a fork's domain, supply it: its package "
        f"in a folder given with --domains DIR (DIR/{name}/__init__.py), or the fork's tau2 installed in this "
        "environment (pip install -e FORK)"
    )


def unknown_domain(name: str, known: Iterable[str]) -> str:
    """The one line for a domain no folder and no provider serves: a fork's own, most likely, and the two ways
    to supply it."""
    base, _ = split_variant(name)
    return (
        f"unknown domain '{name}' (known: {', '.join(known) or 'none'}); if it is a fork's own domain, supply it: "
        f"its package in a folder given with --domains DIR (DIR/{base}/__init__.py), or the fork's tau2 installed "
        "in this environment (pip install -e FORK), whose registry tau-tui then serves"
    )


def default_fallbacks(use_tau2: bool = True) -> list[DomainProvider]:
    """The fallback providers of a default registry: domains registered in an installed tau2."""
    return [adapted_domain] if use_tau2 else []


def default_registry(
    tau2_data: Path | str | None = None,
    extra_paths: list[Path] | None = None,
    *,
    use_tau2: bool = True,
    fallbacks: Iterable[DomainProvider] = (),
    data_origin: str = "--tau2-data",
) -> DomainRegistry:
    """The registry a front end starts from: domain folders, then ``fallbacks``, then tau2's registry."""
    return DomainRegistry(
        tau2_data, extra_paths, fallbacks=[*fallbacks, *default_fallbacks(use_tau2)], data_origin=data_origin
    )
