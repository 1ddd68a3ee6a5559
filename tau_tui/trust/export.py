"""Export replayed runs as tables for notebooks: CSV, JSONL, Parquet, DuckDB; and SFT chat JSONL.

Tables, keyed so they join (``run_id`` is a short hash of the file's path; ``sim_id`` is the
simulation id; ``step`` the message index; ``call_index`` the call's index in the replay):

- ``runs``: one row per file (domain, models, counts);
- ``simulations``: one per replayed simulation (recorded and recomputed reward, DB match, flags);
- ``messages``: one per message of those simulations;
- ``tool_calls``: one per tool call, with the replay verdict, the DB paths its execution
  changed and the gold action it satisfied (``matched_action``);
- ``checks``: every reward check (DB, action, env assertion, communicate item, NL assertion) with
  pass and, for a missed action, the closest call's step;
- ``grid``: per file and task, trials, passes, pass rate with its Wilson interval, band;
- ``notes``: the notes on the file's simulations.

Nested values (arguments, lists) are JSON text in every format, so each column has one type.
The environment's credentials are blanked in the values before any format encodes them
(``scrubbed``). CSV goes through the one CSV writer (``model.csv_table``: text a spreadsheet would
run as a formula gets a leading apostrophe). Parquet needs pyarrow and DuckDB needs duckdb (the
``export`` extra); both are imported only when asked for.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from tau_tui.analysis import Analyzer
from tau_tui.domains import DomainError
from tau_tui.evaluate import Judge
from tau_tui.evaluate.reward import is_success, scored_reward
from tau_tui.evaluate.stats import wilson
from tau_tui.model.csv_table import csv_text
from tau_tui.model.io import (
    RecordedOnly,
    RunFile,
    RunFileError,
    check_regular,
    error_text,
    library_write_error,
    make_folder,
    write_atomic,
)
from tau_tui.model.messages import ParticipantMessage, ToolMessage
from tau_tui.model.secrets import environment_secrets, redact
from tau_tui.replay import Verdict

FORMATS = ("csv", "jsonl", "parquet", "duckdb", "sft")
S, I, F, B = "VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN"

SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "runs": [
        ("run_id", S),
        ("file", S),
        ("domain", S),
        ("agent_model", S),
        ("agent_implementation", S),
        ("user_model", S),
        ("user_implementation", S),
        ("solo", B),
        ("num_trials", I),
        ("timestamp", S),
        ("n_simulations", I),
        ("n_exported", I),
    ],
    "simulations": [
        ("run_id", S),
        ("sim_id", S),
        ("task_id", S),
        ("trial", I),
        ("seed", I),
        ("termination", S),
        ("recorded_reward", F),
        ("reward", F),
        ("status", S),
        ("agrees", B),
        ("db_match", B),
        ("strict_ok", B),
        ("n_messages", I),
        ("n_tool_calls", I),
        ("agent_cost", F),
        ("user_cost", F),
        ("duration", F),
        ("task_digest", S),
        ("flags", S),
        ("n_flags", I),
    ],
    "messages": [
        ("run_id", S),
        ("sim_id", S),
        ("step", I),
        ("role", S),
        ("content", S),
        ("turn_idx", I),
        ("n_tool_calls", I),
        ("tool_call_id", S),
        ("error", B),
        ("cost", F),
    ],
    "tool_calls": [
        ("run_id", S),
        ("sim_id", S),
        ("call_index", I),
        ("step", I),
        ("result_step", I),
        ("call_id", S),
        ("requestor", S),
        ("name", S),
        ("arguments", S),
        ("verdict", S),
        ("tool_type", S),
        ("recorded_result", S),
        ("replayed_result", S),
        ("recorded_error", B),
        ("paths_changed", S),
        ("n_paths_changed", I),
        ("matched_action", S),
    ],
    "checks": [
        ("run_id", S),
        ("sim_id", S),
        ("kind", S),
        ("item", S),
        ("passed", B),
        ("step", I),
        ("closest_step", I),
        ("detail", S),
    ],
    "grid": [
        ("run_id", S),
        ("task_id", S),
        ("task_digest", S),
        ("trials", I),
        ("n_scored", I),
        ("n_passed", I),
        ("pass_rate", F),
        ("pass_rate_low", F),
        ("pass_rate_high", F),
        ("band", S),
    ],
    "notes": [
        ("run_id", S),
        ("sim_id", S),
        ("note_id", S),
        ("task_id", S),
        ("trial", I),
        ("step", I),
        ("source", S),
        ("error_type", S),
        ("text", S),
        ("author", S),
        ("created_at", S),
    ],
}
TABLES = tuple(SCHEMAS)


class ExportError(Exception):
    """An export that cannot be written; ``str()`` is one line."""


def run_id(path: Path) -> str:
    """The key of a file in every table: 12 hex digits of the hash of its path as given."""
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _json(value)


@dataclass
class SftExample:
    """One simulation as an OpenAI chat fine-tuning record, with what the filter looks at."""

    record: dict[str, Any]
    reward: float | None
    flags: set[str]
    noted: bool


@dataclass
class Export:
    """The tables built from replayed runs, and the SFT candidates."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {t: [] for t in TABLES})
    sft: list[SftExample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {table: len(rows) for table, rows in self.tables.items()}


def _band(n_scored: int, n_passed: int) -> str:
    if n_scored == 0:
        return "unscored"
    return "saturated" if n_passed == n_scored else "zero" if n_passed == 0 else "learning_zone"


def _check_rows(rid: str, sim_id: str, report: Any) -> list[dict[str, Any]]:
    ev = report.evaluation
    missed = {m.action.action_id: m for m in report.explanation.missed}
    rows = []

    def add(
        kind: str,
        item: Any,
        passed: bool | None,
        step: int | None = None,
        closest: int | None = None,
        detail: Any = None,
    ) -> None:
        rows.append(
            {
                "run_id": rid,
                "sim_id": sim_id,
                "kind": kind,
                "item": _text(item),
                "passed": passed,
                "step": step,
                "closest_step": closest,
                "detail": _text(detail),
            }
        )

    if ev.db is not None:
        add(
            "db",
            "db_match",
            ev.db_match,
            detail={
                "pred_db": ev.db.pred_agent,
                "gold_db": ev.db.gold_agent,
                "pred_user_db": ev.db.pred_user,
                "gold_user_db": ev.db.gold_user,
            },
        )
    for check in ev.actions or []:
        m = missed.get(check.action.action_id)
        add(
            "action",
            f"{check.action.action_id} {check.action.name}",
            check.matched,
            check.step,
            m.closest_step if m is not None else None,
            {
                "arguments": check.action.arguments,
                "differing": [d.to_json() for d in m.differing] if m is not None else [],
            },
        )
    for check in ev.env_assertions or []:
        a = check.assertion
        add(
            "env_assertion",
            f"{a.env_type} {a.func_name}",
            check.met,
            None,
            None,
            {"arguments": a.arguments, "assert_value": a.assert_value, "error": check.error},
        )
    for check in ev.communicate or []:
        add("communicate", check.info, check.met, check.step, None, check.justification)
    for check in ev.nl or []:
        add("nl_assertion", check.assertion, check.met, None, None, check.justification)
    return rows


def _sft_record(analysis: Any, run: RunFile) -> dict[str, Any]:
    """The agent's side of the conversation in OpenAI chat form, with its tool schemas (user tool calls and
    their results are left out: the agent never saw them)."""
    from tau_tui.env.tool_schema import toolkit_schemas

    env = analysis.timeline.env
    tools = toolkit_schemas(env.agent) if env is not None else []
    if env is not None and run.solo:
        tools += toolkit_schemas(env.user)
    info = run.raw_info.get("environment_info")
    policy = info.get("policy") if isinstance(info, dict) else None
    if not isinstance(policy, str) and env is not None:
        policy = env.policy
    messages: list[dict[str, Any]] = [{"role": "system", "content": policy}] if isinstance(policy, str) else []
    awaiting: set[str] = set()  # the agent's calls not answered yet: a recorded result repeated is kept once
    for message in analysis.sim.trajectory:
        if isinstance(message, ToolMessage):
            if message.requestor == "assistant" and message.id in awaiting:
                messages.append({"role": "tool", "tool_call_id": message.id, "content": _text(message.content) or ""})
                awaiting.discard(message.id)
            continue
        if not isinstance(message, ParticipantMessage) or message.role not in ("assistant", "user"):
            continue
        out: dict[str, Any] = {"role": message.role, "content": _text(message.content)}
        if message.role == "assistant" and message.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _json(c.arguments) or "{}"}}
                for c in message.tool_calls
            ]
            awaiting.update(c.id for c in message.tool_calls)
        if out["content"] is None and "tool_calls" not in out:
            continue
        messages.append(out)
    return {"messages": messages, "tools": tools}


