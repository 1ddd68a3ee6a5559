"""The display facts of one replayed simulation, headless: what ``tau-tui replay`` prints, in order.

``replay_facts(record, timeline, has_gold)`` turns an analysis (its ``to_json()``
record and its timeline) into an ordered list of ``Fact(kind, label, value,
severity)``: the verdict counts, injected faults, refusals, discoveries, the DB
check, where the recording disagrees with what we derive, the first mismatch
(with its class: ``divergence``, ``library_text``, ``upstream_fix``), the first
divergence when a mismatch before it is explained, and the findings.
``plain_text(facts)`` is the plain-text block the CLI prints;
a view that styles facts keys on ``kind`` and ``severity`` only, so a rule
such as "the recording says db_match=X but we say Y" is written once, here.

Severities: ``info`` (neutral), ``ok``, ``warn``, ``bad``. A fact that reports
the recording itself (not what we derive) has ``recorded=True``.

The inspector shows the same list: ``short`` is its wording of a line (it
falls back to ``text``), ``marked`` facts carry a ✓/✗/— ``mark`` after the
short wording, ``aside`` is a dim tail, and ``cli``/``panel`` say which view
shows a fact (the CLI's heading is the inspector's header; the inspector's
strict-replay line is the CLI's "strict replay ok"). ``summary_facts`` is the
one-line count summary of the inspector's header, from the same record.

The record may lack the mismatch's field-by-field ``detail`` (``to_json(detail=False)``):
the facts are then computed without deepdiff.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tau_tui import formats
from tau_tui.model.tasks import DB_NOT_CHECKED, DB_PASSES_UNCHECKED, DB_RULE_TEXT
from tau_tui.replay.timeline import CallRecord, MismatchClass, Timeline
from tau_tui.textsafe import clip as textsafe_clip

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
    short: str | None = None  # the inspector's wording (None: ``text``)
    marked: bool = False  # the inspector draws ``mark`` (✓ True, ✗ False, — None) after ``short``
    mark: bool | None = None
    aside: str | None = None  # the inspector's dim tail after the line
    cli: bool = True  # shown by ``tau-tui replay``
    panel: bool = True  # shown by the inspector's derived panel

    @property
    def short_text(self) -> str:
        return self.text if self.short is None else self.short

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
    return textsafe_clip("" if text is None else text, limit, say_length=True)


# How each mismatch class reads in a count ("3 library text"); a divergence is what a bare "mismatch" has meant.
CLASS_WORDS = {"divergence": "divergence", "library_text": "library text", "upstream_fix": "upstream fix"}


def mismatch_severity(record: dict[str, Any]) -> Severity:
    """bad: some mismatch is a divergence; warn: mismatches that only library text or upstream fixes explain."""
    if not record["verdicts"]["mismatch"]:
        return "info"
    return "bad" if record["mismatch_classes"]["divergence"] else "warn"


def explained_text(record: dict[str, Any]) -> str:
    """`` (1 divergence, 2 library text)`` when some mismatch is not a divergence, else ``""``."""
    classes = record["mismatch_classes"]
    if not any(n for key, n in classes.items() if key != "divergence"):
        return ""
    return " (" + ", ".join(f"{n} {CLASS_WORDS.get(key, key)}" for key, n in classes.items() if n) + ")"


def class_line(mismatch: dict[str, Any]) -> str:
    """``class: library_text — differs only in …``: a mismatch's class, its upstream issue and its note."""
    line = f"class: {mismatch['mismatch_class']}"
    if mismatch.get("upstream_issue"):
        line += f" ({mismatch['upstream_issue']})"
    return line + (f" — {mismatch['mismatch_note']}" if mismatch.get("mismatch_note") else "")


