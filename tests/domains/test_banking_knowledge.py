"""banking_knowledge (τ³-Banking): tau2's tools, the discoverable-tool wrappers, hashing, and oracle agreement.

The oracle rows (``ORACLE.jsonl``, domain ``banking_knowledge``) are tau2
1.0.1's own verdicts on the 291 gold-derived simulations of
``generated/tau2-gold_banking_knowledge.json``; 288 of those simulations also
carry the reward tau2 recorded for them (task_102 needs a judge).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import pytest

from domains.banking_knowledge import BankingDomain
from domains.banking_knowledge.retrieval import GrepMixin, KBSearchMixin
from domains.banking_knowledge.tools import KnowledgeTools
from tau_tui.model import open_run
from tau_tui.model.messages import ToolCall
from tests.conftest import CORPUS
from tests.evaluate.test_oracle_agreement import FIELDS, agreement
from tests.helpers import criteria_of, loaded_as

if TYPE_CHECKING:
    from tau_tui.analysis import Analyzer
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.environment import Environment
    from tau_tui.model.messages import Message

GOLD_FILE = CORPUS / "generated" / "tau2-gold_banking_knowledge.json"


@pytest.fixture(scope="module")
def domain(registry: DomainRegistry) -> BankingDomain:
    return loaded_as(registry.get("banking_knowledge"), BankingDomain)


@pytest.fixture()
def env(domain: BankingDomain) -> Environment:
    return domain.new_environment()


def call(env: Environment, name: str, requestor: str = "assistant", **arguments: Any) -> tuple[str, bool]:
    message = env.call(ToolCall(id="c1", name=name, arguments=arguments, requestor=requestor))
    return message.text, bool(message.error)


def unlock_and_call(env: Environment, name: str, **arguments: Any) -> tuple[str, bool]:
    assert call(env, "unlock_discoverable_agent_tool", agent_tool_name=name)[0].startswith(f"Tool unlocked: {name}")
    return call(env, "call_discoverable_agent_tool", agent_tool_name=name, arguments=json.dumps(arguments))


# --- data and construction -----------------------------------------------------------------------


def test_tasks_come_from_the_tasks_folder_not_tasks_json(domain: BankingDomain) -> None:
    tasks = domain.tasks()
    folder = sorted(p.stem for p in (CORPUS / "domains" / "banking_knowledge" / "tasks").glob("task_*.json"))
    assert sorted(tasks) == folder and len(folder) == 97
    listed = {t["id"]: t for t in json.loads((CORPUS / "domains" / "banking_knowledge" / "tasks.json").read_text())}
    differing = [
        tid
        for tid, task in tasks.items()
        if tid in listed
        and task.model_dump(mode="json", exclude_none=True)
        != type(task).model_validate(listed[tid]).model_dump(mode="json", exclude_none=True)
    ]
    assert differing, "tasks.json and tasks/ differ for some tasks; the folder must win"


def test_pristine_hash_is_the_pydantic_dump_hash(domain: BankingDomain, env: Environment) -> None:
    raw = json.loads((CORPUS / "domains" / "banking_knowledge" / "db.json").read_text())
    assert env.agent is not None
    assert env.agent.db is not None
    model = env.agent.db.schema.model.model_validate(raw)
    expected = hashlib.sha256(json.dumps(model.model_dump(), sort_keys=True, default=str).encode()).hexdigest()
    assert env.db_hash() == expected == env.user_db_hash()
    assert len(model.model_dump()) == 23
    assert env.user is not None
    assert env.agent.db is env.user.db  # one DB for both sides, as in tau2


def test_solo_mode_is_refused(domain: BankingDomain) -> None:
    with pytest.raises(ValueError, match="does not support solo mode"):
        domain.new_environment(solo=True)


def test_discoverable_tools_are_hidden_from_the_schemas(env: Environment) -> None:
    from tau_tui.env.tool_schema import toolkit_schemas

    agent = {s["function"]["name"] for s in toolkit_schemas(env.agent)}
    user = {s["function"]["name"] for s in toolkit_schemas(env.user)}
    assert "unlock_discoverable_agent_tool" in agent and "call_discoverable_agent_tool" in agent
    assert "file_debit_card_transaction_dispute_6281" not in agent
    assert "deposit_check_3847" not in user and "call_discoverable_user_tool" in user
    transfer = next(s for s in toolkit_schemas(env.agent) if s["function"]["name"] == "transfer_to_human_agents")
    reason = transfer["function"]["parameters"]["properties"]["reason"]
    assert reason["default"] == "other" and len(reason["enum"]) == 19 and "fraud_or_security_concern" in reason["enum"]
    assert env.agent is not None and env.user is not None
    assert len([n for n, s in env.agent.declared_tools.items() if s.discoverable]) == 44
    assert len([n for n, s in env.user.declared_tools.items() if s.discoverable]) == 4


# --- discoverable tools -----------------------------------------------------------------------------


def test_unlock_is_episode_state_not_db_state(env: Environment, domain: BankingDomain) -> None:
    before = env.db_hash()
    text, error = call(env, "unlock_discoverable_agent_tool", agent_tool_name="close_debit_card_4721")
    assert not error and text.startswith("Tool unlocked: close_debit_card_4721\nDescription: Close or cancel")
    assert "  - card_id: string (required) - The debit card ID to close" in text
    assert env.db_hash() == before
    other = domain.new_environment()  # a new episode starts locked
    text, error = call(
        other,
        "call_discoverable_agent_tool",
        agent_tool_name="close_debit_card_4721",
        arguments='{"card_id": "x", "reason": "lost"}',
    )
    assert not error and text.startswith("Error: Tool 'close_debit_card_4721' has not been unlocked.")
    assert other.db_hash() == before


def test_unknown_agent_tool_and_bad_arguments(env: Environment) -> None:
    assert call(env, "unlock_discoverable_agent_tool", agent_tool_name="nope")[0] == (
        "Error: Unknown agent tool 'nope'. This tool is not available."
    )
    text, error = unlock_and_call(env, "close_debit_card_4721", card="x")
    assert not error and text == (
        "Error: Invalid arguments: KnowledgeTools.close_debit_card_4721() got an unexpected keyword argument 'card'"
    )


def test_write_calls_are_logged_reads_only_on_the_allowlist(domain: BankingDomain) -> None:
    env = domain.new_environment()
    unlock_and_call(env, "get_debit_dispute_status_7483", user_id="nobody")
    assert env.agent is not None
    assert env.agent.db is not None
    assert len(env.agent.db.root["agent_discoverable_tools"]["data"]) == 0  # a read off the allowlist: no log
    loaded_as(env.agent, KnowledgeTools).set_read_log_allowlist({"get_debit_dispute_status_7483"})
    unlock_and_call(env, "get_debit_dispute_status_7483", user_id="nobody")
    logged = env.agent.db.root["agent_discoverable_tools"]["data"]
    expected_id = hashlib.sha256(b"agent_discoverable_tool:get_debit_dispute_status_7483").digest()[:8].hex()
    assert logged == {expected_id: {"tool_name": "get_debit_dispute_status_7483", "status": "CALLED"}}
    text, _ = unlock_and_call(env, "close_debit_card_4721", card_id="missing", reason="lost")
    assert text == "Error: Debit card 'missing' not found."
    assert len(env.agent.db.root["agent_discoverable_tools"]["data"]) == 2  # a write is logged even when it fails


def test_bind_task_sets_the_allowlist_from_reference_actions(domain: BankingDomain) -> None:
    task = next(
        t
        for t in domain.tasks().values()
        if any(a.name == "call_discoverable_agent_tool" for a in criteria_of(t).actions or [])
    )
    env = domain.new_environment()
    env.bind_task(task)
    wanted = {
        a.arguments["agent_tool_name"]
        for a in criteria_of(task).actions or []
        if a.name == "call_discoverable_agent_tool"
    }
    assert env.agent is not None
    assert loaded_as(env.agent, KnowledgeTools).read_log_allowlist == wanted


def test_integers_become_floats_inside_the_wrappers(domain: BankingDomain) -> None:
    def limit_request(amount_text: str) -> tuple[str, str | None, dict[str, Any]]:
        env = domain.new_environment()
        assert env.agent is not None
        assert env.agent.db is not None
        account = next(iter(env.agent.db.root["credit_card_accounts"]["data"].values()))
        text, _ = call(
            env, "unlock_discoverable_agent_tool", agent_tool_name="submit_credit_limit_increase_request_7392"
        )
        args = (
            f'{{"credit_card_account_id": "{account["account_id"]}", "user_id": "{account["user_id"]}", '
            f'"requested_increase_amount": {amount_text}}}'
        )
        text, _ = call(
            env,
            "call_discoverable_agent_tool",
            agent_tool_name="submit_credit_limit_increase_request_7392",
            arguments=args,
        )
        return text, env.db_hash(), env.agent.db.root["credit_limit_increase_requests"]["data"]

    as_int, as_float = limit_request("2500"), limit_request("2500.0")
    assert as_int[0] == as_float[0] and "Requested Increase: $2,500" in as_int[0]
    assert as_int[1] == as_float[1]
    [record] = as_int[2].values()
    assert record["requested_increase_amount"] == 2500 and isinstance(record["requested_increase_amount"], int)
    assert "Must be a whole number of dollars" in limit_request("2500.5")[0]


def test_user_wrapper_normalises_before_the_logged_call_is_hashed(domain: BankingDomain) -> None:
    """The call log's id hashes json.dumps(arguments): 100 and 100.0 must log the same record."""

    def deposit(amount_text: str) -> tuple[str, str | None, dict[str, Any]]:
        env = domain.new_environment()
        assert env.agent is not None
        assert env.agent.db is not None
        account = next(a for a in env.agent.db.root["accounts"]["data"].values() if a.get("status") == "OPEN")
        call(env, "give_discoverable_user_tool", discoverable_tool_name="deposit_check_3847")
        args = f'{{"account_id": "{account["account_id"]}", "check_amount": {amount_text}}}'
        text, _ = call(
            env, "call_discoverable_user_tool", "user", discoverable_tool_name="deposit_check_3847", arguments=args
        )
        return text, env.db_hash(), env.agent.db.root["user_discoverable_tool_calls"]["data"]

    as_int, as_float = deposit("100"), deposit("100.0")
    assert as_int[0] == as_float[0] and '"check_amount": 100.0' in as_int[0]
    assert as_int[1] == as_float[1] and list(as_int[2]) == list(as_float[2])


