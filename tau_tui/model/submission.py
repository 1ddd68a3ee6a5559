"""Leaderboard submission folders: ``submission.json`` beside ``trajectories/``, opened as one unit.

tau2's ``tau2 submit prepare`` writes ``<folder>/submission.json`` (who made the model, who ran it, the
claimed pass^1..pass^4 per domain as percentages, the retrieval config of ``banking_knowledge``, the
voice config of audio-native runs) and copies one results file per domain into ``trajectories/``
(voice: one run folder per domain). ``trajectory_files`` maps a domain to its name there.

``submission.json`` is untrusted input: it is read tolerantly (a wrong field becomes a warning, not a
failure) except where nothing useful is left (not JSON, not an object, no model name), which raises a
``SubmissionError`` whose ``str()`` is one line naming the file. A name in ``trajectory_files`` is
never a path: one that leads out of ``trajectories/`` is refused.

Submissions as published read too: the old schema (no ``trajectory_files``: the runs say their domains;
``organization`` where the newer schema has ``model_organization``), the cost and time metrics of
tau2-bench PR 443 (``user_cost``, ``total_cost``, ``duration_seconds``, ``agent_time_seconds``,
``user_time_seconds``, ``tool_time_seconds`` per domain) and the user-simulator version of PR 444
(``methodology.user_simulator``: a published version such as ``v2.0`` for voice). A claim that the
methodology calls a best-of-K over several trajectory files ("Best-of-K fusion: each task … passes if any
model succeeds") is checked against the best-of-K (union) score of those files (``best_of_k``), not file
by file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from tau_tui.model.io import (
    SUBMISSION_FILE,
    TRAJECTORIES_DIR,
    PathScan,
    RunFile,
    RunFileError,
    contained,
    is_submission_folder,
    open_run,
    read_json,
    scan_paths,
)

PASS_KEYS = (1, 2, 3, 4)
MAX_TEXT = 200  # longest text field kept from submission.json (names, dates, types)
# Per-domain cost and time metrics (tau2-bench PR 443), beside ``cost`` (the agent's, per conversation).
COST_TIME_KEYS = (
    "user_cost",
    "total_cost",
    "duration_seconds",
    "agent_time_seconds",
    "user_time_seconds",
    "tool_time_seconds",
)
COST_ESTIMATED = "estimated from trajectory token usage"  # PR 443's note on costs it back-filled from tokens
# How a methodology says that a claim takes the best attempt per task over several runs or models.
BEST_OF_K = re.compile(
    r"best[- ]of[- ]?(?:k|n|\d+)\b[^.;\n]*|passe?s? if any [^.;\n]*succeeds?|best (?:result|score|attempt|run) per task",
    re.IGNORECASE,
)
SUCCESS_TOLERANCE = 1e-6  # tau2's success: a reward of 1 within 1e-6 (evaluate.reward.is_success)


class SubmissionError(Exception):
    """A ``submission.json`` that cannot be used; ``str()`` is one line naming the file and the problem."""

    def __init__(self, path: Path | str, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


@dataclass
class DomainClaim:
    """What a submission claims for one domain: pass^k as fractions (tau2 writes percentages), cost, retrieval."""

    domain: str
    pass_hat_k: dict[int, float] = field(default_factory=dict)
    cost: float | None = None
    retrieval_config: str | None = None
    cost_time: dict[str, float] = field(default_factory=dict)  # PR 443's metrics (``COST_TIME_KEYS``)

    def cost_time_text(self) -> str | None:
        """``cost $0.119 (user $0.014, total $0.133) · 131 s (agent 118 s, user 13.5 s, tools 0 s)``."""
        money = [f"{k.removesuffix('_cost')} ${v:.3f}" for k, v in self.cost_time.items() if k.endswith("_cost")]
        times = [
            f"{k.removesuffix('_time_seconds').replace('tool', 'tools')} {v:g} s"
            for k, v in self.cost_time.items()
            if k.endswith("_time_seconds")
        ]
        parts = []
        if self.cost is not None or money:
            head = f"cost ${self.cost:.3f}" if self.cost is not None else "cost"
            parts.append(head + (f" ({', '.join(money)})" if money else ""))
        duration = self.cost_time.get("duration_seconds")
        if duration is not None or times:
            head = f"{duration:g} s" if duration is not None else "time"
            parts.append(head + (f" ({', '.join(times)})" if times else ""))
        return " · ".join(parts) or None


@dataclass
class Submission:
    """The metadata of one submission folder (``trajectories`` not opened yet: see ``open_submission``)."""

    folder: Path
    model_name: str
    model_organization: str | None = None
    submitting_organization: str | None = None
    submission_date: str | None = None
    submission_type: str = "standard"
    modality: str = "text"
    user_simulator: str | None = None
    claims: dict[str, DomainClaim] = field(default_factory=dict)
    trajectory_files: dict[str, str] = field(default_factory=dict)
    voice_config: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    best_of_k: str | None = None  # the methodology's words that make its claims best-of-K over several files
    cost_estimated: bool = False  # its costs were estimated from token usage (PR 443's note)

    @property
    def path(self) -> Path:
        return self.folder / SUBMISSION_FILE

    @property
    def label(self) -> str:
        """One short name for the runs table and reports: model · organisation · type."""
        parts = [self.model_name, self.model_organization or self.submitting_organization]
        if self.submission_type != "standard":
            parts.append(self.submission_type)
        if self.modality != "text":
            parts.append(self.modality)
        return " · ".join(p for p in parts if p)

    def trajectory_path(self, domain: str) -> Path | None:
        """The file or run folder ``trajectory_files`` names for ``domain`` (None when it names none)."""
        name = self.trajectory_files.get(domain)
        return None if name is None else self.folder / TRAJECTORIES_DIR / name

    def domain_of(self, path: Path) -> str | None:
        """The domain whose ``trajectory_files`` entry is ``path`` (a run file, or a voice run's folder)."""
        for domain, name in self.trajectory_files.items():
            target = self.folder / TRAJECTORIES_DIR / name
            if path == target or path.parent == target:
                return domain
        return None

    def run_domain(self, run: RunFile) -> str | None:
        """The domain ``run`` stands for in this submission: as ``trajectory_files`` files it, else as it says."""
        return self.domain_of(run.path) or run.domain

    def claim_for(self, run: RunFile) -> DomainClaim | None:
        """What this submission claims for the domain of ``run`` (None when it claims nothing there)."""
        domain = self.run_domain(run)
        return None if domain is None else self.claims.get(domain)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "model_name": self.model_name,
            "model_organization": self.model_organization,
            "submitting_organization": self.submitting_organization,
            "submission_date": self.submission_date,
            "submission_type": self.submission_type,
            "modality": self.modality,
            "user_simulator": self.user_simulator,
            "voice_config": self.voice_config,
            "best_of_k": self.best_of_k,
            "cost_estimated": self.cost_estimated,
        }

    def retrieval_config(self, domain: str) -> str | None:
        claim = self.claims.get(domain)
        return claim.retrieval_config if claim else None


