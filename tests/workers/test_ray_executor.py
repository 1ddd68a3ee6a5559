"""``--executor ray``: the same ``--json`` output as the local executor, on a local Ray instance with 2 CPUs; the
actors open no file (spans and raw simulations are sent to them)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tau_tui.cli import main
from tau_tui.model import runtime
from tests.conftest import CORPUS, corpus_required

if TYPE_CHECKING:
    from tau_tui.workers.pool import Outcome

ray = pytest.importorskip("ray", reason="the optional extra 'ray' is not installed (pip install 'tau-tui[ray]')")
FILES = [CORPUS / "sierra-research__tau2-bench__airline.json", CORPUS / "generated" / "tau2-gold_retail.json"]
BANKING = CORPUS / "generated" / "tau2-gold_banking_knowledge.json"


def served_by_installed_tau2(domain: str) -> bool:
    """Whether an installed tau2 package's own data holds ``domain`` (a worker falls back to it)."""
    from tau_tui.domains import _installed_tau2_data

    data = _installed_tau2_data()
    return data is not None and any((data / sub / domain).is_dir() for sub in ("domains", "tau2/domains"))


def _out(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    code = main([*map(str, args), "--tau2-data", str(CORPUS)])
    return code, capsys.readouterr().out


@pytest.mark.corpus
@pytest.mark.parametrize("command", ["replay", "eval"])
def test_ray_gives_the_local_executors_json_byte_for_byte(
    local_ray: None, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    corpus_required()
    local_code, local = _out(capsys, command, "--json", "--workers", "1", *FILES)
    ray_code, on_ray = _out(capsys, command, "--json", "--executor", "ray", "--workers", "2", *FILES)
    assert local.count("\n") > 100
    assert (ray_code, on_ray) == (local_code, local)
    assert ray.is_initialized()  # the executor left the instance it did not start running


@pytest.mark.corpus
@pytest.mark.parametrize("command", ["replay", "eval"])
def test_streamed_files_ship_their_spans_byte_for_byte(
    local_ray: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    from tau_tui.model.io import open_run

    corpus_required()
    monkeypatch.setenv("TAU_TUI_STREAM_BYTES", "1")  # every file indexed by streaming: the actors get spans
    runtime.configure(stream_bytes=1)  # (and here, for the check below)
    assert all(hasattr(open_run(path).raw_sims, "raw_bytes") for path in FILES)
    local_code, local = _out(capsys, command, "--json", "--workers", "1", *FILES)
    ray_code, on_ray = _out(capsys, command, "--json", "--executor", "ray", "--workers", "2", *FILES)
    assert local.count("\n") > 100
    assert (ray_code, on_ray) == (local_code, local)


def _copy_with_sidecar(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus file copied where the test can delete it, with a tool-call scorer sidecar beside it."""
    import shutil

    path = tmp_path / "gold_retail.json"
    shutil.copyfile(FILES[1], path)
    sidecar = tmp_path / "gold_retail.scorer.json"
    sidecar.write_text('{"default": {"expected_tools": ["get_order_details", "get_user_details"]}}')
    return path, sidecar


def _answer(outcome: Outcome) -> str:
    """A unit's answer as one JSON line: replay's line, or the line of eval's report."""
    if outcome.line:
        return outcome.line
    assert outcome.report is not None, outcome.error
    return outcome.report.line


def _local_lines(kind: str, path: Path, indices: list[int], stream_bytes: int) -> list[str]:
    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.workers.pool import Job, Unit
    from tau_tui.workspace import Workspace

    workspace = Workspace(Settings(tau2_data=CORPUS, stream_bytes=stream_bytes))
    with workspace.executor(Job(kind), 1) as executor:
        executor.adopt(path, open_run(path))
        return [_answer(o) for o in executor.map(Unit(str(path), i) for i in indices)]


@pytest.mark.corpus
@pytest.mark.parametrize("kind", ["replay", "eval"])
def test_ray_actors_need_no_file_a_deleted_file_gives_the_same_answers(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.workers.pool import Job, Unit
    from tau_tui.workspace import Workspace

    corpus_required()
    path, sidecar = _copy_with_sidecar(tmp_path)
    indices = list(range(0, 40, 3))
    expected = _local_lines(kind, path, indices, 1 << 40)  # read whole: this process needs the file no more
    assert isinstance(open_run(path).raw_sims, list)
    if kind == "eval":
        assert all(json.loads(line)["scorer"] is not None for line in expected)  # the sidecar counts
    workspace = Workspace(Settings(tau2_data=CORPUS, stream_bytes=1 << 40))
    with workspace.executor(Job(kind), 2, "ray") as executor:
        executor.adopt(path, open_run(path))
        path.unlink()
        sidecar.unlink()
        outcomes = list(executor.map(Unit(str(path), i) for i in indices))
    assert [o.error for o in outcomes] == [None] * len(indices)
    assert [_answer(o) for o in outcomes] == expected


@pytest.mark.corpus
def test_an_actor_replays_a_streamed_span_without_the_file(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Ray actor does with what it is sent, run here: the streamed file is gone by then."""
    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.workers.pool import FileHead, Job, Unit, _RayWorker, _shipped
    from tau_tui.workspace import Workspace

    corpus_required()
    path, sidecar = _copy_with_sidecar(tmp_path)
    indices = [0, 5, 17]
    expected = {kind: _local_lines(kind, path, indices, 1) for kind in ("replay", "eval")}
    run = open_run(path)
    assert hasattr(run.raw_sims, "raw_bytes")
    from tau_tui.evaluate.scorer import scorer_config_for

    head = FileHead(
        "k",
        str(run.path),
        run.layout,
        run.raw_info,
        run.raw_tasks,
        run.timestamp,
        run.extra_top,
        len(run.raw_sims),
        scorer_config_for(path),
    )
    items = [(Unit(str(path), i), _shipped(run, i)) for i in indices]
    assert all(isinstance(raw, bytes) for _, raw in items)
    path.unlink()
    sidecar.unlink()
    for kind in ("replay", "eval"):
        actor = _RayWorker(Job(kind, Settings(tau2_data=CORPUS), factory=Workspace))
        outcomes = actor.do_shipped("k", [ray.put(head)], items)
        assert [_answer(o) for o in outcomes] == expected[kind]


@pytest.mark.corpus
@pytest.mark.parametrize("command", ["replay", "eval"])
def test_ship_data_gives_actors_that_cannot_read_the_data_the_local_executors_bytes(
    local_ray: None, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """TAU2_DATA_DIR is ``/proc/self/fd/N``, a descriptor of the corpus this process holds: in an actor the
    same path is not the corpus. Two files of two domains: each domain's data shipped once, both answered."""
    import os

    corpus_required()
    fd = os.open(CORPUS, os.O_RDONLY | os.O_DIRECTORY)
    try:
        data = f"/proc/self/fd/{fd}"

        def out(*args: object) -> tuple[int, str, str]:
            code = main([*map(str, args), "--tau2-data", data])
            return code, *capsys.readouterr()

        local = out(command, "--json", "--workers", "1", *FILES)
        assert local[1].count("\n") > 100
        unshipped = out(command, "--json", "--executor", "ray", "--workers", "2", *FILES)
        if not served_by_installed_tau2("airline"):  # an installed tau2's own data would serve the actors instead
            assert (
                unshipped[0] == 2 and f"no tau2 data for domain 'airline' (tried: --tau2-data={data})" in unshipped[2]
            )
        assert out(command, "--json", "--executor", "ray", "--workers", "2", "--ship-data", *FILES) == local
        # banking_knowledge is in no installed tau2: without its parcel the actors have no data at all
        banking = ["--domain", "banking_knowledge", str(BANKING)]
        alone = out(command, "--json", "--workers", "1", *banking)
        assert alone[0] in (0, 1) and alone[1].count("\n") > 100, alone[2]
        unshipped = out(command, "--json", "--executor", "ray", "--workers", "2", *banking)
        assert unshipped[0] == 2 and "no tau2 data for domain 'banking_knowledge'" in unshipped[2]
        assert out(command, "--json", "--executor", "ray", "--workers", "2", "--ship-data", *banking) == alone
    finally:
        os.close(fd)


def test_ship_data_without_ray_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", "--ship-data", str(FILES[0]), "--tau2-data", str(CORPUS)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == "tau-tui: --ship-data needs --executor ray (local workers read this machine's data)\n"


@pytest.mark.corpus
def test_a_domain_too_big_to_ship_fails_its_files_units_in_one_line(
    local_ray: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.workers import parcel
    from tau_tui.workers.pool import Job, Unit
    from tau_tui.workspace import Workspace

    corpus_required()
    monkeypatch.setattr(parcel, "SHIP_LIMIT", 1000)
    workspace = Workspace(Settings(tau2_data=CORPUS, ship_data=True))
    with workspace.executor(Job("replay"), 1, "ray") as executor:
        executor.adopt(FILES[0], open_run(FILES[0]))
        outcomes = list(executor.map(Unit(str(FILES[0]), i) for i in range(3)))
    assert {(o.error, o.domain_error) for o in outcomes} == {
        (
            f"--ship-data: the data to ship is more than the limit of 1,000 bytes ({CORPUS}/domains/airline); "
            "put it on every node instead (without --ship-data)",
            True,
        )
    }


@pytest.mark.corpus
def test_an_actor_refuses_a_parcel_that_is_not_what_its_digest_says(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Ray actor does with a parcel whose bytes do not match its digest, run here: the file's units fail
    in one line, nothing is unpacked."""
    import tempfile

    from tau_tui.config import Settings
    from tau_tui.model.io import open_run
    from tau_tui.workers.parcel import Parcel
    from tau_tui.workers.pool import FileHead, Job, Unit, _RayWorker, _shipped
    from tau_tui.workspace import Workspace

    corpus_required()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the node's temporary folder
    run = open_run(FILES[0])
    forged = Parcel("airline", "0" * 64, 4, ray.put(b"junk"))
    head = FileHead("k", str(run.path), run.layout, run.raw_info, run.raw_tasks, run.timestamp, run.extra_top,
                    len(run.raw_sims), parcel=forged)  # fmt: skip
    actor = _RayWorker(Job("replay", Settings(tau2_data=CORPUS, ship_data=True), factory=Workspace))
    outcomes = actor.do_shipped("k", [ray.put(head)], [(Unit(str(run.path), 0), _shipped(run, 0))])
    assert [(o.error, o.domain_error) for o in outcomes] == [
        ("--ship-data: the data of 'airline' does not match its digest; refused", True)
    ]
    assert list((tmp_path / f"tau-tui-{os.getuid()}" / "shipped").iterdir()) == []
