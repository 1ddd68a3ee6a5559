"""Files from the wild (tests/fixtures/wild/): each shape opens with replay, eval and the TUI's loader, and gets a
reward from us where tau2 needs no judge; what a file leaves out is inferred and said, never guessed silently."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau_tui.cli import main
from tau_tui.config import Settings
from tau_tui.session import Session
from tau_tui.session.events import LoadEvent
from tests.conftest import ROOT

WILD = ROOT / "tests" / "fixtures" / "wild"

# file, its domain, where the domain comes from ("" = the file names it), (task, trial, reward) per simulation
SHAPES = [
    (
        "note/task_create_task_1_5f3c2a1e_simulation.json",
        "mock",
        "the tools it calls (create_task)",
        [("create_task_1", 0)],
    ),
    ("per_task_export.json", "retail", "the tools it calls (find_user_id_by_name_zip,", [("5", 0)]),
    ("reward_wrapper.json", "mock", "the tools it calls (update_task_status)", [("update_task_1", 0)]),
    ("simulations_list.json", "airline", "the tools it calls (get_reservation_details)", [("1", 0), ("2", 0)]),
    ("custom_wrapper.json", "mock", "", [("create_task_1", 0), ("update_task_1", 0)]),
    ("old_upload.json", "retail", "the tools it calls (cancel_pending_order,", [("1", 0), ("1", 1), ("69", 0)]),
    ("sidecar/transfer_only.json", "airline", "run.json beside it", [("0", 0)]),
    ("bad_fields.json", "mock", "the tools it calls (create_task)", [("create_task_1", 0)]),
]


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([*map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("name", "domain", "source", "sims"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_shape_replays_and_is_scored_by_us(
    name: str,
    domain: str,
    source: str,
    sims: list[tuple[str, int]],
    tau2_data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = WILD / name
    code, out, err = cli(capsys, "replay", "--json", path, "--tau2-data", tau2_data)
    assert code in (0, 1), err
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["task"], r["trial"]) for r in records] == sims
    assert {r["domain"] for r in records} == {domain}
    if source:
        assert f"{path}: domain {domain} (the file names none), from {source}" in err
        assert all(r["domain_source"].startswith(source.split(" (")[0]) for r in records)
    else:
        assert "(the file names none)" not in err and all(r["domain_source"] is None for r in records)
    assert "Traceback" not in err and all(line.startswith("tau-tui: ") for line in err.splitlines())

    code, out, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    scored = [r for r in rows if r.get("kind") != "file"]
    assert [(r["task"], r["reward"]) for r in scored] == [(task, 1.0) for task, _ in sims]  # no judge needed
    assert all(r["recorded_reward"] == 1.0 and r["agrees"] for r in scored)
    assert rows[-1]["kind"] == "file" and rows[-1]["domain"] == domain


@pytest.mark.parametrize(("name", "domain", "source", "sims"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_shape_opens_in_the_tui_loader_with_its_domain_and_rewards(
    name: str, domain: str, source: str, sims: list[tuple[str, int]], tau2_data: Path
) -> None:
    path = WILD / name
    session = Session.from_settings(Settings(tau2_data=tau2_data, workers=1, index_workers=0), [path])
    generation, paths = session.start_load()
    events: list[LoadEvent] = []
    session.load(generation, paths, events.append, lambda: False)
    for event in events:
        session.handle(event)
    outcomes = [o for _, batch in session.replay_batches(lambda: False, print) for o in batch]
    session.replayed(generation, outcomes)
    rows = session.catalog.rows
    assert [(r.task, r.entry.trial) for r in rows] == sims
    assert {r.domain for r in rows} == {domain}
    assert [r.evaluation.reward if r.evaluation else None for r in rows] == [1.0] * len(sims)
    notices = [n.text for n in session.catalog.all_notices()]
    if source:
        assert any(n.startswith(f"domain {domain} (the file names none), from {source}") for n in notices)


def test_a_tau2_view_note_folder_opens_as_its_simulation_only(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tau2 view saves a note beside a copy of the simulation: the folder is one run, the note no run of its own."""
    code, out, err = cli(capsys, "replay", "--json", WILD / "note", "--tau2-data", tau2_data)
    assert code == 0 and len(out.splitlines()) == 1
    assert "_note.json" not in err


def test_a_run_config_beside_the_files_is_no_run_but_names_their_domain(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "replay", "--json", WILD / "sidecar", "--tau2-data", tau2_data)
    assert code == 0 and [json.loads(line)["domain"] for line in out.splitlines()] == ["airline"]
    assert "run.json:" not in err  # not opened as a run


