"""``--executor ray``: the same ``--json`` output as the local executor, on a local Ray instance with 2 CPUs."""

from __future__ import annotations

import os

import pytest

from tau_tui.cli import main
from tests.conftest import CORPUS, ROOT, corpus_required

ray = pytest.importorskip("ray", reason="the optional extra 'ray' is not installed (pip install 'tau-tui[ray]')")
FILES = [CORPUS / "sierra-research__tau2-bench__airline.json", CORPUS / "generated" / "tau2-gold_retail.json"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, logging_level="ERROR", log_to_driver=False, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                       "TAU_TUI_CONFIG": os.environ["TAU_TUI_CONFIG"]}})
    yield
    ray.shutdown()


def _out(capsys, *args) -> tuple[int, str]:
    code = main([*map(str, args), "--tau2-data", str(CORPUS)])
    return code, capsys.readouterr().out


@pytest.mark.corpus
@pytest.mark.parametrize("command", ["replay", "eval"])
def test_ray_gives_the_local_executors_json_byte_for_byte(local_ray, capsys, command):
    corpus_required()
    local_code, local = _out(capsys, command, "--json", "--workers", "1", *FILES)
    ray_code, on_ray = _out(capsys, command, "--json", "--executor", "ray", "--workers", "2", *FILES)
    assert local.count("\n") > 100
    assert (ray_code, on_ray) == (local_code, local)
    assert ray.is_initialized()  # the executor left the instance it did not start running
