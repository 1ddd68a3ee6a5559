"""The doctor's findings as plain text lines, grouped by rule (the CLI prints them through ``textsafe``)."""

from __future__ import annotations

from collections.abc import Iterable

from tau_tui.doctor.recordings import Examination
from tau_tui.doctor.sim_rules import SIM_RULES, SimFinding
from tau_tui.doctor.task_rules import TASK_RULES, TaskFinding


def task_lines(findings: Iterable[TaskFinding]) -> list[str]:
    """Findings grouped by rule in registry order, one line each under a header with the rule's count."""
    by_rule: dict[str, list[TaskFinding]] = {}
    for finding in findings:
        by_rule.setdefault(finding.rule, []).append(finding)
    out: list[str] = []
    for name in [*TASK_RULES, *(r for r in by_rule if r not in TASK_RULES)]:
        group = by_rule.get(name)
        if not group:
            continue
        rule = TASK_RULES.get(name)
        out.append(f"{name} ({group[0].severity}, {len(group)}): {rule.description if rule else ''}".rstrip(": "))
        out += [f"  task {f.task}: {f.detail}" for f in group]
        out.append("")
    return out


def sim_lines(exam: Examination) -> list[str]:
    """Recording findings grouped by rule in registry order, then by file."""
    by_rule: dict[str, list[SimFinding]] = {}
    for finding in exam.findings:
        by_rule.setdefault(finding.rule, []).append(finding)
    out: list[str] = [*exam.notes]
    for name in [*SIM_RULES, *(r for r in by_rule if r not in SIM_RULES)]:
        group = by_rule.get(name)
        if not group:
            continue
        rule = SIM_RULES.get(name)
        out.append(f"{name} ({len(group)}): {rule.description if rule else ''}".rstrip(": "))
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
    """The failure clusters, suspect tasks (several models failing the same way) first."""
    if not exam.clusters:
        return []
    out = [f"failure clusters ({len(exam.clusters)}; a suspect task is failed the same way by several models):"]
    for cluster in exam.clusters:
        mark = "suspect task " if cluster.suspect else "task "
        out.append(
            f"  {mark}{cluster.domain}/{cluster.task}: {len(cluster.members)} simulation(s), "
            f"{len(cluster.models)} model(s) ({', '.join(cluster.models)}): {cluster.signature.text}"
        )
    out.append("")
    return out