def test_a_simulation_calling_only_shared_tools_lists_the_candidates_in_one_line(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = WILD / "transfer_only.json"
    code, out, err = cli(capsys, "replay", path, "--tau2-data", tau2_data)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"tau-tui: {path}: cannot tell the domain: the file names none, and the tools it calls ")
    assert "(transfer_to_human_agents) are in aftersales, airline, banking_knowledge, mock, retail" in err
    assert "pass --domain NAME to choose" in err


def test_domain_flag_names_the_domain_of_files_naming_none(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = WILD / "transfer_only.json"
    for command in ("replay", "eval", "show"):
        extra = ["--sim", "gold"] if command == "show" else []
        code, out, err = cli(capsys, command, path, "--domain", "airline", "--tau2-data", tau2_data, *extra)
        assert code == 0, err
        assert f"note: {path}: domain airline (the file names none), from --domain" in err
        assert "[airline, user_stop]" in out or "airline" in out
    # a file naming its own domain keeps it, and says --domain was not for it
    code, out, err = cli(capsys, "replay", "--json", WILD / "custom_wrapper.json", "--domain", "airline")
    assert code == 0 and {json.loads(line)["domain"] for line in out.splitlines()} == {"mock"}
    assert "names its domain 'mock'; --domain airline is for files naming none" in err


def test_domain_flag_is_resolved_with_the_other_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from tau_tui.cli import build_parser, tui_parser
    from tau_tui.config import resolve

    monkeypatch.setenv("TAU_TUI_DOMAIN", "retail")
    assert resolve(None).recording_domain == "retail" and resolve(None).origin("recording_domain") == "TAU_TUI_DOMAIN"
    for parser, argv in (
        (build_parser("eval"), ["eval", "--domain", "airline", "x.json"]),
        (tui_parser(), ["--domain", "airline"]),
    ):
        settings = resolve(parser.parse_args(argv))
        assert settings.recording_domain == "airline" and settings.origin("recording_domain") == "--domain"


def test_bad_fields_are_problem_lines_and_the_rest_is_read(tau2_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = WILD / "bad_fields.json"
    code, out, err = cli(capsys, "replay", "--json", path, "--tau2-data", tau2_data)
    assert code == 0
    notes = [line.removeprefix(f"tau-tui: note: {path}: ") for line in err.splitlines()]
    assert notes[:5] == [
        "'info' is a string, expected an object; ignored",
        "'tasks' is an object, expected a list; ignored",
        "top-level 'domain' is a number, expected a name; ignored",
        "top-level 'agent' is a list, expected a name; ignored",
        "top-level 'model' is an object, expected a name; ignored",
    ]
    path = WILD / "bad_export.json"
    code, out, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
    assert code == 0 and "Traceback" not in err
    notes = [line.removeprefix(f"tau-tui: note: {path}: ") for line in err.splitlines()]
    assert notes[:4] == [
        "'task' is a string, expected a task object; ignored",
        "'task_id' is a list, expected an id; ignored",
        "top-level 'reward' is a string, expected a number; ignored",
        "'run_info' is a number, expected an object; ignored",
    ]
    # its task cannot be told (a placeholder user text, no action checks): said, and no reward made up
    assert "1 simulation without a task id: 1 not recovered" in err
    record = json.loads(out.splitlines()[0])
    assert record["reward"] is None and record["recorded_reward"] is None


def test_a_wrappers_top_level_reward_is_the_recorded_reward(tmp_path: Path) -> None:
    from tau_tui.model.io import open_run

    data = json.loads((WILD / "reward_wrapper.json").read_text())
    run = open_run(WILD / "reward_wrapper.json")
    recorded = run.simulation(0).reward_info
    assert recorded is not None
    assert run.layout == "wrapper" and run.entries[0].reward == 1.0 and recorded.reward == 1.0
    data["simulation_run"]["reward_info"] = {"reward": 0.0, "db_check": {"db_match": False, "db_reward": 0.0}}
    differing = tmp_path / "differing.json"
    differing.write_text(json.dumps(data))
    run = open_run(differing)
    differing_info = run.simulation(0).reward_info
    assert differing_info is not None and differing_info.db_check is not None
    assert run.entries[0].reward == 1.0 and differing_info.db_check.db_match is False
    assert run.warnings == [
        "top-level reward 1.0 differs from its simulation's reward_info.reward 0.0; the top-level one is taken as recorded"
    ]


def test_old_uploads_get_their_tasks_trials_and_terminations_back_and_say_how(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = WILD / "old_upload.json"
    code, out, err = cli(capsys, "replay", "--json", path, "--tau2-data", tau2_data)
    assert code == 0
    assert (
        f"note: {path}: 3 simulations without a task id: 2 from their action checks, 1 from the scenario their user "
        "messages match; 3 trials numbered by order; 3 of 3 missing terminations read from their stop tokens"
    ) in err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["termination"] for r in records] == ["user_stop"] * 3
    assert records[0]["recovered"] == [
        "task 1 from its action checks (1_0, 1_1, 1_2, 1_3, …)",
        "termination user_stop from the user's last message (###STOP###)",
        "trial 0 by its order in the file",
    ]
    assert records[2]["recovered"][0] == "task 69 from the scenario the first user message matches"
    assert all(r["db_match"] for r in records)  # the recovered task gives the gold state
    code, out, err = cli(capsys, "replay", path, "--tau2-data", tau2_data)
    assert "recovered: task 1 from its action checks" in out


def test_old_uploads_recover_the_same_in_worker_processes(
    tau2_data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker processes open the file themselves: they work out the same domain and tasks as the command."""
    import tau_tui.workers.pool

    path = WILD / "old_upload.json"
    one = cli(capsys, "replay", "--json", "--workers", "1", path, "--tau2-data", tau2_data)
    monkeypatch.setattr(tau_tui.workers.pool, "POOL_MIN", 1)
    two = cli(capsys, "replay", "--json", "--workers", "2", path, "--tau2-data", tau2_data)
    assert one[0] == two[0] == 0 and one[1] == two[1] and '"task":"69"' in two[1]


# --- a fork's own domain ---------------------------------------------------------------------------------------
HOTEL_PACKAGE = '''
"""A course's hotel domain: rooms and the guests booked into them."""

from pathlib import Path

from pydantic import BaseModel

from tau_tui.domains import Domain
from tau_tui.env import DBSchema, Environment, Toolkit, ToolType, make_store, tool


class Room(BaseModel):
    guest: str | None = None


class HotelDB(BaseModel):
    rooms: dict[str, Room]


SCHEMA = DBSchema(HotelDB)


class HotelTools(Toolkit):
    @tool(ToolType.WRITE)
    def book_room(self, room: str, guest: str) -> dict:
        """Book a room for a guest."""
        self.db.edit("rooms", room)["guest"] = guest
        return {"room": room, "guest": guest}


class HotelDomain(Domain):
    name = "hotel_calle"
    toolkits = (HotelTools,)
    uses_tau2_data = False

    def new_environment(self, solo=False, variant=None):
        tree = self.pristine("db", SCHEMA, lambda: {"rooms": {"101": {}, "102": {}}})
        return Environment("hotel_calle", "Book rooms for guests.", HotelTools(make_store(SCHEMA, tree)))


DOMAIN = HotelDomain


def create(data_dir: Path):
    return HotelDomain(data_dir)
'''
HOTEL_TASK = {
    "id": "book_101",
    "user_scenario": {"instructions": "Book room 101 for Ana."},
    "evaluation_criteria": {
        "actions": [{"action_id": "book_101_0", "name": "book_room", "arguments": {"room": "101", "guest": "Ana"}}],
        "reward_basis": ["DB"],
    },
}


def hotel_package(tmp_path: Path) -> Path:
    folder = tmp_path / "fork_domains" / "hotel_calle"
    (folder / "data").mkdir(parents=True)
    (folder / "__init__.py").write_text(HOTEL_PACKAGE)
    (folder / "data" / "tasks.json").write_text(json.dumps([HOTEL_TASK]))
    return folder.parent


def test_a_forks_domain_is_named_with_the_two_ways_to_supply_it(
    tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = WILD / "fork_domain.json"
    code, out, err = cli(capsys, "replay", path, "--tau2-data", tau2_data)
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: unknown domain 'hotel_calle' (known: aftersales, airline," in err
    assert "--domains DIR (DIR/hotel_calle/__init__.py)" in err and "the fork's tau2 installed" in err
    path = WILD / "fork_domain_unnamed.json"
    code, out, err = cli(capsys, "replay", path, "--tau2-data", tau2_data)
    assert code == 2 and err.count("\n") == 1
    assert "no domain we know has the tools it calls (book_room); a fork's own domain? supply it with --domains" in err


def test_a_forks_domain_package_given_with_domains_replays_and_names_unnamed_files(
    tmp_path: Path, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    domains = hotel_package(tmp_path)
    for name, source in (("fork_domain.json", None), ("fork_domain_unnamed.json", "the tools it calls (book_room)")):
        path = WILD / name
        code, out, err = cli(capsys, "eval", "--json", path, "--domains", domains, "--tau2-data", tau2_data)
        assert code == 0, err
        record = json.loads(out.splitlines()[0])
        assert record["task"] == "book_101" and record["reward"] == 1.0
        if source:
            assert f"domain hotel_calle (the file names none), from {source}" in err


def test_the_tool_index_reads_every_domain_folder_without_data(tmp_path: Path) -> None:
    from tau_tui.domains import DomainRegistry
    from tau_tui.model.recover import match_domain, tool_calls

    index = DomainRegistry(None, [hotel_package(tmp_path)], use_tau2=False).tool_index()
    assert {"airline", "retail", "telecom", "mock", "banking_knowledge", "hotel_calle"} <= set(index)
    assert index["hotel_calle"] == {"book_room"} and "get_reservation_details" in index["airline"]
    assert "KB_search_dense" in index["banking_knowledge"]  # every retrieval variant's tools
    shared = {"transfer_to_human_agents", "calculate", "get_user_details"}
    tau2 = ("airline", "retail", "telecom", "mock", "banking_knowledge")
    assert all(index[a] & index[b] <= shared for a in tau2 for b in tau2 if a != b)  # disjoint but generic tools
    sims = json.loads((WILD / "simulations_list.json").read_text())
    match = match_domain(tool_calls(sims), index)
    assert match.domain == "airline" and match.deciding == ("get_reservation_details",)


def test_the_domain_match_counts_calls_and_ties_decide_nothing() -> None:
    from collections import Counter

    from tau_tui.model.recover import match_domain

    index = {"a": frozenset({"x", "shared"}), "b": frozenset({"y", "shared"}), "c": frozenset({"y", "z", "shared"})}
    assert match_domain(Counter({"x": 3, "y": 1}), index).domain == "a"  # a stray call of another domain's tool
    tie = match_domain(Counter({"shared": 2}), index)
    assert tie.domain is None and tie.candidates == ("a", "b", "c")
    both = match_domain(Counter({"y": 1, "z": 1}), index)
    assert both.domain == "c" and both.deciding == ("z",)
    unknown = match_domain(Counter({"book_room": 1}), index)
    assert unknown.domain is None and unknown.candidates == () and unknown.unknown == ("book_room",)
    assert match_domain(Counter(), index).calls == 0


def test_terminations_are_read_from_the_stop_token_that_ended_the_conversation() -> None:
    from tau_tui.model.recover import recover_termination

    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def agent(text: str | None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"role": "assistant", "content": text, "tool_calls": calls}

    assert recover_termination([agent("Hi"), user("Thanks ###STOP###")])[0] == "user_stop"
    assert recover_termination([agent("Hi"), user("###TRANSFER###")])[0] == "user_stop"
    assert recover_termination([user("x"), user("###OUT-OF-SCOPE###"), {"role": "tool", "content": "ok"}])[0] == (
        "user_stop"
    )
    assert recover_termination([user("x"), agent("###STOP###")])[0] == "agent_stop"
    lost = recover_termination([user("x"), agent("Let me check."), agent(None, [{"name": "get_users"}])])
    assert lost == (None, "termination not recovered (the conversation does not end with a stop token)")


def test_trials_are_numbered_after_the_recorded_ones_and_tasks_by_their_action_ids() -> None:
    from tau_tui.model.io import SimEntry
    from tau_tui.model.recover import recover_simulations
    from tau_tui.model.tasks import Task

    def entry(index: int, task_id: str, trial: int | None) -> SimEntry:
        return SimEntry(index, f"s{index}", task_id, trial, None, "user_stop", None, None, None, None, None, 0, 0, 0)

    def checks(*ids: str) -> dict[str, Any]:
        return {
            "reward_info": {"action_checks": [{"action": {"action_id": i, "name": "n", "arguments": {}}} for i in ids]}
        }

    tasks = {t: Task.model_validate({"id": t, "evaluation_criteria": {"actions": []}}) for t in ("7", "8")}
    raws = [checks("7_0", "7_1"), {}, checks("8_0"), checks("7_0", "7_1")]
    entries = [entry(0, "", None), entry(1, "7", 0), entry(2, "", 2), entry(3, "", None)]
    found = recover_simulations(raws, entries, tasks, "the file's tasks")
    assert {i: (r.task_id, r.trial) for i, r in found.items()} == {0: ("7", 1), 2: ("8", None), 3: ("7", 2)}
    assert found[0].how[0] == "task 7 from its action checks: the task id they name (7_0, 7_1)"


@pytest.fixture
def hotel_in_tau2() -> Iterator[None]:
    """The hotel domain written against tau2's own classes and registered in the installed tau2's registry (as a
    fork registers its domains), removed again afterwards: other tests see tau2's registry as it ships."""
    from tau_tui.tau2_adapter import tau2_available

    if not tau2_available():
        pytest.skip("needs the optional tau2 extra (pip install -e '.[tau2]')")
    from pydantic import Field
    from tau2.data_model.tasks import Task as Tau2Task
    from tau2.environment.db import DB
    from tau2.environment.environment import Environment
    from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool
    from tau2.registry import registry

    # tau2 is skipped by mypy (an optional extra, pyproject.toml): its classes and decorators are Any to it.
    class Rooms(DB):  # type: ignore[misc]
        rooms: dict[str, dict[str, Any]] = Field(default_factory=dict)

    class HotelTools(ToolKitBase):  # type: ignore[misc]
        @is_tool(ToolType.WRITE)  # type: ignore[untyped-decorator]
        def book_room(self, room: str, guest: str) -> dict[str, Any]:
            """Book a room for a guest."""
            self.db.rooms[room] = {"guest": guest}
            return {"room": room, "guest": guest}

    def get_environment(solo_mode: bool = False) -> Environment:
        return Environment(domain_name="hotel_calle", policy="Book rooms.", tools=HotelTools(Rooms(rooms={"101": {}})))

    registry.register_domain(get_environment, "hotel_calle")
    registry.register_tasks(lambda split=None: [Tau2Task.model_validate(HOTEL_TASK)], "hotel_calle")
    yield
    registry._domains.pop("hotel_calle", None)  # tau2's registry has no way to unregister
    registry._tasks.pop("hotel_calle", None)


@pytest.mark.tau2
def test_a_forks_domain_in_its_installed_tau2_is_served_by_the_adapter(
    hotel_in_tau2: None, tau2_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, source in (("fork_domain.json", None), ("fork_domain_unnamed.json", "the tools it calls (book_room)")):
        path = WILD / name
        code, out, err = cli(capsys, "eval", "--json", path, "--tau2-data", tau2_data)
        assert code == 0, err
        record = json.loads(out.splitlines()[0])
        assert record["task"] == "book_101" and record["reward"] == 1.0 and record["domain"] == "hotel_calle"
        if source:  # tau2's domains are matched only when the domain folders do not settle it
            assert f"domain hotel_calle (the file names none), from {source}" in err
    code, out, err = cli(capsys, "replay", "--json", WILD / "fork_domain.json", "--tau2-data", tau2_data)
    record = json.loads(out)
    assert code == 0 and record["verdicts"]["replayed"] == 1 and record["db_match"] is True


def test_the_domain_beside_a_file_is_read_from_a_run_folder_and_from_the_head_of_a_big_results_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.model.io import paths

    sim = tmp_path / "run" / "simulations" / "sim-1.json"
    sim.parent.mkdir(parents=True)
    sim.write_bytes((WILD / "transfer_only.json").read_bytes())
    meta = {"timestamp": "t", "info": {"environment_info": {"domain_name": "airline"}}, "simulation_index": []}
    (tmp_path / "run" / "results.json").write_text(json.dumps(meta, indent=2))
    assert paths.sidecar_domain(sim) == ("airline", tmp_path / "run" / "results.json")
    monkeypatch.setattr(paths, "_WHOLE_SIDECAR_BYTES", 10)  # a results.json too big to read whole: its head
    assert paths.sidecar_domain(sim) == ("airline", tmp_path / "run" / "results.json")
    (tmp_path / "run" / "results.json").write_text('{"info": {"environment_info": {"domain_name": "../etc"}}}')
    assert paths.sidecar_domain(sim) is None  # a name is letters, digits and _.- only


def test_each_file_whose_domain_cannot_be_told_says_its_own_reason_in_the_tui(tau2_data: Path) -> None:
    paths = [WILD / "transfer_only.json", WILD / "fork_domain_unnamed.json"]
    session = Session.from_settings(Settings(tau2_data=tau2_data, workers=1, index_workers=0), paths)
    generation, found = session.start_load()
    events: list[LoadEvent] = []
    session.load(generation, found, events.append, lambda: False)
    for event in events:
        session.handle(event)
    outcomes = [o for _, batch in session.replay_batches(lambda: False, print) for o in batch]
    session.replayed(generation, outcomes)
    errors = {row.path.name: row.replay_error for row in session.catalog.rows}
    transfer_only, fork_unnamed = errors["transfer_only.json"], errors["fork_domain_unnamed.json"]
    assert transfer_only is not None and fork_unnamed is not None
    assert "are in aftersales, airline" in transfer_only
    assert "no domain we know has the tools it calls (book_room)" in fork_unnamed
    assert all(row.domain == "?" for row in session.catalog.rows)