def replay_facts(record: dict[str, Any], timeline: Timeline, has_gold: bool) -> list[Fact]:
    """The facts of one simulation, in display order (``record``: the analysis's ``to_json()``)."""
    v = record["verdicts"]
    trial = f" trial {record['trial']}" if record["trial"] is not None else ""
    explained = explained_text(record)
    facts = [
        Fact(
            "simulation",
            record["sim"],
            f"task {record['task'] or '?'}{trial}  [{record['domain']}, {record['termination']}]",
            sep="  ",
            level=0,
            panel=False,
        ),
        Fact(
            "calls",
            "calls",
            f"{v['replayed']} replayed, {v['mismatch']} mismatch{explained}, {v['skipped_read']} "
            f"read (not re-run), {v['skipped_unknown']} hallucinated; {v['recorded_error']} recorded errors",
            severity=mismatch_severity(record),
            short=f"writes replayed {v['replayed']}, mismatches {v['mismatch']}{explained}, reads not re-run "
            f"{v['skipped_read']}, hallucinated {v['skipped_unknown']}, recorded errors {v['recorded_error']}",
        ),
        *graded_from_facts(record),
        Fact(
            "strict",
            "strict replay (as tau2 would)",
            severity="ok" if record["strict_ok"] else "bad",
            cli=False,
            marked=True,
            mark=record["strict_ok"],
        ),
    ]
    facts += inferred_facts(record)
    if timeline.injected_faults:
        faults = ", ".join(
            f"{c.name} {(c.fault or {}).get('kind')} (attempt {c.attempt}, step {c.result_step})"
            for c in timeline.injected_faults
        )
        facts.append(
            Fact(
                "injected_faults", "injected faults (a timeout or temporary error is reproduced, never re-run)", faults
            )
        )
    refusals = timeline.refusals
    if refusals:
        first = refusals[0]
        more = f" and {len(refusals) - 1} call(s) after it" if len(refusals) > 1 else ""
        facts.append(
            Fact(
                "refused",
                "refused",
                f"{first.name} at step {first.result_step} ({(first.refusal or {}).get('reason')}){more}",
                severity="warn",
            )
        )
    for found in timeline.discoveries:
        how = {"unlock": " (unlocked by the agent)", "give": " (given to the user)"}.get(found.how, "")
        facts.append(Fact("discovered", "discovered", f"{found.tool} at step {found.step}{how}", sep=" "))
    facts.append(db_fact(record, has_gold))
    disagreement = recorded_db_match_fact(record)
    if disagreement is not None:
        facts.append(disagreement)
    stored = recorded_final_db_fact(record)
    if stored is not None:
        facts.append(stored)
    mismatch = record["first_mismatch"]
    if mismatch:
        detail = [
            class_line(mismatch),
            f"recorded: {clip(mismatch['recorded'])}",
            f"replayed: {clip(mismatch['replayed'])}",
        ]
        if mismatch.get("detail"):
            from tau_tui.replay.mismatch import detail_lines

            detail.append("field by field (recorded → replayed):")
            detail += [f"  {line}" for line in detail_lines(mismatch["detail"])]
        divergent = mismatch["mismatch_class"] == "divergence"
        aside = "" if divergent else f" ({CLASS_WORDS.get(mismatch['mismatch_class'], mismatch['mismatch_class'])})"
        facts.append(
            Fact(
                "first_mismatch",
                f"first mismatch at step {mismatch['step']}",
                f"{mismatch['tool']}({format_arguments(mismatch['arguments'])})",
                severity="bad" if divergent else "warn",
                detail=tuple(detail),
                short=f"first mismatch at step {mismatch['step']}: {mismatch['tool']}{aside}",
            )
        )
        later = first_divergence(timeline) if not divergent else None
        if later is not None:
            facts.append(
                Fact(
                    "first_divergence",
                    f"first divergence at step {later.result_step}",
                    f"{later.name}({format_arguments(later.call.arguments)})",
                    severity="bad",
                    detail=(f"recorded: {clip(later.recorded)}", f"replayed: {clip(later.replayed)}"),
                    short=f"first divergence at step {later.result_step}: {later.name}",
                )
            )
    for finding in record["findings"]:
        where = f"step {finding['step']}: " if finding["step"] is not None else ""
        facts.append(
            Fact(
                "finding",
                f"finding [{finding['kind']}]",
                f"{where}{finding['message']}",
                severity="warn",
                sep=" ",
                short=f"⚠ {finding['kind']}  {where}{finding['message']}",
            )
        )
    if not mismatch and not record["findings"]:
        facts.append(Fact("strict_ok", "strict replay ok", severity="ok", panel=False))
    return facts


