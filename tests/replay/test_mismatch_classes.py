"""Mismatch classes: library_text, upstream_fix, divergence; strict replay and its verdicts stay as tau2's.

The retail recordings here are hand-made: a two-item ``modify_pending_order_items`` of order #W8955613
(a Smart Watch and a Backpack) to variants of each, recorded once as tau2 1.0.1 answers (every item takes
the last new variant's price and options) and once as the fixed tool answers (tau2-bench#317, fix #322).
The catalog values are db.json's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.analysis import Analyzer
from tau_tui.cli import main
from tau_tui.model import open_run
from tau_tui.replay.library_text import LIBRARY_TEXTS, LibraryText, library_text_only, register_library_text
from tests.conftest import CORPUS
from tests.helpers import call, greet, result, results_file, say, user

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry

PYDANTIC_ERROR = (
    "Error: 1 validation error for Passenger\ndob\n  Field required [type=missing, input_value="
    "{'first_name': 'Mia'}, input_type=dict]\n    For further information visit "
    "https://errors.pydantic.dev/2.12/v/missing"
)

ORDER = "#W8955613"
MODIFY = {
    "order_id": ORDER,
    "item_ids": ["2554056026", "6309044598"],
    "new_item_ids": ["2860956907", "3928046918"],
    "payment_method_id": "credit_card_6044108",
}
WATCH = {"color": "black", "band material": "silicone", "display": "LCD"}  # variant 2860956907, 315.61
BACKPACK = {"color": "black", "size": "large", "material": "nylon", "compartment": "camera"}  # 3928046918, 198.0
MODIFY_TASK = {
    "id": "t_modify",
    "user_scenario": {"instructions": "Change both items of #W8955613."},
    "evaluation_criteria": {
        "actions": [{"action_id": "a1", "name": "modify_pending_order_items", "arguments": MODIFY}],
        "reward_basis": ["DB"],
    },
}


def modified_order(watch: tuple[float, dict[str, Any]], backpack: tuple[float, dict[str, Any]]) -> dict[str, Any]:
    """Order #W8955613 after the modify, with the (price, options) the recording gives each new item."""
    return {
        "order_id": ORDER,
        "user_id": "olivia_lopez_9494",
        "address": {
            "address1": "200 Elm Street",
            "address2": "Suite 805",
            "city": "Houston",
            "country": "USA",
            "state": "TX",
            "zip": "77277",
        },
        "items": [
            {
                "name": "Smart Watch",
                "product_id": "6945232052",
                "item_id": "2860956907",
                "price": watch[0],
                "options": watch[1],
            },
            {
                "name": "Backpack",
                "product_id": "2524789262",
                "item_id": "3928046918",
                "price": backpack[0],
                "options": backpack[1],
            },
        ],
        "status": "pending (item modified)",
        "fulfillments": [],
        "payment_history": [
            {"transaction_type": "payment", "amount": 585.97, "payment_method_id": "gift_card_6682391"},
            {"transaction_type": "refund", "amount": 72.35999999999999, "payment_method_id": "credit_card_6044108"},
        ],
        "cancel_reason": None,
        "exchange_items": None,
        "exchange_new_items": None,
        "exchange_payment_method_id": None,
        "exchange_price_difference": None,
        "return_items": None,
        "return_payment_method_id": None,
    }


AS_1_0_1 = modified_order((198.0, BACKPACK), (198.0, BACKPACK))
AS_FIXED = modified_order((315.61, WATCH), (198.0, BACKPACK))


def retail_recording(path: Path, order: dict[str, Any]) -> Path:
    return results_file(
        path,
        [
            greet(),
            user("Change both items, please."),
            call("modify_pending_order_items", MODIFY),
            result(order),
            say("Done."),
        ],
        task=MODIFY_TASK,
        domain="retail",
    )


# --- library_text: a registry of normalisers, none of which hides a real difference -----------------------------


def test_a_pydantic_version_in_the_docs_url_is_library_text() -> None:
    assert library_text_only(PYDANTIC_ERROR, PYDANTIC_ERROR.replace("2.12", "2.14")) == [
        "pydantic's docs-URL version (2.12 vs 2.14)"
    ]
    inside_json = json.dumps({"errors": [PYDANTIC_ERROR]})
    assert library_text_only(inside_json, inside_json.replace("2.12", "2.9")) == [
        "pydantic's docs-URL version (2.12 vs 2.9)"
    ]


def test_a_missing_further_information_line_is_library_text() -> None:
    without = PYDANTIC_ERROR.split("\n    For further")[0]
    assert library_text_only(PYDANTIC_ERROR, without) == [
        'pydantic\'s "For further information visit …" lines (1 recorded, 0 replayed)'
    ]


@pytest.mark.parametrize(
    "replayed",
    [
        PYDANTIC_ERROR.replace("2.12", "2.14").replace("Field required", "Input should be a valid string"),
        PYDANTIC_ERROR.replace("2.12", "2.14").replace("'Mia'", "'Ana'"),
        PYDANTIC_ERROR.replace("errors.pydantic.dev/2.12", "errors.example.dev/2.14"),
        PYDANTIC_ERROR,  # no difference at all is not a library-text difference
    ],
)
def test_any_other_difference_is_not_library_text(replayed: str) -> None:
    assert library_text_only(PYDANTIC_ERROR, replayed) is None


