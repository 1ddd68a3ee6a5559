"""``--workers N`` gives the same ``--json`` output, byte for byte and in the same order, as one worker."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import CORPUS, ROOT, corpus_required


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run(
        [sys.executable, "-m", "tau_tui", *args, "--tau2-data", str(CORPUS)],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )


@pytest.mark.corpus
@pytest.mark.parametrize("command", ["replay", "eval"])
def test_json_is_byte_identical_for_one_and_two_workers_on_the_corpus(command: str) -> None:
    corpus_required()
    one = _run(command, "--json", "--workers", "1", str(CORPUS))
    two = _run(command, "--json", "--workers", "2", str(CORPUS))
    assert one.returncode == two.returncode
    assert one.stdout.count(b"\n") > 1600  # every simulation of the corpus
    assert one.stdout == two.stdout


def test_workers_must_be_a_whole_number_of_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    from tau_tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["replay", "--workers", "0", "x.json"])
    assert exc.value.code == 2
    assert "--workers: expected a whole number of at least 1, got '0'" in capsys.readouterr().err
