"""Unbounded work from recorded input (issue 23, class 7): a catastrophic grep pattern is a tool error within its
deadline, the identifier scan behind the ``K`` hint is linear, and an Inspect log's inflated size is bounded by
the read limit."""

from __future__ import annotations

import time

import pytest

from tau_tui.model.messages import ToolCall

CATASTROPHIC = [r"(\w+\s?)+$", r"(a|aa)+$", r"(.*\s?)*$"]


@pytest.fixture(scope="module")
def banking(registry):
    return registry.get("banking_knowledge")


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_grep_is_a_tool_error_within_its_deadline(banking, pattern):
    from domains.banking_knowledge.retrieval import GREP_SECONDS

    env = banking.new_environment(variant="grep_only")
    started = time.monotonic()
    message = env.call(ToolCall(id="c1", name="grep", arguments={"pattern": pattern}, requestor="assistant"))
    took = time.monotonic() - started
    assert took < 4 * GREP_SECONDS + 2
    if message.error:
        assert "backtracks without end" in message.text and pattern in message.text
    else:  # the engine saw through it: an answer, in time
        assert "ID: doc_" in message.text or message.text.startswith("No matches found")


def test_safe_patterns_keep_taus_grep_semantics(banking):
    env = banking.new_environment(variant="grep_only")
    assert env.agent.grep("(unclosed") == "No matches found for pattern: (unclosed"  # re's error: a literal
    assert "ID: doc_" in env.agent.grep("fee|charge")
    assert env.agent.grep(r"\p{L}+zzqx") == r"No matches found for pattern: \p{L}+zzqx"  # not a class in re