@dataclass
class SubmissionUnit:
    """A submission with its trajectories opened: a run per domain, and one line per problem found."""

    submission: Submission
    runs: dict[str, RunFile] = field(default_factory=dict)  # the first run of each domain
    unclaimed: list[RunFile] = field(default_factory=list)  # files in trajectories/ no domain entry names
    problems: list[str] = field(default_factory=list)
    domain_runs: dict[str, list[RunFile]] = field(default_factory=dict)  # every run of each domain

    def best_of_k(self, domain: str) -> BestOfK:
        """The best-of-K score of the domain's runs, over their recorded rewards."""
        attempts = (
            (str(run.path), e.task_id, e.reward) for run in self.domain_runs.get(domain, []) for e in run.entries
        )
        return best_of_k(domain, attempts)


# --- tolerant field readers ------------------------------------------------------------


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()[:MAX_TEXT]
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _long_text(value: Any) -> str | None:
    """A free-text field (methodology notes), kept whole: only searched, never shown."""
    return value if isinstance(value, str) and value.strip() else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _claim(domain: str, raw: Any, warn: list[str]) -> DomainClaim | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        warn.append(f"results.{domain} is not an object: ignored")
        return None
    claim = DomainClaim(domain)
    for k in PASS_KEYS:
        value = raw.get(f"pass_{k}")
        if value is None:
            continue
        number = _number(value)
        if number is None or not 0 <= number <= 100:
            warn.append(f"results.{domain}.pass_{k} is not a percentage (0-100): ignored")
            continue
        claim.pass_hat_k[k] = number / 100
    cost = raw.get("cost")
    if cost is not None:
        claim.cost = _number(cost)
        if claim.cost is None or claim.cost < 0:
            claim.cost = None
            warn.append(f"results.{domain}.cost is not a non-negative number: ignored")
    claim.retrieval_config = _text(raw.get("retrieval_config"))
    for key in COST_TIME_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        number = _number(value)
        if number is None or number < 0:
            warn.append(f"results.{domain}.{key} is not a non-negative number: ignored")
            continue
        claim.cost_time[key] = number
    if domain == "banking_knowledge" and claim.retrieval_config is None:
        warn.append("results.banking_knowledge has no retrieval_config (tau2 requires one)")
    return claim


