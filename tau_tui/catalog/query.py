"""Which rows of the runs catalog to show, and in what order: filters, text search, sort keys.

Headless: the runs table's columns (``tau_tui.views.columns``) take their sort
keys from ``FIELDS`` here, so a sort means the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from operator import attrgetter
from typing import Any, Callable, Iterable

from tau_tui.catalog.rows import ANY_FLAG, PASSED_BUT_VIOLATED, EvalSummary, ReplaySummary, RunRow
from tau_tui.config import id_order


def query_terms(query: str) -> list[str]:
    """Search terms: whitespace-separated words, or one phrase in double quotes."""
    query = query.strip().lower()
    if len(query) >= 2 and query.startswith('"') and query.endswith('"'):
        return [query[1:-1]] if query[1:-1] else []
    return query.split()


def text_matches(haystack: str, terms: list[str]) -> bool:
    return all(term in haystack for term in terms)


@dataclass(frozen=True)
class RunFilter:
    """Which rows to show. Empty values mean 'any'."""

    failed_only: bool = False
    termination: str | None = None
    has_mismatch: bool = False
    has_divergence: bool = False  # a mismatch neither library text nor an upstream fix explains
    has_hallucination: bool = False
    has_tool_error: bool = False
    has_finding: bool = False
    disagrees: bool = False  # recomputed reward differs from the recorded one
    flag: str | None = None  # a process-flag kind, or ANY_FLAG
    has_fault: bool = False  # an injected fault
    has_refusal: bool = False  # a call refused by a cassette
    has_note: bool = False
    note_source: str | None = None  # notes with this source (agent / user / environment / task)
    note_type: str | None = None  # notes of this error type
    task: str | None = None
    model: str | None = None
    domain: str | None = None
    file: str | None = None
    submission: str | None = None
    has_review_error: bool = False  # the recorded review found an agent or user error
    review_source: str | None = None  # a recorded review error of this source (agent / user / unknown)
    review_tag: str | None = None
    review_severity: str | None = None
    auth: str | None = None  # recorded auth classification (succeeded / failed / not_needed)
    text: str = ""
    retrieval: str | None = None  # tau2's info.retrieval_config

    @property
    def needs_replay(self) -> bool:
        """True when the filter reads derived columns (rows not yet replayed or evaluated never match)."""
        return (
            self.has_mismatch
            or self.has_divergence
            or self.has_hallucination
            or self.has_finding
            or self.has_fault
            or self.has_refusal
            or self.needs_evaluation
        )

    @property
    def needs_evaluation(self) -> bool:
        return self.disagrees or self.flag is not None

    @property
    def active(self) -> bool:
        return self != RunFilter()

    def with_(self, **changes: Any) -> RunFilter:
        return replace(self, **changes)

    def matches(self, row: RunRow) -> bool:
        if self.failed_only and row.status != "fail":
            return False
        if self.termination and row.termination != self.termination:
            return False
        if self.task and self.task.lower() not in row.task.lower():
            return False
        if self.model and row.model != self.model:
            return False
        if self.domain and row.domain != self.domain:
            return False
        if self.retrieval and row.retrieval != self.retrieval:
            return False
        if self.file and row.file_label != self.file:
            return False
        if self.submission and row.submission != self.submission:
            return False
        if self.has_tool_error and not row.entry.n_tool_errors:
            return False
        if self.has_review_error or self.review_source or self.review_tag or self.review_severity or self.auth:
            review = row.review
            if self.has_review_error and not review.errors:
                return False
            if self.review_source and not review.errors_by(self.review_source):
                return False
            if self.review_tag and self.review_tag not in review.tags:
                return False
            if self.review_severity and self.review_severity not in review.severities:
                return False
            if self.auth and review.auth_status != self.auth:
                return False
        if self.needs_replay:
            summary = row.replay
            if summary is None:
                return False
            if self.has_mismatch and not summary.mismatches:
                return False
            if self.has_divergence and not summary.divergences:
                return False
            if self.has_hallucination and not summary.hallucinated:
                return False
            if self.has_finding and not summary.findings:
                return False
            if self.has_fault and not summary.faults:
                return False
            if self.has_refusal and not summary.refused:
                return False
        if self.needs_evaluation:
            evaluation = row.evaluation
            if evaluation is None:
                return False
            if self.disagrees and evaluation.agrees is not False:
                return False
            if self.flag == ANY_FLAG and not evaluation.flags:
                return False
            if self.flag == PASSED_BUT_VIOLATED and not evaluation.passed_but_violated:
                return False
            if self.flag not in (None, ANY_FLAG, PASSED_BUT_VIOLATED) and not evaluation.flags.get(self.flag):
                return False
        if self.has_note or self.note_source or self.note_type:
            notes = [
                n
                for n in row.notes
                if (self.note_source is None or n.source == self.note_source)
                and (self.note_type is None or n.error_type == self.note_type)
            ]
            if not notes:
                return False
        if self.text:
            terms = query_terms(self.text)
            if terms and not text_matches(row.haystack(), terms):
                return False
        return True

    def chips(self) -> list[str]:
        """Short labels of the active filters, for the filter bar."""
        out = []
        if self.failed_only:
            out.append("failed")
        for label, value in (
            ("domain", self.domain),
            ("file", self.file),
            ("submission", self.submission),
            ("model", self.model),
            ("review source", self.review_source),
            ("review tag", self.review_tag),
            ("severity", self.review_severity),
            ("auth", self.auth),
            ("task", self.task),
            ("end", self.termination),
            ("flag", self.flag),
            ("note source", self.note_source),
            ("note type", self.note_type),
            ("retrieval", self.retrieval),
        ):
            if value:
                out.append(f"{label}:{value}")
        for label, on in (
            ("mismatch", self.has_mismatch),
            ("divergence", self.has_divergence),
            ("hallucinated", self.has_hallucination),
            ("tool error", self.has_tool_error),
            ("finding", self.has_finding),
            ("injected fault", self.has_fault),
            ("refusal", self.has_refusal),
            ("note", self.has_note),
            ("review error", self.has_review_error),
        ):
            if on:
                out.append(f"has {label}")
        if self.disagrees:
            out.append("recomputed ≠ recorded")
        if self.text:
            out.append(f"/{self.text}")
        return out


# --- sort keys ---------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def _natural(text: str) -> tuple[int, int, str]:
    """Sort key putting "2" before "10" (kept per text: a million rows share some hundred task ids)."""
    return id_order(text)


def _eval_value(get: Callable[[EvalSummary], Any]) -> Callable[[RunRow], Any]:
    return lambda row: None if row.evaluation is None else get(row.evaluation)


def _summary_value(get: Callable[[ReplaySummary], Any]) -> Callable[[RunRow], Any]:
    return lambda row: None if row.replay is None else get(row.replay)


@dataclass(frozen=True)
class RowField:
    """A field of a row as the runs table shows it: header label, description, sort key, derived or recorded."""

    key: str
    label: str
    help: str
    sort_key: Callable[[RunRow], Any]
    derived: bool = False


FIELDS: list[RowField] = [
    RowField("file", "file", "source file (load order)", lambda r: r.order),
    RowField("task", "task", "task id", lambda r: _natural(r.task)),
    RowField("sim", "sim", "simulation id", lambda r: r.sim_id),
    RowField("trial", "tr", "trial", lambda r: r.entry.trial),
    RowField("notes", "✐", "notes (sidecar beside the recording)", lambda r: len(r.notes) or None),
    RowField("reward", "reward", "recorded reward", lambda r: r.entry.reward if r.status in ("pass", "fail") else None),
    RowField("db", "db", "recorded DB match", lambda r: r.entry.db_match),
    RowField("our_reward", "rwd*", "reward recomputed by our evaluator", _eval_value(lambda e: e.reward), True),
    RowField("agrees", "=*", "recomputed reward agrees with the recorded one", _eval_value(lambda e: e.agrees), True),
    RowField("our_db", "db*", "DB match after our replay", _summary_value(lambda s: s.db_match), True),
    RowField(
        "flags",
        "flags*",
        "process flags: how many (as ⚑ in a trajectory's footer) and their kinds, one letter "
        "each (listed under process flags)",
        _eval_value(lambda e: e.n_flags),
        True,
    ),
    RowField(
        "mismatches",
        "≠*",
        "replay divergences (a dim ≈: mismatches only in library text or as fixed upstream)",
        _summary_value(lambda s: (s.divergences, s.mismatches)),
        True,
    ),
    RowField(
        "writes", "✎*", "writes re-executed by our replay", _summary_value(lambda s: s.replayed + s.mismatches), True
    ),
    RowField("hallucinated", "?*", "hallucinated tool calls", _summary_value(lambda s: s.hallucinated), True),
    RowField("findings", "!*", "structural findings", _summary_value(lambda s: s.findings), True),
    RowField("faults", "↯*", "injected faults (timeout, error, slow)", _summary_value(lambda s: s.faults), True),
    RowField(
        "refused", "⊘*", "calls refused by a cassette (no recorded result)", _summary_value(lambda s: s.refused), True
    ),
    RowField("discovered", "✦*", "discoverable tools discovered", _summary_value(lambda s: s.discovered), True),
    RowField(
        "review",
        "rev",
        "errors a recorded review found (a agent, u user, ? unknown; red: one is critical)",
        lambda r: len(r.review.errors) if r.review.reviewed else None,
    ),
    RowField("auth", "au", "recorded auth classification", lambda r: r.review.auth_status),
    RowField(
        "errors",
        "err",
        "tool results the recording marks as errors (as ✗ in a trajectory's footer; its ✗msg "
        "counts errors recorded on messages)",
        lambda r: r.entry.n_tool_errors,
    ),
    RowField("termination", "termination", "why the simulation ended", lambda r: r.termination),
    RowField(
        "turns",
        "msgs",
        "messages (a voice run: its chunks that say something or call a tool)",
        lambda r: r.entry.n_messages,
    ),
    RowField("cost", "cost", "agent and user cost", lambda r: r.cost),
    RowField(
        "submission",
        "submission",
        "leaderboard submission folder (model · organisation); sorting groups its domains",
        lambda r: r.submission or None,
    ),
    RowField("model", "agent model", "agent model (of the file)", lambda r: r.model),
    RowField("domain", "domain", "domain", lambda r: r.domain),
    RowField(
        "retrieval", "retrieval", "retrieval variant (info.retrieval_config, banking_knowledge)", lambda r: r.retrieval
    ),
]
FIELD_BY_KEY = {f.key: f for f in FIELDS}


@dataclass(frozen=True)
class SortSpec:
    column: str | None = None  # None: load order
    reverse: bool = False

    def label(self) -> str:
        if self.column is None:
            return "load order"
        column = FIELD_BY_KEY[self.column]
        return f"{column.help or column.label} {'↓' if self.reverse else '↑'}"


def sort_rows(rows: Iterable[RunRow], spec: SortSpec, in_order: bool = False) -> list[RunRow]:
    """Rows sorted by one field, equal ones in load order (reversed with the sort); rows without a value always
    go last, in load order. ``in_order``: the rows come in load order already (the catalog's), none sorted for it.

    The rows' places are sorted by their keys rather than (key, order) pairs: a million rows make no million
    tuples (and the collections they would set off)."""
    rows = list(rows)
    if not in_order:
        rows.sort(key=attrgetter("order"))
    if spec.column is None:
        if spec.reverse:
            rows.reverse()
        return rows
    keys = list(map(FIELD_BY_KEY[spec.column].sort_key, rows))
    missing = [rows[i] for i, k in enumerate(keys) if k is None]

    def known() -> list[int]:
        places = [i for i, k in enumerate(keys) if k is not None]
        if spec.reverse:  # a stable sort keeps equal keys as they come: last loaded first, once reversed
            places.reverse()
        return places

    places = known()
    try:
        places.sort(key=keys.__getitem__, reverse=spec.reverse)
    except TypeError:  # mixed value types: fall back to their text (the failed sort left the list half done)
        places = known()
        places.sort(key=lambda i: str(keys[i]), reverse=spec.reverse)
    return [rows[i] for i in places] + missing
