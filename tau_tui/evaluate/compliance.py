"""Policy-compliance flags and user-simulator attribution hints, as process detectors.

Compliance rules differ per domain, so each domain declares a small ``PolicyRules`` table
(``register_policy_rules`` from its package: ``domains/<name>/__init__.py``); the detectors read
the table of the replayed environment's domain and flag nothing for a domain without one:

- ``unconfirmed_write``: an agent write whose preceding user turn is not an explicit yes
  ("yes", "go ahead", "confirm", ...), when the domain asks for confirmation before writes.
- ``write_before_auth``: an agent write before any successful call of the tools the domain
  authenticates the user with (retail: find the user id by email or by name and zip).
- ``transfer_against_policy``: a transfer to a human with no attempt first (no other tool call)
  and no request for a human from the user, when the policy allows transfers only for what the
  agent cannot handle.

Four hints point at the user simulator instead of the agent (domain independent; two read the task):

- ``user_stopped_early``: the user ends the call in the very message where it confirms an action
  the agent asked about, so the agent never got to act.
- ``user_contradicts_scenario``: the user states an identifier (an id, order or reservation
  number, an email) that its scenario does not give and nobody said before, while the scenario
  gives identifiers of its own: a detail made up or misread.
- ``user_asked_beyond_task``: right after a user turn that asks for it in the tool's own words
  ("cancel", "reservation"…), the agent makes a write with a tool that none of the task's
  expected actions use: the user asked for what the task does not.
- ``out_of_scope_stop``: the user ends the call with ``###OUT-OF-SCOPE###`` (its scenario lacks what it
  needs); tau2 records it as ``user_stop`` and grades it as a normal end (tau2-bench#517).
- ``user_text_tool_call``: a user message that writes a tool call or a tool result as text (a tool of the
  domain named with its arguments, a JSON call, tool-call markup) instead of calling: nothing ran.

``SUGGESTED_SOURCE`` says whose error each kind suggests (agent, user or task), for a note.
Flags never change the reward. Solo runs have no user turns: the user-turn rules skip them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tau_tui.evaluate.diagnostics import Detector, Flag, register_detector
from tau_tui.model.messages import AssistantMessage, UserMessage
from tau_tui.model.provenance import OUT_OF_SCOPE
from tau_tui.model.tasks import Task
from tau_tui.replay import CallRecord, Timeline, Verdict

STOP = "###STOP###"
AFFIRMATIVE = re.compile(
    r"\b(yes|yeah|yep|yup|sure|confirm(ed|s)?|correct|go ahead|proceed|please do|do it|do that|ok(ay)?|"
    r"that'?s right|sounds good|absolutely|definitely|affirmative|i agree|agreed)\b",
    re.IGNORECASE,
)
NEGATIVE_START = re.compile(r"^\W*(no|nope|not|don'?t|wait|hold on|actually)\b", re.IGNORECASE)
ASKS_FOR_HUMAN = re.compile(
    r"\b(human|representative|real person|person|manager|supervisor|live agent|"
    r"someone( else)?|transfer|escalat\w*)\b",
    re.IGNORECASE,
)
ASKS_CONFIRMATION = re.compile(r"\?|\b(confirm|proceed|shall i|should i|would you like|do you want)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PolicyRules:
    """What one domain's policy asks of the agent, as the compliance detectors check it."""

    confirm_writes: bool = False  # explicit user confirmation before every write
    auth_tools: frozenset[str] = frozenset()  # a successful call of one of these authenticates the user
    transfer_only_when_needed: bool = False  # transfer only for what the agent cannot handle itself
    exempt_writes: frozenset[str] = frozenset()  # writes the confirmation rule does not cover


POLICY_RULES: dict[str, PolicyRules] = {}


def register_policy_rules(domain: str, rules: PolicyRules) -> PolicyRules:
    """Declare ``domain``'s table (a domain package calls this when it is loaded; the last one wins)."""
    POLICY_RULES[domain] = rules
    return rules


def rules_for(timeline: Timeline) -> PolicyRules | None:
    env = timeline.env
    name = getattr(env, "domain_name", None) if env is not None else None
    if not isinstance(name, str):
        return None
    return POLICY_RULES.get(name) or POLICY_RULES.get(name.split("-")[0])


