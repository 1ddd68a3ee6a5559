"""Protocols: tau2's prompts read at run time (never run, never copied), ours by name, and what a run records."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tau_tui.rollout import ParticipantSpec, ParticipantSpecError, RetryPolicy, RunConfig, Runner, build_agent
from tau_tui.rollout import protocol as protocol_module
from tau_tui.rollout.protocol import (
    OWN,
    TAU2,
    ProtocolError,
    agent_texts_from_file,
    fill,
    protocol_of_info,
    resolve_protocol,
)
from tests.helpers import tau2_101_data, tau2_101_python
from tests.rollout.fake_llm import FakeLLM, error, text

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain

FAST = RetryPolicy(max_retries=0)

# An llm_agent.py of tau2's shape in our own words; its first statement would stop the test if it ever ran.
FAKE_LLM_AGENT = '''
raise SystemExit("this file must never run")

AGENT_INSTRUCTION = """
Be a kind agent (canary-instruction).
""".strip()

SYSTEM_PROMPT = """
<i>
{agent_instruction}
</i>
<p>
{domain_policy}
</p>
""".strip()

AGENT_SOLO_INSTRUCTION = """
Work alone; end with `{stop_function_name}` ({stop_token}).
""".strip()

SYSTEM_PROMPT_SOLO = "<i>{agent_instruction}</i><p>{domain_policy}</p><t>{ticket}</t>"


class LLMSoloAgent:
    def add_stop_tool(self):
        def done() -> str:
            """Say you are finished (canary-done)."""
            return "###STOP###"
'''


@pytest.fixture
def fake_agent_source(tmp_path: Path) -> Path:
    path = tmp_path / "llm_agent.py"
    path.write_text(FAKE_LLM_AGENT)
    return path


def test_agent_texts_come_from_the_syntax_tree_and_the_file_never_runs(fake_agent_source: Path) -> None:
    texts = agent_texts_from_file(fake_agent_source, "--agent-prompt llm_agent.py")
    assert texts.system_prompt("POLICY") == "<i>\nBe a kind agent (canary-instruction).\n</i>\n<p>\nPOLICY\n</p>"
    solo = texts.system_prompt("POLICY", solo=True, ticket="TICKET")
    assert solo == "<i>Work alone; end with `done` (###STOP###).</i><p>POLICY</p><t>TICKET</t>"
    assert texts.done_description == "Say you are finished (canary-done)."


def test_a_template_file_reaches_no_attribute_or_conversion(tmp_path: Path) -> None:
    assert fill("{{literal}} {domain_policy}", domain_policy="P") == "{literal} P"
    for bad in (
        "{domain_policy.__class__}",
        "{domain_policy!r}",
        "{domain_policy[0]}",
        "{other}",
        "{domain_policy:>9}",
    ):
        with pytest.raises(ProtocolError):
            fill(bad, domain_policy="P")
    template = tmp_path / "agent.txt"
    template.write_text("Be brief.\n{domain_policy}")
    assert agent_texts_from_file(template, "f").system_prompt("P") == "Be brief.\nP"
    template.write_text("no policy field")
    with pytest.raises(ProtocolError, match="domain_policy"):
        agent_texts_from_file(template, "f")
    broken = tmp_path / "llm_agent.py"
    broken.write_text("AGENT_INSTRUCTION = (")
    with pytest.raises(ProtocolError, match="not Python"):
        agent_texts_from_file(broken, "f")
    broken.write_text("X = 1")
    with pytest.raises(ProtocolError, match="no AGENT_INSTRUCTION or SYSTEM_PROMPT"):
        agent_texts_from_file(broken, "f")


def test_auto_is_tau2_where_the_guidelines_are_found_and_own_elsewhere(
    tau2_data: Path, tmp_path: Path, fake_agent_source: Path
) -> None:
    found = resolve_protocol("auto", [tau2_data], fake_agent_source)
    assert found.name == TAU2
    guidelines = (tau2_data / "user_simulator" / "simulation_guidelines.md").read_text()
    with_tools = (tau2_data / "user_simulator" / "simulation_guidelines_tools.md").read_text()
    assert found.user_system_prompt("SCENARIO", False) == f"{guidelines}\n\n<scenario>\nSCENARIO\n</scenario>"
    assert found.user_system_prompt("SCENARIO", True).startswith(with_tools)
    assert found.recorded_guidelines() == guidelines  # as tau2 records user_info.global_simulation_guidelines
    # tau2 data given as its domains/ folder: the guidelines beside it
    assert resolve_protocol("auto", [tau2_data / "domains"], fake_agent_source).name == TAU2
    elsewhere = resolve_protocol("auto", [tmp_path])
    assert elsewhere.name == OWN and elsewhere.notes
    with pytest.raises(ProtocolError, match="--protocol own"):
        resolve_protocol("tau2", [tmp_path])
    with pytest.raises(ProtocolError, match="not one of"):
        resolve_protocol("tau3", [tau2_data])


def test_protocol_own_reads_no_tau2_text(tau2_data: Path) -> None:
    own = resolve_protocol("own", [tau2_data])
    guidelines = (tau2_data / "user_simulator" / "simulation_guidelines.md").read_text()
    long_lines = [line for line in guidelines.splitlines() if len(line) > 40]
    prompt = own.user_system_prompt("S", True) + own.user_system_prompt("S", False) + own.agent_system_prompt("P")
    assert long_lines and not any(line in prompt for line in long_lines)
    assert own.record()["agent_prompt_from"] == "tau-tui"


def test_without_tau2_agent_prompt_an_llm_agent_is_refused_in_one_line(
    tau2_data: Path, mock_domain: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(protocol_module, "installed_tau2_agent_source", lambda: None)
    assert resolve_protocol("auto", [tau2_data]).name == OWN  # no tau2 to take tau2's texts from: said, not guessed
    protocol = resolve_protocol("tau2", [tau2_data])
    assert protocol.name == TAU2 and protocol.agent is None
    task = next(iter(mock_domain.tasks().values()))
    env = mock_domain.new_environment()
    with pytest.raises(ParticipantSpecError, match="--agent-prompt") as caught:
        build_agent(ParticipantSpec("openai/x"), task, env, protocol=protocol)
    assert "\n" not in str(caught.value)
    assert build_agent(ParticipantSpec("scripted/gold"), task, env, protocol=protocol) is not None  # no prompt needed


@pytest.mark.parametrize("name", [TAU2, OWN])
def test_a_run_records_its_protocol_and_sends_its_prompts(
    registry: DomainRegistry, tau2_data: Path, tmp_path: Path, fake_llm: FakeLLM, name: str, fake_agent_source: Path
) -> None:
    protocol = resolve_protocol(name, [tau2_data], fake_agent_source)
    fake_llm.script("agent-model", [text("Done. Anything else?")])
    fake_llm.script("user-model", [text("Please mark task_1 as completed."), text("No. ###STOP###")])
    config = RunConfig(
        domain="mock",
        task_ids=["update_task_1"],
        agent=ParticipantSpec("openai/agent-model", fake_llm.args(), retry=FAST),
        user=ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST),
        protocol=protocol,
    )
    path = tmp_path / "run.json"
    asyncio.run(Runner(config, path, registry).run())
    info = json.loads(path.read_text())["info"]
    recorded = info["tau_tui"]["protocol"]
    expected = protocol.record()
    assert recorded["name"] == name
    assert {k: recorded[k] for k in expected if k != "tool_schemas_from"} == {
        k: v for k, v in expected.items() if k != "tool_schemas_from"
    }
    assert protocol_of_info(info)["name"] == name
    agent_system = fake_llm.requests_for("agent-model")[0].messages[0]["content"]
    user_system = fake_llm.requests_for("user-model")[0].messages[0]["content"]
    guidelines = (tau2_data / "user_simulator" / "simulation_guidelines.md").read_text()
    with_tools = (tau2_data / "user_simulator" / "simulation_guidelines_tools.md").read_text()
    if name == TAU2:  # the guidelines file for a user without tools or with them, then the scenario
        # tau2's schemas give update_task_1's user no tools; without a tau2 installed, our schemas of the mock
        # domain (whose user has tools) are sent, and with them tau2's guidelines for a user with tools
        user_tools = fake_llm.requests_for("user-model")[0].body.get("tools")
        assert "canary-instruction" in agent_system
        sent_guidelines = with_tools if user_tools else guidelines
        assert user_system.startswith(sent_guidelines.rstrip("\n")) and user_system.endswith("</scenario>")
        assert info["user_info"]["global_simulation_guidelines"] == guidelines
    else:
        assert "canary-instruction" not in agent_system and with_tools[:200] not in user_system


@pytest.mark.parametrize("name", [TAU2, OWN])
@pytest.mark.parametrize("failing", ["evaluation", "model"])
def test_a_task_that_fails_runs_again_under_tau2_and_is_saved_as_its_placeholder(
    registry: DomainRegistry,
    tau2_data: Path,
    tmp_path: Path,
    fake_llm: FakeLLM,
    name: str,
    failing: str,
    fake_agent_source: Path,
) -> None:
    """tau2's runner runs a simulation again when it raises (an env assertion that cannot run, a model call
    that failed for good), then saves an infrastructure_error placeholder; our own protocol keeps the one
    conversation (unscored, or ended by the failure)."""
    protocol = resolve_protocol(name, [tau2_data], fake_agent_source)
    reply = error(400, "bad request") if failing == "model" else text("Done. Anything else?")
    fake_llm.script("agent-model", [], then=reply)
    config = RunConfig(
        domain="mock",
        task_ids=["create_task_1_with_env_assertions"],  # its env assertion raises unless task_2 was made
        agent=ParticipantSpec("openai/agent-model", fake_llm.args(), retry=FAST),
        user=ParticipantSpec("scripted/user"),
        protocol=protocol,
        task_retries=1,
        retry_delay=0.0,
    )
    path = tmp_path / "run.json"
    asyncio.run(Runner(config, path, registry).run())
    (sim,) = json.loads(path.read_text())["simulations"]
    calls = len(fake_llm.requests_for("agent-model"))
    if name == TAU2:
        assert calls == 2  # run twice: once and one retry
        assert sim["termination_reason"] == "infrastructure_error" and sim["messages"] == []
        assert sim["info"]["failed_after_attempts"] == 2 and sim["reward_info"] is None
        if failing == "evaluation":
            assert (sim["info"]["error_type"], sim["info"]["error"]) == ("ValueError", "Task task_2 not found")
    else:
        assert calls == 1 and sim["messages"]
        if failing == "evaluation":
            assert sim["termination_reason"] == "user_stop" and sim["info"]["evaluation"]["tau2_raises"]
        else:
            assert sim["termination_reason"] == "infrastructure_error"


def test_tau2_judge_texts_are_read_not_run_and_ask_as_tau2_asks(tmp_path: Path) -> None:
    from tau_tui.evaluate.judge import JudgeError
    from tau_tui.model.messages import AssistantMessage, ToolMessage, UserMessage

    source = (
        'raise SystemExit("never run")\n'
        "def evaluate_nl_assertions(trajectory, nl_assertions):\n"
        '    trajectory_str = "\\n".join(f"{m.role}: {m.content}" for m in trajectory)\n'
        '    system_prompt = """Grade (canary-judge)."""\n'
        '    user_prompt = f"""conv:\n{trajectory_str}\nwant: {nl_assertions}"""\n'
    )
    config = "DEFAULT_LLM_NL_ASSERTIONS_TEMPERATURE = 0.0\n"
    texts = protocol_module.judge_texts_from_source(source, config, "test tau2")
    messages = [
        UserMessage(content="hi {x}"),
        AssistantMessage(content="ok"),
        ToolMessage(id="c1", content="{}"),
    ]
    system, user = texts.messages(messages, ["Agent says 'ok'"])
    assert system == {"role": "system", "content": "Grade (canary-judge)."}
    assert user["content"] == "conv:\nuser: hi {x}\nassistant: ok\ntool: {}\nwant: [\"Agent says 'ok'\"]"
    assert texts.temperature == 0.0 and isinstance(texts.temperature, float)
    checks = texts.verdicts('{"results": [{"expectedOutcome": "X", "metExpectation": true, "reasoning": "r"}]}')
    assert [(c.assertion, c.met, c.justification) for c in checks] == [("X", True, "r")]
    with pytest.raises(JudgeError) as raised:
        texts.verdicts("not json")
    assert raised.value.raised and raised.value.raised.startswith("JSONDecodeError")
    with pytest.raises(ProtocolError, match="judge prompt"):
        protocol_module.judge_texts_from_source("x = 1\n", config, "other")


def test_protocol_of_older_and_foreign_files() -> None:
    assert protocol_of_info({"tau_tui": {"solo": False}})["name"] == OWN  # tau-tui before protocols were recorded
    tau2_made = protocol_of_info({"user_info": {"global_simulation_guidelines": "G"}})
    assert tau2_made["name"] == TAU2 and tau2_made["recorded_guidelines_sha256"]
    assert protocol_of_info(None)["name"] == "unknown"


# --- against tau2 1.0.1 itself -------------------------------------------------------------------------

SAMPLE = {
    "mock": ["create_task_1", "update_task_1", "update_task_with_user_tools"],
    "airline": ["0", "1", "27"],
    "retail": ["0", "5"],
    "telecom": None,  # the first tasks of tau2's own task set
    "banking_knowledge": None,
}


# What tau2_prompts.py prints: domain -> task id -> {"agent", "agent_tools", "user", "user_tools", "solo"}.
Tau2Prompts = dict[str, dict[str, dict[str, Any]]]


def _tau2_prompts(python: Path, data: Path, wanted: dict[str, list[str] | int]) -> Tau2Prompts:
    script = Path(__file__).with_name("tau2_prompts.py")
    env = {"TAU2_DATA_DIR": str(data), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(python), str(script), json.dumps(wanted)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    prompts: Tau2Prompts = json.loads(done.stdout.strip().splitlines()[-1])
    return prompts


@pytest.fixture(scope="module")
def tau2_builders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Tau2Prompts]:
    """tau2 1.0.1's prompts and tools for every domain's sample (its first four tasks where none is named), from
    one run of tau2 1.0.1, and one cache of its rendered tool schemas for the tests below, as a user's cache is."""
    python = tau2_101_python()
    if python is None:
        pytest.skip("needs tau2 1.0.1's Python (make tau2-101, or TAU2_101_PYTHON)")
    data = tau2_101_data(tmp_path_factory.mktemp("tau2-101-data"))
    wanted: dict[str, list[str] | int] = {domain: sample or 4 for domain, sample in SAMPLE.items()}
    return tmp_path_factory.mktemp("tau2-schema-cache"), _tau2_prompts(python, data, wanted)


