"""Dead workers (issue 23, class 6): a pool worker killed during ``replay``/``eval --workers 2`` ends the
command in one line with exit 2, after what finished was printed; an index worker killed under the TUI
leaves no multiprocessing traceback when it quits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT, corpus_required

pytestmark = pytest.mark.corpus

AIRLINE = CORPUS / "generated" / "tau2-gold_airline.json"


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def spawned_workers(pid: int) -> list[int]:
    """The multiprocessing workers (spawn) under ``pid``, the resource tracker left out."""
    out = []
    for child in children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in command:
            out.append(child)
    return out


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_a_killed_pool_worker_is_one_line_exit_2_after_what_finished(command: str) -> None:
    corpus_required()
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True", TAU2_DATA_DIR=str(CORPUS))
    process = subprocess.Popen(
        [sys.executable, "-m", "tau_tui", command, "--workers", "2", str(AIRLINE), str(AIRLINE), str(AIRLINE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # the workers are up and answering
        assert first.strip() == str(AIRLINE)
        workers = []
        for _ in range(200):
            workers = spawned_workers(process.pid)
            if workers:
                break
            time.sleep(0.05)
        assert workers, "no worker process found"
        os.kill(workers[0], signal.SIGKILL)
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, err[-2000:]
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("tau-tui: note:")]
    assert lines == ["tau-tui: a worker process died (out of memory?); its simulations were lost"]
    assert (first + out).count(f"{AIRLINE}\n") >= 1  # what finished before the worker died is printed


KILL_INDEX_WORKER = """
import asyncio, os, signal, sys
from pathlib import Path
import tau_tui.model.indexing as indexing
from tests.tui.conftest import build_app
from tests.workers.test_dead_workers import spawned_workers

indexing.PARALLEL_MIN_BYTES = 0
indexing._Coordinator.BRIDGE = False  # the workers index every file: there is always one to kill
files = sorted(Path(sys.argv[1]).iterdir())

async def main():
    app = build_app(files, tau2_data=Path(sys.argv[2]), workers=1, index_workers=2, background_replay=False)
    async with app.run_test(size=(120, 40)) as pilot:
        workers = []
        for _ in range(4000):
            workers = spawned_workers(os.getpid())
            if workers:
                break
            await asyncio.sleep(0.005)
        os.kill(workers[0], signal.SIGKILL)
        print("killed", flush=True)
        for _ in range(1000):
            await pilot.pause(0.02)
            if not app.session.library.loading:
                break
        await pilot.press("q")
    print("quit", flush=True)

asyncio.run(main())
"""


@pytest.mark.parametrize("attempt", range(3))  # where the killed worker stood varies: try it a few times
def test_a_killed_index_worker_leaves_no_traceback_on_quit(tmp_path: Path, attempt: int) -> None:
    corpus_required()
    from benchmarks.make_corpus import make

    make("airline", 1500, tmp_path / "files", files=4)
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    done = subprocess.run(
        [sys.executable, "-c", KILL_INDEX_WORKER, str(tmp_path / "files"), str(CORPUS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["killed", "quit"]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("when", ["before ready", "while sending an index"])
def test_an_index_worker_whose_pipe_is_gone_exits_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """The TUI quit (or gave up on it) while the worker was busy: its next send finds no pipe, and it ends."""
    import multiprocessing

    from tau_tui.model.indexing import _worker_main

    corpus_required()
    parent, child = multiprocessing.Pipe()
    if when == "before ready":
        parent.close()
    else:
        parent.send((0, str(AIRLINE)))
        parent.send(None)
        original = child.send
        sent: list[object] = []

        def send_then_break(message: tuple[object, ...]) -> None:
            sent.append(message[0])
            if len(sent) > 1:  # "ready" went through; the index finds the pipe gone
                raise BrokenPipeError(32, "Broken pipe")
            original(message)

        monkeypatch.setattr(child, "send", send_then_break)
    _worker_main(child, 0.01)  # returns quietly instead of raising (a traceback in a worker process)
