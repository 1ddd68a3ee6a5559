"""The one composition root: both front ends build through ``tau_tui.workspace.Workspace``.

The done-when of "one headless workspace for both front ends": with ``judge_model``
set in the settings file, a local fake judge server is asked by every rollout path
of the CLI (run, calibrate, play, gold check) and of the TUI (the rollout form, the
calibrate screen's trials, play, the gold check), NL assertions are scored (never
"not evaluated"), and the same settings give the same rewards from both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from tau_tui.config import Settings
from tau_tui.evaluate.judge import LiteLLMJudge
from tau_tui.model.io import open_run
from tau_tui.rollout import ParticipantSpec
from tau_tui.workspace import FORM_LABELS, GoldCheckRequest, PlayRequest, RequestError, RunRequest, Workspace
from tests.conftest import CORPUS, ROOT
from tests.evaluate.support import FakeOpenAI, fake_openai

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from tau_tui.model.results import SimulationRun

TASK = "create_task_1"
ASSERTION = "The agent confirmed the task was created successfully"
JUDGE_REPLY = {"results": [{"expectedOutcome": ASSERTION, "reasoning": "it said so", "metExpectation": True}]}
BIG = (160, 45)
JudgeServer = tuple[type[FakeOpenAI], str]  # (handler, base URL): ``judge_server``
_Screen = TypeVar("_Screen", bound="Screen[Any]")


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    """(handler, base URL) of a local OpenAI-compatible judge; requests are recorded on the handler."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")  # a placeholder the local server ignores
    with fake_openai(json.dumps(JUDGE_REPLY), "Judge") as served:
        yield served


