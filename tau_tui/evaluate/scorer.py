"""A tool-call scorer with the semantics of agno's ``ToolCallScorer``, shown beside the tau2 reward.

Only clean executions count: an agent call that got a result which is not an
error. Expected tool names are set-like checks (one clean call of the name
satisfies it); argument specs match by subset (every listed key present with
an equal value, no type coercion: ``"5"`` never equals ``5``). ``value`` is
satisfied checks / checks, ``passed`` needs every check and, in strict mode,
no clean call to a tool outside the expected names. It never touches the reward.

Specs live in a sidecar file beside the recording, ``<recording stem>.scorer.json``::

    {
      "default": {"expected_tools": ["get_user_details"]},
      "tasks": {
        "7": {"expected_tools": ["cancel_pending_order"],
              "arguments": {"cancel_pending_order": {"order_id": "#W123"}},
              "strict": true}
      }
    }

``arguments`` maps a tool name to one spec or a list of specs (each its own
check). A task without an entry uses ``default``; without either there is no score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tau_tui.model.io import RunFileError, json_text, read_bytes
from tau_tui.replay import CallRecord

SIDECAR_SUFFIX = ".scorer.json"


class ScorerConfigError(Exception):
    """An unreadable sidecar file or spec; ``str()`` is one line naming the file."""


@dataclass(frozen=True)
class ScorerSpec:
    expected_tools: tuple[str, ...] = ()
    arguments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    strict: bool = False

    @classmethod
    def from_json(cls, data: Any, where: str = "spec") -> ScorerSpec:
        if not isinstance(data, dict):
            raise ScorerConfigError(f"{where}: expected an object")
        unknown = set(data) - {"expected_tools", "arguments", "strict"}
        if unknown:
            raise ScorerConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        names = data.get("expected_tools", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ScorerConfigError(f"{where}: expected_tools must be a list of tool names")
        raw_args = data.get("arguments", {})
        if not isinstance(raw_args, dict):
            raise ScorerConfigError(f"{where}: arguments must map tool names to argument specs")
        arguments: dict[str, list[dict[str, Any]]] = {}
        for tool, specs in raw_args.items():
            specs = specs if isinstance(specs, list) else [specs]
            if not all(isinstance(s, dict) for s in specs):
                raise ScorerConfigError(f"{where}: arguments of {tool!r} must be objects")
            arguments[tool] = specs
        strict = data.get("strict", False)
        if not isinstance(strict, bool):
            raise ScorerConfigError(f"{where}: strict must be true or false")
        if not names and not arguments:
            raise ScorerConfigError(f"{where}: needs expected_tools and/or arguments")
        return cls(tuple(dict.fromkeys(names)), arguments, strict)

    def to_json(self) -> dict[str, Any]:
        return {"expected_tools": list(self.expected_tools), "arguments": self.arguments, "strict": self.strict}


@dataclass
class ScorerCheck:
    label: str
    satisfied: bool


@dataclass
class ScorerResult:
    value: float
    passed: bool
    checks: list[ScorerCheck]
    additional: list[str]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "passed": self.passed,
            "additional": self.additional,
            "notes": self.notes,
            "checks": [{"check": c.label, "satisfied": c.satisfied} for c in self.checks],
        }


def clean_executions(calls: list[CallRecord]) -> list[CallRecord]:
    """The agent's calls that were executed and did not end in an error result."""
    return [c for c in calls if c.requestor == "assistant" and c.result_step is not None and not c.recorded_error]


def subset_match(spec: dict[str, Any], arguments: Any) -> bool:
    """Every key of ``spec`` present in ``arguments`` with an equal value of the same JSON type."""
    return isinstance(arguments, dict) and all(
        key in arguments and _same_type(arguments[key], value) and arguments[key] == value
        for key, value in spec.items()
    )


def _same_type(a: Any, b: Any) -> bool:
    """No coercion between JSON types: strings, booleans and numbers never compare across."""

    def kind(v: Any) -> str:
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, (int, float)):
            return "number"
        return type(v).__name__

    return kind(a) == kind(b)


def score_tool_calls(calls: list[CallRecord], spec: ScorerSpec) -> ScorerResult:
    """Score the recorded calls against one spec (agno ToolCallScorer semantics)."""
    clean = clean_executions(calls)
    clean_names = {c.name for c in clean if c.name}
    checks: list[ScorerCheck] = []
    notes: list[str] = []
    for name in spec.expected_tools:
        ok = name in clean_names
        checks.append(ScorerCheck(f"tool {name}", ok))
        if not ok:
            notes.append(f"expected tool {name!r} has no clean execution")
    for tool, specs in spec.arguments.items():
        candidates = [c.call.arguments for c in clean if c.name == tool]
        for arg_spec in specs:
            ok = any(subset_match(arg_spec, args) for args in candidates)
            checks.append(
                ScorerCheck(f"{tool} with {orjson.dumps(arg_spec, option=orjson.OPT_SORT_KEYS).decode()}", ok)
            )
            if not ok:
                notes.append(f"no clean {tool!r} execution matches {arg_spec!r}")
    additional = sorted(n for n in clean_names if n not in spec.expected_tools)
    satisfied = sum(c.satisfied for c in checks)
    passed = satisfied == len(checks)
    if spec.strict and additional:
        passed = False
        notes.append(f"strict: other tools called: {', '.join(additional)}")
    if not clean:
        notes.insert(0, "no clean tool executions")
    value = satisfied / len(checks) if checks else 1.0
    return ScorerResult(value, passed, checks, additional, notes)


@dataclass
class ScorerConfig:
    """Per-task scorer specs from a sidecar file, with an optional default."""

    path: Path | None
    default: ScorerSpec | None
    tasks: dict[str, ScorerSpec]

    def spec_for(self, task_id: str) -> ScorerSpec | None:
        return self.tasks.get(task_id, self.default)

    @classmethod
    def from_json(cls, data: Any, path: Path | None = None) -> ScorerConfig:
        where = str(path) if path else "scorer config"
        if not isinstance(data, dict):
            raise ScorerConfigError(f"{where}: expected an object with 'default' and/or 'tasks'")
        unknown = set(data) - {"default", "tasks"}
        if unknown:
            raise ScorerConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        default = data.get("default")
        tasks = data.get("tasks", {})
        if not isinstance(tasks, dict):
            raise ScorerConfigError(f"{where}: 'tasks' must map task ids to specs")
        return cls(
            path,
            ScorerSpec.from_json(default, f"{where}: default") if default is not None else None,
            {str(k): ScorerSpec.from_json(v, f"{where}: task {k}") for k, v in tasks.items()},
        )


def sidecar_path(recording: Path) -> Path:
    """``runs/x.json`` → ``runs/x.scorer.json`` (a directory run: ``<dir>/results.scorer.json``)."""
    return recording.with_name(recording.stem + SIDECAR_SUFFIX)


def is_sidecar(path: Path) -> bool:
    return path.name.endswith(SIDECAR_SUFFIX)


def load_scorer_config(path: Path) -> ScorerConfig:
    try:
        data = orjson.loads(json_text(read_bytes(path)))
    except RunFileError as exc:
        raise ScorerConfigError(str(exc)) from None
    except orjson.JSONDecodeError as exc:
        raise ScorerConfigError(f"{path}: not valid JSON ({exc})") from None
    return ScorerConfig.from_json(data, path)


def scorer_config_for(recording: Path) -> ScorerConfig | None:
    """The sidecar config beside a recording, or None when there is none."""
    path = sidecar_path(recording)
    return load_scorer_config(path) if path.is_file() else None