def test_a_new_library_pattern_costs_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tau_tui.replay.library_text.LIBRARY_TEXTS", dict(LIBRARY_TEXTS))
    recorded, replayed = (
        "Error: see https://docs.example.org/v3/errors/E1",
        "Error: see https://docs.example.org/v4/errors/E1",
    )
    assert library_text_only(recorded, replayed) is None
    register_library_text(
        LibraryText(
            "example_docs_url",
            "example",
            re.compile(r"(?<=docs\.example\.org/)v\d+"),
            "v",
            lambda a, b: f"example's docs version ({a[0].group(0)} vs {b[0].group(0)})",
        )
    )
    assert library_text_only(recorded, replayed) == ["example's docs version (v3 vs v4)"]


def test_the_corpus_mismatches_are_seven_library_text_and_one_divergence(analyzer: Analyzer) -> None:
    classes = []
    for name in (
        "sierra-research__tau2-bench__airline_run1.json",
        "sierra-research__tau2-bench__langchain_agent_airline_2025-11-26_00-37-06.json",
        "sierra-research__tau2-bench__tau2_retail_example_trajectory.json",
    ):
        run = open_run(CORPUS / name)
        for index in range(len(run.raw_sims)):
            record = analyzer.analyze(run, index).to_json(detail=False)
            if record["first_mismatch"]:
                assert record["strict_ok"] is False and record["verdicts"]["mismatch"] == sum(
                    record["mismatch_classes"].values()
                )
                classes.append((record["first_mismatch"]["mismatch_class"], record["first_mismatch"]["mismatch_note"]))
    note = "differs only in pydantic's docs-URL version (2.12 vs 2.14)"
    assert sorted(classes, key=str) == [("divergence", None)] + [("library_text", note)] * 7


def library_text_recording(path: Path, then_diverge: bool = True, sim_id: str = "sim-1") -> Path:
    """A mock run whose first write's recorded error has a pydantic further-information line the replay lacks;
    ``then_diverge``: a second write whose recorded title differs (a divergence)."""
    mock_error = "Error: Task nope not found"  # what the mock's update_task_status says of an unknown task
    messages = [
        greet(),
        call("update_task_status", {"task_id": "nope", "status": "completed"}, "c1"),
        result(
            mock_error + "\n    For further information visit https://errors.pydantic.dev/2.12/v/missing",
            "c1",
            error=True,
        ),
    ]
    if then_diverge:
        messages += [
            call("update_task_status", {"task_id": "task_1", "status": "completed"}, "c2"),
            result({"task_id": "task_1", "title": "Other", "description": "A test task", "status": "completed"}, "c2"),
        ]
    return results_file(path, messages, sim_id=sim_id)


def test_facts_name_the_library_text_and_a_later_divergence(tmp_path: Path, registry: DomainRegistry) -> None:
    analysis = Analyzer(registry).analyze(open_run(library_text_recording(tmp_path / "two.json")), 0)
    assert [c.verdict.value for c in analysis.timeline.calls] == ["mismatch", "mismatch"]
    record = analysis.to_json()
    assert record["mismatch_classes"] == {"divergence": 1, "library_text": 1, "upstream_fix": 0}
    facts = {f.kind: f for f in analysis.facts(record)}
    assert facts["calls"].value is not None
    assert facts["calls"].value.startswith("0 replayed, 2 mismatch (1 divergence, 1 library text), ")
    assert facts["calls"].severity == "bad"
    assert facts["first_mismatch"].severity == "warn"
    assert facts["first_mismatch"].detail[0] == (
        "class: library_text — differs only in pydantic's "
        '"For further information visit …" lines (1 recorded, 0 replayed)'
    )
    assert (
        facts["first_divergence"].text == "first divergence at step 4: update_task_status(task_id='task_1', "
        "status='completed')"
    )
    assert facts["first_divergence"].severity == "bad"
    header = {f.kind: f for f in analysis.summary(record)}
    assert header["mismatch"].label == "2 mismatch (1 divergence, 1 library text)"


# --- upstream_fix: retail's modify_pending_order_items (tau2-bench#317, #318; fix #322) -------------------------


def test_a_recording_made_with_the_fixed_tool_is_an_upstream_fix(tmp_path: Path, registry: DomainRegistry) -> None:
    run = open_run(retail_recording(tmp_path / "fixed.json", AS_FIXED))
    record = Analyzer(registry).analyze(run, 0).to_json()
    assert record["strict_ok"] is False and record["verdicts"]["mismatch"] == 1  # strict, as tau2 1.0.1
    assert record["mismatch_classes"] == {"divergence": 0, "library_text": 0, "upstream_fix": 1}
    mismatch = record["first_mismatch"]
    assert mismatch["mismatch_class"] == "upstream_fix" and mismatch["upstream_issue"] == "tau2-bench#317"
    assert mismatch["upstream_fix"] == "retail-modify-items-own-variant"
    assert mismatch["mismatch_note"].startswith(
        "the recording matches modify_pending_order_items as fixed upstream (tau2-bench#317, #318, fix #322)"
    )
    assert record["upstream_fixes"] == []
    fixed = Analyzer(registry, upstream_fixes=True).analyze(run, 0).to_json()
    assert fixed["strict_ok"] is True and fixed["first_mismatch"] is None and fixed["db_match"] is True
    assert fixed["upstream_fixes"] == ["retail-modify-items-own-variant"]


