"""Reading never hangs, explodes or crashes: only regular files, bounded reads, any nesting the reader accepts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tau_tui.cli import main
from tau_tui.model import runtime
from tau_tui.model.io import RunFileError, expand_paths, open_run, read_bytes
from tau_tui.model.nesting import CUT_MARKER, MAX_NESTING, clip_nesting, nesting_depth
from tests.conftest import ROOT
from tests.helpers import READER_DEPTH, deep_results_file, greet, results_file

# A reader that blocks on a FIFO would hang the test: every FIFO case runs in a child with a timeout.
CHILD_TIMEOUT = 60


def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau_tui", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=CHILD_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_fifo_given_directly_is_refused_with_one_line(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    proc = run_cli(command, fifo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"tau-tui: {fifo}: not a regular file (fifo)\n"


def test_fifo_found_in_a_folder_is_refused_and_the_rest_is_read(tmp_path: Path, tau2_data: Path) -> None:
    os.mkfifo(tmp_path / "stuck.json")
    results_file(tmp_path / "ok.json", [greet()])
    proc = run_cli("replay", tmp_path, "--json", "--tau2-data", tau2_data)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"tau-tui: {tmp_path / 'stuck.json'}: not a regular file (fifo)"]
    assert [json.loads(line)["file"] for line in proc.stdout.splitlines()] == [str(tmp_path / "ok.json")]


def test_fifo_among_a_run_folders_simulations_is_skipped_with_a_note(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    (run / "results.json").write_text(json.dumps({"info": {}, "tasks": []}))
    (run / "simulations" / "s1.json").write_text(json.dumps({"id": "s1", "task_id": "t", "messages": []}))
    os.mkfifo(run / "simulations" / "s2.json")
    code = (
        "import sys; from tau_tui.model.io import open_run; r = open_run(sys.argv[1]);"
        "print(len(r.raw_sims)); print(r.warnings)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(run)], capture_output=True, text=True, cwd=ROOT, timeout=CHILD_TIMEOUT
    )
    assert proc.returncode == 0, proc.stderr
    count, warnings = proc.stdout.splitlines()
    assert count == "1" and "simulations/s2.json: not a regular file (fifo), skipped" in warnings


def test_device_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", os.devnull])
    _, err = capsys.readouterr()
    assert code == 2 and err == f"tau-tui: {os.devnull}: not a regular file (character device)\n"


def test_unix_socket_named_json_is_refused_in_a_folder(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert expand_paths([tmp_path]) == [path]
        with pytest.raises(RunFileError, match=r"not a regular file \(socket\)$"):
            open_run(path)
    finally:
        server.close()


def test_reads_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = results_file(tmp_path / "big.json", [greet()])
    size = path.stat().st_size
    runtime.configure(max_read_bytes=size - 1)
    with pytest.raises(RunFileError, match=rf"is {size:,} bytes, more than the {size - 1:,}-byte read limit"):
        open_run(path)
    runtime.configure(max_read_bytes=size)
    assert read_bytes(path) == path.read_bytes()


# A cap on the address space as a small container or `ulimit -v` sets it: the default read limit (4 GiB) must
# not be allocated up front, or every read dies with a MemoryError.
ADDRESS_SPACE_CAP = 4 * 1024**3


def _capped(*command: str) -> subprocess.CompletedProcess[str]:
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))

    return subprocess.run(
        list(command), capture_output=True, text=True, cwd=ROOT, timeout=CHILD_TIMEOUT, preexec_fn=cap
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="address-space caps (RLIMIT_AS) as Linux has them")
def test_reading_under_an_address_space_cap_allocates_no_read_limit(tmp_path: Path, tau2_data: Path) -> None:
    path = results_file(tmp_path / "small.json", [greet()])
    code = (
        "import sys; from tau_tui.model.io import read_bytes, max_read_bytes;"
        "assert max_read_bytes() >= 4 * 1024**3; print(len(read_bytes(sys.argv[1])))"
    )
    proc = _capped(sys.executable, "-c", code, str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{path.stat().st_size}\n"
    proc = _capped(sys.executable, "-m", "tau_tui", "replay", "--json", "--tau2-data", str(tau2_data), str(path))
    assert proc.returncode == 0, proc.stderr
    assert "MemoryError" not in proc.stderr and json.loads(proc.stdout)["file"] == str(path)


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="a regular file whose size is reported as 0")
def test_a_file_longer_than_its_size_says_is_read_in_chunks_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    status = "/proc/self/status"  # st_size 0, then a kilobyte or so: what a file growing while it is read looks like
    assert os.stat(status).st_size == 0
    assert read_bytes(status).startswith(b"Name:")
    monkeypatch.setattr("tau_tui.model.io.reading.READ_CHUNK", 7)  # many chunks, each bounded
    assert read_bytes(status).startswith(b"Name:")
    runtime.configure(max_read_bytes=100)
    with pytest.raises(RunFileError) as exc:
        read_bytes(status)
    assert str(exc.value) == (f"{status}: is more than the 100-byte read limit (raise it with TAU_TUI_MAX_READ_BYTES)")


def test_unknown_domain_names_the_file(tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = results_file(tmp_path / "elsewhere.json", [greet()], domain="nowhere")
    for command in ("replay", "eval"):
        code = main([command, str(path), "--tau2-data", str(tau2_data)])
        _, err = capsys.readouterr()
        assert code == 2
        assert err.startswith(f"tau-tui: {path}: unknown domain 'nowhere'") and err.count("\n") == 1


# --- nesting -------------------------------------------------------------------------------------


def test_depth_and_cut_work_at_any_depth() -> None:
    value: object = "x"
    for _ in range(100_000):
        value = [value]
    assert nesting_depth(value) == 100_000 and nesting_depth(value, stop=10) == 11
    cut = clip_nesting(value)
    assert nesting_depth(cut) == MAX_NESTING
    bottom = cut
    for _ in range(MAX_NESTING - 1):
        bottom = bottom[0]
    assert bottom == [CUT_MARKER]
    shallow = {"a": [1, {"b": 2}], "c": "d"}
    assert clip_nesting(shallow) == shallow and nesting_depth(shallow) == 3


def test_the_deep_recording_is_as_deep_as_the_reader_accepts(tmp_path: Path) -> None:
    orjson.loads(deep_results_file(tmp_path / "ok.json").read_bytes())
    with pytest.raises(orjson.JSONDecodeError, match="depth"):
        orjson.loads(deep_results_file(tmp_path / "past.json", READER_DEPTH + 1).read_bytes())


def test_deep_arguments_and_content_replay_with_findings(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = deep_results_file(tmp_path / "deep.json")
    code = main(["replay", str(path), "--json", "--tau2-data", str(tau2_data)])
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert code == 1 and err == ""
    assert [(f["kind"], f["step"]) for f in record["findings"]] == [("nested_too_deep", s) for s in (2, 4, 6, 8)]
    # the two cut writes are not re-executed (mismatches); the write nested 100 levels deep is replayed
    assert record["verdicts"] == {
        "replayed": 0,
        "mismatch": 3,
        "skipped_read": 1,
        "skipped_unknown": 1,
        "recorded_error": 1,
    }
    assert record["first_mismatch"]["step"] == 3 and CUT_MARKER in out
    code = main(["replay", str(path), "--tau2-data", str(tau2_data)])
    out, err = capsys.readouterr()
    assert code == 1 and err == "" and "finding [nested_too_deep] step 2" in out


def test_deep_arguments_and_content_evaluate(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = deep_results_file(tmp_path / "deep.json")
    code = main(["eval", str(path), "--json", "--tau2-data", str(tau2_data)])
    out, err = capsys.readouterr()
    sim, file_record = map(json.loads, out.splitlines())
    assert code == 0 and err == ""
    assert sim["reward"] == 0.0 and sim["breakdown"] == {"DB": 0.0}
    assert file_record["metrics"]["n_scored"] == 1
    code = main(["eval", str(path), "--tau2-data", str(tau2_data)])
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and "pass@k" in out
