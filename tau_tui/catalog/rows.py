"""The rows of the runs catalog: one per simulation of a loaded file, and what was derived for it.

Headless (no textual, no rich): the TUI's runs table, the CLI and tests share it.
A row keeps what the recording says apart from what we derived: the replay
(``ReplaySummary``) and the recomputed reward with its process flags
(``EvalSummary``), both filled in by one background worker. Notes on a
simulation (a sidecar beside its recording, ``model.notes``) are attached to
its row by the catalog; they are neither recorded nor derived.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tau_tui.evaluate import DETECTORS, FLAG_KINDS, FLAG_LETTERS, is_success
from tau_tui.evaluate.compliance import COMPLIANCE_KINDS
from tau_tui.evaluate.validity import SimValidity
from tau_tui.model.io import RunFile, RunFileError, SimEntry
from tau_tui.model.nesting import bounded
from tau_tui.model.notes import Note
from tau_tui.model.results import SCORED_TERMINATIONS
from tau_tui.model.reviews import SimReview, read_review
from tau_tui.model.submission import submission_label

# The submission label of each open run file, looked up once for all its rows (20k rows of one file would
# otherwise walk its folders 20k times); a reload opens new run files, so a changed submission.json is read again.
_SUBMISSION_LABELS: dict[int, tuple[weakref.ref[RunFile], str]] = {}  # id(run) -> (the run, its label)


def _file_submission_label(run: RunFile, path: Path) -> str:
    known = _SUBMISSION_LABELS.get(id(run))
    if known is not None and known[0]() is run:
        return known[1]
    label = submission_label(path)
    key = id(run)
    _SUBMISSION_LABELS[key] = (weakref.ref(run, lambda _ref: _SUBMISSION_LABELS.pop(key, None)), label)
    return label


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
    library_text: int = 0  # mismatches only in library-embedded text (replay/library_text.py)
    upstream_fix: int = 0  # mismatches the tool as fixed (or not yet fixed) upstream explains (env/upstream.py)
    first_mismatch_class: str | None = None

    @property
    def divergences(self) -> int:
        """Mismatches neither library text nor an upstream fix explains: what the runs table's ≠ counts."""
        return self.mismatches - self.library_text - self.upstream_fix

    @classmethod
    def of(cls, analysis: Any) -> ReplaySummary:
        timeline = analysis.timeline
        counts = timeline.verdict_counts()
        classes = timeline.mismatch_classes()
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
            library_text=classes["library_text"],
            upstream_fix=classes["upstream_fix"],
            first_mismatch_class=first["mismatch_class"] if first else None,
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
    options = [
        ("", "no process-flag filter"),
        (ANY_FLAG, f"any process flag  ·  {counts.get(ANY_FLAG, 0)} runs"),
        (PASSED_BUT_VIOLATED, f"passed but violated the policy  ·  {counts.get(PASSED_BUT_VIOLATED, 0)} runs"),
    ]
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
    validity: SimValidity | None = None  # what of it changes what a score over it means

    @classmethod
    def of(cls, report: Any, validity: SimValidity | None = None) -> EvalSummary:
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
            validity=validity,
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
        """The recorded review fields (``tau2 review``, auth, hallucination check), read once; a simulation the
        index saw none of them in is not parsed (a streamed file stays unparsed)."""
        if self._review is None:
            known = getattr(self.run.raw_sims, "reviews", None)  # read while indexing (model.indexing)
            if known and self.index in known:
                self._review = known[self.index]
            elif not self.entry.reviewed:
                self._review = SimReview()
            else:
                try:
                    self._review = read_review(self.run.raw_simulation(self.index))
                except RunFileError:  # changed on disk: said where the simulation is opened; nothing kept
                    return SimReview()
        return self._review

    @property
    def submission(self) -> str:
        """The leaderboard submission the file belongs to (model · organisation), "" outside one."""
        if self._submission is None:
            self._submission = _file_submission_label(self.run, self.path)
        return self._submission

    @property
    def termination(self) -> str:
        return self.entry.termination or "?"

    @property
    def cost(self) -> float | None:
        """Agent and user cost together; None when nothing is priced, or when a side is recorded unpriced
        (null: tau2 could not price it, a voice agent's ``agent_cost`` among them), as the total is then unknown."""
        if self.entry.unpriced:
            return None
        parts = [c for c in (self.entry.agent_cost, self.entry.user_cost) if c is not None]
        return sum(parts) if parts else None

    @property
    def partly_unpriced(self) -> bool:
        """One side is priced and the other recorded unpriced: some cost is known, the total is not."""
        entry = self.entry
        return bool(entry.unpriced) and (entry.agent_cost is not None or entry.user_cost is not None)

    @property
    def error(self) -> str | None:
        """The error an infrastructure failure left in ``info`` (None when there is none)."""
        return self.entry.error

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
            try:
                self._haystack = sim_text(self.run.raw_simulation(self.index)).lower()
            except RunFileError:  # changed on disk: nothing to search until it is reloaded
                return ""
        return self._haystack

    def set_haystack(self, text: str) -> None:
        """The searchable text computed elsewhere (a worker process); kept only when none is known yet."""
        if self._haystack is None:
            self._haystack = text


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