def test_user_tools_need_to_be_given_first(env: Environment) -> None:
    args = json.dumps({"user_id": "u1", "card_name": "Gold Rewards Card"})
    text, error = call(
        env, "call_discoverable_user_tool", "user", discoverable_tool_name="get_referral_link", arguments=args
    )
    assert not error and text.startswith("Error: Tool 'get_referral_link' has not been given to you by the agent.")
    assert (
        call(
            env,
            "call_discoverable_user_tool",
            "user",
            discoverable_tool_name="get_referral_link",
            arguments='{"user_id": "u1"}',
        )[0]
        == "Error: Missing required parameter: card_name"
    )
    text, _ = call(env, "give_discoverable_user_tool", discoverable_tool_name="get_referral_link", arguments=args)
    assert text.startswith("Tool given to user: get_referral_link\nDescription: Generate a referral link")
    assert env.agent is not None
    assert env.agent.db is not None
    given = env.agent.db.root["user_discoverable_tools"]["data"]
    assert list(given.values()) == [{"tool_name": "get_referral_link", "status": "GIVEN"}]
    text, _ = call(
        env, "call_discoverable_user_tool", "user", discoverable_tool_name="get_referral_link", arguments=args
    )
    assert "Referral link: https://rhobank.com/refer/" in text
    [logged] = env.agent.db.root["user_discoverable_tool_calls"]["data"].values()
    assert logged == {
        "tool_name": "get_referral_link",
        "arguments": {"user_id": "u1", "card_name": "Gold Rewards Card"},
        "called_at": "11/14/2025",
        "status": "CALLED",
    }
    assert call(env, "give_discoverable_user_tool", discoverable_tool_name="apply_for_credit_card")[0] == (
        "Error: Unknown discoverable tool 'apply_for_credit_card'."
    )


