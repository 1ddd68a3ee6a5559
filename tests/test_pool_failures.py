"""The worker pool never leaves a caller waiting forever: a closed pool or a dead worker ends ``map`` with an error."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tau_tui.config import Settings
from tau_tui.pool import POOL_MIN, Executor, Job, Unit

from tests.conftest import CORPUS, corpus_required

pytestmark = pytest.mark.corpus

AIRLINE = CORPUS / "generated" / "tau2-gold_airline.json"


def _units(n: int) -> list[Unit]:
    return [Unit(str(AIRLINE), i % 150) for i in range(n)]


def test_a_worker_that_dies_ends_map_with_an_error_not_a_hang():
    corpus_required()
    executor = Executor(Job("replay", Settings(tau2_data=CORPUS)), 2)
    try:
        answers = executor.map(_units(max(POOL_MIN, 4000)))
        next(answers)  # the workers are up and answering
        os.kill(next(iter(executor._pids)), signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="worker process died"):
            for _ in answers:
                pass
        assert time.monotonic() - started < 60
    finally:
        executor.close()


def test_closing_the_pool_wakes_a_thread_waiting_for_answers():
    """The TUI closes its pool when it quits while its replay thread waits on an answer."""
    corpus_required()
    executor = Executor(Job("replay", Settings(tau2_data=CORPUS)), 2)
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
