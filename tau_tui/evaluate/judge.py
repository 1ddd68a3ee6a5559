"""The LLM judge for natural-language assertions.

A ``Judge`` takes the trajectory and the task's assertions and returns one
verdict per assertion, or raises ``JudgeError``; it never guesses a verdict it
did not get. A missing or refused API key raises ``MissingCredentials``
instead, which nothing catches as "not judged": the command stops in one
line. ``LiteLLMJudge`` asks any model (temperature 0) with a prompt of our
own through the model client (``tau_tui.llm``: the agent's retries, its
transports, its failure kinds) and reads its JSON answer leniently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from tau_tui.evaluate.checks import NLCheck
from tau_tui.llm.client import LLMSettings, RetryPolicy, complete_sync
from tau_tui.llm.credentials import credentials_problem
from tau_tui.llm.failures import LLMError
from tau_tui.model.messages import Message, ParticipantMessage

SYSTEM_PROMPT = """\
You grade a recorded customer-service conversation between an agent and a customer \
against a list of expected outcomes.
Judge every expected outcome on its own, using only what the conversation shows \
(tool calls and tool results included).
Reply with a single JSON object and nothing else, shaped like this:
{"results": [{"expectedOutcome": "<the outcome, copied from the list>", \
"reasoning": "<one or two sentences>", "metExpectation": true}]}
Give exactly one entry per expected outcome, in the order of the list; \
metExpectation is true only if the conversation shows the outcome was met."""


class JudgeError(Exception):
    """The judge could not give a verdict for every assertion; ``str()`` is one line.

    ``raised``: under tau2's judge texts, the "Type: message" of the error tau2's own judge raises on the same
    reply (tau2 fails the whole simulation there; ``rollout.runner`` does the same under protocol tau2)."""

    def __init__(self, message: str, raised: str | None = None):
        super().__init__(message)
        self.raised = raised


@dataclass(frozen=True)
class JudgeTexts:
    """tau2's own judge request, as read from a tau2 (``rollout.protocol.judge_texts_from_source``).

    ``user_parts``: the user message's template in pieces, each a literal text or (``field=True``) one of
    ``trajectory_str`` (``role: content`` per message, as tau2 writes it) and ``nl_assertions`` (the list as
    Python prints it)."""

    system: str
    user_parts: tuple[tuple[bool, str], ...]
    temperature: float
    origin: str = ""

    def messages(self, messages: list[Message], assertions: list[str]) -> list[dict[str, str]]:
        values = {
            "trajectory_str": "\n".join(f"{m.role}: {m.content}" for m in messages),
            "nl_assertions": repr(list(assertions)),
        }
        user = "".join(values[text] if is_field else text for is_field, text in self.user_parts)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    @staticmethod
    def verdicts(reply: str | None) -> list[NLCheck]:
        """The checks tau2 reads from the reply: every result as the judge gave it (tau2 matches none to the
        task's list); ``JudgeError`` with ``raised`` where tau2's parsing raises."""
        try:
            data = json.loads(reply)  # type: ignore[arg-type]  # None raises here, as in tau2
            return [
                NLCheck(str(r["expectedOutcome"]), bool(r["metExpectation"]), str(r["reasoning"]))
                for r in data.get("results", [])
            ]
        except Exception as exc:  # noqa: BLE001 - what tau2's judge raises, kept for the simulation's end
            first = (str(exc).splitlines() or [""])[0]
            raised = f"{type(exc).__name__}: {first}"
            raise JudgeError(f"the judge's reply is not what tau2 reads ({raised})", raised) from None


class Judge(Protocol):
    def __call__(self, messages: list[Message], assertions: list[str]) -> list[NLCheck]: ...


def render_conversation(messages: list[Message]) -> str:
    """One ``role: text`` line per message; tool calls are written out as name(arguments)."""
    lines = []
    for message in messages:
        text = message.text
        if isinstance(message, ParticipantMessage) and message.tool_calls:
            calls = "; ".join(f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in message.tool_calls)
            text = f"{text}\n[tool calls: {calls}]" if text else f"[tool calls: {calls}]"
        lines.append(f"{message.role}: {text}")
    return "\n".join(lines)


def judge_messages(messages: list[Message], assertions: list[str]) -> list[dict[str, str]]:
    """The chat messages sent to the judge model."""
    outcomes = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, 1))
    user = f"Conversation:\n{render_conversation(messages)}\n\nExpected outcomes:\n{outcomes}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)
_TRUE, _FALSE = {"true", "yes", "met", "1"}, {"false", "no", "not met", "unmet", "0"}


def _load_json(text: str) -> Any:
    body = _FENCE.sub("", text.strip())
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise JudgeError("the judge's reply holds no JSON object") from None
        try:
            return json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise JudgeError(f"the judge's reply is not valid JSON ({exc.msg})") from None


def _first(item: dict[str, Any], *keys: str) -> Any:
    return next((item[k] for k in keys if k in item), None)


def _verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def parse_verdicts(reply: str | None, assertions: list[str]) -> list[NLCheck]:
    """One ``NLCheck`` per assertion from the judge's reply, or ``JudgeError``.

    Accepts a bare list or ``{"results": [...]}``, code fences, text around the
    JSON, and a few spellings of the keys. Results are matched to assertions by
    position when the counts agree, otherwise by the repeated outcome text.
    """
    if not reply or not reply.strip():
        raise JudgeError("the judge gave an empty reply")
    data = _load_json(reply)
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise JudgeError("the judge's reply has no 'results' list")
    parsed: list[tuple[str | None, bool | None, str]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        outcome = _first(item, "expectedOutcome", "expected_outcome", "outcome", "assertion")
        met = _verdict(_first(item, "metExpectation", "met_expectation", "met", "passed"))
        reasoning = _first(item, "reasoning", "justification", "explanation")
        parsed.append((outcome if isinstance(outcome, str) else None, met, str(reasoning or "")))
    if len(parsed) == len(assertions):
        pairs = list(zip(assertions, parsed, strict=True))
    else:
        by_text = {_norm(o): (o, m, r) for o, m, r in parsed if o}
        pairs = [(a, by_text.get(_norm(a), (None, None, ""))) for a in assertions]
    out = []
    for assertion, (_, met, reasoning) in pairs:
        if met is None:
            raise JudgeError(f"the judge gave no verdict for: {assertion[:80]}")
        out.append(NLCheck(assertion, met, reasoning))
    return out


class LiteLLMJudge:
    """A judge backed by any litellm model string (e.g. ``openai/gpt-4.1``), temperature 0."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        **completion_args: Any,
    ):
        self.model = model
        asked = completion_args.pop("num_retries", None)  # litellm's own argument: our retries take its count
        if retry is None and isinstance(asked, int) and not isinstance(asked, bool) and asked >= 0:
            retry = RetryPolicy(max_retries=asked)
        self.retry = retry or RetryPolicy()
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.completion_args = completion_args
        self.texts: JudgeTexts | None = None  # tau2's request and parsing instead of ours (``with_texts``)

    def with_texts(self, texts: JudgeTexts | None) -> LiteLLMJudge:
        """This judge asking as ``texts`` say (tau2's judge), or as it is when None."""
        if texts is None:
            return self
        judge = replace_judge(self)
        judge.texts = texts
        return judge

    def _args(self) -> dict[str, Any]:
        kwargs = dict(self.completion_args)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs

    def credentials_problem(self) -> str | None:
        """The API key the judge model needs and the environment lacks, in one line, or None."""
        return credentials_problem(self.model, self._args(), "judge")

    def settings(self) -> LLMSettings:
        """The judge's model call: its arguments, temperature 0 (tau2's own under tau2's texts)."""
        temperature = self.texts.temperature if self.texts else 0
        args = {**self._args(), "temperature": temperature}
        return LLMSettings(self.model, args, self.timeout, self.retry, role="judge")

    def __call__(self, messages: list[Message], assertions: list[str]) -> list[NLCheck]:
        texts = self.texts
        asked = texts.messages(messages, assertions) if texts else judge_messages(messages, assertions)
        payload: list[dict[str, Any]] = [dict(message) for message in asked]
        try:
            reply = complete_sync(self.settings(), payload).content
        except LLMError as exc:  # after the client's retries: "not judged"; MissingCredentials stops the command
            said = str(exc.details.get("said") or exc)
            raise JudgeError(f"judge {self.model} failed: {said}", said if texts else None) from None
        return texts.verdicts(reply) if texts else parse_verdicts(reply, assertions)


def replace_judge(judge: LiteLLMJudge) -> LiteLLMJudge:
    """A copy of ``judge`` (its settings shared, never changed)."""
    copy = LiteLLMJudge(
        judge.model,
        api_base=judge.api_base,
        api_key=judge.api_key,
        timeout=judge.timeout,
        retry=judge.retry,
        **judge.completion_args,
    )
    copy.texts = judge.texts
    return copy


def judge_credentials_problem(judge: Any) -> str | None:
    """The API key a judge lacks, in one line (None: it is set, or the judge was given in code)."""
    return judge.credentials_problem() if isinstance(judge, LiteLLMJudge) else None