def graded_from_facts(record: dict[str, Any]) -> list[Fact]:
    """Which recorded view was replayed and graded, for a full-duplex run (its ticks, as tau2 grades them);
    nothing for a run graded from its messages, the usual case."""
    if record.get("graded_from") != "ticks":
        return []
    consolidated = record.get("consolidated_messages")
    aside = (
        f"the recorded messages list ({formats.count(consolidated, 'message')}) is the second view"
        if consolidated
        else "no consolidated messages list"
    )
    return [
        Fact(
            "graded_from",
            "graded from",
            f"ticks (full-duplex, as tau2 grades it); {aside}",
            short="graded from ticks (full-duplex, as tau2 grades it)",
            aside=f" ({aside})",
        )
    ]


def inferred_facts(record: dict[str, Any]) -> list[Fact]:
    """What was worked out for a recording that leaves it out: where its domain came from (the inspector shows it;
    the CLI says it once per file) and the fields recovered for this simulation, each with how."""
    facts = []
    source = record.get("domain_source")
    if source:
        facts.append(
            Fact("domain_source", "domain", f"{record['domain']}, from {source} (the file names none)", cli=False)
        )
    recovered = record.get("recovered")
    if recovered:
        lost = any(" not " in phrase for phrase in recovered)
        facts.append(Fact("recovered", "recovered", "; ".join(recovered), severity="warn" if lost else "info"))
    return facts


def first_divergence(timeline: Timeline) -> CallRecord | None:
    """The first mismatching call that neither library text nor an upstream fix explains."""
    return next((c for c in timeline.mismatches if c.mismatch_class in (None, MismatchClass.DIVERGENCE)), None)


def has_problems(record: dict[str, Any]) -> bool:
    """A mismatch, a finding, or a final DB the recording stores that differs from ours, in a replay record
    (``SimAnalysis.to_json()``, or the brief the pool's workers send): ``tau-tui replay`` exits 1 on it, and
    ``--only-problems`` shows just those simulations."""
    stored = record.get("recorded_final_db")
    return bool(
        record.get("first_mismatch")
        or record.get("findings")
        or (isinstance(stored, dict) and stored.get("match") is False)
    )


def db_fact(record: dict[str, Any], has_gold: bool) -> Fact:
    """The DB check: the predicted final state's hashes against the gold ones."""
    agent = f"agent {short_hash(record['pred_db'])} vs {short_hash(record['gold_db'])}"
    if record["pred_user_db"] is not None or record["gold_user_db"] is not None:
        agent += f"; user {short_hash(record['pred_user_db'])} vs {short_hash(record['gold_user_db'])}"
    common = dict(short="DB match vs gold", marked=True, mark=record["db_match"])
    if record["gold_db"] is None and record["pred_db"] is not None and not has_gold:
        return Fact(
            "db",
            "DB",
            f"predicted {short_hash(record['pred_db'])}; no gold state (task not found)",
            severity="warn",
            aside="(no gold state: task unknown)",
            **common,
        )
    rule = record.get("db_rule")
    if rule in (DB_PASSES_UNCHECKED, DB_NOT_CHECKED):  # tau2's rule for absent criteria, not the hashes, decides
        passes = rule == DB_PASSES_UNCHECKED
        return Fact(
            "db",
            "DB",
            f"{'match' if passes else 'not checked'} by tau2's rule: {DB_RULE_TEXT[rule]} (agent "
            f"{short_hash(record['pred_db'])} vs gold {short_hash(record['gold_db'])})",
            severity="ok" if passes else "info",
            aside=DB_RULE_TEXT[rule],
            **common,
        )
    verdict = "match" if record["db_match"] else "DIFFER"
    return Fact(
        "db",
        "DB",
        f"{verdict}  agent {short_hash(record['pred_db'])} vs gold "
        f"{short_hash(record['gold_db'])}; user {short_hash(record['pred_user_db'])} vs gold "
        f"{short_hash(record['gold_user_db'])}",
        severity="ok" if record["db_match"] else "bad",
        aside=agent if has_gold else "(no gold state: task unknown)",
        **common,
    )


