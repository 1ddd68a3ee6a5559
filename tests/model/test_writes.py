"""Writing never fails with a traceback and never loses data.

Read-only folders, a full disk, a target that is a directory, a sidecar that is
something else: one line on stderr naming the file and the cause, exit 2, no
temporary file left, the old file byte-identical. Concurrent note writers keep
every note. Ids from a recording never become paths. Secrets of the environment
never reach a file.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from tau_tui.cli import main
from tau_tui.model import notes as notes_module
from tau_tui.model.io import (
    WriteError,
    file_lock,
    id_file,
    id_filename,
    id_from_filename,
    name_part,
    open_run,
    write_atomic,
)
from tau_tui.model.notes import NoteBook, NotesFile, notes_path
from tau_tui.model.secrets import environment_secrets, leaked_credentials
from tests.conftest import ROOT

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

DEMO = ROOT / "tests" / "fixtures" / "mock_recordings" / "mock_demo.json"
SIM = "demo-clean-pass"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, *names: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tau-tui: ") and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], (name, err)
    return lines[0]


def recording_with_a_note(folder: Path) -> tuple[Path, Path, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    recording = folder / "mock_demo.json"
    shutil.copy(DEMO, recording)
    NoteBook(recording).add(SIM, "agent", "other", "the first note")
    sidecar = notes_path(recording)
    return recording, sidecar, sidecar.read_bytes()


def no_temporaries(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def add_note(capsys: pytest.CaptureFixture[str], recording: Path, text: str = "a second note") -> tuple[int, str, str]:
    return cli(
        capsys, "notes", "add", str(recording), "--sim", SIM, "--source", "agent", "--type", "other", "--text", text
    )


# --- real conditions: a small tmpfs, remounted read-only or filled up ------------------------------------------
def mounted_tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (needs mount rights; root ignores permission bits, so chmod cannot make a folder
    read-only); unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): "
            "read-only and full-disk cases need one"
        )
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs."""
    yield from mounted_tmpfs(tmp_path, "256k")