def _trajectory_files(folder: Path, raw: Any, warn: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        warn.append("trajectory_files is not an object: ignored")
        return {}
    out: dict[str, str] = {}
    base = folder / TRAJECTORIES_DIR
    for domain, name in raw.items():
        if not isinstance(name, str) or not name or "\x00" in name:
            warn.append(f"trajectory_files.{domain} is not a file name: ignored")
            continue
        candidate = Path(name)
        if candidate.is_absolute() or ".." in candidate.parts or not contained(base, base / candidate):
            warn.append(f"trajectory_files.{domain} leads outside trajectories/: ignored")
            continue
        out[str(domain)] = name
    return out


def read_submission(folder: Path | str) -> Submission:
    """The ``submission.json`` of ``folder`` (the folder, or the file itself), read tolerantly."""
    folder = Path(folder)
    if folder.name == SUBMISSION_FILE and not folder.is_dir():
        folder = folder.parent
    path = folder / SUBMISSION_FILE
    if not path.is_file():
        raise SubmissionError(path, "does not exist" if not path.exists() else "is not a regular file")
    try:
        data = read_json(path)
    except RunFileError as exc:
        raise SubmissionError(path, exc.problem) from None
    if not isinstance(data, dict):
        raise SubmissionError(path, f"top level is {type(data).__name__}, expected a submission object")
    model_name = _text(data.get("model_name"))
    if model_name is None:
        raise SubmissionError(path, "has no model_name: not a leaderboard submission")
    warn: list[str] = []
    results = data.get("results")
    claims: dict[str, DomainClaim] = {}
    if isinstance(results, dict):
        for domain, raw in results.items():
            claim = _claim(str(domain), raw, warn)
            if claim is not None:
                claims[claim.domain] = claim
    else:
        warn.append("results is missing or not an object: no claimed pass^k")
    methodology = data.get("methodology")
    if not isinstance(methodology, dict):
        methodology = {}
    notes = " ".join(
        t
        for t in (
            _long_text(methodology.get("notes")),
            _long_text(_object(methodology.get("verification")).get("details")),
            _long_text(data.get("notes")),
        )
        if t
    )
    best = BEST_OF_K.search(notes)
    voice = data.get("voice_config")
    if voice is not None and not isinstance(voice, dict):
        warn.append("voice_config is not an object: ignored")
        voice = None
    return Submission(
        folder=folder,
        model_name=model_name,
        model_organization=_text(data.get("model_organization")) or _text(data.get("organization")),  # old key
        submitting_organization=_text(data.get("submitting_organization")),
        submission_date=_text(data.get("submission_date")),
        submission_type=_text(data.get("submission_type")) or "standard",
        modality=_text(data.get("modality")) or "text",
        user_simulator=_text(methodology.get("user_simulator")),
        claims=claims,
        trajectory_files=_trajectory_files(folder, data.get("trajectory_files"), warn),
        voice_config=voice,
        warnings=warn,
        best_of_k=best.group(0).strip()[:MAX_TEXT] if best else None,
        cost_estimated=COST_ESTIMATED in notes.lower(),
    )


def find_submission_folder(path: Path | str) -> Path | None:
    """The submission folder whose ``trajectories/`` holds ``path`` (a run file or run folder), or None."""
    path = Path(path)
    for parent in path.parents:
        if parent.name == TRAJECTORIES_DIR and is_submission_folder(parent.parent):
            return parent.parent
    return None


@lru_cache(maxsize=256)
def _cached(folder: Path, stamp: tuple[int, int]) -> Submission | SubmissionError:
    try:
        return read_submission(folder)
    except SubmissionError as exc:
        return exc


def submission_for(path: Path | str) -> Submission | SubmissionError | None:
    """The submission a run file belongs to (cached while its ``submission.json`` is unchanged).

    None when the run is in no submission folder; the ``SubmissionError`` (not raised) when it is in one
    whose ``submission.json`` cannot be used, so a caller shows the line and keeps the run.
    """
    folder = find_submission_folder(path)
    if folder is None:
        return None
    try:
        st = (folder / SUBMISSION_FILE).stat()
    except OSError as exc:
        return SubmissionError(folder / SUBMISSION_FILE, f"unreadable ({exc.strerror or exc})")
    return _cached(folder, (st.st_mtime_ns, st.st_size))


def trajectory_problems(submission: Submission) -> list[str]:
    """What ``trajectory_files`` leaves a claim without, one line each: a named file that does not exist, a claimed
    domain it names no file for. Read from the metadata and the file names alone (no run is opened); a
    submission without ``trajectory_files`` is checked by ``open_submission``, which reads its runs' domains."""
    problems = []
    for domain in submission.trajectory_files:
        target = submission.trajectory_path(domain)
        if target is not None and not target.exists():
            problems.append(f"{target}: does not exist (trajectory_files.{domain} of {submission.path})")
    if submission.trajectory_files:
        problems.extend(
            f"{submission.path}: results.{domain} has no trajectory file"
            for domain in submission.claims
            if domain not in submission.trajectory_files
        )
    return problems


def open_submission(folder: Path | str) -> SubmissionUnit:
    """Open a submission folder as one unit: its metadata and every run in ``trajectories/``.

    Raises ``SubmissionError`` only when ``submission.json`` is unusable; a missing or unreadable
    trajectory is one line in ``problems`` naming the file.
    """
    submission = read_submission(folder)
    unit = SubmissionUnit(submission)
    unit.problems.extend(f"{submission.path}: {w}" for w in submission.warnings)
    unit.problems.extend(trajectory_problems(submission))
    base = submission.folder / TRAJECTORIES_DIR
    scan = scan_paths([base]) if base.is_dir() else PathScan()
    unit.problems.extend(scan.link_notices())
    for path in scan.files:
        try:
            run = open_run(path)
        except RunFileError as exc:
            unit.problems.append(str(exc))
            continue
        domain = submission.domain_of(run.path) or submission.domain_of(path)
        if domain is None and not submission.trajectory_files:
            domain = run.domain_name  # an older submission without trajectory_files: the file says
        if domain is None:
            unit.unclaimed.append(run)
            continue
        unit.runs.setdefault(domain, run)
        unit.domain_runs.setdefault(domain, []).append(run)
        stated = run.domain_name
        if stated and stated != domain:
            unit.problems.append(f"{run.path}: its domain is {stated}, but {submission.path} files it under {domain}")
    if not submission.trajectory_files:  # the runs say their domains: a claim none of them has is unchecked
        unit.problems.extend(
            f"{submission.path}: results.{domain} has no trajectory file"
            for domain in submission.claims
            if domain not in unit.runs
        )
    return unit


def lone_submission_notes(path: Path | str) -> list[str]:
    """Load notes for a ``submission.json`` opened without its trajectories: what it is, and what it claims."""
    try:
        sub = read_submission(path)
    except SubmissionError as exc:
        return [str(exc)]
    claims = "; ".join(
        f"{domain} pass^1 {claim.pass_hat_k[1]:.3f}" if 1 in claim.pass_hat_k else f"{domain}: no pass^1"
        for domain, claim in sub.claims.items()
    )
    return [f"{sub.path}: submission {sub.label} claims {claims or 'nothing'}; trajectories not here"] + [
        f"{sub.path}: {w}" for w in sub.warnings
    ]


def submission_label(path: Path | str) -> str:
    """The runs-table name of the submission a run belongs to: its label, "" for none, a mark when unreadable."""
    sub = submission_for(path)
    if sub is None:
        return ""
    return "(unreadable submission.json)" if isinstance(sub, SubmissionError) else sub.label


def submission_notes(path: Path | str) -> list[str]:
    """Load notes for a run in a submission folder: why its ``submission.json`` is unusable, or its warnings and
    the claims it has no trajectory for (``trajectory_problems``)."""
    sub = submission_for(path)
    if sub is None:
        return []
    if isinstance(sub, SubmissionError):
        return [str(sub)]
    return [f"{sub.path}: {w}" for w in sub.warnings] + trajectory_problems(sub)


# --- best-of-K claims ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BestOfK:
    """The best-of-K (union) score of several trajectory files of one domain: a task passes when any attempt
    of it passes in any file; a task no attempt passes and some attempt has no reward for is unscored (left
    out, as the metrics leave out unscored simulations)."""

    domain: str
    files: int
    tasks: int
    passed: int
    unscored: int

    @property
    def score(self) -> float | None:
        """Passed tasks over the scored ones (a fraction; None when none is scored)."""
        scored = self.tasks - self.unscored
        return self.passed / scored if scored else None

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "tasks": self.tasks,
            "passed": self.passed,
            "unscored": self.unscored,
            "pass_hat_1": self.score,
        }

    def text(self) -> str:
        """``0.940 (47/50 tasks)``, with the unscored ones when there are some."""
        score = "n/a" if self.score is None else f"{self.score:.3f}"
        tail = f", {self.unscored} unscored" if self.unscored else ""
        return f"{score} ({self.passed}/{self.tasks - self.unscored} tasks{tail})"


def best_of_k(domain: str, attempts: Iterable[tuple[str, str, float | None]]) -> BestOfK:
    """The best-of-K score of (file, task id, reward) attempts (reward None: unscored)."""
    files: set[str] = set()
    passed: set[str] = set()
    seen: set[str] = set()
    unscored: set[str] = set()
    for file, task_id, reward in attempts:
        files.add(file)
        seen.add(task_id)
        if reward is None:
            unscored.add(task_id)
        elif abs(reward - 1.0) <= SUCCESS_TOLERANCE:
            passed.add(task_id)
    return BestOfK(domain, len(files), len(seen), len(passed), len(unscored - passed))
