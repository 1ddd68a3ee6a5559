"""Shared fixtures: the tau2 corpus beside the project and a tau2 data folder built from it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "tau2-corpus"
ORACLE = CORPUS / "ORACLE.jsonl"

# The corpus stands in for a tau2 data folder; litellm must never reach for the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# A settings file on the machine running the tests must not change what they see.
os.environ["TAU_TUI_CONFIG"] = str(ROOT / "tests" / "fixtures" / "no-such-config.toml")


@pytest.fixture(autouse=True)
def user_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$XDG_DATA_HOME`` for every test: notes on bundled recordings never reach the real home."""
    home = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def corpus_required() -> None:
    if not CORPUS.is_dir():
        pytest.fail(f"the tau2 corpus is missing: expected it at {CORPUS} (shared/ beside the project)")


def _pristine_mock_inbox() -> dict:
    """The mock user DB tau2 1.0.1 ships, derived from the corpus itself.

    The corpus's ``domains/mock`` lacks ``user_db.json``. tau2's pristine inbox
    holds exactly the notification that the ``update_task_with_user_tools``
    task re-creates in its initialisation action, unread, so we rebuild it from
    that task definition (in ``generated/tau2-gold_mock.json``) rather than
    carrying tau2's data file in this project.
    """
    results = json.loads((CORPUS / "generated" / "tau2-gold_mock.json").read_text())
    task = next(t for t in results["tasks"] if t["id"] == "update_task_with_user_tools")
    action = next(a for a in task["initial_state"]["initialization_actions"] if a["func_name"] == "add_notification")
    args = action["arguments"]
    note = {"notification_id": args["notification_id"], "message": args["message"], "status": "unread",
            "task_id": args.get("task_id")}
    return {"notifications": {note["notification_id"]: note}}


@pytest.fixture(scope="session")
def tau2_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tau2 data folder: the corpus's domain data, plus the mock user DB it lacks."""
    corpus_required()
    root = tmp_path_factory.mktemp("tau2-data")
    domains = root / "domains"
    domains.mkdir()
    for src in sorted((CORPUS / "domains").iterdir()):
        if src.name != "mock":
            (domains / src.name).symlink_to(src, target_is_directory=True)
    mock = domains / "mock"
    mock.mkdir()
    for src in (CORPUS / "domains" / "mock").iterdir():
        (mock / src.name).symlink_to(src)
    if not (mock / "user_db.json").exists():
        (mock / "user_db.json").write_text(json.dumps(_pristine_mock_inbox(), indent=2))
    return root


@pytest.fixture(scope="session")
def registry(tau2_data: Path):
    from tau_tui.domains import DomainRegistry

    return DomainRegistry(tau2_data)


@pytest.fixture(scope="session")
def analyzer(registry):
    from tau_tui.analysis import Analyzer

    return Analyzer(registry)


@pytest.fixture(scope="session")
def oracle_rows() -> list[dict]:
    corpus_required()
    return [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]