def recorded_db_match_fact(record: dict[str, Any]) -> Fact | None:
    """Where the recording's DB check disagrees with ours (None: it agrees, or one side is unknown)."""
    recorded, ours = record["recorded_db_match"], record["db_match"]
    if recorded is None or ours is None or recorded == ours:
        return None
    return Fact(
        "recorded_db_match",
        "note",
        f"the recording says db_match={recorded}; our replay says {ours}",
        severity="warn",
        recorded=True,
    )


def recorded_final_db_fact(record: dict[str, Any]) -> Fact | None:
    """The final DB the recording stores (an Inspect log's) against the one our replay ends with."""
    check = record.get("recorded_final_db")
    if not check:
        return None
    if check["match"]:
        return Fact(
            "recorded_final_db",
            f"final DB stored in the {check['source']}",
            "same as ours",
            severity="ok",
            marked=True,
            mark=True,
            short=f"{check['source']} DB = ours",
        )
    more = check["n_differences"] - len([d for d in check["differences"] if ": our replay" not in d])
    detail = tuple(check["differences"]) + ((f"… and {more} more",) if more > 0 else ())
    return Fact(
        "recorded_final_db",
        f"final DB stored in the {check['source']}",
        f"DIFFERS from ours ({check['n_differences']} difference(s))",
        severity="bad",
        detail=detail,
        marked=True,
        mark=False,
        short=f"{check['source']} DB ≠ ours",
    )


def summary_facts(record: dict[str, Any], timeline: Timeline) -> list[Fact]:
    """The inspector header's one-line counts: each a fact whose severity is ``info`` when there is nothing to see."""
    v = record["verdicts"]
    findings = len(record["findings"])
    facts = [
        Fact("mismatch", f"{v['mismatch']} mismatch{explained_text(record)}", severity=mismatch_severity(record)),
        Fact(
            "hallucinated", f"{v['skipped_unknown']} hallucinated", severity="warn" if v["skipped_unknown"] else "info"
        ),
        Fact("findings", f"{formats.count(findings, 'finding')}", severity="warn" if findings else "info"),
    ]
    for kind, count, label in (
        ("injected_faults", len(timeline.injected_faults), "injected fault"),
        ("refused", len(timeline.refusals), "refused"),
        ("discovered", len(timeline.discoveries), "discovered"),
    ):
        if count:
            plural = "s" if count != 1 and kind == "injected_faults" else ""
            facts.append(Fact(kind, f"{count} {label}{plural}", severity="warn"))
    match = record["db_match"]
    facts.append(
        Fact(
            "db",
            "db vs gold",
            severity="bad" if match is False else ("ok" if match else "info"),
            marked=True,
            mark=match,
        )
    )
    return facts


def plain_text(facts: list[Fact]) -> str:
    """The block ``tau-tui replay`` prints: one line per fact, its detail lines indented below it."""
    lines = []
    for fact in facts:
        if not fact.cli:
            continue
        lines.append("  " * fact.level + fact.text)
        lines += ["  " * (fact.level + 1) + line for line in fact.detail]
    return "\n".join(lines)
