"""The doctor's findings as text: plain lines grouped by rule (the CLI prints them through ``textsafe``),
Markdown to paste into an upstream issue (``--markdown``), and the labelled parts of one finding, rule or
cluster (the TUI's detail pane). A rule's effect and advice come from its one registry entry (``rules``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, TypeVar

from tau_tui.doctor.clusters import MINIMUM, SUSPECT_ADVICE, Cluster
from tau_tui.doctor.recordings import Examination
from tau_tui.doctor.rules import RULES, Advice, report_order
from tau_tui.doctor.sim_rules import SimFinding
from tau_tui.doctor.task_rules import TaskFinding
from tau_tui.model.tally import grouped

Finding = TypeVar("Finding", TaskFinding, SimFinding)
Part = tuple[str, str]  # (label, text): one paragraph of the detail pane


def known_rules() -> list[str]:
    """Every registered rule's name in report order (importing this module registers them all)."""
    return report_order()


def by_rule(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings grouped by rule in report order (a rule no longer registered last), each group in order."""
    return list(grouped(findings, attrgetter("rule"), report_order()).items())


def _advice(name: str) -> Advice | None:
    rule = RULES.get(name)
    return rule.advice if rule is not None else None


def _description(name: str) -> str:
    rule = RULES.get(name)
    return rule.description if rule is not None else ""


def _advice_lines(name: str) -> list[str]:
    advice = _advice(name)
    return [] if advice is None else [f"  effect: {advice.effect}", f"  what to do: {advice.todo_line}"]


def task_lines(findings: Iterable[TaskFinding]) -> list[str]:
    """Findings grouped by rule in registry order: a header with the rule's count, its effect and advice, then
    one line per finding."""
    out: list[str] = []
    for name, group in by_rule(findings):
        out.append(f"{name} ({group[0].severity}, {len(group)}): {_description(name)}".rstrip(": "))
        out += _advice_lines(name)
        out += [f"  task {f.task}: {f.detail}" for f in group]
        out.append("")
    return out


def sim_lines(exam: Examination) -> list[str]:
    """Recording findings grouped by rule in registry order (with its effect and advice), then by file."""
    out: list[str] = [*exam.notes]
    for name, group in by_rule(exam.findings):
        out.append(f"{name} ({len(group)}): {_description(name)}".rstrip(": "))
        out += _advice_lines(name)
        file = None
        for f in group:
            if f.file != file:
                file = f.file
                out.append(f"  {file}")
            where = f" step {f.step}" if f.step is not None else ""
            out.append(f"    sim {f.sim} (task {f.task}){where}: {f.detail}")
        out.append("")
    return out


def cluster_lines(exam: Examination) -> list[str]:
    """The failure clusters, suspect tasks (several models failing the same way) first; or why there is none."""
    reason = exam.why_no_clusters()
    if reason is not None:
        return [f"failure clusters: none, {reason}", ""]
    out = [f"failure clusters ({len(exam.clusters)}; a suspect task is failed the same way by several models):"]
    if any(c.suspect for c in exam.clusters):
        out += [f"  suspect task: {SUSPECT_ADVICE.effect}", f"  what to do: {SUSPECT_ADVICE.todo_line}"]
    for cluster in exam.clusters:
        mark = "suspect task " if cluster.suspect else "task "
        out.append(
            f"  {mark}{cluster.domain}/{cluster.task}: {len(cluster.members)} simulation(s), "
            f"{len(cluster.models)} model(s) ({', '.join(cluster.models)}): {cluster.signature.text}"
        )
    out.append("")
    return out


# --- Markdown (``--markdown``): ready to paste into an upstream issue -------------------------------------

_MARKUP = re.compile(r"([\\`*\[\]|~]|<(?=[A-Za-z/!?]))")  # what would start markup or raw HTML


def md_text(text: str) -> str:
    """Recorded or derived text as Markdown that shows as written (markup characters escaped, one line)."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def md_code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it holds."""
    text = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _evidence_json(evidence: Any) -> str:
    return json.dumps(evidence, ensure_ascii=False, default=str)


def _md_rule(name: str, count: int, severity: str | None) -> list[str]:
    """A rule's heading, its upstream paragraph, its effect and what to do."""
    label = f"{severity}, {count} finding(s)" if severity else f"{count} finding(s)"
    description = _description(name)
    out = [f"### {md_code(name)} ({label})" + (f": {md_text(description)}" if description else ""), ""]
    advice = _advice(name)
    if advice is not None:
        out += [
            advice.upstream,  # our own Markdown
            "",
            f"- **Effect on scores:** {md_text(advice.effect)}",
            f"- **What to do:** {md_text(advice.todo_line)}",
            "",
        ]
    return out


def _md_finding(head: str, detail: str, evidence: dict[str, Any], indent: str = "") -> list[str]:
    out = [f"{indent}- {head}: {md_text(detail)}"]
    if evidence:
        out.append(f"{indent}  - evidence: {md_code(_evidence_json(evidence))}")
    return out


def markdown_tasks(domain: str, summary: str, findings: Sequence[TaskFinding]) -> list[str]:
    """The task findings of one domain as Markdown: a heading per rule with its effect and advice, then the
    findings with their task ids and evidence."""
    out = [f"## tau-tui doctor: the task definitions of domain {md_code(domain)}", "", md_text(summary), ""]
    if not findings:
        out += ["No findings.", ""]
    for name, group in by_rule(findings):
        out += _md_rule(name, len(group), group[0].severity)
        for f in group:
            out += _md_finding(f"task {md_code(f.task)}", f.detail, f.evidence)
        out.append("")
    return out


def markdown_recordings(exam: Examination, noise_lines: Sequence[str] = ()) -> list[str]:
    """The recording findings as Markdown (a heading per rule, findings by file with simulation, task id, step
    and evidence), then the failure clusters (or why there is none) and the noise split."""
    out = ["## tau-tui doctor: recordings", "", md_text(exam.summary()), ""]
    out += [f"_{md_text(note)}_" for note in exam.notes] + ([""] if exam.notes else [])
    if not exam.findings:
        out += ["No findings.", ""]
    for name, group in by_rule(exam.findings):
        out += _md_rule(name, len(group), None)
        file = None
        for f in group:
            if f.file != file:
                file = f.file
                out.append(f"- in {md_code(file)}:")
            step = f", step {f.step}" if f.step is not None else ""
            out += _md_finding(f"sim {md_code(f.sim)} (task {md_code(f.task)}{step})", f.detail, f.evidence, "  ")
        out.append("")
    out += ["### Failure clusters", ""]
    reason = exam.why_no_clusters()
    if reason is not None:
        out += [f"None: {md_text(reason)}.", ""]
    else:
        if any(c.suspect for c in exam.clusters):
            out += [
                SUSPECT_ADVICE.upstream,
                "",
                f"- **Effect on scores (suspect tasks):** {md_text(SUSPECT_ADVICE.effect)}",
                f"- **What to do:** {md_text(SUSPECT_ADVICE.todo_line)}",
                "",
            ]
        for cluster in exam.clusters:
            mark = "**suspect task** " if cluster.suspect else "task "
            out.append(
                f"- {mark}{md_code(f'{cluster.domain}/{cluster.task}')}: {len(cluster.members)} simulation(s), "
                f"models {', '.join(md_code(m) for m in cluster.models)}: {md_text(cluster.signature.text)}"
            )
        out.append("")
    noise = [line.strip() for line in noise_lines if line.strip()]
    if noise:
        out += ["### Noise split", "", md_text(noise[0]), ""] + [f"- {md_text(line)}" for line in noise[1:]] + [""]
    return out


# --- the detail of one row (the TUI's detail pane) -------------------------------------------------------


def _advice_parts(advice: Advice | None) -> list[Part]:
    if advice is None:
        return []
    return [("effect", advice.effect), ("what to do", advice.todo_line)]


def _title(name: str) -> str:
    rule = RULES.get(name)
    return f"{name} ({rule.severity})" if rule is not None and rule.severity else name


def rule_parts(name: str) -> list[Part]:
    """A rule's header row: what it means, its effect and what to do."""
    rule = RULES.get(name)
    if rule is None:
        return [("rule", name)]
    return [("rule", f"{_title(name)}: {rule.description}"), *_advice_parts(rule.advice)]


def evidence_text(evidence: dict[str, Any]) -> str:
    """A finding's evidence, one ``key: value`` line per field (values as compact JSON)."""
    return "\n".join(f"{key}: {_evidence_json(value)}" for key, value in evidence.items())


def finding_parts(finding: TaskFinding | SimFinding) -> list[Part]:
    """One finding whole: its rule, where it is, the full message, effect, what to do and the evidence."""
    if isinstance(finding, TaskFinding):
        where = f"domain {finding.domain}, task {finding.task}"
    else:
        step = f", step {finding.step}" if finding.step is not None else ""
        where = f"sim {finding.sim}, task {finding.task}{step}, in {finding.file}"
    parts = [("rule", _title(finding.rule)), ("where", where), ("finding", finding.detail)]
    parts += _advice_parts(_advice(finding.rule))
    if finding.evidence:
        parts.append(("evidence", evidence_text(finding.evidence)))
    return parts


def cluster_parts(cluster: Cluster) -> list[Part]:
    """One failure cluster: its task, how it failed, the models and simulations, and for a suspect task, advice."""
    kind = "suspect task (several models fail it the same way)" if cluster.suspect else "one model's failures"
    parts: list[Part] = [
        ("cluster", f"{cluster.domain}/{cluster.task}: {kind}"),
        ("how it failed", cluster.signature.text),
        ("models", ", ".join(cluster.models)),
        ("simulations", "\n".join(f"{m.sim} in {m.file}" for m in cluster.members)),
    ]
    if cluster.suspect:
        parts += _advice_parts(SUSPECT_ADVICE)
    return parts


def no_cluster_parts(exam: Examination) -> list[Part]:
    """Why the clusters view is empty, and what a cluster would be."""
    return [
        ("no failure clusters", exam.why_no_clusters() or "none is left"),
        (
            "what a cluster is",
            f"{MINIMUM} or more failed simulations of one task that failed the same way (the same DB paths differ "
            "from the gold state, the same reference action is missed, the same termination); one that several "
            "models share is a suspect task",
        ),
    ]
