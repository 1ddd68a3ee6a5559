"""``--ship-data``'s parcels (``tau_tui.workers.parcel``): what is packed, the size limit, and the arrival checks
that keep an unpacked member inside its folder."""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile
from pathlib import Path

import pytest

from tau_tui.config import ConfigError, Settings, resolve
from tau_tui.domains import DomainRegistry
from tau_tui.workers.parcel import (
    Packed,
    Parcel,
    ShipError,
    extract,
    node_cache,
    pack_domain,
    shipped_settings,
    unpacked,
)
from tests.conftest import CORPUS, ROOT, corpus_required


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A tau2 data folder holding only the mock domain, with a hidden file and a ``__pycache__`` beside its data."""
    corpus_required()
    root = tmp_path / "data"
    shutil.copytree(CORPUS / "domains" / "mock", root / "domains" / "mock")
    (root / "domains" / "mock" / ".env").write_text("OPENAI_API_KEY=sk-not-shipped\n")
    (root / "domains" / "mock" / "__pycache__").mkdir()
    (root / "domains" / "mock" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (root / "domains" / "retail").mkdir()  # another domain's folder: not in play
    (root / "domains" / "retail" / "db.json").write_text("{}")
    return root


def members(packed: Packed) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(packed.blob), mode="r:gz") as tar:
        for member in tar:
            content = tar.extractfile(member)
            assert content is not None, f"{member.name} is not a regular file"
            found[member.name] = content.read()
    return found


def parcel_of(packed: Packed) -> Parcel:
    return Parcel(packed.domain, packed.digest, len(packed.blob), ref=packed.blob)


def test_a_parcel_holds_the_domains_data_files_only_and_the_same_data_packs_the_same(data: Path) -> None:
    packed = pack_domain(DomainRegistry(data), "mock")
    names = sorted(p.name for p in (CORPUS / "domains" / "mock").iterdir())
    assert sorted(members(packed)) == [f"domains/mock/{name}" for name in names]  # no package: the project's own
    assert members(packed)["domains/mock/db.json"] == (CORPUS / "domains" / "mock" / "db.json").read_bytes()
    assert (packed.files, packed.data_bytes) == (len(names), sum(len(v) for v in members(packed).values()))
    assert pack_domain(DomainRegistry(data), "mock").digest == packed.digest


def test_a_domain_package_from_a_domains_folder_is_shipped_with_its_own_data(tmp_path: Path) -> None:
    extra = tmp_path / "mine"
    shutil.copytree(ROOT / "domains" / "warehouse", extra / "warehouse", ignore=shutil.ignore_patterns("__pycache__"))
    packed = pack_domain(DomainRegistry(None, [extra]), "warehouse")
    shipped = sorted(members(packed))
    assert shipped and all(name.startswith("packages/warehouse/") for name in shipped)
    assert "packages/warehouse/__init__.py" in shipped
    assert not any("__pycache__" in name for name in shipped)


def test_more_data_than_the_limit_is_refused_in_one_line(data: Path) -> None:
    with pytest.raises(ShipError) as refused:
        pack_domain(DomainRegistry(data), "mock", limit=1000)
    assert "more than the limit of" in str(refused.value) and "\n" not in str(refused.value)


def test_a_link_out_of_the_data_folder_is_refused_and_one_inside_is_shipped_as_a_file(
    data: Path, tmp_path: Path
) -> None:
    folder = data / "domains" / "mock"
    (folder / "same_policy.md").symlink_to(folder / "policy.md")
    shipped = members(pack_domain(DomainRegistry(data), "mock"))
    assert shipped["domains/mock/same_policy.md"] == (folder / "policy.md").read_bytes()
    (tmp_path / "secret.txt").write_text("not data")
    (folder / "outside.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ShipError, match="links outside"):
        pack_domain(DomainRegistry(data), "mock")


def test_a_parcel_unpacks_once_per_node_and_the_settings_read_the_copy(data: Path, tmp_path: Path) -> None:
    packed = pack_domain(DomainRegistry(data), "mock")
    fetched: list[int] = []

    def fetch(blob: bytes) -> bytes:
        fetched.append(1)
        return blob

    (tmp_path / "node").mkdir()
    root = unpacked(parcel_of(packed), fetch, base=tmp_path / "node")
    assert (root / "domains" / "mock" / "tasks.json").read_bytes() == (data / "domains/mock/tasks.json").read_bytes()
    assert not (root / "domains" / "mock" / ".env").exists()
    again = unpacked(parcel_of(packed), lambda blob: pytest.fail("fetched twice"), base=tmp_path / "node")
    assert again == root and fetched == [1]
    settings = shipped_settings(Settings(tau2_data=data, domain_paths=[tmp_path]), root)
    assert (settings.tau2_data, settings.domain_paths) == (root, [root / "packages"])
    shipped = DomainRegistry(settings.tau2_data, settings.domain_paths).get("mock")
    assert shipped.data_dir == root / "domains" / "mock"
    assert shipped.tasks().keys() == DomainRegistry(data).get("mock").tasks().keys()


Entry = tuple[str, bytes | tuple[bytes]]  # a member's name and its content, or a link's type


def _archive(*entries: Entry) -> bytes:
    """A gzip'd tar of (name, content bytes or ``(link type,)``) entries."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, content in entries:
            info = tarfile.TarInfo(name)
            if isinstance(content, bytes):
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
            else:
                info.type, info.linkname = content[0], "/etc/passwd"
                tar.addfile(info)
    return gzip.compress(buffer.getvalue())


