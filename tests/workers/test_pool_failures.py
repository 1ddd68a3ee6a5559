"""The worker pool never leaves a caller waiting forever: a closed pool or a dead worker ends ``map`` with an error."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tau_tui.config import Settings
from tau_tui.workers.pool import Executor, Job, Unit
from tau_tui.workspace import Workspace
from tests.conftest import CORPUS, ROOT, corpus_required

pytestmark = pytest.mark.corpus

AIRLINE = CORPUS / "generated" / "tau2-gold_airline.json"


def _units(n: int) -> list[Unit]:
    return [Unit(str(AIRLINE), i % 150) for i in range(n)]


KILL_ONE = """
import os, signal, sys, time
from tau_tui.config import Settings
from tau_tui.workers.pool import Job, Unit
from tau_tui.workspace import Workspace
executor = Workspace(Settings(tau2_data=sys.argv[1])).executor(Job("replay"), 2)
answers = executor.map([Unit(sys.argv[2], i % 150) for i in range(4000)])
next(answers)  # the workers are up and answering
os.kill(next(iter(executor._pids)), signal.SIGKILL)
try:
    for _ in answers:
        pass
except RuntimeError as exc:
    print("raised:", exc)
executor.close()
print("closed")
"""


@pytest.mark.parametrize("attempt", range(3))  # where the killed worker stood varies: try it a few times
def test_a_worker_that_dies_ends_map_with_an_error_not_a_hang(attempt: int) -> None:
    """Run in a child process with a time limit, so that a hang fails the test instead of stalling the suite."""
    corpus_required()
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    done = subprocess.run(
        [sys.executable, "-c", KILL_ONE, str(CORPUS), str(AIRLINE)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "raised: a worker process died" in done.stdout and done.stdout.rstrip().endswith("closed"), done.stdout


def test_closing_the_pool_wakes_a_thread_waiting_for_answers() -> None:
    """The TUI closes its pool when it quits while its replay thread waits on an answer."""
    corpus_required()
    executor = Workspace(Settings(tau2_data=CORPUS)).executor(Job("replay"), 2)
    assert isinstance(executor, Executor)  # worker processes here, whose pids it keeps
    outcome: list[BaseException | str] = []

    def consume() -> None:
        try:
            for _ in executor.map(_units(4000)):
                pass
            outcome.append("finished")
        except RuntimeError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=consume)
    thread.start()
    while not executor._pids:
        time.sleep(0.05)
    time.sleep(1.0)
    executor.close()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the waiting thread was never woken"
    assert outcome and (outcome[0] == "finished" or "stopped" in str(outcome[0]))