@pytest.mark.tau2_101
@pytest.mark.parametrize("domain", list(SAMPLE))
def test_prompts_and_tools_equal_what_tau2_101s_own_builders_give(
    registry: DomainRegistry, tau2_data: Path, domain: str, tau2_builders: tuple[Path, Tau2Prompts]
) -> None:
    python = tau2_101_python()
    cache, every = tau2_builders
    protocol = resolve_protocol(TAU2, [tau2_data], tau2_python=python, cache_dir=cache)
    assert protocol.agent is not None and protocol.agent.origin == "--tau2-python's tau2"
    ours = registry.get(domain)
    tasks = ours.tasks()
    theirs = every[domain]
    ids = SAMPLE[domain] or list(theirs)
    assert sorted(theirs) == sorted(ids) and len(ids) >= 2
    from tau_tui.rollout.participants import agent_brief, user_brief
    from tau_tui.rollout.protocol import protocol_tools

    for task_id in ids:
        task = tasks[task_id]
        env = ours.new_environment()
        env.bind_task(task)
        with_tools = protocol_tools(protocol, ours, domain, env)
        assert with_tools.tools is not None and with_tools.tools.tau2 == "tau2 1.0.1"
        agent = agent_brief(task, env, False, with_tools)
        user = user_brief(task, env, with_tools)
        assert with_tools.agent_system_prompt(agent.policy) == theirs[task_id]["agent"], task_id
        assert agent.tools == theirs[task_id]["agent_tools"], task_id
        assert user.tools == theirs[task_id]["user_tools"], task_id
        assert with_tools.user_system_prompt(user.scenario_text, bool(user.tools)) == theirs[task_id]["user"], task_id
        solo = theirs[task_id]["solo"]
        if solo is not None:
            solo_env = ours.new_environment(solo=True)
            solo_env.bind_task(task)
            brief = agent_brief(task, solo_env, True, with_tools)
            assert with_tools.agent_system_prompt(brief.policy, True, brief.ticket) == solo["prompt"], task_id
            assert brief.tools == solo["tools"], task_id


