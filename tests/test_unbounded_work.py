"""Unbounded work from recorded input (issue 23, class 7): a catastrophic grep pattern is a tool error within its
deadline, the identifier scan behind the ``K`` hint is linear, and an Inspect log's inflated size is bounded by
the read limit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import pytest

from tau_tui.model.messages import ToolCall

if TYPE_CHECKING:
    from tau_tui.domains import DomainRegistry
    from tau_tui.env.domain import Domain


@runtime_checkable
class _Greps(Protocol):
    """The grep variant's agent toolkit (the registry loads the domain folder under its own module name, so
    ``domains.banking_knowledge.retrieval.GrepMixin`` is another class than the one it built)."""

    def grep(self, pattern: str) -> str: ...


CATASTROPHIC = [r"(\w+\s?)+$", r"(a|aa)+$", r"(.*\s?)*$"]


@pytest.fixture(scope="module")
def banking(registry: DomainRegistry) -> Domain:
    return registry.get("banking_knowledge")


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_grep_is_a_tool_error_within_its_deadline(banking: Domain, pattern: str) -> None:
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


def test_safe_patterns_keep_taus_grep_semantics(banking: Domain) -> None:
    env = banking.new_environment(variant="grep_only")
    assert isinstance(env.agent, _Greps)
    assert env.agent.grep("(unclosed") == "No matches found for pattern: (unclosed"  # re's error: a literal
    assert "ID: doc_" in env.agent.grep("fee|charge")
    assert env.agent.grep(r"\p{L}+zzqx") == r"No matches found for pattern: \p{L}+zzqx"  # not a class in re


# --- the identifier scan behind the K hint ------------------------------------------------------------------

LONG_MESSAGES = ["a." * 150_000, "a-" * 150_000, "x1" * 150_000, "order #W1234567 " * 19_000]


@pytest.mark.parametrize("text", LONG_MESSAGES, ids=lambda t: f"{t[:6]!r}x{len(t)}")
def test_the_identifier_scan_is_linear(text: str) -> None:
    from tau_tui.evaluate.compliance import _identifiers

    started = time.monotonic()
    _identifiers(text)
    assert time.monotonic() - started < 1.0


def test_the_scan_finds_what_the_pattern_finds(tau2_data: Path) -> None:
    """On every user message of the corpus, and on random text, run by run is the pattern's own answer."""
    import json
    import random

    from tau_tui.evaluate.compliance import IDENTIFIER, identifier_matches

    texts = []
    for path in sorted(tau2_data.glob("sierra-research__tau2-bench__*.json"))[:6]:
        data = json.loads(path.read_text())
        sims = data["simulations"] if isinstance(data, dict) else data
        texts += [m["content"] for s in sims for m in s.get("messages") or [] if isinstance(m.get("content"), str)]
    rng = random.Random(7)
    texts += ["".join(rng.choice("ab1Z_.@-# \n#é9x") for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    assert len(texts) > 3000
    for text in texts:
        assert [m.span() for m in identifier_matches(text)] == [m.span() for m in IDENTIFIER.finditer(text)]


# --- an Inspect log's inflated size ---------------------------------------------------------------------------


def zip_bomb(path: Path, inflated: int, lie: bool = False) -> Path:
    """A small .eval (zip) holding one member of ``inflated`` zero bytes; ``lie``: its central directory (what
    readers trust) declares 1 byte."""
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("samples/1_epoch_1.json", "w") as member:
            chunk = b"0" * (1 << 20)
            for _ in range(inflated // len(chunk)):
                member.write(chunk)
    if lie:
        raw = bytearray(path.read_bytes())
        entry = raw.rindex(b"PK\x01\x02")  # the member's central directory entry: uncompressed size at +24
        raw[entry + 24 : entry + 28] = (1).to_bytes(4, "little")
        path.write_bytes(bytes(raw))
        assert zipfile.ZipFile(path).infolist()[0].file_size == 1
    return path


@pytest.fixture
def fake_inspect(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """An ``inspect_ai.log`` whose reader only records that it was called (the size check comes first)."""
    import sys
    import types

    calls: list[str] = []
    package, log = types.ModuleType("inspect_ai"), types.ModuleType("inspect_ai.log")

    def read_eval_log(path: str) -> None:
        calls.append(path)
        raise ValueError("the fake reader reads nothing")

    vars(log)["read_eval_log"] = read_eval_log  # a plain module: mypy knows no such attribute on ModuleType
    vars(package)["log"] = log
    monkeypatch.setitem(sys.modules, "inspect_ai", package)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", log)
    return calls


@pytest.mark.parametrize("lie", [False, True], ids=["declared", "lying header"])
def test_an_inspect_log_that_inflates_past_the_read_limit_is_refused_before_reading(
    tmp_path: Path, fake_inspect: list[str], lie: bool
) -> None:
    from tau_tui.model import RunFileError, open_run, runtime

    log = zip_bomb(tmp_path / "bomb.eval", 64 * 1024**2, lie=lie)
    assert log.stat().st_size < 1024**2
    previous = runtime.configure(max_read_bytes=16 * 1024**2)
    try:
        with pytest.raises(RunFileError) as caught:
            open_run(log)
    finally:
        runtime.restore(previous)
    said = str(caught.value)
    assert said.startswith(f"{log}: ") and "\n" not in said
    assert "read limit" in said or "not a readable Inspect log" in said
    assert fake_inspect == []  # the reader never held it


def test_an_inspect_log_within_the_limit_reaches_the_reader(tmp_path: Path, fake_inspect: list[str]) -> None:
    from tau_tui.model import RunFileError, open_run

    log = zip_bomb(tmp_path / "fine.eval", 2 * 1024**2)
    with pytest.raises(RunFileError, match="fake reader"):
        open_run(log)
    assert fake_inspect == [str(log)]
