"""The runs catalog: every simulation of every loaded file, as rows to filter, sort and search.

Pure Python (rich for cell styling, no textual), so it is tested on its own
and shared by the runs screen and, later, by rollouts that add runs live.
A row keeps what the recording says apart from what we derived: the replay
(``ReplaySummary``) and the recomputed reward with its process flags
(``EvalSummary``), both filled in by one background worker. Notes on a
simulation (a sidecar beside its recording, ``model.notes``) are attached to
its row by the catalog; they are neither recorded nor derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import orjson
from rich.text import Text

from tau_tui.evaluate import DETECTORS, FLAG_KINDS, FLAG_LETTERS, is_success
from tau_tui.evaluate.compliance import COMPLIANCE_KINDS
from tau_tui.model.io import RunFile, SimEntry
from tau_tui.model.nesting import bounded
from tau_tui.model.notes import Note, NoteBook
from tau_tui.model.results import SCORED_TERMINATIONS
from tau_tui.model.reviews import SimReview, read_review
from tau_tui.model.submission import submission_label

INFRA_TERMINATIONS = ("infrastructure_error",)


@dataclass(frozen=True)
class ReplaySummary:
    """What our replay derived for one simulation (the runs table's derived columns)."""

    mismatches: int
    hallucinated: int
    findings: int
    replayed: int
    reads: int
    db_match: bool | None
    strict_ok: bool
    first_mismatch_step: int | None = None
    faults: int = 0  # calls with an injected fault (withheld or slow)
    refused: int = 0  # calls the episode's backend refused (cassette: no recorded result)
    discovered: int = 0  # discoverable tools this trajectory discovered

    @classmethod
    def of(cls, analysis: Any) -> ReplaySummary:
        timeline = analysis.timeline
        counts = timeline.verdict_counts()
        first = analysis.first_mismatch()
        return cls(
            mismatches=counts["mismatch"],
            hallucinated=counts["skipped_unknown"],
            findings=len(analysis.findings),
            replayed=counts["replayed"],
            reads=counts["skipped_read"],
            db_match=analysis.db_match,
            strict_ok=analysis.timeline.strict_ok,
            first_mismatch_step=first["step"] if first else None,
            faults=len(timeline.injected_faults),
            refused=len(timeline.refusals),
            discovered=len(timeline.discoveries),
        )


# One letter per process-flag kind, for the compact flags column (the help screen lists them):
# a live view of the detector registry (``evaluate.DETECTORS``), never a table of its own.
FLAG_CODES = FLAG_LETTERS
ANY_FLAG = "any"
PASSED_BUT_VIOLATED = "passed_but_violated"  # flag filter: reward 1 with a policy-compliance flag


def flag_legend() -> list[tuple[str, str, str]]:
    """(letter, kind, description) per registered process flag, in registry order."""
    return [(d.letter, d.kind, d.description) for d in DETECTORS.values()]


def flag_options(counts: dict[str, int]) -> list[tuple[str, str]]:
    """The process-flag picker's choices, from the flag counts (``Catalog.flag_counts`` plus ``ANY_FLAG``)."""
    options = [("", "no process-flag filter"), (ANY_FLAG, f"any process flag  ·  {counts.get(ANY_FLAG, 0)} runs"),
               (PASSED_BUT_VIOLATED, f"passed but violated the policy  ·  {counts.get(PASSED_BUT_VIOLATED, 0)} runs")]
    return options + [(kind, f"{letter}  {kind}  ·  {counts.get(kind, 0)} runs") for letter, kind, _ in flag_legend()]


@dataclass(frozen=True)
class EvalSummary:
    """What our evaluator derived for one simulation: recomputed reward, agreement, process flags."""

    reward: float | None  # None: not computable (e.g. NL assertions without a judge)
    status: str  # scored / premature / no_criteria / no_task / not_computable
    agrees: bool | None  # recomputed equals recorded; None when either is missing
    flags: dict[str, int]  # kind → count, only kinds that fired
    inconsistent_recording: bool = False
    not_evaluated: tuple[str, ...] = ()
    first_reason: str | None = None  # the first line of "why", for the row preview

    @classmethod
    def of(cls, report: Any) -> EvalSummary:
        ev = report.evaluation
        failed = report.explanation.failed
        return cls(
            reward=ev.reward,
            status=ev.status,
            agrees=report.agrees,
            flags={k: v for k, v in report.flag_counts().items() if v},
            inconsistent_recording=report.explanation.inconsistent_recording,
            not_evaluated=tuple(ev.not_evaluated),
            first_reason=failed[0] if failed else None,
        )

    @property
    def passed_but_violated(self) -> bool:
        """Our reward is a pass, and a policy-compliance flag fired on the way."""
        return self.reward is not None and is_success(self.reward) and any(self.flags.get(k) for k in COMPLIANCE_KINDS)

    @property
    def n_flags(self) -> int:
        return sum(self.flags.values())

    def flag_letters(self) -> str:
        return "".join(FLAG_CODES[k] for k in FLAG_KINDS if k in self.flags)


def _sim_error(raw: Any) -> str | None:
    info = raw.get("info") if isinstance(raw, dict) else None
    if isinstance(info, dict) and info.get("error"):
        return str(info.get("error"))
    return None


@dataclass
class RunRow:
    """One simulation of one loaded file."""

    key: str
    run: RunFile
    entry: SimEntry
    order: tuple[int, int]  # (file load position, index in file)
    replay: ReplaySummary | None = None
    replay_error: str | None = None
    evaluation: EvalSummary | None = None
    eval_error: str | None = None
    notes: list[Note] = field(default_factory=list)  # from the recording's notes sidecar
    _haystack: str | None = field(default=None, repr=False)
    _submission: str | None = field(default=None, repr=False)
    _review: SimReview | None = field(default=None, repr=False)

    # --- what the recording says ------------------------------------------------
    @property
    def path(self) -> Path:
        return self.run.path

    @property
    def index(self) -> int:
        return self.entry.index

    @property
    def sim_id(self) -> str:
        return self.entry.id

    @property
    def file_label(self) -> str:
        return file_label(self.run)

    @property
    def model(self) -> str:
        return self.run.agent_model or self.run.agent_implementation or "?"

    @property
    def domain(self) -> str:
        return self.run.domain or "?"

    @property
    def retrieval(self) -> str:
        """The retrieval variant the run used (tau2's ``info.retrieval_config``, banking_knowledge); "" if none."""
        value = self.run.raw_info.get("retrieval_config")
        return value if isinstance(value, str) else ""

    @property
    def task(self) -> str:
        return self.entry.task_id

    @property
    def review(self) -> SimReview:
        """The recorded review fields (``tau2 review``, auth, hallucination check), read once."""
        if self._review is None:
            self._review = read_review(self.run.raw_sims[self.index])
        return self._review

    @property
    def submission(self) -> str:
        """The leaderboard submission the file belongs to (model · organisation), "" outside one."""
        if self._submission is None:
            self._submission = submission_label(self.path)
        return self._submission

    @property
    def termination(self) -> str:
        return self.entry.termination or "?"

    @property
    def cost(self) -> float | None:
        parts = [c for c in (self.entry.agent_cost, self.entry.user_cost) if c is not None]
        return sum(parts) if parts else None

    @property
    def error(self) -> str | None:
        """The error an infrastructure failure left in ``info`` (None when there is none)."""
        return _sim_error(self.run.raw_sims[self.index])

    @property
    def status(self) -> str:
        """pass / fail / unscored / infra: an unscored or infra-failed run is never "fail".

        An error in ``info`` makes a run "infra" only when it has no reward: a scored episode that ended on an
        error of the agent's own making (a cassette's refusal) is a pass or a fail.
        """
        reward = self.entry.reward
        if self.entry.termination in INFRA_TERMINATIONS or (self.error and reward is None):
            return "infra"
        if reward is None:
            return "unscored"
        return "pass" if reward >= 1.0 - 1e-9 else "fail"

    @property
    def scored_termination(self) -> bool:
        return self.entry.termination in SCORED_TERMINATIONS

    # --- full-text search -----------------------------------------------------
    def haystack(self) -> str:
        """Lower-cased text of every message: contents, tool names, arguments, outputs."""
        if self._haystack is None:
            self._haystack = sim_text(self.run.raw_sims[self.index]).lower()
        return self._haystack


def file_label(run: RunFile) -> str:
    """A short name for a run file (``RunFile.label``)."""
    return run.label


def sim_text(raw: Any) -> str:
    """Searchable text of a raw simulation."""
    if not isinstance(raw, dict):
        return ""
    parts: list[str] = [str(raw.get("task_id", ""))]
    messages = raw.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif content is not None:
            parts.append(str(bounded(content)))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                parts.append(str(call.get("name", "")))
                arguments = bounded(call.get("arguments"))
                try:
                    parts.append(orjson.dumps(arguments).decode())
                except TypeError:
                    parts.append(str(arguments))
    return "\n".join(parts)


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
        return (self.has_mismatch or self.has_hallucination or self.has_finding or self.has_fault
                or self.has_refusal or self.needs_evaluation)

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
            notes = [n for n in row.notes if (self.note_source is None or n.source == self.note_source)
                     and (self.note_type is None or n.error_type == self.note_type)]
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
        for label, value in (("domain", self.domain), ("file", self.file), ("submission", self.submission),
                             ("model", self.model), ("review source", self.review_source),
                             ("review tag", self.review_tag), ("severity", self.review_severity),
                             ("auth", self.auth),
                             ("task", self.task), ("end", self.termination), ("flag", self.flag),
                             ("note source", self.note_source), ("note type", self.note_type),
                             ("retrieval", self.retrieval)):
            if value:
                out.append(f"{label}:{value}")
        for label, on in (("mismatch", self.has_mismatch), ("hallucinated", self.has_hallucination),
                          ("tool error", self.has_tool_error), ("finding", self.has_finding),
                          ("injected fault", self.has_fault), ("refusal", self.has_refusal),
                          ("note", self.has_note), ("review error", self.has_review_error)):
            if on:
                out.append(f"has {label}")
        if self.disagrees:
            out.append("recomputed ≠ recorded")
        if self.text:
            out.append(f"/{self.text}")
        return out


# --- columns -----------------------------------------------------------------------

DASH = Text("—", style="dim")


def _check(value: bool | None) -> Text:
    if value is None:
        return DASH
    return Text("✓", style="green") if value else Text("✗", style="bold red")


def _count(value: int | None, style: str) -> Text:
    if value is None:
        return DASH
    return Text(str(value), style=style if value else "dim")


def _derived(row: RunRow, get: Callable[[ReplaySummary], Any], render: Callable[[Any], Text]) -> Text:
    if row.replay is None:
        return Text("…", style="dim") if row.replay_error is None else DASH
    return render(get(row.replay))


def _evaluated(row: RunRow, render: Callable[[EvalSummary], Text]) -> Text:
    if row.evaluation is None:
        return Text("…", style="dim") if row.replay_error is None and row.eval_error is None else DASH
    return render(row.evaluation)


def _reward_text(reward: float) -> str:
    return f"{reward:.2f}".rstrip("0").rstrip(".")


def recomputed_cell(row: RunRow) -> Text:
    """Our reward; an infra-failed run stays "infra", an uncomputable one "n/a" (never a fail)."""
    def render(ev: EvalSummary) -> Text:
        if row.status == "infra":
            return Text("infra", style="yellow")
        if ev.reward is None:
            return Text("n/a", style="yellow")
        return Text(_reward_text(ev.reward), style="green" if ev.reward >= 1.0 - 1e-6 else "bold red")
    return _evaluated(row, render)


def agrees_cell(row: RunRow) -> Text:
    return _evaluated(row, lambda ev: _check(ev.agrees) if ev.agrees is not False else Text("≠", style="bold red"))


def flags_cell(row: RunRow) -> Text:
    def render(ev: EvalSummary) -> Text:
        if not ev.flags:
            return Text("0", style="dim")
        return Text(f"{ev.n_flags} {ev.flag_letters()}", style="cyan")
    return _evaluated(row, render)


def _eval_value(get: Callable[[EvalSummary], Any]) -> Callable[[RunRow], Any]:
    return lambda row: None if row.evaluation is None else get(row.evaluation)


def reward_cell(row: RunRow) -> Text:
    status = row.status
    if status == "infra":
        return Text("infra", style="yellow")
    if status == "unscored":
        return Text("—", style="dim")
    reward = row.entry.reward
    return Text(_reward_text(reward) if reward is not None else "—",
                style="green" if status == "pass" else "bold red")


def notes_cell(row: RunRow) -> Text:
    """How many notes the simulation has (its own and its steps'), blank when none."""
    return Text(str(len(row.notes)), style="bold yellow") if row.notes else Text("")


def review_cell(row: RunRow) -> Text:
    """Recorded review errors: ``2a 1u`` (agent, user, ? unknown; red when one is critical), blank when not reviewed."""
    review = row.review
    if not review.reviewed and not review.errors:
        return Text("")
    if not review.errors:
        return Text("0", style="green")
    parts = [f"{len(review.errors_by(s))}{mark}" for s, mark in (("agent", "a"), ("user", "u"), ("unknown", "?"))
             if review.errors_by(s)]
    return Text(" ".join(parts), style="bold red" if any(e.critical for e in review.errors) else "yellow")


AUTH_MARKS = {"succeeded": ("✓", "green"), "failed": ("✗", "bold red"), "not_needed": ("·", "dim")}


def auth_cell(row: RunRow) -> Text:
    mark = AUTH_MARKS.get(row.review.auth_status or "")
    return Text(mark[0], style=mark[1]) if mark else Text("")


def _cost(row: RunRow) -> Text:
    cost = row.cost
    return DASH if cost is None else Text(f"${cost:.3f}" if cost < 10 else f"${cost:.1f}", style="dim")


@dataclass(frozen=True)
class Column:
    """A runs-table column. ``width`` is its minimum; ``flex`` columns share the width left over.

    The registry's order is the order on screen and the order columns give way
    in at narrow widths: ``frozen`` columns (what tells runs apart) stay put,
    the others scroll one column at a time; the outcome (recorded, then
    derived) comes before recorded ``detail``, which also gives way to the
    names when they lack room. ``elide`` text is shortened in the middle,
    keeping the part that differs from other rows.
    """

    key: str
    label: str
    width: int
    cell: Callable[[RunRow], Any]
    sort_key: Callable[[RunRow], Any]
    derived: bool = False
    help: str = ""
    flex: int = 0
    frozen: bool = False
    elide: bool = False
    detail: bool = False  # recorded detail: gives way to the names when the width is short
    when: Callable[[RunRow], bool] | None = None  # shown only when some row shown satisfies it (None: always)


def _summary_value(get: Callable[[ReplaySummary], Any]) -> Callable[[RunRow], Any]:
    return lambda row: None if row.replay is None else get(row.replay)


COLUMNS: list[Column] = [
    Column("file", "file", 10, lambda r: r.file_label, lambda r: r.order, help="source file (load order)",
           flex=2, frozen=True, elide=True),
    Column("task", "task", 10, lambda r: r.task, lambda r: _natural(r.task), help="task id", flex=3, frozen=True,
           elide=True),
    Column("sim", "sim", 10, lambda r: r.sim_id, lambda r: r.sim_id, help="simulation id", flex=2, frozen=True,
           elide=True),
    Column("trial", "tr", 2, lambda r: "" if r.entry.trial is None else str(r.entry.trial),
           lambda r: r.entry.trial, help="trial", frozen=True),
    Column("notes", "✐", 1, notes_cell, lambda r: len(r.notes) or None, help="notes (sidecar beside the recording)",
           frozen=True),
    Column("reward", "reward", 6, reward_cell,
           lambda r: (r.entry.reward if r.status in ("pass", "fail") else None), help="recorded reward"),
    Column("db", "db", 2, lambda r: _check(r.entry.db_match), lambda r: r.entry.db_match,
           help="recorded DB match"),
    Column("our_reward", "rwd*", 4, recomputed_cell, _eval_value(lambda e: e.reward), derived=True,
           help="reward recomputed by our evaluator"),
    Column("agrees", "=*", 2, agrees_cell, _eval_value(lambda e: e.agrees), derived=True,
           help="recomputed reward agrees with the recorded one"),
    Column("our_db", "db*", 3, lambda r: _derived(r, lambda s: s.db_match, _check),
           _summary_value(lambda s: s.db_match), derived=True, help="DB match after our replay"),
    Column("flags", "flags*", 6, flags_cell, _eval_value(lambda e: e.n_flags), derived=True,
           help="process flags (count and kinds: one letter each, listed under process flags)"),
    Column("mismatches", "≠*", 2, lambda r: _derived(r, lambda s: s.mismatches, lambda v: _count(v, "bold red")),
           _summary_value(lambda s: s.mismatches), derived=True, help="replay mismatches"),
    Column("writes", "✎*", 2, lambda r: _derived(r, lambda s: s.replayed + s.mismatches, lambda v: _count(v, "")),
           _summary_value(lambda s: s.replayed + s.mismatches), derived=True, help="writes re-executed by our replay"),
    Column("hallucinated", "?*", 2,
           lambda r: _derived(r, lambda s: s.hallucinated, lambda v: _count(v, "bold magenta")),
           _summary_value(lambda s: s.hallucinated), derived=True, help="hallucinated tool calls"),
    Column("findings", "!*", 2, lambda r: _derived(r, lambda s: s.findings, lambda v: _count(v, "yellow")),
           _summary_value(lambda s: s.findings), derived=True, help="structural findings"),
    Column("faults", "↯*", 2, lambda r: _derived(r, lambda s: s.faults, lambda v: _count(v, "bold orange1")),
           _summary_value(lambda s: s.faults), derived=True, help="injected faults (timeout, error, slow)"),
    Column("refused", "⊘*", 2, lambda r: _derived(r, lambda s: s.refused, lambda v: _count(v, "bold medium_purple1")),
           _summary_value(lambda s: s.refused), derived=True, help="calls refused by a cassette (no recorded result)"),
    Column("discovered", "✦*", 2, lambda r: _derived(r, lambda s: s.discovered, lambda v: _count(v, "cyan")),
           _summary_value(lambda s: s.discovered), derived=True, help="discoverable tools discovered"),
    Column("review", "rev", 3, review_cell, lambda r: len(r.review.errors) if r.review.reviewed else None,
           help="errors a recorded review found (a agent, u user, ? unknown; red: one is critical)", detail=True,
           when=lambda r: r.review.reviewed),
    Column("auth", "au", 2, auth_cell, lambda r: r.review.auth_status, help="recorded auth classification",
           detail=True, when=lambda r: r.review.auth_status is not None),
    Column("errors", "err", 3, lambda r: _count(r.entry.n_tool_errors, "yellow"), lambda r: r.entry.n_tool_errors,
           help="tool errors in the recording", detail=True),
    Column("termination", "termination", 11, lambda r: Text(r.termination, style=_term_style(r)),
           lambda r: r.termination, help="why the simulation ended", flex=1, elide=True, detail=True),
    Column("turns", "msgs", 4, lambda r: str(r.entry.n_messages), lambda r: r.entry.n_messages,
           help="messages", detail=True),
    Column("cost", "cost", 6, _cost, lambda r: r.cost, help="agent and user cost", detail=True),
    Column("submission", "submission", 10, lambda r: r.submission, lambda r: r.submission or None,
           help="leaderboard submission folder (model · organisation); sorting groups its domains", flex=1,
           elide=True, detail=True, when=lambda r: bool(r.submission)),
    Column("model", "agent model", 11, lambda r: r.model, lambda r: r.model, help="agent model (of the file)", flex=2,
           elide=True, detail=True),
    Column("domain", "domain", 6, lambda r: r.domain, lambda r: r.domain, help="domain", flex=1, elide=True, detail=True),
    Column("retrieval", "retrieval", 9, lambda r: r.retrieval, lambda r: r.retrieval,
           help="retrieval variant (info.retrieval_config, banking_knowledge)", flex=1, elide=True, detail=True,
           when=lambda r: bool(r.retrieval)),
]
COLUMN_BY_KEY = {c.key: c for c in COLUMNS}


def column_legend() -> Text:
    """One line per runs-table column: its header and what it shows (derived ones marked), from ``COLUMNS``."""
    text = Text()
    for column in COLUMNS:
        text.append(f"{column.label:<12}", style="bold magenta" if column.derived else "bold blue")
        text.append(column.help or column.label)
        if column.derived:
            text.append("  (derived)", style="magenta")
        text.append("\n")
    text.rstrip()
    return text


def _term_style(row: RunRow) -> str:
    if row.status == "infra":
        return "yellow"
    return "" if row.scored_termination else "red"


def _natural(text: str) -> tuple:
    """Sort key putting "2" before "10"."""
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


@dataclass(frozen=True)
class SortSpec:
    column: str | None = None  # None: load order
    reverse: bool = False

    def label(self) -> str:
        if self.column is None:
            return "load order"
        column = COLUMN_BY_KEY[self.column]
        return f"{column.help or column.label} {'↓' if self.reverse else '↑'}"


def sort_rows(rows: Iterable[RunRow], spec: SortSpec) -> list[RunRow]:
    """Rows sorted by one column; rows without a value always go last."""
    rows = list(rows)
    if spec.column is None:
        return sorted(rows, key=lambda r: r.order, reverse=spec.reverse)
    key = COLUMN_BY_KEY[spec.column].sort_key
    present = [(key(r), r) for r in rows]
    known = [(k, r) for k, r in present if k is not None]
    missing = [r for k, r in present if k is None]
    try:
        known.sort(key=lambda kr: (kr[0], kr[1].order), reverse=spec.reverse)
    except TypeError:  # mixed value types: fall back to their text
        known.sort(key=lambda kr: (str(kr[0]), kr[1].order), reverse=spec.reverse)
    return [r for _, r in known] + missing


# --- the catalog ---------------------------------------------------------------------


@dataclass
class Notice:
    path: Path
    text: str
    severity: str = "warning"  # "error": file not loaded; "warning"/"information": loaded with a note


class Catalog:
    """All loaded runs: rows in load order, per-file notices, replay summaries."""

    def __init__(self) -> None:
        self.files: dict[str, RunFile] = {}
        self.rows: list[RunRow] = []
        self.by_key: dict[str, RunRow] = {}
        self.notices: dict[str, list[Notice]] = {}
        self.notebooks: dict[str, NoteBook] = {}
        self._file_seq: dict[str, int] = {}

    @staticmethod
    def file_key(path: Path) -> str:
        return str(path)

    @staticmethod
    def row_key(path: Path, index: int) -> str:
        return f"{path}#{index}"

    def add_run(self, run: RunFile) -> list[RunRow]:
        """Add (or replace) the rows of one file; returns the new rows."""
        fkey = self.file_key(run.path)
        self.remove_file(run.path)
        seq = self._file_seq.setdefault(fkey, len(self._file_seq))
        self.files[fkey] = run
        new = []
        for entry in run.entries:
            row = RunRow(self.row_key(run.path, entry.index), run, entry, order=(seq, entry.index))
            new.append(row)
            self.by_key[row.key] = row
        self.rows.extend(new)
        self.rows.sort(key=lambda r: r.order)
        self._attach_notes(fkey, new)
        return new

    def set_notebook(self, book: NoteBook) -> list[RunRow]:
        """The notes of one recording (read or just saved): attached to its rows; returns those rows."""
        fkey = self.file_key(book.recording)
        self.notebooks[fkey] = book
        rows = [r for r in self.rows if self.file_key(r.path) == fkey]
        self._attach_notes(fkey, rows)
        return rows

    def _attach_notes(self, fkey: str, rows: list[RunRow]) -> None:
        book = self.notebooks.get(fkey)
        by_sim = book.by_simulation() if book is not None else {}
        for row in rows:
            row.notes = by_sim.get(row.sim_id, [])

    def all_notes(self) -> list[tuple[RunRow | None, NoteBook, Note]]:
        """Every note of every loaded recording, with its row (None when the simulation is not loaded)."""
        out = []
        for fkey, book in self.notebooks.items():
            if fkey not in self.files:
                continue
            rows = {r.sim_id: r for r in self.rows if self.file_key(r.path) == fkey}
            for note in book.notes:
                out.append((rows.get(note.sim_id), book, note))
        return out

    def note_values(self, name: str) -> list[tuple[str, int]]:
        """Distinct note sources or error types with how many runs have such a note (for filter pickers)."""
        counts: dict[str, int] = {}
        for row in self.rows:
            for value in {n.source if name == "note_source" else n.error_type for n in row.notes}:
                counts[value] = counts.get(value, 0) + 1
        return sorted((value, n) for value, n in counts.items() if value != "")

    def remove_file(self, path: Path) -> None:
        fkey = self.file_key(path)
        self.files.pop(fkey, None)
        self.notices.pop(fkey, None)
        gone = {r.key for r in self.rows if r.run.path == path}
        self.rows = [r for r in self.rows if r.key not in gone]
        for key in gone:
            self.by_key.pop(key, None)

    def set_notice(self, path: Path, text: str, severity: str = "warning") -> None:
        """The one notice of ``path`` (a folder's summary, replaced on reload rather than repeated)."""
        self.notices[self.file_key(path)] = [Notice(path, text, severity)]

    def add_notice(self, path: Path, text: str, severity: str = "warning") -> None:
        self.notices.setdefault(self.file_key(path), []).append(Notice(path, text, severity))

    def all_notices(self) -> list[Notice]:
        return [n for notes in self.notices.values() for n in notes]

    def find(self, path: Path, sim_id: str) -> RunRow | None:
        """The row of simulation ``sim_id`` in file ``path`` (used to keep the cursor across reloads)."""
        for row in self.rows:
            if row.run.path == path and row.sim_id == sim_id:
                return row
        return None

    def view(self, flt: RunFilter, sort: SortSpec) -> list[RunRow]:
        return sort_rows((r for r in self.rows if flt.matches(r)), sort)

    def values(self, column: str) -> list[tuple[str, int]]:
        """Distinct values of a text column with their row counts, sorted by value (for filter pickers)."""
        getter: dict[str, Callable[[RunRow], str]] = {
            "termination": lambda r: r.termination, "model": lambda r: r.model,
            "domain": lambda r: r.domain, "file": lambda r: r.file_label, "retrieval": lambda r: r.retrieval,
            "submission": lambda r: r.submission,
        }
        counts: dict[str, int] = {}
        for row in self.rows:
            value = getter[column](row)
            if value == "" and column == "submission":
                continue  # runs outside any submission folder
            counts[value] = counts.get(value, 0) + 1
        return sorted(counts.items())

    def review_values(self, name: str) -> list[tuple[str, int]]:
        """Distinct review sources, tags, severities or auth statuses with their row counts (filter pickers)."""
        get: dict[str, Callable[[SimReview], Iterable[str]]] = {
            "review_source": lambda r: {e.source for e in r.errors}, "review_tag": lambda r: r.tags,
            "review_severity": lambda r: r.severities,
            "auth": lambda r: [r.auth_status] if r.auth_status else []}
        counts: dict[str, int] = {}
        for row in self.rows:
            for value in set(get[name](row.review)):
                counts[value] = counts.get(value, 0) + 1
        return sorted(counts.items())

    def flag_counts(self) -> dict[str, int]:
        """Evaluated rows with each process-flag kind (for the flag filter), in FLAG_KINDS order."""
        counts = {kind: 0 for kind in FLAG_KINDS}
        for row in self.rows:
            if row.evaluation is not None:
                for kind in row.evaluation.flags:
                    if kind in counts:  # a kind unregistered since the row was evaluated is not offered
                        counts[kind] += 1
        return counts

    def rows_of(self, path: Path) -> list[RunRow]:
        return [row for row in self.rows if row.run.path == path]