def build_export(
    runs: Iterable[tuple[Path, RunFile]],
    analyzer: Analyzer,
    *,
    judge: Judge | None = None,
    sft: bool = False,
    cancelled: Callable[[], bool] | None = None,
) -> Export:
    """Replay and assess every simulation of ``runs`` and fill the tables (and the SFT candidates)."""
    from tau_tui.model.notes import NoteBook, NotesError

    out = Export()
    t = out.tables
    for path, run in runs:
        rid = run_id(path)
        try:
            notes = NoteBook(path).notes
        except NotesError as exc:
            out.errors.append(f"{path}: notes not read: {exc}")
            notes = []
        noted = {n.sim_id for n in notes}
        exported = 0
        per_task: dict[str, list[float | None]] = {}
        digests: dict[str, str | None] = {}
        for index, entry in enumerate(run.entries):
            if cancelled is not None and cancelled():
                return out
            try:
                analysis = analyzer.analyze(run, index)
                report = analyzer.assess(analysis, judge=judge)
            except (DomainError, RecordedOnly) as exc:  # the whole file: one line
                out.errors.append(str(exc))
                break
            except RunFileError as exc:
                out.errors.append(str(exc))
                continue
            exported += 1
            sim, timeline, ev = analysis.sim, analysis.timeline, report.evaluation
            digest = analyzer.fingerprint(analysis.task) if analysis.task is not None else None
            digests[sim.task_id] = digest
            scored = ev.reward if ev.termination != "infrastructure_error" else None
            per_task.setdefault(sim.task_id, []).append(scored)
            flags = sorted({f.kind for f in report.flags})
            t["simulations"].append(
                {
                    "run_id": rid,
                    "sim_id": sim.id,
                    "task_id": sim.task_id,
                    "trial": sim.trial,
                    "seed": sim.seed,
                    "termination": ev.termination,
                    "recorded_reward": report.recorded_reward,
                    "reward": ev.reward,
                    "status": ev.status,
                    "agrees": report.agrees,
                    "db_match": analysis.db_match,
                    "strict_ok": timeline.strict_ok,
                    "n_messages": len(timeline.steps),
                    "n_tool_calls": len(timeline.calls),
                    "agent_cost": entry.agent_cost,
                    "user_cost": entry.user_cost,
                    "duration": entry.duration,
                    "task_digest": digest,
                    "flags": _json(flags),
                    "n_flags": len(report.flags),
                }
            )
            for step in timeline.steps:
                m = step.message
                calls = getattr(m, "tool_calls", None)
                t["messages"].append(
                    {
                        "run_id": rid,
                        "sim_id": sim.id,
                        "step": step.index,
                        "role": m.role,
                        "content": _text(m.content),
                        "turn_idx": m.turn_idx,
                        "n_tool_calls": len(calls) if calls else 0,
                        "tool_call_id": m.id if isinstance(m, ToolMessage) else None,
                        "error": m.error if isinstance(m, ToolMessage) else None,
                        "cost": getattr(m, "cost", None),
                    }
                )
            matched: dict[int, str] = {}
            for check in ev.actions or []:
                if check.matched and check.call_index is not None:
                    matched.setdefault(check.call_index, check.action.action_id)
            for record in timeline.calls:
                paths: list[str] = []
                if record.result_step is not None and record.verdict in (Verdict.REPLAYED, Verdict.MISMATCH):
                    agent, user = timeline.changes_at(record.result_step)
                    paths = [c.dotted for c in agent] + [f"user:{c.dotted}" for c in user]
                t["tool_calls"].append(
                    {
                        "run_id": rid,
                        "sim_id": sim.id,
                        "call_index": record.index,
                        "step": record.call_step,
                        "result_step": record.result_step,
                        "call_id": record.call.id,
                        "requestor": record.requestor,
                        "name": record.name,
                        "arguments": _json(record.call.arguments),
                        "verdict": record.verdict.value,
                        "tool_type": record.tool_type.value if record.tool_type is not None else None,
                        "recorded_result": record.recorded,
                        "replayed_result": record.replayed,
                        "recorded_error": record.recorded_error,
                        "paths_changed": _json(paths),
                        "n_paths_changed": len(paths),
                        "matched_action": matched.get(record.index),
                    }
                )
            t["checks"] += _check_rows(rid, sim.id, report)
            if sft:
                out.sft.append(SftExample(_sft_record(analysis, run), ev.reward, set(flags), sim.id in noted))
        trials = run.raw_info.get("num_trials")
        t["runs"].append(
            {
                "run_id": rid,
                "file": str(path),
                "domain": run.domain,
                "agent_model": run.agent_model,
                "agent_implementation": run.agent_implementation,
                "user_model": run.user_model,
                "user_implementation": run.user_implementation,
                "solo": run.solo,
                "num_trials": trials if isinstance(trials, int) and not isinstance(trials, bool) else None,
                "timestamp": run.timestamp,
                "n_simulations": len(run.entries),
                "n_exported": exported,
            }
        )
        for task_id, rewards in per_task.items():
            scored_rewards = [s for r in rewards if (s := scored_reward(r)) is not None]
            passed = sum(is_success(r) for r in scored_rewards)
            iv = wilson(passed, len(scored_rewards))
            t["grid"].append(
                {
                    "run_id": rid,
                    "task_id": task_id,
                    "task_digest": digests.get(task_id),
                    "trials": len(rewards),
                    "n_scored": len(scored_rewards),
                    "n_passed": passed,
                    "pass_rate": iv.estimate if iv else None,
                    "pass_rate_low": iv.low if iv else None,
                    "pass_rate_high": iv.high if iv else None,
                    "band": _band(len(scored_rewards), passed),
                }
            )
        for note in notes:
            t["notes"].append(
                {
                    "run_id": rid,
                    "sim_id": note.sim_id,
                    "note_id": note.id,
                    "task_id": note.task_id,
                    "trial": note.trial,
                    "step": note.step,
                    "source": str(getattr(note.source, "value", note.source)),
                    "error_type": str(getattr(note.error_type, "value", note.error_type)),
                    "text": note.text,
                    "author": note.author,
                    "created_at": note.created_at,
                }
            )
    out.errors.extend(_fit_integers(out.tables))
    return out