def test_a_1_0_1_recording_replayed_with_the_fix_is_an_upstream_fix_the_other_way(
    tmp_path: Path, registry: DomainRegistry
) -> None:
    run = open_run(retail_recording(tmp_path / "as-1.0.1.json", AS_1_0_1))
    plain = Analyzer(registry).analyze(run, 0).to_json()
    assert plain["strict_ok"] is True and plain["db_match"] is True
    fixed = Analyzer(registry, upstream_fixes=True).analyze(run, 0).to_json()
    mismatch = fixed["first_mismatch"]
    assert mismatch["mismatch_class"] == "upstream_fix" and mismatch["upstream_issue"] == "tau2-bench#317"
    assert mismatch["mismatch_note"].startswith(
        "the recording matches modify_pending_order_items before the upstream fix (tau2 1.0.1;"
    )
    assert fixed["db_match"] is True  # the gold state is built with the same (fixed) tool


def test_a_modify_that_neither_tool_gives_is_a_divergence(tmp_path: Path, registry: DomainRegistry) -> None:
    run = open_run(retail_recording(tmp_path / "other.json", modified_order((315.61, WATCH), (1.0, BACKPACK))))
    for fixes in (False, True):
        mismatch = Analyzer(registry, upstream_fixes=fixes).analyze(run, 0).to_json()["first_mismatch"]
        assert mismatch["mismatch_class"] == "divergence" and "upstream_issue" not in mismatch


def replay(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["replay", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_counts_the_classes_apart_and_keeps_the_strict_exit_status(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixed = retail_recording(tmp_path / "fixed.json", AS_FIXED)
    code, out, _ = replay(capsys, fixed, "--tau2-data", tau2_data)
    assert code == 1  # strict_ok is false, as tau2 says: an explained mismatch still exits 1
    assert "    class: upstream_fix (tau2-bench#317) — the recording matches modify_pending_order_items" in out
    assert out.splitlines()[-1] == (
        "1 simulation in 1 file: 0 ok, 1 upstream-fix only, 0 with divergences, 0 with findings; db_match 1/1"
    )  # 1.0.1's gold hides the bug
    code, out, _ = replay(capsys, fixed, "--tau2-data", tau2_data, "--upstream-fixes")
    assert code == 0 and out.splitlines()[-1].startswith("1 simulation in 1 file: 1 ok, 0 with divergences")


def test_upstream_fixes_from_the_settings_file_and_over_worker_processes(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed = retail_recording(tmp_path / "fixed.json", AS_FIXED)
    settings = tmp_path / "config.toml"
    settings.write_text("upstream_fixes = true\n")
    monkeypatch.setenv("TAU_TUI_CONFIG", str(settings))
    monkeypatch.setattr("tau_tui.workers.pool.POOL_MIN", 1)  # one simulation is enough to start the worker processes
    code, out, _ = replay(capsys, fixed, "--tau2-data", tau2_data, "--json", "--workers", "2")
    record = json.loads(out)
    assert code == 0 and record["upstream_fixes"] == ["retail-modify-items-own-variant"]
    code, out, _ = replay(capsys, fixed, "--tau2-data", tau2_data, "--json", "--no-upstream-fixes")
    assert code == 1 and json.loads(out)["first_mismatch"]["mismatch_class"] == "upstream_fix"


def test_eval_names_the_class_and_takes_the_switch(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixed = retail_recording(tmp_path / "fixed.json", AS_FIXED)
    assert main(["eval", str(fixed), "--tau2-data", str(tau2_data), "--json"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["strict_ok"] is False
    assert any("differs from the replay (upstream fix, tau2-bench#317)" in note for note in record["notes"])
    assert main(["eval", str(fixed), "--tau2-data", str(tau2_data), "--json", "--upstream-fixes"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["strict_ok"] is True and not any("differs from the replay" in note for note in record["notes"])


@pytest.mark.parametrize(
    ("argv", "settings", "on"),
    [
        ([], "", False),
        ([], "upstream_fixes = true\n", True),
        (["--upstream-fixes"], "", True),
        (["--no-upstream-fixes"], "upstream_fixes = true\n", False),
    ],
)
def test_the_tui_takes_the_switch_from_its_flag_over_the_settings(
    argv: list[str], settings: str, on: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.cli import _settings, tui_parser
    from tau_tui.workspace import Workspace

    config = tmp_path / "config.toml"
    config.write_text(settings)
    monkeypatch.setenv("TAU_TUI_CONFIG", str(config))
    workspace = Workspace(_settings(tui_parser().parse_args(argv)))
    assert workspace.settings.upstream_fixes is on and workspace.analyzer.upstream_fixes is on
