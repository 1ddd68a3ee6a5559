"""Reading never hangs or explodes: only regular files are read, reads are bounded, bad input names its file."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from tau_tui.cli import main
from tau_tui.model.io import MAX_READ_ENV, RunFileError, expand_paths, open_run, read_bytes
from tests.conftest import ROOT
from tests.helpers import greet, results_file

# A reader that blocks on a FIFO would hang the test: every FIFO case runs in a child with a timeout.
CHILD_TIMEOUT = 60


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tau_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=CHILD_TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_fifo_given_directly_is_refused_with_one_line(tmp_path, command):
    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    proc = run_cli(command, fifo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"tau-tui: {fifo}: not a regular file (fifo)\n"


def test_fifo_found_in_a_folder_is_refused_and_the_rest_is_read(tmp_path, tau2_data):
    os.mkfifo(tmp_path / "stuck.json")
    results_file(tmp_path / "ok.json", [greet()])
    proc = run_cli("replay", tmp_path, "--json", "--tau2-data", tau2_data)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"tau-tui: {tmp_path / 'stuck.json'}: not a regular file (fifo)"]
    assert [json.loads(line)["file"] for line in proc.stdout.splitlines()] == [str(tmp_path / "ok.json")]


def test_fifo_among_a_run_folders_simulations_is_skipped_with_a_note(tmp_path):
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    (run / "results.json").write_text(json.dumps({"info": {}, "tasks": []}))
    (run / "simulations" / "s1.json").write_text(json.dumps({"id": "s1", "task_id": "t", "messages": []}))
    os.mkfifo(run / "simulations" / "s2.json")
    code = ("import sys; from tau_tui.model.io import open_run; r = open_run(sys.argv[1]);"
            "print(len(r.raw_sims)); print(r.warnings)")
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, cwd=ROOT,
                          timeout=CHILD_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    count, warnings = proc.stdout.splitlines()
    assert count == "1" and "simulations/s2.json: not a regular file (fifo), skipped" in warnings


def test_device_is_refused(capsys):
    code = main(["replay", os.devnull])
    _, err = capsys.readouterr()
    assert code == 2 and err == f"tau-tui: {os.devnull}: not a regular file (character device)\n"


def test_unix_socket_named_json_is_refused_in_a_folder(tmp_path):
    path = tmp_path / "x.json"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert expand_paths([tmp_path]) == [path]
        with pytest.raises(RunFileError, match=r"not a regular file \(socket\)$"):
            open_run(path)
    finally:
        server.close()


def test_reads_are_bounded(tmp_path, monkeypatch):
    path = results_file(tmp_path / "big.json", [greet()])
    size = path.stat().st_size
    monkeypatch.setenv(MAX_READ_ENV, str(size - 1))
    with pytest.raises(RunFileError, match=rf"is {size:,} bytes, more than the {size - 1:,}-byte read limit"):
        open_run(path)
    monkeypatch.setenv(MAX_READ_ENV, str(size))
    assert read_bytes(path) == path.read_bytes()


def test_unknown_domain_names_the_file(tmp_path, tau2_data, capsys):
    path = results_file(tmp_path / "elsewhere.json", [greet()], domain="nowhere")
    for command in ("replay", "eval"):
        code = main([command, str(path), "--tau2-data", str(tau2_data)])
        _, err = capsys.readouterr()
        assert code == 2
        assert err.startswith(f"tau-tui: {path}: unknown domain 'nowhere'") and err.count("\n") == 1
