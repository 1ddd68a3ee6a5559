"""Inspect logs of inspect-evals' tau2 port: made by Inspect itself (mock model), read, replayed, DB cross-checked."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from tau_tui.cli import main
from tau_tui.model.io import RunFileError, open_run, scan_paths
from tau_tui.model.messages import ToolMessage, UserMessage
from tau_tui.replay.recorded_db import check_recorded_db, json_form
from tests.conftest import ROOT

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer

pytestmark = pytest.mark.corpus


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


needs_inspect = pytest.mark.skipif(
    not (_have("inspect_ai") and _have("inspect_evals")),
    reason="the optional extra 'inspect' (inspect-ai, inspect-evals) is not installed",
)


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_inspect_log", ROOT / "scripts" / "make_inspect_log.py")
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One real ``.eval`` log per domain, written by Inspect running inspect-evals' tau2 task offline."""
    maker = _maker()
    root = tmp_path_factory.mktemp("inspect-logs")
    return {domain: maker.make_log(domain, root / domain) for domain in ("airline", "retail", "telecom")}


@needs_inspect
def test_a_sample_becomes_a_tau2_simulation(inspect_logs: dict[str, Path]) -> None:
    run = open_run(inspect_logs["airline"])
    assert run.layout == "inspect" and run.domain == "airline" and len(run.entries) == 1
    assert run.agent_model == "mockllm/model" and run.warnings == []
    entry = run.entries[0]
    assert entry.task_id == "7" and entry.termination == "user_stop"
    score = run.raw_sims[0]["reward_info"]["info"]["inspect_score"]
    assert score["scorer"] == "airline_scorer" and entry.reward == {"C": 1.0, "I": 0.0}[score["value"]]
    assert "7" in run.tasks()  # the task definition travels in the sample's metadata
    sim = run.simulation(0)
    calls = [c.name for m in sim.trajectory for c in (getattr(m, "tool_calls", None) or [])]
    assert calls == [
        "get_reservation_details",
        "get_reservation_details",
        "update_reservation_flights",
        "cancel_reservation",
        "cancel_reservation",
    ]
    assert sim.trajectory[-1].role == "user" and "###STOP###" in sim.trajectory[-1].text
    assert sim.info is not None
    assert sim.info["inspect"] is not None
    assert isinstance(sim.info["inspect"]["final_db"], dict) and sim.info["inspect"]["final_user_db"] is None


@needs_inspect
def test_user_side_tool_calls_keep_their_requestor(inspect_logs: dict[str, Path]) -> None:
    sim = open_run(inspect_logs["telecom"]).simulation(0)
    first, second = sim.trajectory[0], sim.trajectory[1]
    assert isinstance(first, UserMessage) and isinstance(second, ToolMessage)
    assert first.tool_calls is not None
    assert first.role == "user" and first.tool_calls[0].name == "toggle_roaming"
    assert first.tool_calls[0].requestor == "user" and second.requestor == "user"
    assert sim.info is not None
    assert sim.info["inspect"] is not None
    assert isinstance(sim.info["inspect"]["final_user_db"], dict)


@needs_inspect
@pytest.mark.parametrize("domain, writes", [("airline", 3), ("retail", 1)])
def test_replay_agrees_with_the_log_and_its_final_db_is_ours(
    analyzer: Analyzer, inspect_logs: dict[str, Path], domain: str, writes: int
) -> None:
    run = open_run(inspect_logs[domain])
    analysis = analyzer.analyze(run, 0)
    record = analysis.to_json()
    assert record["verdicts"]["replayed"] == writes and record["verdicts"]["mismatch"] == 0
    assert record["recorded_final_db"]["match"] is True and record["recorded_final_db"]["agent_match"] is True
    assert record["db_match"] is True
    # the check can fail: the initial DB is not the final one the log stores
    stored = run.raw_sims[0]["info"]["inspect"]["final_db"]
    assert json_form(analysis.timeline.initial.agent) != json_form(stored)


@needs_inspect
def test_a_final_db_that_differs_from_ours_is_named_path_by_path(
    analyzer: Analyzer, inspect_logs: dict[str, Path]
) -> None:
    run = open_run(inspect_logs["airline"])
    analysis = analyzer.analyze(run, 0)
    info = json.loads(json.dumps(run.raw_sims[0]["info"]))
    reservation = next(iter(info["inspect"]["final_db"]["reservations"]))
    info["inspect"]["final_db"]["reservations"][reservation]["origin"] = "XXX"
    check = check_recorded_db(info, analysis.timeline.final)
    assert check is not None
    assert check.match is False and check.n_differences == 1
    assert check.differences == [f"agent: reservations['{reservation}'].origin (changed in the recording)"]


@needs_inspect
def test_telecom_final_dbs_agree_and_the_port_writes_numbers_unlike_tau2(
    analyzer: Analyzer, inspect_logs: dict[str, Path]
) -> None:
    analysis = analyzer.analyze(open_run(inspect_logs["telecom"]), 0)
    record = analysis.to_json()
    assert record["recorded_final_db"] == {
        "source": "Inspect log",
        "match": True,
        "agent_match": True,
        "user_match": True,
        "n_differences": 0,
        "differences": [],
    }
    # tau2 writes numbers inside a tool's dict result as strings; the port keeps them numbers: a mismatch
    mismatch = record["first_mismatch"]
    assert mismatch["tool"] == "refuel_data" and '"charge": 4.0' in mismatch["recorded"]
    assert '"charge": "4.0"' in mismatch["replayed"]


@needs_inspect
def test_cli_replay_reads_a_folder_of_logs(
    inspect_logs: dict[str, Path], tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inspect_logs["airline"].parent.parent
    assert sorted(p.suffix for p in scan_paths([folder]).files) == [".eval", ".eval", ".eval"]
    code = main(["replay", "--json", "--tau2-data", str(tau2_data), str(folder)])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1  # telecom's refuel_data output differs (above)
    assert sorted(r["domain"] for r in records) == ["airline", "retail", "telecom"]
    assert all(r["recorded_final_db"]["match"] is True for r in records)
    code = main(["replay", "--tau2-data", str(tau2_data), str(inspect_logs["retail"])])
    assert code == 0 and "final DB stored in the Inspect log: same as ours" in capsys.readouterr().out


# --- untrusted input (these run without the extra too) ----------------------------------------------------------


def test_a_broken_eval_file_is_one_line_naming_it(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(RunFileError) as caught:
        open_run(bad)
    assert str(caught.value).startswith(f"{bad}: not a readable Inspect log") and "\n" not in str(caught.value)
    empty_zip = tmp_path / "other.eval"
    with zipfile.ZipFile(empty_zip, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(RunFileError) as caught:
        open_run(empty_zip)
    assert str(caught.value).startswith(f"{empty_zip}: ") and "\n" not in str(caught.value)


def test_without_the_extra_an_eval_file_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as when inspect-ai is absent
    with pytest.raises(RunFileError) as caught:
        open_run(log)
    assert (
        str(caught.value) == f"{log}: an Inspect log: install the optional extra 'inspect' "
        "(pip install 'tau-tui[inspect]') to read it"
    )