INT64 = (-(2**63), 2**63 - 1)  # what a BIGINT column holds (parquet int64, duckdb BIGINT)


def _fit_integers(tables: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Empty every integer cell a 64-bit column cannot hold (a recorded trial of 2**63), one line each, so that
    every format writes the same rows and none fails half-way."""
    problems = []
    for table, rows in tables.items():
        columns = [name for name, kind in SCHEMAS[table] if kind == I]
        for row in rows:
            for name in columns:
                value = row.get(name)
                if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
                    row[name] = None
                    where = f"{row.get('run_id')}" + (f" simulation {row['sim_id']}" if row.get("sim_id") else "")
                    problems.append(f"{where}: {table}.{name} {value} does not fit a 64-bit integer; left empty")
    return problems


# --- writing ----------------------------------------------------------------------------------------


def scrubbed(export: Export, secrets: Iterable[str]) -> Export:
    """``export`` with every secret blanked in its values (``model.secrets.redact``), before any format
    encodes them: the same rows reach CSV, JSONL, Parquet, DuckDB and SFT."""
    secrets = set(secrets)
    if not secrets:
        return export
    return Export(
        tables={table: redact(rows, secrets) for table, rows in export.tables.items()},
        sft=[SftExample(redact(e.record, secrets), e.reward, e.flags, e.noted) for e in export.sft],
        errors=list(export.errors),
    )


def csv_bytes(table: str, rows: list[dict[str, Any]]) -> bytes:
    return csv_text([name for name, _ in SCHEMAS[table]], rows).encode("utf-8", "surrogateescape")


def jsonl_bytes(table: str, rows: list[dict[str, Any]]) -> bytes:
    columns = [name for name, _ in SCHEMAS[table]]
    return "".join(
        json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False, default=str) + "\n" for row in rows
    ).encode("utf-8", "surrogateescape")


def _optional(module: str, extra: str = "export") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExportError(
            f"this format needs {module}: pip install 'tau-tui[{extra}]' (or pip install {module})"
        ) from None


_ARROW_TYPES = {S: "string", I: "int64", F: "float64", B: "bool_"}


def parquet_bytes(table: str, rows: list[dict[str, Any]]) -> bytes:
    pa = _optional("pyarrow")
    pq = _optional("pyarrow.parquet")
    schema = pa.schema([(name, getattr(pa, _ARROW_TYPES[kind])()) for name, kind in SCHEMAS[table]])
    columns = {name: [row.get(name) for row in rows] for name, _ in SCHEMAS[table]}
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), buffer)
    return buffer.getvalue()


def write_duckdb(tables: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """One DuckDB database with every table, built beside ``path`` and moved into place.

    duckdb writes the file itself: its I/O errors (a read-only folder, a full disk: ``IOException``, or a
    commit that failed for want of space) are the ``WriteError`` line of every write (``model.io``), with
    the half-built file removed and an old ``path`` left as it was; any other refusal of duckdb's is an
    ``ExportError``.
    """
    duckdb = _optional("duckdb")
    check_regular(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(str(tmp))
        try:
            for table, schema in SCHEMAS.items():
                con.execute(f"CREATE TABLE {table} ({', '.join(f'{n} {k}' for n, k in schema)})")
                rows = tables[table]
                if rows:
                    marks = ", ".join("?" for _ in schema)
                    con.executemany(
                        f"INSERT INTO {table} VALUES ({marks})", [[row.get(n) for n, _ in schema] for row in rows]
                    )
        finally:
            con.close()
        os.replace(tmp, path)
    except (OSError, duckdb.Error) as exc:
        failure = library_write_error(path, exc)
        if failure is not None:
            raise failure from None
        raise ExportError(f"{path}: duckdb cannot store the tables: {error_text(exc).splitlines()[0]}") from None
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass


@dataclass(frozen=True)
class SftFilter:
    """Which simulations become SFT examples: a reward of at least ``min_reward`` (unscored never),
    none of the ``exclude_flags`` kinds (``any``: no flag at all), and no note when ``exclude_noted``."""

    min_reward: float = 1.0
    exclude_flags: frozenset[str] = frozenset()
    exclude_noted: bool = False

    def keeps(self, example: SftExample) -> bool:
        reward = scored_reward(example.reward)
        if reward is None or reward < self.min_reward - 1e-6:
            return False
        if "any" in self.exclude_flags and example.flags:
            return False
        if example.flags & self.exclude_flags:
            return False
        return not (self.exclude_noted and example.noted)


def write_export(export: Export, out: Path, fmt: str, sft_filter: SftFilter | None = None) -> list[Path]:
    """Write ``export`` under the folder ``out`` in ``fmt``; returns the files written."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    make_folder(out, out)
    export = scrubbed(export, environment_secrets())
    written = []
    if fmt == "sft":
        keep = sft_filter or SftFilter()
        path = out / "sft.jsonl"
        payload = "".join(
            json.dumps(e.record, ensure_ascii=False, default=str) + "\n" for e in export.sft if keep.keeps(e)
        )
        write_atomic(path, payload.encode("utf-8", "surrogateescape"))
        return [path]
    if fmt == "duckdb":
        path = out / "tau.duckdb"
        write_duckdb(export.tables, path)
        return [path]
    encode = {"csv": csv_bytes, "jsonl": jsonl_bytes, "parquet": parquet_bytes}[fmt]
    for table in TABLES:
        path = out / f"{table}.{fmt}"
        write_atomic(path, encode(table, export.tables[table]))
        written.append(path)
    return written