def test_retrieval_tools_never_mutate(domain: BankingDomain) -> None:
    env = domain.new_environment(variant="bm25_grep")
    for name in ("KB_search", "grep"):
        assert env.agent is not None
        assert env.agent.has_tool(name) and not env.mutates(name)
    bare = domain.new_environment(variant="no_knowledge").agent
    assert bare is not None
    assert not bare.has_tool("KB_search")


# --- agreement with tau2 ---------------------------------------------------------------------------


def test_oracle_agreement_banking(
    oracle_rows: list[dict[str, Any]], analyzer: Analyzer, capsys: pytest.CaptureFixture[str]
) -> None:
    agree, total, problems = agreement("banking_knowledge", oracle_rows, analyzer)
    with capsys.disabled():
        counts = ", ".join(f"{f} {n}/{total}" for f, n in agree.items())
        print(f"\n[oracle] banking_knowledge: {total} simulations; {counts}")
    assert total == 291 and set(agree) == set(FIELDS)
    assert not problems, "\n".join(problems[:20])


def test_env_assertions_env_reward_and_recorded_reward(oracle_rows: list[dict[str, Any]], analyzer: Analyzer) -> None:
    run = open_run(GOLD_FILE)
    rows = [r for r in oracle_rows if r["domain"] == "banking_knowledge"]
    compared = 0
    for row in rows:
        index = run.find(row["sim"])
        assert index is not None, row["sim"]
        report = analyzer.evaluate(run, index)
        ours = report.evaluation
        assert [c.met for c in ours.env_assertions or []] == row["env_assertions"], row["sim"]
        env_reward = ours.breakdown.get("DB", 1.0) * ours.breakdown.get("ENV_ASSERTION", 1.0)
        assert env_reward == row["env_reward"], row["sim"]
        recorded = run.simulation(index).reward_info
        if recorded is not None:
            compared += 1
            assert ours.reward == recorded.reward, row["sim"]
    assert compared == 288


