"""Reading every layout, tolerating drift, indexing lazily, saving atomically."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from tau_tui.model import RunFileError, expand_paths, open_run, save_results
from tau_tui.model.io import describe_empty
from tau_tui.model.messages import AssistantMessage
from tests.conftest import CORPUS, corpus_required
from tests.helpers import MOCK_TASK, call, greet, result, results_file, user

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer


def corpus_files() -> list[Path]:
    corpus_required()
    return expand_paths([CORPUS])


def test_every_corpus_file_loads_or_says_what_it_is(analyzer: Analyzer) -> None:
    loaded, errors = 0, {}
    for path in corpus_files():
        try:
            run = open_run(path)
        except RunFileError as exc:
            errors[path.name] = str(exc)
            continue
        loaded += 1
        analyzer.prepare(run)  # a file that names no domain gets it from the layer with the registry
        assert run.domain in {"airline", "retail", "telecom", "mock", "banking_knowledge"}, path
        for i in range(len(run.entries)):
            assert run.simulation(i).id  # every simulation builds its model
    assert loaded >= 26 and errors == {}  # the tau-bench v1 file included: opened as recorded only
    v1 = open_run(CORPUS / "sierra-research__tau-bench__gpt-4o-airline.json")
    assert v1.layout == "tau-bench-v1" and v1.domain == "airline" and v1.recorded_only
    assert "tau-bench v1" in v1.recorded_only and "\n" not in v1.recorded_only


def test_tau2_data_folders_are_skipped_whole_with_one_notice() -> None:
    """The corpus's ``domains/`` holds tau2's data folders: their JSON files (banking's 698 documents and 97
    task files among them) are domain data, never listed as runs."""
    from tau_tui.model.io import scan_paths

    scan = scan_paths([CORPUS])
    assert {p.name for p in scan.data_folders} == {"airline", "banking_knowledge", "mock", "retail", "telecom"}
    assert not [p for p in scan.files if "domains" in p.relative_to(CORPUS).parts]
    notice = scan.data_folder_notice()
    assert notice and "\n" not in notice and "skipped 5 tau2 data folders" in notice
    assert notice.startswith(str(CORPUS / "domains"))
    # one data folder named directly is skipped too, not reported as an empty directory
    single = scan_paths([CORPUS / "domains" / "banking_knowledge"])
    assert single.files == [] and [p.name for p in single.data_folders] == ["banking_knowledge"]


def test_a_run_of_a_domain_we_do_not_have_opens_with_its_rows() -> None:
    run = open_run(CORPUS / "generated" / "tau2-gold_banking_knowledge.json")
    assert run.domain == "banking_knowledge" and len(run.entries) == 291
    assert all(run.simulation(i).id for i in range(3))


def test_empty_run_is_described() -> None:
    run = open_run(
        CORPUS / "sierra-research__tau2-bench__qwen2.5-1.5b_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
    )
    assert run.entries == []
    described = describe_empty(run)
    assert described is not None
    assert "empty run" in described and "0 simulations" in described


def test_layouts_in_the_corpus(analyzer: Analyzer) -> None:
    corpus_required()
    bare = open_run(CORPUS / "sierra-research__tau2-bench__adaptive-agent_airline_claude-opus-4-6_1trial.json")
    assert bare.layout == "list" and bare.domain is None and bare.tasks() == {}  # the file names none
    notices = analyzer.prepare(bare)
    assert bare.domain == "airline" and "from the tools it calls (book_reservation" in notices[0]
    wrapper = open_run(CORPUS / "sierra-research__tau2-bench__tau2_retail_example_trajectory.json")
    assert wrapper.layout == "wrapper" and len(wrapper.entries) == 1 and len(wrapper.tasks()) == 1
    # version drift: a db_check without db_match still loads
    sim = wrapper.simulation(0)
    assert sim.reward_info is not None
    assert sim.reward_info.db_check is not None
    assert sim.reward_info.db_check.db_match is None and sim.reward_info.db_check.db_reward == 1.0
    solo = open_run(CORPUS / "sierra-research__tau2-bench__gpt-4.1_telecom_no-user_gpt-4.1_1trials.json")
    assert solo.solo


def test_index_does_not_build_message_models() -> None:
    corpus_required()
    run = open_run(CORPUS / "sierra-research__tau2-bench__toolorchestra_retail_gpt-5_1trial.json")
    assert len(run.entries) == 114 and run._sims == {}
    entry = run.entries[0]
    assert entry.n_messages > 0 and entry.reward is not None and entry.n_tool_calls > 0
    run.simulation(3)
    assert list(run._sims) == [3]


def test_directory_layout(tmp_path: Path) -> None:
    src = results_file(tmp_path / "src.json", [greet(), user("hi")])
    data = json.loads(src.read_text())
    run_dir = tmp_path / "run"
    (run_dir / "simulations").mkdir(parents=True)
    sims = data.pop("simulations")
    sims.append(dict(sims[0], id="sim-0"))
    for sim in sims:
        (run_dir / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    data["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"]} for s in sims] + [{"id": "ghost"}]
    (run_dir / "results.json").write_text(json.dumps(data))
    for path in (run_dir, run_dir / "results.json"):
        run = open_run(path)
        assert run.layout == "dir"
        assert [e.id for e in run.entries] == ["sim-0", "sim-1"]  # sorted by file name, like tau2
        assert any("ghost" in w or "1 simulation" in w for w in run.warnings)
    assert expand_paths([tmp_path]) == [run_dir, tmp_path / "src.json"]


def test_single_simulation_object_and_unknown_fields(tmp_path: Path) -> None:
    sim = {
        "id": "s",
        "task_id": "t",
        "messages": [greet(), {"role": "user", "content": "x", "brand_new": 1}],
        "future_field": {"a": 1},
    }
    path = tmp_path / "one.json"
    path.write_text(json.dumps(sim))
    run = open_run(path)
    loaded = run.simulation(0)
    assert loaded.model_extra is not None
    assert run.layout == "single" and loaded.model_extra["future_field"] == {"a": 1}
    assert loaded.messages is not None
    assert loaded.messages[1].model_extra is not None
    assert loaded.messages[1].model_extra["brand_new"] == 1


def test_save_round_trip_is_atomic_and_standard(tmp_path: Path) -> None:
    src = results_file(tmp_path / "in.json", [greet(), user("x"), call("get_users", {}), result("[]")])
    before = src.read_bytes()
    run = open_run(src)
    out = tmp_path / "out" / "saved.json"
    save_results(run.to_results(), out)
    assert src.read_bytes() == before
    again = open_run(out)
    messages = again.simulation(0).messages
    assert messages is not None
    called = messages[2]
    assert isinstance(called, AssistantMessage) and called.tool_calls is not None
    assert again.layout == "results" and called.tool_calls[0].name == "get_users"
    assert [p.name for p in out.parent.iterdir()] == ["saved.json"]  # no temp file left behind


def test_failed_save_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "keep.json"
    target.write_text("old")

    def boom(*args: Any, **kwargs: Any) -> NoReturn:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_results({"timestamp": None, "info": {}, "tasks": [], "simulations": []}, target)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]


BAD_INPUTS = {
    "empty": (b"", "is empty"),
    "blank": (b"   \n", "is empty"),
    "truncated": (b'{"timestamp": "x", "simulations": [{"id": ', "truncated"),
    "not_json": (b"hello, world", "not valid JSON"),
    "non_utf8": (b'{"a": "\xff\xfe"}', "not UTF-8"),
    "deep": (b"[" * 5000 + b"]" * 5000, "deeper than"),
    "number": (b"42", "top level is a number"),
    "string": (b'"text"', "top level is a string"),
    "null": (b"null", "top level is null"),
    "list_of_numbers": (b"[1, 2]", "item #0 is a number"),
    "other_object": (b'{"foo": 1}', "not a tau2 run"),
    "bad_sims": (b'{"simulations": 3}', "'simulations' is a number"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_unreadable_inputs_get_one_line(tmp_path: Path, name: str) -> None:
    payload, expected = BAD_INPUTS[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(payload)
    with pytest.raises(RunFileError) as info:
        open_run(path)
    text = str(info.value)
    assert expected in text and str(path) in text and "\n" not in text


def test_directory_without_results_json(tmp_path: Path) -> None:
    (tmp_path / "simulations").mkdir()
    with pytest.raises(RunFileError, match="without results.json"):
        open_run(tmp_path)


def test_input_files_are_never_modified(tmp_path: Path) -> None:
    corpus_required()
    src = CORPUS / "sierra-research__tau2-bench__e2e_mock_baseline.json"
    copy = tmp_path / src.name
    shutil.copy(src, copy)
    before = copy.read_bytes()
    run = open_run(copy)
    messages = run.simulation(0).messages
    assert messages is not None
    messages[0].content = "changed in memory"
    assert copy.read_bytes() == before


def test_task_defaults(tmp_path: Path) -> None:
    task = dict(MOCK_TASK)
    task["evaluation_criteria"] = {"actions": []}
    path = results_file(tmp_path / "t.json", [greet()], task=task)
    criteria = open_run(path).tasks()["t_update"].evaluation_criteria
    assert criteria is not None
    assert criteria.reward_basis == ["DB", "COMMUNICATE"]


def test_folder_expansion_skips_sidecars(tmp_path: Path) -> None:
    run = results_file(tmp_path / "run.json", [greet()])
    (tmp_path / "run.scorer.json").write_text("{}")
    (tmp_path / "run.notes.json").write_text("{}")
    assert expand_paths([tmp_path]) == [run]


def test_atomic_writes_keep_normal_permissions(tmp_path: Path) -> None:
    from tau_tui.model import write_atomic

    fresh = tmp_path / "fresh.json"
    write_atomic(fresh, b"{}")
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o640)
    write_atomic(kept, b"[]")
    assert kept.stat().st_mode & 0o777 == 0o640 and kept.read_text() == "[]"


def test_unused_path_never_names_an_existing_file(tmp_path: Path) -> None:
    from tau_tui.model.io import unused_path

    assert unused_path(tmp_path, "run", ".json") == tmp_path / "run.json"
    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "run_2.json").write_text("{}")
    assert unused_path(tmp_path, "run", ".json") == tmp_path / "run_3.json"


def test_error_text_keeps_a_key_errors_message_and_its_quotes() -> None:
    from tau_tui.model.io import error_text

    assert error_text(KeyError("no task '9' in domain 'retail'")) == "no task '9' in domain 'retail'"
    assert error_text(ValueError("bad value 'x'")) == "bad value 'x'"
    assert error_text(KeyError("tasks")) == "tasks" and error_text(KeyError(1, 2)) == "(1, 2)"
