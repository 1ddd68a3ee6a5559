"""The domain registry: bundled domains, user domain folders, tau2 data lookup."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tau_tui.domains import DataNotFound, Domain, DomainError, DomainRegistry, find_domain_data, split_variant
from tau_tui.env import Environment

USER_DOMAIN = '''
from pathlib import Path

from pydantic import BaseModel

from tau_tui.domains import Domain
from tau_tui.env import DBSchema, Environment, Toolkit, ToolType, make_store, tool


class Lamp(BaseModel):
    on: bool = False


class LampDB(BaseModel):
    lamps: dict[str, Lamp]


SCHEMA = DBSchema(LampDB)


class LampTools(Toolkit):
    @tool(ToolType.WRITE)
    def switch_on(self, lamp_id: str) -> str:
        """Switch a lamp on.

        Args:
            lamp_id: Which lamp.
        """
        self.db.edit("lamps", lamp_id)["on"] = True
        return "ok"


class LampDomain(Domain):
    name = "lamps"
    uses_tau2_data = False

    def new_environment(self, solo=False, variant=None):
        tree = self.pristine("db", SCHEMA, lambda: {"lamps": {"l1": {}}})
        return Environment("lamps", "Be bright.", LampTools(make_store(SCHEMA, tree)))


DOMAIN = LampDomain


def create(data_dir: Path):
    return LampDomain(data_dir)
'''


def test_user_domain_folder_is_found_and_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tau_tui.model import ToolCall

    folder = tmp_path / "my_domains" / "lamps"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(USER_DOMAIN))
    registry = DomainRegistry(None, [tmp_path / "my_domains"])
    assert "lamps" in registry.names() and "mock" in registry.names()
    env = registry.get("lamps").new_environment()
    assert env.call(ToolCall(id="1", name="switch_on", arguments={"lamp_id": "l1"})).content == "ok"
    assert env.agent is not None
    assert env.agent.db is not None
    assert env.agent.db.root["lamps"]["l1"] == {"on": True}
    # TAU_TUI_DOMAINS reaches the registry through the resolved settings, as every front end builds it
    from tau_tui.config import resolve
    from tau_tui.workspace import Workspace

    monkeypatch.setenv("TAU_TUI_DOMAINS", str(tmp_path / "my_domains"))
    assert Workspace(resolve()).registry.get("lamps").name == "lamps"
    assert "lamps" not in DomainRegistry(None).names()  # the registry itself reads no variable


def test_broken_user_domain_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "d" / "broken"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(DomainError) as info:
        DomainRegistry(None, [tmp_path / "d"], use_tau2=False).get("broken")
    assert "boom" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(DomainError, match="unknown domain 'nothing'"):
        DomainRegistry(None, use_tau2=False).get("nothing")


def test_data_lookup_order_and_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = tmp_path / "a"
    (explicit / "domains" / "mock").mkdir(parents=True)
    tau2_style = tmp_path / "b"
    (tau2_style / "tau2" / "domains" / "mock").mkdir(parents=True)
    (tau2_style / "tau2" / "domains" / "retail").mkdir(parents=True)
    monkeypatch.setattr("tau_tui.domains._installed_tau2_data", lambda: tau2_style)
    assert find_domain_data("mock", explicit) == explicit / "domains" / "mock"
    assert find_domain_data("retail", explicit) == tau2_style / "tau2" / "domains" / "retail"  # the installed tau2's
    with pytest.raises(DataNotFound, match="TAU2_DATA_DIR=") as info:  # named as where the setting came from
        find_domain_data("airline", explicit, "TAU2_DATA_DIR")
    assert f"TAU2_DATA_DIR={explicit}" in str(info.value) and f"installed tau2={tau2_style}" in str(info.value)


def test_variants() -> None:
    assert split_variant("telecom-workflow") == ("telecom", "workflow")
    assert split_variant("mock") == ("mock", None)


class _Found(Domain):
    """A stand-in domain a fallback provider hands out (serving one variant, ``dim``): a name and warnings only
    (``Domain.__init__`` is not run, so it holds no data folder or tasks)."""

    variants = ("dim",)

    def __init__(self, name: str) -> None:
        self.name = name
        self.warnings = ["first"]

    def new_environment(self, solo: bool = False, variant: str | None = None) -> Environment:
        raise AssertionError("the stand-in domain builds no environment")


def test_fallback_providers_are_asked_in_order_after_domain_folders() -> None:
    from tau_tui.domains import default_registry
    from tests.conftest import CORPUS

    asked: list[str] = []

    def nothing(name: str) -> None:
        asked.append(f"nothing:{name}")
        return None

    def lamps(name: str) -> _Found | None:
        asked.append(f"lamps:{name}")
        return _Found("lamps") if name.startswith("lamps") else None

    registry = DomainRegistry(CORPUS, fallbacks=[nothing, lamps])
    assert registry.get("lamps-dim").name == "lamps"
    assert asked == ["nothing:lamps-dim", "lamps:lamps-dim"]
    assert registry.get("lamps") is registry.get("lamps-dim")  # loaded once per base name
    assert registry.get("mock").name == "mock" and len(asked) == 2  # a domain folder wins, providers unasked
    with pytest.raises(DomainError, match="unknown domain 'lampz'"):
        registry.get("lampz")
    with pytest.raises(DomainError, match="unknown domain 'lamps-bright': lamps has no variant 'bright'"):
        registry.get("lamps-bright")  # a variant the domain does not serve is never graded as it
    assert DomainRegistry(None, use_tau2=False).fallbacks == []
    composed = default_registry(None, fallbacks=[lamps], use_tau2=False)
    assert composed.fallbacks == [lamps]


def test_warnings_are_reported_once_by_the_registry_not_marked_on_the_domain() -> None:
    registry = DomainRegistry(None, fallbacks=[lambda name: _Found(name)])
    domain = registry.get("lamps")
    assert registry.new_warnings() == ["domain lamps: first"]
    assert registry.new_warnings() == []
    domain.warnings.append("second")
    assert registry.new_warnings() == ["domain lamps: second"]
    assert vars(domain).keys() == {"name", "warnings"}


def test_domain_base_declares_its_interface() -> None:
    from tau_tui.domains import Domain as Reexported
    from tau_tui.env.domain import Domain

    assert Reexported is Domain
    assert Domain.__abstractmethods__ == {"new_environment"}
    assert callable(Domain.policy)


def test_tau2_data_may_name_the_domains_folder_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--tau2-data …/tau2-corpus/domains`` is that data, not a silent fall-back to an installed tau2's."""
    from tau_tui.domains import find_domain_data
    from tests.conftest import CORPUS

    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    assert find_domain_data("airline", CORPUS / "domains") == CORPUS / "domains" / "airline"
    assert find_domain_data("airline", CORPUS) == CORPUS / "domains" / "airline"