def test_the_allowlist_is_what_makes_required_reads_count(domain: BankingDomain) -> None:
    """Without the task's allowlist the gold hash loses the logged reads: every such task's check would fail."""
    from tau_tui.replay.replayer import gold_state

    kit = domain.new_environment().agent
    assert kit is not None
    reading = sorted(
        {
            t.id
            for t in domain.tasks().values()
            for a in (criteria_of(t).actions or [])
            if a.name == "call_discoverable_agent_tool" and not kit.spec(a.arguments["agent_tool_name"]).mutates_state
        }
    )
    assert reading  # tasks whose reference actions read through the wrapper (046, 085, ...)

    def unbound(solo: bool) -> Environment:
        env = domain.new_environment()
        vars(env)["bind_task"] = lambda _task: None  # this episode binds no task (mypy refuses assigning a method)
        return env

    for task_id in reading:
        task = domain.tasks()[task_id]
        assert (
            gold_state(task, lambda solo: domain.new_environment()).agent_hash != gold_state(task, unbound).agent_hash
        ), task_id


def test_gold_agent_scores_one_on_every_task_that_needs_no_judge(registry: DomainRegistry) -> None:
    from tau_tui.calibrate import GoldChecker

    checker = GoldChecker.for_name(registry, "banking_knowledge")
    checks = checker.run(list(checker.domain.tasks().values()))
    judged = {c.task_id for c in checks if "NL_ASSERTION" in (c.to_json()["reward_basis"] or [])}
    assert judged == {"task_102"}
    scored = [c.to_json() for c in checks if c.task_id not in judged]
    assert len(scored) == 96 and all(c["gold_reward"] == 1.0 and c["ok"] for c in scored)
    assert all(c.gold_consistent for c in checks)


# --- retrieval variants ---------------------------------------------------------------------------


def test_bm25_search_ranks_the_documents_about_the_query(domain: BankingDomain) -> None:
    pytest.importorskip("rank_bm25")
    env = domain.new_environment(variant="bm25")
    assert env.agent is not None
    assert not env.agent.has_tool("grep")
    text = loaded_as(env.agent, KBSearchMixin).KB_search("Gold Rewards Card annual fee")
    first = text.split("\n")[0]
    assert first.startswith("1. ") and "Gold" in first
    assert "   ID: doc_" in text and "   Score: " in text and text.rstrip().endswith("ms]")
    assert text.count("\n   ID: ") == 10  # top_k


def test_grep_counts_matches_and_falls_back_to_a_literal(domain: BankingDomain) -> None:
    env = domain.new_environment(variant="grep_only")
    assert env.agent is not None
    assert not env.agent.has_tool("KB_search")
    grep = loaded_as(env.agent, GrepMixin).grep
    scores = [
        float(line.split(": ")[1]) for line in grep("Diamond Elite").splitlines() if line.startswith("   Score: ")
    ]
    assert scores and scores == sorted(scores, reverse=True) and len(scores) <= 10
    assert grep("(unclosed") == "No matches found for pattern: (unclosed"  # bad regex: literal search
    assert "ID: doc_" in grep("Rho-Bank+")  # '+' after '-Bank' is a regex; still finds documents
    assert grep("zzqx-no-such-words") == "No matches found for pattern: zzqx-no-such-words"


def test_each_variant_has_its_own_policy(domain: BankingDomain) -> None:
    policies = {v: domain.policy(variant=v) for v in ("no_knowledge", "bm25_grep", "bm25", "grep_only", "full_kb")}
    assert len(set(policies.values())) == len(policies)
    assert "{{component:" not in "".join(policies.values())
    titles = [d.title for d in list(domain.knowledge().documents.values())[:5]]
    assert all(f"## {t}" in policies["full_kb"] for t in titles)
    assert not any(f"## {titles[0]}\n" in policies[v] for v in ("no_knowledge", "bm25_grep"))


