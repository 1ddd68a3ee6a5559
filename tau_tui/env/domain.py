"""The domain base: what every domain provides, whoever serves it.

A ``Domain`` hands out fresh environments, its task set and its policy. Native
domains (``domains/<name>/``, user folders) and the tau2 adapter
(``tau_tui.tau2_adapter``) both subclass it; ``tau_tui.domains`` finds them.
This module sits in the env layer so that neither of those needs the other.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, ClassVar

import orjson

from tau_tui.env.environment import Environment
from tau_tui.env.schema import DBSchema
from tau_tui.env.tools import Toolkit
from tau_tui.model.io import RunFileError, json_text, read_bytes
from tau_tui.model.tasks import Task


class DomainError(Exception):
    """A domain that cannot be found or loaded; ``str()`` is one line."""


class DataNotFound(DomainError):
    pass


def read_data_file(path: Path) -> Any:
    """JSON or TOML data file of a domain."""
    try:
        if path.suffix == ".toml":
            import tomllib

            return tomllib.loads(read_bytes(path).decode("utf-8"))
        return orjson.loads(json_text(read_bytes(path)))
    except RunFileError as exc:
        if exc.problem == "does not exist":
            raise DomainError(f"{path}: missing domain data file") from None
        raise DomainError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any parse failure is reported on one line
        raise DomainError(f"{path}: unreadable domain data ({exc})") from None


class Domain(ABC):
    """A domain: its environments, tasks and policy. Subclasses live in domain folders.

    To implement: ``new_environment``. Override ``policy`` when the policy can be
    read without building an environment, ``task_file`` or ``tasks`` when the
    tasks are not ``<data>/tasks.json``.
    """

    name: str = ""  # a class attribute of a domain package's class; the tau2 adapter's instances set their own
    uses_tau2_data: ClassVar[bool] = True
    # The toolkit classes of the agent's and the user's side (every variant's): their tools are known without
    # building an environment, so without the domain's data (``declared_tool_names``).
    toolkits: ClassVar[tuple[type[Toolkit], ...]] = ()
    # The variants it serves (``telecom-workflow`` → ``workflow``): a name with any other variant is a domain we
    # do not know, never graded as this one (``DomainRegistry.resolve``). The tau2 adapter's instances set theirs.
    variants: tuple[str, ...] = ()
    # One pristine state tree per (class, data folder, side) for the whole process.
    _pristine: ClassVar[dict[tuple[Any, ...], Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, data_dir: Path | None):
        self.data_dir = data_dir
        self._tasks: dict[str, Task] | None = None
        self._texts: dict[str, str] = {}  # data files read by ``read_text``, once per domain (like its tasks)
        self.warnings: list[str] = []  # data problems worth telling the user (the registry reports each once)

    # --- the interface ----------------------------------------------------------
    @abstractmethod
    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        """A fresh environment in its initial state (``variant``: ``telecom-workflow`` → ``workflow``)."""

    def policy(self, solo: bool = False, variant: str | None = None) -> str:
        """The agent policy text; by default the one a new environment carries."""
        return self.new_environment(solo=solo, variant=variant).policy

    @classmethod
    def declared_tool_names(cls) -> frozenset[str]:
        """The tools of the domain's ``toolkits``, read from the classes: no data is needed."""
        return frozenset(name for kit in cls.toolkits for name in kit.declared_tools)

    def tool_names(self) -> frozenset[str]:
        """Every tool an agent or a user of this domain may call: what a recording that names no domain is matched
        by (``DomainRegistry.tool_index``). A domain that declares no ``toolkits`` builds an environment to see."""
        return self.declared_tool_names() or self.new_environment().tool_names()

    def task_file(self) -> Path:
        return self.require_data() / "tasks.json"

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
        """A text file of the domain's data (a policy): read once, as its tasks are, since every episode asks."""
        text = self._texts.get(name)
        if text is not None:
            return text
        path = self.require_data() / name
        try:
            text = self._texts[name] = read_bytes(path).decode("utf-8", errors="replace")
            return text
        except RunFileError as exc:
            if exc.problem == "does not exist":
                raise DomainError(f"{path}: missing domain data file") from None
            raise DomainError(str(exc)) from None


DomainProvider = Callable[[str], "Domain | None"]
"""A fallback source of domains: the domain called ``name`` (maybe ``base-variant``), or ``None``."""