@pytest.fixture
def export_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs: room for one DuckDB export of the demo recording (1.8 MB)."""
    yield from mounted_tmpfs(tmp_path, "4m")


def remount_read_only(mnt: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True, capture_output=True)


def fill(mnt: Path) -> None:
    """Fill the file system to the last block."""
    with open(mnt / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with pytest.raises(OSError):
        (mnt / "probe").write_bytes(b"x" * 8192)
    (mnt / "probe").unlink(missing_ok=True)


def test_notes_add_in_a_read_only_folder_goes_to_the_user_data_folder(
    capsys: pytest.CaptureFixture[str], tmpfs: Path, user_data_home: Path
) -> None:
    recording, sidecar, before = recording_with_a_note(tmpfs / "runs")
    remount_read_only(tmpfs)
    code, out, err = add_note(capsys, recording)
    assert code == 0, err
    assert sidecar.read_bytes() == before  # the note beside the recording stays, and is still read
    saved = list((user_data_home / "tau-tui" / "notes").glob("*-mock_demo.notes.json"))
    assert len(saved) == 1 and "a second note" in saved[0].read_text() and str(saved[0]) in out
    assert [n.text for n in NoteBook(recording).notes] == ["the first note", "a second note"]


def test_notes_add_where_neither_place_can_be_written(
    capsys: pytest.CaptureFixture[str], tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording, sidecar, before = recording_with_a_note(tmpfs / "runs")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmpfs / "xdg"))  # the user data folder is read-only too
    remount_read_only(tmpfs)
    code, _, err = add_note(capsys, recording)
    assert code == 2
    line = one_error_line(err, "xdg")
    assert "read-only file system" in line
    assert sidecar.read_bytes() == before


def test_notes_add_on_a_full_disk(capsys: pytest.CaptureFixture[str], tmpfs: Path) -> None:
    recording, sidecar, before = recording_with_a_note(tmpfs / "runs")
    fill(tmpfs)
    code, _, err = add_note(capsys, recording, text="x" * 20000)
    assert code == 2
    line = one_error_line(err, str(sidecar))
    assert "no space left on device" in line
    assert sidecar.read_bytes() == before
    assert no_temporaries(tmpfs)


def test_run_resume_on_a_read_only_folder_keeps_the_old_file(
    capsys: pytest.CaptureFixture[str], tmpfs: Path, tau2_data: Path
) -> None:
    out = tmpfs / "run.json"
    args = [
        "run",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "--agent-llm",
        "scripted/gold",
        "--user-llm",
        "scripted/user",
        "--out",
        str(out),
        "--tau2-data",
        str(tau2_data),
        "--quiet",
    ]
    assert cli(capsys, *args)[0] == 0
    before = out.read_bytes()
    remount_read_only(tmpfs)
    code, _, err = cli(capsys, *args, "-k", "2", "--resume")
    assert code == 2
    assert "read-only file system" in one_error_line(err, str(out))
    assert out.read_bytes() == before


def test_run_resume_on_a_full_disk_keeps_the_old_file(
    capsys: pytest.CaptureFixture[str], tmpfs: Path, tau2_data: Path
) -> None:
    out = tmpfs / "run.json"
    args = [
        "run",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "--agent-llm",
        "scripted/gold",
        "--user-llm",
        "scripted/user",
        "--out",
        str(out),
        "--tau2-data",
        str(tau2_data),
        "--quiet",
    ]
    assert cli(capsys, *args)[0] == 0
    before = out.read_bytes()
    fill(tmpfs)
    code, _, err = cli(capsys, *args, "-k", "3", "--resume")
    assert code == 2
    assert "no space left on device" in one_error_line(err, str(out))
    assert out.read_bytes() == before
    assert no_temporaries(tmpfs)


def test_calibrate_into_a_read_only_folder(capsys: pytest.CaptureFixture[str], tmpfs: Path, tau2_data: Path) -> None:
    out = tmpfs / "cal.json"
    remount_read_only(tmpfs)
    code, _, err = cli(
        capsys,
        "calibrate",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "--agent-llm",
        "scripted/gold",
        "--user-llm",
        "scripted/user",
        "-k",
        "1",
        "--out",
        str(out),
        "--tau2-data",
        str(tau2_data),
        "--quiet",
    )
    assert code == 2
    assert "read-only file system" in one_error_line(err, str(out))
    assert not out.exists()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


EXPORT_FORMATS = ("csv", "jsonl", "parquet", "duckdb", "sft")


def export_twice(
    capsys: pytest.CaptureFixture[str],
    tau2_data: Path,
    tmp_path: Path,
    out: Path,
    fmt: str,
    between: Callable[[Path], None],
) -> tuple[int, str, dict[str, Any], dict[str, Any]]:
    """Export the demo recording into ``out``, run ``between(out)`` (remount, fill), export again."""
    if fmt in ("parquet", "duckdb"):
        pytest.importorskip("pyarrow" if fmt == "parquet" else "duckdb", reason="the optional 'export' extra")
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    args = ["export", str(recording), "--out", str(out), "--format", fmt, "--tau2-data", str(tau2_data)]
    code, _, err = cli(capsys, *args)
    assert code == 0, err
    before = snapshot(out)
    between(out)
    code, _, err = cli(capsys, *args)
    return code, err, before, snapshot(out)


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_export_into_a_read_only_folder_is_one_line_and_keeps_the_old_export(
    capsys: pytest.CaptureFixture[str], export_tmpfs: Path, tau2_data: Path, tmp_path: Path, fmt: str
) -> None:
    out = export_tmpfs / "out"
    code, err, before, after = export_twice(
        capsys, tau2_data, tmp_path, out, fmt, lambda _: remount_read_only(export_tmpfs)
    )
    assert code == 2
    assert "read-only file system" in one_error_line(err, str(out))
    assert after == before


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_export_on_a_full_disk_is_one_line_and_keeps_the_old_export(
    capsys: pytest.CaptureFixture[str], export_tmpfs: Path, tau2_data: Path, tmp_path: Path, fmt: str
) -> None:
    out = export_tmpfs / "out"
    code, err, before, after = export_twice(capsys, tau2_data, tmp_path, out, fmt, lambda _: fill(export_tmpfs))
    assert code == 2
    assert "no space left on device" in one_error_line(err, str(out))
    assert after == before  # no half-built file (.tmp, a DuckDB .wal) left beside the old export either


def test_a_librarys_io_errors_are_write_errors_and_other_errors_are_not(tmp_path: Path) -> None:
    from tau_tui.model.io import library_write_error

    class IOException(Exception):  # named as duckdb names its I/O errors
        pass

    class TransactionException(Exception):
        pass

    target = tmp_path / "tau.duckdb"
    lock = library_write_error(target, IOException('IO Error: Could not set lock on file "x": Conflicting lock'))
    assert str(lock) == f'{target}: could not set lock on file "x": Conflicting lock'
    full = library_write_error(
        target, TransactionException("Failed to commit: Could not write: No space left on device")
    )
    assert full is not None
    assert str(full) == f"{target}: no space left on device" and full.errno == errno.ENOSPC
    assert str(library_write_error(target, OSError(errno.EROFS, "Read-only file system"))).endswith(
        "read-only file system"
    )
    assert library_write_error(target, TransactionException("Conversion Error: out of range")) is None
    assert library_write_error(target, ValueError("not I/O")) is None


# --- targets that are something else ----------------------------------------------------------------------------
def test_notes_sidecar_that_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    notes_path(recording).mkdir()
    code, _, err = add_note(capsys, recording)
    assert code == 2
    assert "a directory" in one_error_line(err, str(notes_path(recording)))
    assert notes_path(recording).is_dir() and not list(notes_path(recording).iterdir())


def test_notes_sidecar_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    os.mkfifo(notes_path(recording))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "notes",
            "add",
            str(recording),
            "--sim",
            SIM,
            "--source",
            "agent",
            "--type",
            "other",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 2
    one_error_line(done.stderr, str(notes_path(recording)))
    assert notes_path(recording).is_fifo()


def test_notes_export_to_a_directory_or_below_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recording, _, _ = recording_with_a_note(tmp_path / "runs")
    target = tmp_path / "export.json"
    target.mkdir()
    code, _, err = cli(capsys, "notes", "export", str(recording), "--out", str(target))
    assert code == 2
    assert "is a directory" in one_error_line(err, str(target))
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    code, _, err = cli(capsys, "notes", "export", str(recording), "--out", str(blocker / "sub" / "notes.csv"))
    assert code == 2
    assert f"{blocker} is not a folder" in one_error_line(err, "notes.csv")
    assert blocker.read_text() == "keep me"


def test_run_out_below_a_file_or_a_directory_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tau2_data: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    base = [
        "run",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "--agent-llm",
        "scripted/gold",
        "--user-llm",
        "scripted/user",
        "--tau2-data",
        str(tau2_data),
        "--quiet",
    ]
    code, _, err = cli(capsys, *base, "--out", str(blocker / "run.json"))
    assert code == 2
    one_error_line(err, str(blocker))
    assert blocker.read_text() == "keep me"


# --- write_atomic itself, with injected failures ------------------------------------------------------------------
@pytest.mark.parametrize(
    "code, cause", [(errno.EROFS, "read-only file system"), (errno.ENOSPC, "no space left on device")]
)
def test_write_atomic_failure_at_the_rename_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, cause: str
) -> None:
    path = tmp_path / "file.json"
    path.write_bytes(b"old\n")

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(WriteError) as caught:
        write_atomic(path, b"new\n")
    assert str(caught.value) == f"{path}: {cause}"
    assert path.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.json"]


def test_write_atomic_keeps_permissions(tmp_path: Path) -> None:
    path = tmp_path / "file.json"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    write_atomic(path, b"new\n")
    assert path.read_bytes() == b"new\n" and path.stat().st_mode & 0o777 == 0o640


# --- concurrent writers --------------------------------------------------------------------------------------------
def test_eight_processes_adding_notes_at_once_keep_every_note(tmp_path: Path) -> None:
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tau_tui.cli",
                "notes",
                "add",
                str(recording),
                "--sim",
                SIM,
                "--source",
                "agent",
                "--type",
                "other",
                "--text",
                f"note {i}",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert sorted(n.text for n in NoteBook(recording).notes) == [f"note {i}" for i in range(8)]
    assert not list(tmp_path.glob("*.lock"))


def test_slow_concurrent_note_writers_keep_every_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each writer is held between reading and replacing the sidecar: only the lock keeps the notes."""
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    read = notes_module._read
    barrier = threading.Barrier(6, timeout=0.3)

    def slow_read(path: Path) -> NotesFile | None:
        loaded = read(path)
        try:
            barrier.wait()  # without the lock, all six have read the same old file here
        except threading.BrokenBarrierError:
            pass
        return loaded

    monkeypatch.setattr(notes_module, "_read", slow_read)
    books = [NoteBook(recording) for _ in range(6)]
    threads = [threading.Thread(target=book.add, args=(SIM, "user", "other", f"t{i}")) for i, book in enumerate(books)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    monkeypatch.setattr(notes_module, "_read", read)
    assert sorted(n.text for n in NoteBook(recording).notes) == [f"t{i}" for i in range(6)]


def test_a_held_lock_refuses_without_waiting(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    with (
        file_lock(target),
        pytest.raises(WriteError, match="being written by another process"),
        file_lock(target, wait=False),
    ):
        pass
    with file_lock(target, wait=False):
        pass
    assert not (tmp_path / "run.json.lock").exists()


# --- ids are never paths ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("identifier", ["../../x", "/abs/x", "..", ".", ".hidden", "a/b\\c", "ü ñ%20", "x" * 150])
def test_id_file_names_are_flat_safe_and_reversible(tmp_path: Path, identifier: str) -> None:
    name = id_filename(identifier)
    assert "/" not in name and "\\" not in name and not name.startswith(".") and len(name) <= 200
    assert id_from_filename(name) == identifier
    path = id_file(tmp_path, identifier)
    assert path.parent == tmp_path and path.name == name + ".json"


def test_ids_that_cannot_be_mapped_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        id_filename("")
    with pytest.raises(WriteError, match="too long"):
        id_file(tmp_path, "é" * 100)
    assert "/" not in name_part("../../" + "é" * 100, 40) and len(name_part("é" * 100, 40)) == 40


def test_a_planted_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sims").mkdir()
    (tmp_path / "outside.json").write_text("keep")
    (tmp_path / "sims" / "abc.json").symlink_to(tmp_path / "outside.json")
    with pytest.raises(WriteError, match="leads outside"):
        id_file(tmp_path / "sims", "abc")


# --- secrets -------------------------------------------------------------------------------------------------------------
def test_environment_credentials_are_scrubbed_from_notes_and_exports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "envsecret-ABCDEFGH12345678"
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", secret)
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be a key: never scrubbed
    assert secret in environment_secrets() and "abc" not in environment_secrets()
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    code, _, err = add_note(capsys, recording, text=f"the model printed {secret}; abc stays")
    assert code == 0, err
    code, _, err = cli(capsys, "notes", "export", str(recording), "--out", str(tmp_path / "notes.csv"))
    assert code == 0, err
    for path in (notes_path(recording), tmp_path / "notes.csv"):
        content = path.read_text()
        assert secret not in content and "the model printed ***; abc stays" in content, path
    assert leaked_credentials(b"x " + secret.encode()) == ["SOMEPROVIDER_API_KEY"]


def test_encoded_bytes_holding_a_key_are_refused_never_edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``write_atomic`` gets encoded bytes (JSON, parquet pages): blanking a key inside them would corrupt them,
    so it refuses them whole; the writers blank the values before encoding."""
    secret = "envsecret-ABCDEFGH12345678"
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", secret)
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    with pytest.raises(WriteError, match="credential variable SOMEPROVIDER_API_KEY; not written") as refused:
        write_atomic(target, json.dumps({"said": secret}).encode())
    assert secret not in str(refused.value)
    assert target.read_bytes() == b"old" and no_temporaries(tmp_path)


@pytest.mark.parametrize("secret", ['quo"ted\\key-0123456789', "12345678901234"])
def test_a_key_json_escapes_or_a_number_spells_is_blanked_in_notes_and_the_json_stays_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    """Bytes scrubbing missed a key that JSON escapes and broke the JSON where a number spelled one."""
    recording = tmp_path / "mock_demo.json"
    shutil.copy(DEMO, recording)
    NoteBook(recording).add(SIM, "agent", "other", f"pasted {secret}")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", secret)
    code, _, err = add_note(capsys, recording, text=f"again {secret}")  # rewrites the sidecar with both notes
    assert code == 0, err
    saved = json.loads(notes_path(recording).read_text())
    assert sorted(n["text"] for n in saved["notes"]) == ["again ***", "pasted ***"]
    for fmt in ("json", "csv"):
        code, out, err = cli(capsys, "notes", "export", str(recording), "--format", fmt)
        assert code == 0 and secret not in out and "pasted ***" in out, (fmt, err)
    from tau_tui.session.external import write_temp_json

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr("tempfile.tempdir", None)
    view = write_temp_json({"seed": int(secret) if secret.isdigit() else 7, "text": f"a {secret} b"}, "sim")
    loaded = json.loads(view.read_text())  # valid JSON
    assert loaded["text"] == "a *** b" and secret not in view.read_text()
    assert loaded["seed"] == ("***" if secret.isdigit() else 7)


# --- directory-layout runs whose ids are paths ------------------------------------------------------------------------
def tree(root: Path, skip: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and skip not in p.parents
    }


def test_dir_run_resume_with_path_like_ids_stays_in_its_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tau2_data: Path
) -> None:
    work = tmp_path / "a" / "b"
    out = work / "rundir"
    args = [
        "run",
        "--domain",
        "mock",
        "--task",
        "create_task_1",
        "update_task_1",
        "--agent-llm",
        "scripted/gold",
        "--user-llm",
        "scripted/user",
        "--format",
        "dir",
        "--out",
        str(out),
        "--tau2-data",
        str(tau2_data),
        "--quiet",
    ]
    assert cli(capsys, *args)[0] == 0
    sims = out / "simulations"
    first, second = sorted(sims.glob("*.json"))
    absolute = str(tmp_path / "abs_victim")
    # every place a ../../x id could reach: the run's grandparent, an absolute path, the run folder itself
    victims = {tmp_path / "a" / "x.json": "keep x", Path(absolute + ".json"): "keep abs", work / "y.json": "keep y"}
    for path, text in victims.items():
        path.write_text(text)
    kept = json.loads(first.read_text())
    kept["id"] = "../../y"  # carried over: must be written inside simulations/
    first.unlink()
    (sims / "kept.json").write_text(json.dumps(kept))
    for name, identifier in (("dropped1.json", "../../x"), ("dropped2.json", absolute), ("dropped3.json", "..")):
        dropped = json.loads(second.read_text())
        dropped.update(id=identifier, termination_reason="infrastructure_error")
        (sims / name).write_text(json.dumps(dropped))
    second.unlink()
    before = tree(tmp_path, out)

    code, _, err = cli(capsys, *args, "--resume")
    assert code == 0, err
    assert tree(tmp_path, out) == before  # nothing outside the run's folder was written or deleted
    assert all(path.read_text() == text for path, text in victims.items())
    assert (sims / f"{id_filename('../../y')}.json").is_file()
    run = open_run(out)
    assert "../../y" in [e.id for e in run.entries]
    assert all(p.resolve().parent == sims.resolve() for p in sims.iterdir())


def test_a_dir_run_does_not_read_through_a_link_out_of_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tau2_data: Path
) -> None:
    out = tmp_path / "rundir"
    assert (
        cli(
            capsys,
            "run",
            "--domain",
            "mock",
            "--task",
            "create_task_1",
            "--agent-llm",
            "scripted/gold",
            "--user-llm",
            "scripted/user",
            "--format",
            "dir",
            "--out",
            str(out),
            "--tau2-data",
            str(tau2_data),
            "--quiet",
        )[0]
        == 0
    )
    outside = tmp_path / "outside.json"
    outside.write_text(next((out / "simulations").glob("*.json")).read_text().replace("create_task_1", "stolen"))
    (out / "simulations" / "link.json").symlink_to(outside)
    run = open_run(out)
    assert [e.task_id for e in run.entries] == ["create_task_1"]
    assert any("link.json skipped" in w for w in run.warnings)


def test_two_runs_on_one_file_the_second_is_refused(registry: DomainRegistry, tmp_path: Path) -> None:
    from tau_tui.rollout import ParticipantSpec, RunConfig, Runner

    cfg = RunConfig(
        domain="mock",
        agent=ParticipantSpec("scripted/gold"),
        user=ParticipantSpec("scripted/user"),
        task_ids=["create_task_1"],
    )
    first = Runner(cfg, tmp_path / "run.json", registry)
    first.prepare()
    try:
        with pytest.raises(WriteError, match="being written by another process"):
            Runner(cfg, tmp_path / "run.json", registry, resume=True).prepare()
    finally:
        first.close()
    Runner(cfg, tmp_path / "run.json", registry, resume=True).prepare()  # free again once the first closed


def test_a_fork_saved_below_a_file_is_a_write_error_and_its_name_is_never_a_path(
    registry: DomainRegistry, tmp_path: Path
) -> None:
    import asyncio

    from tau_tui.config import Settings
    from tau_tui.rollout import continue_episode
    from tau_tui.workspace import Workspace

    episode = asyncio.run(continue_episode(registry, "mock", "create_task_1", [], "scripted/gold", "scripted/user"))
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    with pytest.raises(WriteError, match="is not a folder"):
        episode.save(blocker / "fork.json")
    assert blocker.read_text() == "keep me"
    workspace = Workspace(Settings(runs_dir=tmp_path / "runs"))
    for sim_id in ("../../x", "/abs/x", ".."):
        path = workspace.fork_path("../../evil", sim_id, 3)
        assert path.parent == tmp_path / "runs" and not path.name.startswith(".") and "/" not in path.name


def test_play_that_cannot_save_says_so_in_one_line(tmp_path: Path, tau2_data: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("keep me")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "play",
            "--as",
            "user",
            "--domain",
            "mock",
            "--task",
            "create_task_1",
            "--llm",
            "scripted/gold",
            "--plain",
            "--out",
            str(blocker / "play.json"),
            "--tau2-data",
            str(tau2_data),
        ],
        input="Please create a task called Important Meeting for user_1.\nthanks ###STOP###\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a folder" in one_error_line(done.stderr, str(blocker / "play.json"))
    assert blocker.read_text() == "keep me"


# --- new files are created, never replaced ---------------------------------------------------------------------
def test_a_new_file_write_never_replaces_one_made_meanwhile(tmp_path: Path) -> None:
    import errno

    from tau_tui.model.io import WriteError, write_atomic

    target = tmp_path / "x.json"
    target.write_bytes(b"someone else's")
    with pytest.raises(WriteError) as caught:
        write_atomic(target, b"ours", replace=False)
    assert caught.value.errno == errno.EEXIST and str(target) in str(caught.value)
    assert target.read_bytes() == b"someone else's" and no_temporaries(tmp_path)
    fresh = tmp_path / "y.json"
    write_atomic(fresh, b"ours", replace=False)
    assert fresh.read_bytes() == b"ours" and no_temporaries(tmp_path)


def test_writers_of_new_files_at_the_same_moment_get_a_file_each(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tau_tui.model.io import write_new

    with ThreadPoolExecutor(8) as pool:
        paths = list(pool.map(lambda i: write_new(tmp_path, "notes_20261201_000000", ".json", b"%d" % i), range(8)))
    assert len(set(paths)) == 8
    assert sorted(int(p.read_bytes()) for p in paths) == list(range(8))


def test_a_results_file_made_by_someone_else_after_we_chose_the_name_is_kept(tmp_path: Path) -> None:
    from tau_tui.model.io import WriteError
    from tau_tui.rollout.records import ResultsWriter

    target = tmp_path / "play.json"
    writer = ResultsWriter(target, {}, [])
    target.write_bytes(b"another session's results")
    with pytest.raises(WriteError, match="already exists"):
        writer.write()
    assert target.read_bytes() == b"another session's results"


def test_a_play_file_name_from_a_task_id_stays_in_the_runs_folder(tmp_path: Path) -> None:
    from tau_tui.model.io import new_output_path

    path = new_output_path(tmp_path, "play", "mock/../..", "../../etc/x")
    assert path.parent == tmp_path and "/" not in path.name and not path.name.startswith(".")