@pytest.fixture
def settings_file(tmp_path: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A settings file naming the judge, a runs folder and a tau2 data folder whose mock task needs the judge."""
    data = tmp_path / "tau2"
    shutil.copytree(CORPUS / "domains" / "mock", data / "domains" / "mock")
    tasks_file = data / "domains" / "mock" / "tasks.json"
    tasks = json.loads(tasks_file.read_text())
    for task in tasks:
        if task["id"] == TASK:
            task["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
            assert task["evaluation_criteria"]["nl_assertions"] == [ASSERTION]
    tasks_file.write_text(json.dumps(tasks))
    _, base = judge_server
    runs = tmp_path / "runs"
    path = tmp_path / "config.toml"
    path.write_text(
        f'tau2_data = "{data}"\nruns_dir = "{runs}"\njudge_model = "openai/judge"\njudge_api_base = "{base}"\n'
    )
    monkeypatch.setenv("TAU_TUI_CONFIG", str(path))
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    return path


def judge_calls(judge_server: JudgeServer) -> int:
    handler, _ = judge_server
    return sum(r["body"].get("model") == "judge" for r in handler.requests)


def sim_of(path: Path) -> SimulationRun:
    run = open_run(path)
    assert len(run.entries) == 1
    return run.simulation(0)


def scored(sim: SimulationRun) -> float:
    """The reward of a simulation whose NL assertions were judged (met)."""
    info = sim.reward_info
    assert info is not None, sim.info  # unscored: the judge never came
    assert [c["met"] for c in info.nl_assertions or []] == [True], info
    assert info.reward is not None, info
    return info.reward


def cli_settings(args: list[str] | None = None, command: str | None = None) -> Settings:
    """The settings ``tau-tui`` resolves for these flags (``config.resolve``, as the CLI does)."""
    from tau_tui.cli import _settings, build_parser, tui_parser

    parser = tui_parser() if command is None else build_parser(command)
    return _settings(parser.parse_args(([command] if command else []) + (args or [])), announce=False)


def tui_workspace(extra: list[str] | None = None) -> Workspace:
    """The workspace ``tau-tui`` gives the app: the TUI's flags over the settings, as the CLI builds it."""
    return Workspace(cli_settings(extra))


# --- the CLI -----------------------------------------------------------------------------------------------


def cli_rewards(tmp_path: Path, judge_server: JudgeServer, capsys: pytest.CaptureFixture[str]) -> dict[str, float]:
    from tau_tui.cli import main

    rewards: dict[str, float] = {}
    before = judge_calls(judge_server)
    out = tmp_path / "cli-run.json"
    assert (
        main(
            [
                "run",
                "--domain",
                "mock",
                "--task",
                TASK,
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    ), capsys.readouterr().err
    rewards["run"] = scored(sim_of(out))
    assert judge_calls(judge_server) > before, "tau-tui run never asked the judge"

    before = judge_calls(judge_server)
    out = tmp_path / "cli-calibrate.json"
    assert (
        main(
            [
                "calibrate",
                "--domain",
                "mock",
                "--task",
                TASK,
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "-k",
                "1",
                "--out",
                str(out),
                "--quiet",
                "--json",
            ]
        )
        == 0
    ), capsys.readouterr().err
    rewards["calibrate"] = scored(sim_of(out))
    assert judge_calls(judge_server) > before, "tau-tui calibrate never asked the judge"

    before = judge_calls(judge_server)
    capsys.readouterr()
    assert main(["calibrate", "--domain", "mock", "--gold-check", "--task", TASK, "--json"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["task"] == TASK and record["ok"] and record["gold_reward"] is not None
    rewards["gold"] = record["gold_reward"]
    assert judge_calls(judge_server) > before, "tau-tui calibrate --gold-check never asked the judge"

    before = judge_calls(judge_server)
    out = tmp_path / "cli-play.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "play",
            "--as",
            "user",
            "--domain",
            "mock",
            "--task",
            TASK,
            "--llm",
            "scripted/gold",
            "--plain",
            "--out",
            str(out),
        ],
        input="Please create a task called 'Important Meeting' for user_1.\nthanks ###STOP###\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rewards["play"] = scored(sim_of(out))
    assert judge_calls(judge_server) > before, "tau-tui play never asked the judge"
    return rewards


def test_every_cli_rollout_path_is_judged(
    settings_file: Path, judge_server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rewards = cli_rewards(tmp_path, judge_server, capsys)
    assert rewards == {"run": 1.0, "calibrate": 1.0, "gold": 1.0, "play": 1.0}


# --- the TUI, and the same rewards as the CLI ---------------------------------------------------------------


def screen_of(app: App[Any], kind: type[_Screen]) -> _Screen:
    """The screen ``app`` shows now, checked to be a ``kind``."""
    screen = app.screen
    assert isinstance(screen, kind), screen
    return screen


async def tui_rewards(tmp_path: Path, judge_server: JudgeServer) -> dict[str, float]:
    from tau_tui.session import Session
    from tau_tui.tui.app import TauTuiApp
    from tau_tui.tui.screens.calibrate import CalibrateScreen
    from tau_tui.tui.screens.gold_check import GoldCheckScreen
    from tau_tui.tui.screens.rollout import RolloutScreen
    from tests.tui.conftest import RECORDINGS, open_play, set_input, settle, wait_until

    rewards: dict[str, float] = {}
    app = TauTuiApp(Session.from_settings(cli_settings([str(RECORDINGS)]), [RECORDINGS]), calibrate="mock")
    async with app.run_test(size=BIG) as pilot:
        await settle(pilot)
        calibrate = screen_of(app, CalibrateScreen)
        await wait_until(pilot, lambda: calibrate.ready, "the calibrator")

        # the calibrate screen's trials (n): the calibrator's runner has the judge
        before = judge_calls(judge_server)
        await pilot.press("n")
        form = screen_of(app, RolloutScreen)
        assert form.calibrate
        await wait_until(pilot, lambda: len(form.tasks) == 10, "the task list")
        form.selected = {TASK}
        await set_input(pilot, "#r-agent", "scripted/gold")
        await set_input(pilot, "#r-k", "1")
        out = tmp_path / "tui-calibrate.json"
        await set_input(pilot, "#r-out", str(out))
        await pilot.press("ctrl+s")
        assert screen_of(app, CalibrateScreen) is calibrate
        await wait_until(pilot, lambda: not calibrate.running, "the calibration")
        rewards["calibrate"] = scored(sim_of(out))
        assert judge_calls(judge_server) > before, "the calibrate screen never asked the judge"

        # the gold check (c)
        before = judge_calls(judge_server)
        calibrate.query_one("#cal-grid").focus()
        await pilot.press("c")
        gold = screen_of(app, GoldCheckScreen)
        await wait_until(pilot, lambda: gold.finished, "the gold check")
        check = next(c for c in gold.checks if c.task_id == TASK)
        assert check.ok and check.gold_reward is not None
        rewards["gold"] = check.gold_reward
        assert judge_calls(judge_server) > before, "the gold check screen never asked the judge"
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.runs_screen, "the runs screen")

        # the new-rollout form (n on the runs screen)
        before = judge_calls(judge_server)
        await pilot.press("n")
        form = screen_of(app, RolloutScreen)
        assert not form.calibrate
        await wait_until(pilot, lambda: len(form.tasks) == 10, "the task list")
        form.selected = {TASK}
        out = tmp_path / "tui-run.json"
        await set_input(pilot, "#r-out", str(out))
        await set_input(pilot, "#r-max-steps", "150")  # the form's limits reach the run
        await set_input(pilot, "#r-timeout", "60")
        await pilot.press("ctrl+s")
        assert app.screen is app.runs_screen
        await wait_until(
            pilot,
            lambda: app.session.rollouts.progress is not None and app.session.rollouts.progress.finished,
            "the rollout",
        )
        assert app.session.rollouts.progress is not None
        assert app.session.rollouts.progress.error is None and app.session.rollouts.progress.unscored == 0
        rewards["run"] = scored(sim_of(out))
        assert judge_calls(judge_server) > before, "the TUI rollout never asked the judge"
        assert app.session.rollouts._runner is not None
        config = app.session.rollouts._runner.config
        assert config.max_steps == 150 and config.timeout == 60.0 and config.agent.retry.max_retries == 5

        # play (p)
        before = judge_calls(judge_server)
        out = tmp_path / "tui-play.json"
        screen = await open_play(pilot, "user", TASK, out)
        session = screen.session
        await pilot.press(*"Please create a task called 'Important Meeting' for user_1.", "enter")
        await wait_until(pilot, lambda: session.pending is not None and len(session.messages) > 2, "the agent")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.saved is not None, "the saved recording")
        rewards["play"] = scored(sim_of(out))
        assert judge_calls(judge_server) > before, "the TUI play session never asked the judge"
    return rewards


def test_every_tui_rollout_path_is_judged_with_the_cli_rewards(
    settings_file: Path, judge_server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    tui = asyncio.run(tui_rewards(tmp_path, judge_server))
    cli = cli_rewards(tmp_path, judge_server, capsys)
    assert tui == cli == {"run": 1.0, "calibrate": 1.0, "gold": 1.0, "play": 1.0}


def test_the_tui_and_the_cli_plan_the_same_run(settings_file: Path, judge_server: JudgeServer, tmp_path: Path) -> None:
    """The form's request and ``tau-tui run``'s flags give equal plans, judge included."""
    from tau_tui.cli import _settings, build_parser
    from tau_tui.commands.run import run_request

    args = build_parser("run").parse_args(
        [
            "run",
            "--domain",
            "mock",
            "--task",
            TASK,
            "--agent-llm",
            "scripted/gold",
            "--user-llm",
            "scripted/user",
            "--out",
            str(tmp_path / "x.json"),
        ]
    )
    cli_ws = Workspace(_settings(args))
    cli_plan = cli_ws.run_plan(run_request(args))
    tui_ws = tui_workspace()
    form = RunRequest(
        "mock",
        "scripted/gold",
        "scripted/user",
        agent_args="",
        user_args="",
        tasks=[TASK],
        num_trials="1",
        concurrency="3",
        out=str(tmp_path / "x.json"),
        labels=dict(FORM_LABELS),
    )
    tui_plan = tui_ws.run_plan(form)
    assert cli_plan.config == tui_plan.config and cli_plan.path == tui_plan.path
    assert cli_plan.config.judge_llm == "openai/judge" and cli_plan.config.agent.retry.max_retries == 5
    for ws in (cli_ws, tui_ws):
        judge = ws.judge()
        assert isinstance(judge, LiteLLMJudge)  # the settings' judge model, no factory: litellm's judge
        assert judge.model == "openai/judge" and judge.api_base == judge_server[1]


def test_a_fork_is_judged(settings_file: Path, judge_server: JudgeServer) -> None:
    """The TUI's fork (f on a trajectory) continues through the workspace: scored with the judge too."""
    import asyncio

    ws = tui_workspace()
    before = judge_calls(judge_server)
    episode = asyncio.run(ws.fork("mock", TASK, [], ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user")))
    assert episode.scored is not None and episode.scored.reward == 1.0
    assert judge_calls(judge_server) > before
    path = ws.fork_path("file", "sim", 3)
    assert path.parent == ws.runs_dir and path.name.endswith("_fork_file_sim_m3.json")


def test_tau_tui_fork_is_judged_and_gives_the_tui_fork_reward(
    settings_file: Path, judge_server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tau-tui fork`` and the trajectory screen's fork share ``Workspace.fork_simulation``: both judged."""
    import asyncio

    from tau_tui.cli import main
    from tau_tui.workspace import ForkRequest

    recording = tmp_path / "recorded.json"
    assert (
        main(
            [
                "run",
                "--domain",
                "mock",
                "--task",
                TASK,
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--out",
                str(recording),
                "--quiet",
            ]
        )
        == 0
    ), capsys.readouterr().err
    sim_id = open_run(recording).entries[0].id
    before = judge_calls(judge_server)
    capsys.readouterr()
    assert (
        main(["fork", str(recording), "--sim", sim_id, "--after", "1", "--agent-llm", "scripted/gold", "--json"]) == 0
    ), capsys.readouterr().err
    record = json.loads(capsys.readouterr().out)
    assert judge_calls(judge_server) > before, "tau-tui fork never asked the judge"
    assert record["simulation"] == sim_id and record["after_message"] == 1
    cli_sim = sim_of(Path(record["saved_to"]))
    assert record["reward"] == scored(cli_sim) == 1.0

    before = judge_calls(judge_server)
    result = asyncio.run(
        tui_workspace().fork_simulation(
            open_run(recording), ForkRequest(sim_id, 1, "scripted/gold", labels=dict(FORM_LABELS))
        )
    )
    assert judge_calls(judge_server) > before
    assert scored(sim_of(result.path)) == record["reward"]
    assert result.path != Path(record["saved_to"])  # a second fork never overwrites the first


# --- the judge flags: --judge (alias --judge-llm) and --judge-api-base on every command that judges -------------

JUDGING = {  # command -> the least argv it parses
    None: [],
    "eval": ["eval", "x.json"],
    "run": ["run", "--agent-llm", "scripted/gold"],
    "play": ["play", "--as", "user", "--domain", "mock", "--task", TASK, "--llm", "scripted/gold"],
    "calibrate": ["calibrate", "--domain", "mock"],
    "fork": ["fork", "x.json", "--sim", "s", "--after", "1", "--agent-llm", "scripted/gold"],
}


@pytest.mark.parametrize("command", list(JUDGING))
@pytest.mark.parametrize("flag", ["--judge", "--judge-llm"])
def test_every_judging_command_takes_both_judge_spellings_and_the_api_base(
    command: str | None, flag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau_tui.cli import _settings, build_parser, tui_parser

    empty = tmp_path / "config.toml"
    empty.write_text("")
    monkeypatch.setenv("TAU_TUI_CONFIG", str(empty))
    for name in ("TAU_TUI_JUDGE", "TAU_TUI_JUDGE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    parser = tui_parser() if command is None else build_parser(command)
    args = parser.parse_args(JUDGING[command] + [flag, "openai/judge", "--judge-api-base", "http://judge.test/v1"])
    assert (args.judge, args.judge_api_base) == ("openai/judge", "http://judge.test/v1")
    judge = Workspace(_settings(args)).judge()
    assert isinstance(judge, LiteLLMJudge)
    assert (judge.model, judge.api_base) == ("openai/judge", "http://judge.test/v1")
    bare = parser.parse_args(JUDGING[command])
    assert Workspace(_settings(bare)).judge() is None  # no flag, no settings: no judge


@pytest.fixture
def judgeless_settings(settings_file: Path) -> Path:
    """The settings file without judge_model and judge_api_base: only the flags name the judge."""
    settings_file.write_text(
        "".join(line for line in settings_file.read_text().splitlines(keepends=True) if not line.startswith("judge"))
    )
    return settings_file


def test_the_judge_flags_reach_the_judge_of_every_cli_path(
    judgeless_settings: Path, judge_server: JudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--judge``/``--judge-llm`` with ``--judge-api-base``, no judge in the settings: the local judge is asked."""
    from tau_tui.cli import main

    _, base = judge_server
    flags = {spelling: [spelling, "openai/judge", "--judge-api-base", base] for spelling in ("--judge", "--judge-llm")}
    before = judge_calls(judge_server)
    out = tmp_path / "flags-run.json"
    assert (
        main(
            [
                "run",
                "--domain",
                "mock",
                "--task",
                TASK,
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "--out",
                str(out),
                "--quiet",
                *flags["--judge-llm"],
            ]
        )
        == 0
    ), capsys.readouterr().err
    assert scored(sim_of(out)) == 1.0 and judge_calls(judge_server) > before

    before = judge_calls(judge_server)
    capsys.readouterr()
    assert main(["eval", str(out), "--json", *flags["--judge"]]) == 0, capsys.readouterr().err
    assert judge_calls(judge_server) > before, "tau-tui eval never asked the judge"

    before = judge_calls(judge_server)
    out = tmp_path / "flags-calibrate.json"
    assert (
        main(
            [
                "calibrate",
                "--domain",
                "mock",
                "--task",
                TASK,
                "--agent-llm",
                "scripted/gold",
                "--user-llm",
                "scripted/user",
                "-k",
                "1",
                "--out",
                str(out),
                "--quiet",
                "--json",
                *flags["--judge"],
            ]
        )
        == 0
    )
    assert scored(sim_of(out)) == 1.0 and judge_calls(judge_server) > before

    before = judge_calls(judge_server)
    capsys.readouterr()
    assert main(["calibrate", "--domain", "mock", "--gold-check", "--task", TASK, "--json", *flags["--judge-llm"]]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["gold_reward"] == 1.0
    assert judge_calls(judge_server) > before, "tau-tui calibrate --gold-check never asked the judge"

    before = judge_calls(judge_server)
    out = tmp_path / "flags-play.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau_tui.cli",
            "play",
            "--as",
            "user",
            "--domain",
            "mock",
            "--task",
            TASK,
            "--llm",
            "scripted/gold",
            "--plain",
            "--out",
            str(out),
            *flags["--judge"],
        ],
        input="Please create a task called 'Important Meeting' for user_1.\nthanks ###STOP###\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert scored(sim_of(out)) == 1.0 and judge_calls(judge_server) > before, "tau-tui play never asked the judge"


def test_the_tui_judge_flags_reach_the_judge(judgeless_settings: Path, judge_server: JudgeServer) -> None:
    import asyncio

    _, base = judge_server
    for spelling in ("--judge", "--judge-llm"):
        ws = tui_workspace([spelling, "openai/judge", "--judge-api-base", base])
        before = judge_calls(judge_server)
        episode = asyncio.run(
            ws.fork("mock", TASK, [], ParticipantSpec("scripted/gold"), ParticipantSpec("scripted/user"))
        )
        assert episode.scored is not None and episode.scored.reward == 1.0
        assert judge_calls(judge_server) > before


# --- requests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, cli, form",
    [
        ({"agent_args": "{x"}, "--agent-llm-args: not valid JSON", "agent args: not valid JSON"),
        ({"user_args": "[1]"}, "--user-llm-args: expected a JSON object", "user args: expected a JSON object"),
        ({"user": ""}, "--user-llm is required", "user model: is required"),
        ({"agent": " "}, "--agent-llm is required", "agent model: is required"),
        ({"num_trials": 0}, "-k must be at least 1", "trials (k): at least 1"),
        ({"concurrency": "x"}, "--concurrency: a whole number", "concurrency: a whole number"),
        ({"domain": None}, "--domain is required", "domain: is required"),
        ({"max_steps": "0"}, "--max-steps must be at least 1", "max steps: at least 1"),
        ({"timeout": "soon"}, "--timeout: a number of seconds", "timeout (s): a number of seconds"),
        ({"user": "human"}, "--user-llm: a human plays", "user model: a human plays"),
    ],
)
def test_a_bad_run_request_names_its_field_as_each_front_end_does(
    fields: dict[str, Any], cli: str, form: str, tmp_path: Path
) -> None:
    ws = Workspace(Settings(runs_dir=tmp_path))
    base = {"domain": "mock", "agent": "scripted/gold", "user": "scripted/user", **fields}
    for labels, message in ((None, cli), (FORM_LABELS, form)):
        request = RunRequest(**base) if labels is None else RunRequest(**base, labels=dict(labels))
        with pytest.raises(RequestError) as caught:
            ws.run_plan(request)
        assert str(caught.value).startswith(message), str(caught.value)
        assert caught.value.field == next(iter(fields))


def test_solo_needs_no_user_and_an_existing_output_is_refused(tmp_path: Path) -> None:
    ws = Workspace(Settings(runs_dir=tmp_path))
    plan = ws.run_plan(RunRequest("mock", "scripted/gold", None, solo=True))
    assert plan.config.solo and plan.path.parent == tmp_path and not plan.path.exists()
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    with pytest.raises(RequestError, match="already exists") as caught:
        ws.run_plan(RunRequest("mock", "scripted/gold", "scripted/user", out=taken, labels=dict(FORM_LABELS)))
    assert str(caught.value).startswith("output file: ")
    assert ws.run_plan(RunRequest("mock", "scripted/gold", "scripted/user", out=taken, resume=True)).resume


def test_play_and_gold_check_requests(tmp_path: Path) -> None:
    ws = Workspace(Settings(runs_dir=tmp_path))
    with pytest.raises(RequestError, match="^other side: a model string"):
        ws.play_path(PlayRequest("mock", TASK, "user", "human", labels=dict(FORM_LABELS)))
    with pytest.raises(RequestError, match="^--llm-args: not valid JSON"):
        ws.play_path(PlayRequest("mock", TASK, "user", "scripted/gold", "{"))
    path = ws.play_path(PlayRequest("mock", "../../etc/x", "user", "scripted/gold"))
    assert path.parent == tmp_path and "_play_mock_" in path.name
    with pytest.raises(RequestError, match="^--domain is required"):
        ws.gold_checker(GoldCheckRequest(None))
    assert ws.judge() is None  # no judge model: no judge


def test_one_output_namer_for_every_kind(tmp_path: Path) -> None:
    from datetime import datetime

    from tau_tui.model.io import new_output_path

    when = datetime(2026, 12, 1, 8, 0, 0)
    names = {
        kind: new_output_path(tmp_path, kind, *parts, when=when).name
        for kind, parts in {
            "run": ("mock", "scripted/gold", "gpt:4"),
            "calibrate": ("mock",),
            "play": ("mock", "t1"),
            "fork": ("file", "sim", "m3"),
            "cassette": ("rec",),
        }.items()
    }
    assert names == {
        "run": "20261201_080000_mock_scripted-gold_gpt-4.json",
        "calibrate": "calibrate_20261201_080000_mock.json",
        "play": "20261201_080000_play_mock_t1.json",
        "fork": "20261201_080000_fork_file_sim_m3.json",
        "cassette": "20261201_080000_cassette_rec.json",
    }
    (tmp_path / names["play"]).write_text("{}")
    assert new_output_path(tmp_path, "play", "mock", "t1", when=when).name == "20261201_080000_play_mock_t1_2.json"


def test_a_runs_judge_retries_as_its_agent_does(tmp_path: Path) -> None:
    """``--llm-retries`` reaches the judge of a run too: the runner's judge takes the run's retry policy."""
    from tau_tui.evaluate.judge import LiteLLMJudge
    from tau_tui.rollout import ParticipantSpec, RetryPolicy, RunConfig

    ws = Workspace(Settings(judge_model="openai/judge", judge_api_base="http://127.0.0.1:9/v1"))
    default = ws.judge()
    assert isinstance(default, LiteLLMJudge) and default.retry.max_retries == RetryPolicy().max_retries
    agent = ParticipantSpec("scripted/gold", retry=ws.retry_policy(1))
    runner = ws.new_runner(RunConfig("mock", agent, ParticipantSpec("scripted/user")), tmp_path / "run.json")
    assert isinstance(runner.judge, LiteLLMJudge) and runner.judge.retry.max_retries == 1