def is_affirmative(text: str | None) -> bool:
    if not isinstance(text, str):
        return False
    text = text.replace(STOP, " ").strip()
    return bool(text) and not NEGATIVE_START.search(text) and bool(AFFIRMATIVE.search(text))


def _agent_writes(timeline: Timeline, start: int) -> Iterator[CallRecord]:
    for call in timeline.calls:
        if (
            call.call_step >= start
            and call.requestor == "assistant"
            and call.verdict in (Verdict.REPLAYED, Verdict.MISMATCH)
        ):
            yield call


def _user_text_before(timeline: Timeline, step: int) -> tuple[int, str | None] | None:
    for earlier in range(step - 1, -1, -1):
        message = timeline.steps[earlier].message
        if isinstance(message, UserMessage) and isinstance(message.content, str) and message.content.strip():
            return earlier, message.content
    return None


def unconfirmed_writes(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    rules = rules_for(timeline)
    if rules is None or not rules.confirm_writes or timeline.solo:
        return []
    out = []
    for call in _agent_writes(timeline, start):
        if call.name in rules.exempt_writes:
            continue
        before = _user_text_before(timeline, call.call_step)
        if before is None or not is_affirmative(before[1]):
            said = "no user turn before it" if before is None else f"the user's last turn (step {before[0]}) is no yes"
            out.append(
                Flag(
                    "unconfirmed_write", call.call_step, f"{call.name} without the user's explicit confirmation: {said}"
                )
            )
    return out


def writes_before_auth(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    rules = rules_for(timeline)
    if rules is None or not rules.auth_tools:
        return []
    authenticated_at = min(
        (
            c.result_step
            for c in timeline.calls
            if c.name in rules.auth_tools and c.result_step is not None and not c.recorded_error
        ),
        default=None,
    )
    for call in _agent_writes(timeline, start):
        if authenticated_at is None or call.call_step < authenticated_at:
            tools = " / ".join(sorted(rules.auth_tools))
            return [
                Flag("write_before_auth", call.call_step, f"{call.name} before the user was authenticated ({tools})")
            ]
    return []


def transfers_against_policy(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    rules = rules_for(timeline)
    if rules is None or not rules.transfer_only_when_needed:
        return []
    out = []
    for call in timeline.calls:
        if call.call_step < start or call.requestor != "assistant" or not call.name.startswith("transfer_to_human"):
            continue
        tried = any(
            c.call_step >= start and c.call_step < call.call_step and not c.name.startswith("transfer")
            for c in timeline.calls
        )
        asked = any(
            isinstance(s.message, UserMessage)
            and isinstance(s.message.content, str)
            and ASKS_FOR_HUMAN.search(s.message.content)
            for s in timeline.steps[: call.call_step]
        )
        if not tried and not asked:
            out.append(
                Flag(
                    "transfer_against_policy",
                    call.call_step,
                    "transferred before trying anything, and the user did not ask for a human",
                )
            )
    return out


def out_of_scope_stops(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    """The user's last words are ``###OUT-OF-SCOPE###``: an aborted scenario tau2 grades as a normal stop."""
    for step in reversed(timeline.steps[start:]):
        message = step.message
        if isinstance(message, UserMessage) and message.text.strip():
            if OUT_OF_SCOPE not in message.text:
                return []
            return [
                Flag(
                    "out_of_scope_stop",
                    step.index,
                    "suggested source: task — the user simulator found its scenario out of scope and stopped; "
                    "tau2 records a user_stop and grades it as a normal end (tau2-bench#517)",
                )
            ]
    return []


TOOL_MARKUP = re.compile(
    r"<\s*/?\s*(tool_call|tool_response|function_call|tool_result)\b|\"(tool_call_id|arguments)\"\s*:|"
    r"\"role\"\s*:\s*\"tool\"|\bfunctions\.\w+\s*\(",
    re.IGNORECASE,
)


def _tool_names(timeline: Timeline) -> set[str]:
    env = timeline.env
    kits = [] if env is None else [kit for kit in (env.agent, env.user) if kit is not None]
    return {name for kit in kits for name in kit.tool_names()}


def users_writing_tool_calls(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    """User turns that spell a tool call or result out as text (and make no call): nothing was run."""
    names = _tool_names(timeline)
    named = (
        re.compile(rf"\b({'|'.join(map(re.escape, sorted(names)))})\s*\(|\"name\"\s*:\s*\"(\w+)\"") if names else None
    )
    out: list[Flag] = []
    for step in timeline.steps[start:]:
        message = step.message
        if not isinstance(message, UserMessage) or message.tool_calls or not message.text.strip():
            continue
        text = message.text
        markup = TOOL_MARKUP.search(text)
        called = named.search(text) if named is not None else None
        tool = called and (called.group(1) or called.group(2))
        if markup is None and not (tool and tool in names):
            continue
        what = (
            f"a call of {tool}" if tool and tool in names else f"tool-call markup {markup.group(0)!r}" if markup else ""
        )
        out.append(
            Flag(
                "user_text_tool_call",
                step.index,
                f"suggested source: user — the user simulator wrote {what} as text instead of calling; nothing ran",
            )
        )
    return out


def users_stopping_early(timeline: Timeline, start: int, policy: str | None = None) -> list[Flag]:
    for step in reversed(timeline.steps[start:]):
        message = step.message
        if not isinstance(message, UserMessage) or not isinstance(message.content, str):
            continue
        if STOP not in message.content or not is_affirmative(message.content):
            return []
        previous = timeline.steps[step.index - 1].message if step.index > 0 else None
        if (
            isinstance(previous, AssistantMessage)
            and isinstance(previous.content, str)
            and ASKS_CONFIRMATION.search(previous.content)
            and not previous.tool_calls
        ):
            return [
                Flag(
                    "user_stopped_early",
                    step.index,
                    "suggested source: user — it ended the call in the message that confirms, "
                    "so the agent never got to act",
                )
            ]
        return []
    return []


# Identifiers a user states: ids, order and reservation numbers, emails (letters and digits mixed, or # numbers).
IDENTIFIER = re.compile(
    r"#?\b(?=[A-Za-z0-9_.@-]*\d)(?=[A-Za-z0-9_.@-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_.@-]{3,}\b"
    r"|#\d{3,}\b"
)


# Numbers with a unit or an ordinal ("19th", "10am", "24h", "5kg") are not identifiers.
NOT_AN_ID = re.compile(r"^\d+(st|nd|rd|th|am|pm|h|hrs?|mins?|s|kg|lbs?|gb|mb|k|m|x)$|^\d+-[a-z]+$")


# A run of the characters an identifier is made of; one longer than any identifier (an email is at most 254) is none.
_RUN = re.compile(r"#?[A-Za-z0-9_.@-]+")
LONGEST_ID = 254


def identifier_matches(text: str) -> Iterator[re.Match[str]]:
    """``IDENTIFIER``'s matches in ``text``, found run by run: linear in the text (over one long run the pattern
    alone backtracks quadratically: a 300 KB message took minutes)."""
    for run in _RUN.finditer(text):
        if run.end() - run.start() <= LONGEST_ID + 1:
            yield from IDENTIFIER.finditer(text, run.start(), run.end() + 1)  # \b sees the next character


def _identifiers(text: str) -> set[str]:
    found = {m.group(0).lstrip("#").rstrip(".").lower() for m in identifier_matches(text)}
    return {token for token in found if not NOT_AN_ID.match(token)}


def _scenario_text(task: Task | None) -> str:
    scenario = task.user_scenario if task is not None else None
    if scenario is None:
        return ""
    try:
        return scenario.model_dump_json()
    except Exception:  # noqa: BLE001 - a scenario we cannot serialise gives no hint
        return ""


def users_contradicting_scenario(
    timeline: Timeline, start: int, policy: str | None = None, task: Task | None = None
) -> list[Flag]:
    """The user states an identifier that its scenario does not hold and nobody said before, while the scenario
    does give identifiers of its own: a user simulator that made a detail up (or misread its instructions)."""
    known = _identifiers(_scenario_text(task))
    if timeline.solo or not known:
        return []
    said: set[str] = set()
    out = []
    for step in timeline.steps:
        message = step.message
        text = message.content if isinstance(getattr(message, "content", None), str) else ""
        if step.index >= start and isinstance(message, UserMessage) and text:
            shown = {
                m.group(0).lstrip("#").rstrip(".").lower(): m.group(0).lstrip("#").rstrip(".")
                for m in identifier_matches(text)
            }  # as the user wrote them
            new = sorted(shown.get(i, i) for i in _identifiers(text) - known - said)
            if new:
                out.append(
                    Flag(
                        "user_contradicts_scenario",
                        step.index,
                        f"suggested source: user — it states {', '.join(new[:3])}, which its scenario "
                        "does not give and nobody said before",
                    )
                )
        said |= _identifiers(text)
        for call in getattr(message, "tool_calls", None) or []:
            said |= _identifiers(str(call.arguments))
    return out


GENERIC_WORDS = {
    "user",
    "users",
    "details",
    "detail",
    "info",
    "information",
    "data",
    "item",
    "items",
    "with",
    "from",
    "into",
    "get",
    "set",
    "by",
    "and",
    "the",
    "for",
}


def _names_the_tool(text: str, tool: str) -> bool:
    """The user's words ask for what the tool does: one of its name's own words (``cancel``, ``reservation``…)."""
    words = {w for w in tool.lower().split("_") if len(w) >= 4 and w not in GENERIC_WORDS}
    lowered = text.lower()
    return any(re.search(rf"\b{re.escape(w[:-1] if w.endswith('s') else w)}", lowered) for w in words)


def users_asking_beyond_task(
    timeline: Timeline, start: int, policy: str | None = None, task: Task | None = None
) -> list[Flag]:
    """A write the agent made right after a user turn that asks for it in the tool's own words, with a tool the
    task's expected actions never use (the task has some): the user asked for something the task does not."""
    actions = task.expected_actions if task is not None else []
    expected = {a.name for a in actions if a.requestor == "assistant"}
    if timeline.solo or not expected:
        return []
    out, flagged = [], set()
    for call in _agent_writes(timeline, start):
        if call.name in expected or call.name.startswith("transfer"):
            continue
        asked = _user_text_before(timeline, call.call_step)
        if asked is None or asked[0] in flagged or not _names_the_tool(asked[1] or "", call.name):
            continue
        between = timeline.steps[asked[0] + 1 : call.call_step]
        if any(isinstance(s.message, UserMessage) for s in between):
            continue
        flagged.add(asked[0])
        out.append(
            Flag(
                "user_asked_beyond_task",
                asked[0],
                f"suggested source: user or task — the agent then called {call.name}, which none of the "
                "task's expected actions use",
            )
        )
    return out


SUGGESTED_SOURCE = {
    "unconfirmed_write": "agent",
    "write_before_auth": "agent",
    "transfer_against_policy": "agent",
    "user_stopped_early": "user",
    "user_contradicts_scenario": "user",
    "user_asked_beyond_task": "user",
    "out_of_scope_stop": "task",
    "user_text_tool_call": "user",
}
SUGGESTED_ERROR_TYPE = {
    "unconfirmed_write": "policy_violation",
    "write_before_auth": "policy_violation",
    "transfer_against_policy": "premature_end",
    "user_stopped_early": "premature_end",
    "user_contradicts_scenario": "hallucination",
    "user_asked_beyond_task": "instruction_deviation",
    "out_of_scope_stop": "premature_end",
    "user_text_tool_call": "instruction_deviation",
}
COMPLIANCE_KINDS = ("unconfirmed_write", "write_before_auth", "transfer_against_policy")

for _detector in (
    Detector(
        "unconfirmed_write",
        "U",
        "policy: a write without the user's explicit yes in the turn before",
        unconfirmed_writes,
    ),
    Detector("write_before_auth", "A", "policy: a write before the user was authenticated", writes_before_auth),
    Detector(
        "transfer_against_policy",
        "X",
        "policy: a transfer to a human with no attempt and no request for one",
        transfers_against_policy,
    ),
    Detector(
        "user_stopped_early",
        "Q",
        "user simulator: ended the call while confirming, before the agent acted",
        users_stopping_early,
    ),
    Detector(
        "user_contradicts_scenario",
        "K",
        "user simulator: stated an id its scenario does not give (made up)",
        users_contradicting_scenario,
        uses_task=True,
    ),
    Detector(
        "user_asked_beyond_task",
        "B",
        "user simulator: asked for a write none of the task's actions use",
        users_asking_beyond_task,
        uses_task=True,
    ),
    Detector(
        "out_of_scope_stop",
        "O",
        "user simulator: stopped with ###OUT-OF-SCOPE###, recorded as a normal user_stop",
        out_of_scope_stops,
    ),
    Detector(
        "user_text_tool_call",
        "J",
        "user simulator: wrote a tool call or result as text instead of calling",
        users_writing_tool_calls,
    ),
):
    register_detector(_detector)