@pytest.mark.parametrize(
    "entries, problem",
    [
        ([("domains/mock/../../escaped", b"x")], "outside its folder"),
        ([("/domains/mock/escaped", b"x")], "outside its folder"),
        ([("../escaped", b"x")], "outside its folder"),
        ([("domains/other/db.json", b"x")], "another place"),
        ([("settings.toml", b"x")], "another place"),
        ([("domains/mock/db.json", (tarfile.SYMTYPE,))], "not a file"),
        ([("domains/mock/db.json", (tarfile.LNKTYPE,))], "not a file"),
        ([("domains/mock/db.json", b"1"), ("domains/mock/db.json", b"2")], "repeats"),
        ([("domains/mock/db.json", b"x" * 2000)], "holds more than"),
    ],
)
def test_a_member_that_could_land_elsewhere_refuses_the_whole_parcel(
    tmp_path: Path, entries: list[Entry], problem: str
) -> None:
    target = tmp_path / "node" / "target"
    target.mkdir(parents=True)
    with pytest.raises(ShipError, match=problem) as refused:
        extract(_archive(*entries), target, "mock", limit=1000)
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "node" / "escaped").exists()


def test_a_refused_parcel_leaves_no_copy_and_a_wrong_digest_is_refused(tmp_path: Path) -> None:
    blob = _archive(("domains/mock/db.json", b"{}"), ("domains/mock/../../x", b"x"))
    import hashlib

    parcel = Parcel("mock", hashlib.sha256(blob).hexdigest(), len(blob), ref=blob)
    with pytest.raises(ShipError, match="outside its folder"):
        unpacked(parcel, lambda b: b, base=tmp_path)
    assert list(node_cache(tmp_path).iterdir()) == []  # nothing half-unpacked stays
    wrong = Parcel("mock", "0" * 64, len(blob), ref=blob)
    with pytest.raises(ShipError, match="does not match its digest"):
        unpacked(wrong, lambda b: b, base=tmp_path)
    with pytest.raises(ShipError, match="plain domain"):
        extract(blob, tmp_path, "../mock")


def test_a_node_cache_someone_could_enter_is_refused(tmp_path: Path) -> None:
    cache = node_cache(tmp_path)
    cache.chmod(0o755)
    with pytest.raises(ShipError, match="not a private folder"):
        node_cache(tmp_path)


def test_ship_data_on_the_command_line_needs_ray_and_the_settings_files_applies_to_ray_alone(tmp_path: Path) -> None:
    from tau_tui.workspace import Workspace

    flagged = resolve(type("Args", (), {"ship_data": True})(), environ={"TAU_TUI_CONFIG": str(tmp_path / "no")})
    assert flagged.ship_data and flagged.origin("ship_data") == "--ship-data"
    with pytest.raises(ConfigError, match="--ship-data needs --executor ray"):
        Workspace(flagged).rollout_remote("local")
    config = tmp_path / "config.toml"
    config.write_text("ship_data = true\n")
    filed = resolve(None, environ={"TAU_TUI_CONFIG": str(config)})
    assert filed.ship_data and Workspace(filed).rollout_remote("local") is None


def test_copies_no_command_used_for_a_week_go_when_a_new_one_is_unpacked(data: Path, tmp_path: Path) -> None:
    """A node keeps what it unpacked for the next command; a copy used again is touched; once a new parcel is
    unpacked, copies unused for ``KEEP_UNUSED`` and half-unpacked folders of dead actors go, nothing else."""
    import os
    import time

    from tau_tui.workers.parcel import KEEP_STAGING, KEEP_UNUSED, forget_unused

    (tmp_path / "node").mkdir()
    packed = pack_domain(DomainRegistry(data), "mock")
    used = unpacked(parcel_of(packed), lambda blob: blob, base=tmp_path / "node")
    cache = used.parent
    old = time.time() - KEEP_UNUSED - 60
    stale = cache / ("0" * 64)
    stale.mkdir()
    (stale / "db.json").write_text("{}")
    staging = cache / ".unpacking-dead"
    staging.mkdir()
    fresh_staging = cache / ".unpacking-now"  # another actor unpacking at this moment
    fresh_staging.mkdir()
    other = cache / "not-ours"
    other.mkdir()
    for folder in (used, stale, other):
        os.utime(folder, (old, old))
    os.utime(staging, (time.time() - KEEP_STAGING - 60,) * 2)
    # used again: touched, so it is not taken for unused
    assert unpacked(parcel_of(packed), lambda blob: pytest.fail("fetched twice"), base=tmp_path / "node") == used
    assert time.time() - used.stat().st_mtime < 60
    data_two = data / "domains" / "mock" / "extra.txt"
    data_two.write_text("another version of the data")
    unpacked(parcel_of(pack_domain(DomainRegistry(data), "mock")), lambda blob: blob, base=tmp_path / "node")
    assert not stale.exists() and not staging.exists()
    assert used.is_dir() and fresh_staging.is_dir() and other.is_dir()
    assert sorted(p.name for p in cache.iterdir() if len(p.name) == 64) == sorted(
        [used.name, pack_domain(DomainRegistry(data), "mock").digest]
    )
    newest = pack_domain(DomainRegistry(data), "mock").digest
    later = forget_unused(cache, now=time.time() + KEEP_UNUSED + 3600)  # a week on, nothing used meanwhile
    assert sorted(later) == sorted([used.name, newest, fresh_staging.name])
    assert [p.name for p in cache.iterdir()] == ["not-ours"]  # never a folder of another shape