def test_a_domain_name_from_a_recording_is_never_a_path(tmp_path: Path) -> None:
    """A results file naming its domain ``../x`` must not import a package from outside the search path."""
    outside = tmp_path / "evil"
    outside.mkdir()
    (outside / "__init__.py").write_text("raise SystemExit('imported')\n")
    inside = tmp_path / "domains"
    inside.mkdir()
    registry = DomainRegistry(None, [inside], use_tau2=False)
    for name in ("../evil", str(outside), ".hidden", "a\\b"):
        assert registry.folder(name) is None
        with pytest.raises(DomainError, match="unknown domain"):
            registry.get(name)


def test_a_domain_package_imported_by_two_threads_at_once_is_whole_in_both(tmp_path: Path) -> None:
    """The TUI's file loader and its calibrator can ask for one domain together: the second must wait for the
    package's code to run, not take the module half made (warehouse then lacked DOMAIN and read as a tau2 domain)."""
    import sys
    import threading
    import time

    from tau_tui.domains import _import_domain_package

    folder = tmp_path / "slowpoke"
    folder.mkdir()
    (folder / "__init__.py").write_text("import time\ntime.sleep(0.5)\nDOMAIN = 'made'\n")
    name = "tau_tui_domains.slowpoke"
    first = threading.Thread(target=_import_domain_package, args=(folder,))
    try:
        first.start()
        deadline = time.monotonic() + 30
        while name not in sys.modules:  # the first import is under way: the module is registered, its code runs
            assert time.monotonic() < deadline and first.is_alive(), "the first import never began"
            time.sleep(0.001)
        second = _import_domain_package(folder)
        assert getattr(second, "DOMAIN", None) == "made"
    finally:
        first.join()
        sys.modules.pop(name, None)


def test_two_threads_asking_for_one_domain_get_the_one_domain_built_once(tmp_path: Path) -> None:
    """The file loader, the replay and the calibrator share the session's registry: a domain asked for by two
    at once is built once, and both get that one."""
    import threading

    folder = tmp_path / "d" / "lamps"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        USER_DOMAIN.replace(
            "def create(data_dir: Path):\n",
            "BUILT = []\n\n\ndef create(data_dir: Path):\n    import time\n    BUILT.append(1)\n    time.sleep(0.3)\n",
        )
    )
    registry = DomainRegistry(None, [tmp_path / "d"], use_tau2=False)
    got: list[Domain] = []
    threads = [threading.Thread(target=lambda: got.append(registry.get("lamps"))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 3 and got[0] is got[1] is got[2]
    import sys

    assert sys.modules["tau_tui_domains.lamps"].BUILT == [1]


def test_a_registry_pickles_with_its_loaded_domains(tau2_data: Path) -> None:
    """Its lock stays behind: the copy (in a worker process) has its own and the same domains."""
    import pickle

    registry = DomainRegistry(tau2_data)
    registry.get("mock")
    copy = pickle.loads(pickle.dumps(registry))
    assert copy.get("mock").tool_names() == registry.get("mock").tool_names()
    assert copy._lock is not registry._lock