def test_golden_retrieval_inlines_the_task_documents(domain: BankingDomain) -> None:
    task = domain.tasks()["task_001"]
    env = domain.new_environment(variant="golden_retrieval")
    assert "(No documents provided)" in env.policy
    env.bind_task(task)
    assert task.model_extra is not None  # a banking task's required documents: a field our Task does not declare
    wanted = domain.knowledge().documents[task.model_extra["required_documents"][0]]
    assert f"## {wanted.title}\n\n{wanted.content}" in env.policy


def test_variants_that_need_what_we_lack_fail_in_one_line(domain: BankingDomain) -> None:
    from tau_tui.domains import DomainError

    for name in ("alltools", "terminal_use", "bm25_reranker_grep"):
        with pytest.raises(ValueError) as err:
            domain.new_environment(variant=name)
        assert "\n" not in str(err.value) and name in str(err.value)
    with pytest.raises(DomainError, match="Unknown retrieval variant"):
        domain.new_environment(variant="nope")


def test_a_rollout_records_its_retrieval_config(domain: BankingDomain) -> None:
    import asyncio

    from tau_tui.rollout.factory import ParticipantSpec
    from tau_tui.rollout.session import Episode

    episode = Episode(
        domain,
        "grep_only",
        domain.tasks()["task_001"],
        ParticipantSpec("scripted/gold"),
        ParticipantSpec("scripted/user"),
    )
    asyncio.run(episode.run(evaluate=False))
    assert episode.info()["retrieval_config"] == "grep_only"
    assert episode.env.policy == domain.policy(variant="grep_only")


class _FakeEmbeddings:
    """A local OpenAI-compatible /embeddings endpoint: bag-of-words vectors, so cosine ranks by shared words."""

    DIM = 256

    @classmethod
    def vector(cls, text: str) -> list[float]:
        vec = [0.0] * cls.DIM
        for word in text.lower().split():
            vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % cls.DIM] += 1.0
        return vec


def test_embedding_variant_goes_through_litellm_to_the_configured_server(
    domain: BankingDomain, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.evaluate.support import (
        FakeOpenAI,  # the project's fake OpenAI server, taught /embeddings
    )

    class Handler(FakeOpenAI):
        requests: list[Any] = []

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            type(self).requests.append({"path": self.path, "model": body.get("model"), "n": len(body["input"])})
            data = json.dumps(
                {
                    "object": "list",
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    "data": [
                        {"object": "embedding", "index": i, "embedding": _FakeEmbeddings.vector(t)}
                        for i, t in enumerate(body["input"])
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    pytest.importorskip("litellm")
    import threading
    from http.server import ThreadingHTTPServer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        monkeypatch.setenv("TAU_TUI_EMBEDDINGS_API_BASE", f"http://127.0.0.1:{httpd.server_address[1]}/v1")
        env = domain.new_environment(variant="openai_embeddings")
        target = next(d for d in domain.knowledge().documents.values() if "Diamond Elite" in d.title)
        assert env.agent is not None
        text = loaded_as(env.agent, KBSearchMixin).KB_search(target.content[:400])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert text.split("\n")[1] == f"   ID: {target.id}"
    assert all(r["path"].endswith("/embeddings") for r in Handler.requests)
    assert {r["model"] for r in Handler.requests} == {"text-embedding-3-large"}
    assert sum(r["n"] for r in Handler.requests) == len(domain.knowledge().documents) + 1


def test_search_tools_of_other_variants_replay_as_reads_not_hallucinations(domain: BankingDomain) -> None:
    from tau_tui.model.messages import AssistantMessage, ToolMessage
    from tau_tui.replay import replay
    from tau_tui.replay.timeline import Verdict

    calls = [
        ToolCall(id=f"c{i}", name=name, arguments={"query": "fees"})
        for i, name in enumerate(("KB_search_dense", "shell", "KB_search", "no_such_tool"))
    ]
    messages: list[Message] = [AssistantMessage(role="assistant", content=None, tool_calls=calls)]
    messages += [
        ToolMessage(id=c.id, role="tool", content="whatever was recorded", requestor="assistant") for c in calls
    ]
    timeline = replay(messages, None, lambda solo: domain.new_environment(variant="no_knowledge"))
    assert [r.verdict for r in timeline.calls] == [Verdict.SKIPPED_READ] * 3 + [Verdict.SKIPPED_UNKNOWN]
    env = domain.new_environment(variant="no_knowledge")
    text, error = call(env, "KB_search_dense", query="fees")
    assert error and text == "Error: Tool 'KB_search_dense' not found."  # still not callable here, as in tau2
