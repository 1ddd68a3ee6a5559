"""``--workers N`` gives the same ``--json`` output, byte for byte and in the same order, as one worker."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS, CorpusPass, corpus_command, corpus_required


@pytest.mark.corpus
def test_eval_json_is_byte_identical_for_one_and_two_workers_on_the_corpus(corpus_eval: CorpusPass) -> None:
    """The one-worker eval is the run's shared one (``corpus_eval``), made by the same command."""
    two = corpus_command("eval", "--json", "--workers", "2", str(CORPUS))
    assert corpus_eval.returncode == two.returncode
    assert corpus_eval.stdout.count(b"\n") > 1600  # every simulation of the corpus
    assert corpus_eval.stdout == two.stdout


@pytest.mark.corpus
def test_replay_json_is_byte_identical_for_one_and_two_workers_on_the_corpus() -> None:
    corpus_required()
    one = corpus_command("replay", "--json", "--workers", "1", str(CORPUS))
    two = corpus_command("replay", "--json", "--workers", "2", str(CORPUS))
    assert one.returncode == two.returncode
    assert one.stdout.count(b"\n") > 1600  # every simulation of the corpus
    assert one.stdout == two.stdout


def test_workers_must_be_a_whole_number_of_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    from tau_tui.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["replay", "--workers", "0", "x.json"])
    assert exc.value.code == 2
    assert "--workers: expected a whole number of at least 1, got '0'" in capsys.readouterr().err
