"""The doctor's findings as plain text lines, grouped by rule (the CLI prints them through ``textsafe``)."""

from __future__ import annotations

from collections.abc import Iterable

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