def test_a_domain_tau2_does_not_have_runs_under_tau2_with_our_tool_schemas_and_says_why(
    registry: DomainRegistry, tau2_data: Path, tmp_path: Path, fake_llm: FakeLLM, fake_agent_source: Path
) -> None:
    import sys

    from tau_tui.tau2_adapter import tau2_available

    python = tau2_101_python() or (Path(sys.executable) if tau2_available() else None)
    if python is None:
        pytest.skip("needs a tau2 to ask (make tau2-101, TAU2_101_PYTHON, or the tau2 extra)")
    protocol = resolve_protocol(TAU2, [tau2_data], fake_agent_source, tau2_python=python, cache_dir=tmp_path)
    fake_llm.script("agent-model", [text("Done. Anything else?")])
    fake_llm.script("user-model", [text("Where is my order?"), text("No. ###STOP###")])
    config = RunConfig(
        domain="warehouse",  # ours (domains/ in this project): tau2's registry has no such domain
        task_ids=["allocate_from_home_warehouse"],
        agent=ParticipantSpec("openai/agent-model", fake_llm.args(), retry=FAST),
        user=ParticipantSpec("openai/user-model", fake_llm.args(), retry=FAST),
        protocol=protocol,
    )
    path = tmp_path / "run.json"
    asyncio.run(Runner(config, path, registry).run())
    saved = json.loads(path.read_text())
    recorded = saved["info"]["tau_tui"]["protocol"]
    assert recorded["name"] == TAU2 and recorded["tool_schemas_from"] == "tau-tui"
    assert recorded["tool_schemas_why"].endswith("has no domain 'warehouse'")
    assert [s["termination_reason"] for s in saved["simulations"]] == ["user_stop"]
    from tau_tui.env.tool_schema import toolkit_schemas

    ours = toolkit_schemas(registry.get("warehouse").new_environment().agent)
    assert fake_llm.requests_for("agent-model")[0].body["tools"] == ours
    assert "canary-instruction" in fake_llm.requests_for("agent-model")[0].messages[0]["content"]
