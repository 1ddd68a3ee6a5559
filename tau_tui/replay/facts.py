"""The display facts of one replayed simulation, headless: what ``tau-tui replay`` prints, in order.

``replay_facts(record, timeline, has_gold)`` turns an analysis (its ``to_json()``
record and its timeline) into an ordered list of ``Fact(kind, label, value,
severity)``: the verdict counts, injected faults, refusals, discoveries, the DB
check, where the recording disagrees with what we derive, the first mismatch
and the findings. ``plain_text(facts)`` is the plain-text block the CLI prints;
a view that styles facts keys on ``kind`` and ``severity`` only, so a rule
such as "the recording says db_match=X but we say Y" is written once, here.

Severities: ``info`` (neutral), ``ok``, ``warn``, ``bad``. A fact that reports
the recording itself (not what we derive) has ``recorded=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tau_tui.replay.timeline import Timeline

Severity = Literal["info", "ok", "warn", "bad"]


@dataclass(frozen=True)
class Fact:
    """One line of the description: ``label`` + ``sep`` + ``value``, with indented ``detail`` lines under it."""

    kind: str
    label: str
    value: str | None = None
    severity: Severity = "info"
    sep: str = ": "
    detail: tuple[str, ...] = ()
    recorded: bool = False
    level: int = 1  # indentation depth in the plain text (0: the simulation's heading)

    @property
    def text(self) -> str:
        return self.label if self.value is None else f"{self.label}{self.sep}{self.value}"


def short_hash(h: str | None) -> str:
    return "none" if h is None else h[:12]


def format_arguments(arguments: Any) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return repr(arguments)


def clip(text: str | None, limit: int = 400) -> str:
    text = "" if text is None else text
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def replay_facts(record: dict[str, Any], timeline: Timeline, has_gold: bool) -> list[Fact]:
    """The facts of one simulation, in display order (``record``: the analysis's ``to_json()``)."""
    v = record["verdicts"]
    trial = f" trial {record['trial']}" if record["trial"] is not None else ""
    facts = [
        Fact("simulation", record["sim"], f"task {record['task']}{trial}  [{record['domain']}, "
             f"{record['termination']}]", sep="  ", level=0),
        Fact("calls", "calls", f"{v['replayed']} replayed, {v['mismatch']} mismatch, {v['skipped_read']} read "
             f"(not re-run), {v['skipped_unknown']} hallucinated; {v['recorded_error']} recorded errors",
             severity="bad" if v["mismatch"] else "info"),
    ]
    if timeline.injected_faults:
        faults = ", ".join(f"{c.name} {c.fault.get('kind')} (attempt {c.attempt}, step {c.result_step})"
                           for c in timeline.injected_faults)
        facts.append(Fact("injected_faults", "injected faults (a timeout or temporary error is reproduced, "
                          "never re-run)", faults))
    refusals = timeline.refusals
    if refusals:
        first = refusals[0]
        more = f" and {len(refusals) - 1} call(s) after it" if len(refusals) > 1 else ""
        facts.append(Fact("refused", "refused", f"{first.name} at step {first.result_step} "
                          f"({first.refusal.get('reason')}){more}", severity="warn"))
    for found in timeline.discoveries:
        facts.append(Fact("discovered", "discovered", f"{found.tool} at step {found.step}", sep=" "))
    if record["gold_db"] is None and record["pred_db"] is not None and not has_gold:
        facts.append(Fact("db", "DB", f"predicted {short_hash(record['pred_db'])}; no gold state (task not found)",
                          severity="warn"))
    else:
        verdict = "match" if record["db_match"] else "DIFFER"
        facts.append(Fact("db", "DB", f"{verdict}  agent {short_hash(record['pred_db'])} vs gold "
                          f"{short_hash(record['gold_db'])}; user {short_hash(record['pred_user_db'])} vs gold "
                          f"{short_hash(record['gold_user_db'])}", severity="ok" if record["db_match"] else "bad"))
    recorded = record["recorded_db_match"]
    if recorded is not None and record["db_match"] is not None and recorded != record["db_match"]:
        facts.append(Fact("recorded_db_match", "note", f"the recording says db_match={recorded}", severity="warn",
                          recorded=True))
    mismatch = record["first_mismatch"]
    if mismatch:
        detail = [f"recorded: {clip(mismatch['recorded'])}", f"replayed: {clip(mismatch['replayed'])}"]
        if mismatch.get("detail"):
            from tau_tui.replay.mismatch import detail_lines

            detail.append("field by field (recorded → replayed):")
            detail += [f"  {line}" for line in detail_lines(mismatch["detail"])]
        facts.append(Fact("first_mismatch", f"first mismatch at step {mismatch['step']}",
                          f"{mismatch['tool']}({format_arguments(mismatch['arguments'])})", severity="bad",
                          detail=tuple(detail)))
    for finding in record["findings"]:
        where = f"step {finding['step']}: " if finding["step"] is not None else ""
        facts.append(Fact("finding", f"finding [{finding['kind']}]", f"{where}{finding['message']}", severity="warn",
                          sep=" "))
    if not mismatch and not record["findings"]:
        facts.append(Fact("strict_ok", "strict replay ok", severity="ok"))
    return facts


def plain_text(facts: list[Fact]) -> str:
    """The block ``tau-tui replay`` prints: one line per fact, its detail lines indented below it."""
    lines = []
    for fact in facts:
        lines.append("  " * fact.level + fact.text)
        lines += ["  " * (fact.level + 1) + line for line in fact.detail]
    return "\n".join(lines)
