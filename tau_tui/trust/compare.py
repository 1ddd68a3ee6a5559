"""Run-vs-run comparison over a whole task set: the pass/fail matrix and paired statistics.

Two sides (A, B), each one or more run files. Simulations are paired by task id and by trial
index: the recorded ``trial`` (or, where a side's trials of a task are not all recorded and
distinct, the n-th attempt of the task in file order). Each pair falls in one cell:

- ``both_pass``, ``a_only`` (A passed, B failed), ``b_only``, ``both_fail``;
- ``not_comparable``, with a reason: ``missing in A|B`` (no such attempt on that side),
  ``different domain`` (the same task id in two domains: two unrelated tasks), ``task changed``
  (the two sides ran different definitions of the task, by ``task_content_digest``),
  ``unscored in A|B`` (no reward could be computed, or an infrastructure error; never counted
  as a failure).

Each outcome keeps the protocol its file says made it (``model.protocol_info``): runs of different
protocols (tau2's prompts or ours, or other texts) measure different benchmarks, and the comparison says so
(``protocol_warning``) beside its difference.

On the comparable pairs: McNemar's exact test on the discordant cells (a_only vs b_only) and a
paired bootstrap interval (over tasks, seeded) of mean(B − A) reward. Each side also gets its
own intervals, flip rate and noise floor (``evaluate.stats.confidence``). Rewards are ours
(recomputed by replay) unless ``recorded`` asks for the ones in the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from tau_tui.analysis import Analyzer
from tau_tui.config import id_order
from tau_tui.domains import DomainError, split_variant
from tau_tui.evaluate import Judge
from tau_tui.evaluate.cost_time import CostTime, SimCostTime
from tau_tui.evaluate.metrics import INFRASTRUCTURE_ERROR
from tau_tui.evaluate.reward import is_success, scored_reward
from tau_tui.evaluate.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Confidence,
    Interval,
    confidence,
    group_by_task,
    mcnemar_exact,
    paired_bootstrap,
)
from tau_tui.evaluate.validity import SimValidity, Validity
from tau_tui.model.io import RecordedOnly, RunFile, RunFileError
from tau_tui.model.protocol_info import RecordedProtocol, protocol_warning
from tau_tui.model.tasks import task_content_digest

CATEGORIES = ("both_pass", "a_only", "b_only", "both_fail", "not_comparable")


@dataclass(frozen=True)
class SideOutcome:
    """One simulation of one side, as the comparison sees it."""

    file: Path
    index: int
    sim_id: str
    task_id: str
    trial: int | None  # as recorded
    reward: float | None  # the reward compared: ours, or the recorded one with ``recorded``
    recorded_reward: float | None
    termination: str | None
    db_match: bool | None
    final_db: str | None  # hash of the agent DB after replay (None without replay)
    digest: str | None  # task_content_digest of the task it ran, None when the task is unknown
    domain: str | None = None  # as its file states it (a policy variant such as ``telecom-workflow`` included)
    spend: SimCostTime = SimCostTime()  # its recorded cost, duration and tokens
    protocol: RecordedProtocol | None = field(default=None, compare=False)  # what its file says made it
    validity: SimValidity | None = field(default=None, compare=False)  # what of it changes what a score means

    @property
    def base_domain(self) -> str | None:
        """The domain without its policy variant: runs of two variants of one domain share its tasks."""
        return split_variant(self.domain)[0] if self.domain else None

    @property
    def unscored(self) -> bool:
        return scored_reward(self.reward) is None or self.termination == INFRASTRUCTURE_ERROR

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.file),
            "sim": self.sim_id,
            "trial": self.trial,
            "reward": self.reward,
            "recorded_reward": self.recorded_reward,
            "termination": self.termination,
            "db_match": self.db_match,
            "final_db": self.final_db,
            "task_digest": self.digest,
            "domain": self.domain,
        }


@dataclass(frozen=True)
class PairRow:
    """Attempt ``ordinal`` of ``task`` on both sides, and its cell of the matrix."""

    task: str
    ordinal: int
    a: SideOutcome | None
    b: SideOutcome | None
    category: str
    reason: str | None = None  # why not comparable

    @property
    def same_final_db(self) -> bool | None:
        """Whether both sides ended in the same agent DB (None when either was not replayed)."""
        if self.a is None or self.b is None or self.a.final_db is None or self.b.final_db is None:
            return None
        return self.a.final_db == self.b.final_db

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "trial_index": self.ordinal,
            "category": self.category,
            "reason": self.reason,
            "a": self.a.to_json() if self.a else None,
            "b": self.b.to_json() if self.b else None,
            "same_final_db": self.same_final_db,
        }


@dataclass
class RunComparison:
    a_label: str
    b_label: str
    rewards: str  # "ours" | "recorded"
    rows: list[PairRow]
    matrix: dict[str, int]
    not_comparable: dict[str, int]
    mcnemar_p: float | None
    difference: Interval | None  # mean(B - A) over comparable pairs
    a_confidence: Confidence
    b_confidence: Confidence
    seed: int
    errors: list[str] = field(default_factory=list)
    a_domains: list[str] = field(default_factory=list)  # the domains of A's simulations, as their files state them
    b_domains: list[str] = field(default_factory=list)
    a_cost: CostTime | None = None  # each side's recorded cost and time
    b_cost: CostTime | None = None
    a_protocols: list[RecordedProtocol] = field(default_factory=list)  # the distinct protocols of A's files
    b_protocols: list[RecordedProtocol] = field(default_factory=list)
    a_validity: Validity = field(default_factory=lambda: Validity(0))  # what changes what each side's score means
    b_validity: Validity = field(default_factory=lambda: Validity(0))

    @property
    def domain_warning(self) -> str | None:
        """One line when A and B are runs of different domains (their tasks are not compared), else None."""
        a, b = ({split_variant(d)[0] for d in side} for side in (self.a_domains, self.b_domains))
        if not a or not b or a == b:
            return None
        return (
            f"A is {_domains_text(self.a_domains)} and B is {_domains_text(self.b_domains)}: "
            "tasks of different domains are not comparable"
        )

    def protocol_warning(self, a_name: str = "A", b_name: str = "B") -> str | None:
        """One line when A and B ran different protocols (or one side mixes them), naming them ``a_name`` and
        ``b_name``; None when they agree."""
        return protocol_warning(self.a_protocols, self.b_protocols, a_name, b_name)

    def validity_warnings(self, a_name: str = "A", b_name: str = "B") -> list[str]:
        """Each side's validity lines (``evaluate.validity``), named ``a_name`` and ``b_name``."""
        recorded = self.rewards == "recorded"
        return self.a_validity.warnings(recorded, f"{a_name}: ") + self.b_validity.warnings(recorded, f"{b_name}: ")

    @property
    def warnings(self) -> list[str]:
        """Why the difference may not mean what it seems: other domains, other protocols, and what of either
        side's simulations changes what its score means."""
        return [w for w in (self.domain_warning, self.protocol_warning()) if w] + self.validity_warnings()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "comparison",
            "a": self.a_label,
            "b": self.b_label,
            "rewards": self.rewards,
            "domains": {"a": self.a_domains, "b": self.b_domains},
            "protocols": {"a": [p.to_json() for p in self.a_protocols], "b": [p.to_json() for p in self.b_protocols]},
            "validity": {
                "a": self.a_validity.to_json(self.rewards == "recorded"),
                "b": self.b_validity.to_json(self.rewards == "recorded"),
            },
            "warnings": self.warnings,
            "matrix": self.matrix,
            "not_comparable": self.not_comparable,
            "mcnemar": {
                "b_a_only": self.matrix["a_only"],
                "c_b_only": self.matrix["b_only"],
                "p_value": self.mcnemar_p,
                "test": "exact binomial, two-sided",
            },
            "difference_b_minus_a": self.difference.to_json() if self.difference else None,
            "seed": self.seed,
            "a_confidence": self.a_confidence.to_json(),
            "b_confidence": self.b_confidence.to_json(),
            "a_cost": cost_time_json(self.a_cost),
            "b_cost": cost_time_json(self.b_cost),
        }


def cost_time_json(spend: CostTime | None) -> dict[str, Any] | None:
    """A side's ``cost``, ``duration`` and ``tokens``, as ``eval --json`` writes them for a file."""
    if spend is None:
        return None
    return {"cost": spend.cost_json(), "duration": spend.duration_json(), "tokens": spend.tokens_json()}


def side_cost_time(outcomes: Sequence[SideOutcome]) -> CostTime:
    """The recorded cost and time of one side, with its successes by the rewards compared."""
    scored = [o.reward for o in outcomes if not o.unscored and o.reward is not None]
    return CostTime.of((o.spend for o in outcomes), sum(map(is_success, scored)) if scored else None)


def _domains_text(domains: Sequence[str]) -> str:
    return f"domain{'s' if len(domains) > 1 else ''} {', '.join(domains)}"


def task_order(task_id: str) -> tuple[int, int, str]:
    """Task ids that are whole numbers in number order, before the others in text order (``config.id_order``)."""
    return id_order(task_id)


def _digest(run: RunFile, task_id: str, analyzer: Analyzer | None) -> str | None:
    task = run.tasks().get(task_id)
    if task is None and analyzer is not None:
        try:
            task = analyzer.domain_of(run)[0].tasks().get(task_id)
        except DomainError:
            task = None
    if task is None:
        return None
    return analyzer.fingerprint(task) if analyzer is not None else task_content_digest(task)


def load_side(
    runs: Iterable[tuple[Path, RunFile]],
    analyzer: Analyzer,
    *,
    recorded: bool = False,
    judge: Judge | None = None,
    via: Any = None,
    cancelled: Callable[[], bool] | None = None,
    visit: Callable[[Path, RunFile, int, Any, Any], None] | None = None,
) -> tuple[list[SideOutcome], list[str]]:
    """The outcomes of every simulation of ``runs``, and one error line per file that could not be scored.

    With ``recorded`` the recorded rewards are compared and nothing is replayed. ``via``: what replays and
    assesses (``analyze(run, index)``, ``assess(analysis, judge=)``), the analyzer itself by default (the
    TUI passes its thread-safe replay service); ``cancelled`` stops early when it returns true. ``visit``:
    called with (path, run, index, analysis, report) after each simulation is scored (None, None with
    ``recorded``), for a caller that shows more of it without replaying it twice.
    """
    source = via if via is not None else analyzer
    outcomes: list[SideOutcome] = []
    errors: list[str] = []
    for path, run in runs:
        protocol = RecordedProtocol.of_info(run.raw_info)
        for index, entry in enumerate(run.entries):
            if cancelled is not None and cancelled():
                return outcomes, errors
            if entry.problem:
                errors.append(f"{path}: {entry.problem}")
                continue
            digest = _digest(run, entry.task_id, analyzer)
            spend = SimCostTime.of_raw(run.raw_simulation(index))
            if recorded:
                validity = SimValidity.of(
                    entry.id,
                    entry.task_id,
                    termination=entry.termination,
                    reward=entry.reward,
                    task_changed=analyzer.task_changed(run, entry.task_id),
                    agent_cost=spend.agent_usd,
                    duration=spend.duration_s,
                    placeholder=run.placeholder(index),
                )
                outcomes.append(
                    SideOutcome(
                        path,
                        index,
                        entry.id,
                        entry.task_id,
                        entry.trial,
                        entry.reward,
                        entry.reward,
                        entry.termination,
                        entry.db_match,
                        None,
                        digest,
                        run.domain,
                        spend,
                        protocol,
                        validity,
                    )
                )
                if visit is not None:
                    visit(path, run, index, None, None)
                continue
            try:
                analysis = source.analyze(run, index)
                report = source.assess(analysis, judge=judge)
            except (DomainError, RecordedOnly) as exc:  # the whole file: one line
                errors.append(f"{exc}; --recorded compares its recorded rewards")  # never graded as another domain
                break
            except RunFileError as exc:
                errors.append(str(exc))
                continue
            outcomes.append(
                SideOutcome(
                    path,
                    index,
                    entry.id,
                    entry.task_id,
                    entry.trial,
                    report.evaluation.reward,
                    report.recorded_reward,
                    report.evaluation.termination,
                    analysis.db_match,
                    analysis.pred_db,
                    digest,
                    run.domain,
                    spend,
                    protocol,
                    analyzer.validity(analysis, report, spend),
                )
            )
            if visit is not None:
                visit(path, run, index, analysis, report)
    return outcomes, errors


def _attempts(outcomes: Sequence[SideOutcome]) -> dict[tuple[str, int], SideOutcome]:
    """Key each outcome by (task, trial index): the recorded trial when a task's trials are all recorded and
    distinct, else the n-th attempt of the task in file order."""
    by_task: dict[str, list[SideOutcome]] = {}
    for o in outcomes:
        by_task.setdefault(o.task_id, []).append(o)
    keyed: dict[tuple[str, int], SideOutcome] = {}
    for task, items in by_task.items():
        trials = [o.trial for o in items]
        by_trial = None not in trials and len(set(trials)) == len(trials)
        for ordinal, o in enumerate(items):
            keyed[(task, o.trial if by_trial and o.trial is not None else ordinal)] = o
    return keyed


def _row(task: str, ordinal: int, a: SideOutcome | None, b: SideOutcome | None) -> PairRow:
    if a is None or b is None:
        return PairRow(task, ordinal, a, b, "not_comparable", "missing in A" if a is None else "missing in B")
    if a.base_domain is not None and b.base_domain is not None and a.base_domain != b.base_domain:
        return PairRow(task, ordinal, a, b, "not_comparable", "different domain")
    if a.digest is not None and b.digest is not None and a.digest != b.digest:
        return PairRow(task, ordinal, a, b, "not_comparable", "task changed")
    if a.unscored or b.unscored:
        return PairRow(task, ordinal, a, b, "not_comparable", "unscored in A" if a.unscored else "unscored in B")
    assert a.reward is not None and b.reward is not None  # both scored
    pa, pb = is_success(a.reward), is_success(b.reward)
    category = "both_pass" if pa and pb else "a_only" if pa else "b_only" if pb else "both_fail"
    return PairRow(task, ordinal, a, b, category)


def side_confidence(outcomes: Sequence[SideOutcome], seed: int, resamples: int) -> Confidence:
    """One side's intervals, flip rate and noise floor over its scored rewards."""
    by_task = group_by_task([(o.task_id, None if o.unscored else o.reward) for o in outcomes])
    max_k = min((len(r) for r in by_task.values()), default=0)
    return confidence(by_task, max_k, seed=seed, resamples=resamples)


def compare_runs(
    a: Sequence[SideOutcome],
    b: Sequence[SideOutcome],
    *,
    a_label: str = "A",
    b_label: str = "B",
    rewards: str = "ours",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    errors: Sequence[str] = (),
) -> RunComparison:
    left, right = _attempts(a), _attempts(b)
    keys = sorted(set(left) | set(right), key=lambda key: (task_order(key[0]), key[1]))
    rows = [_row(task, ordinal, left.get((task, ordinal)), right.get((task, ordinal))) for task, ordinal in keys]
    matrix = {category: 0 for category in CATEGORIES}
    reasons: dict[str, int] = {}
    pairs: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        matrix[row.category] += 1
        if row.reason:
            reasons[row.reason] = reasons.get(row.reason, 0) + 1
        else:  # a comparable pair: both sides there and scored
            assert row.a is not None and row.b is not None and row.a.reward is not None and row.b.reward is not None
            pairs.setdefault(row.task, []).append((row.a.reward, row.b.reward))
    comparable = sum(matrix[c] for c in CATEGORIES[:4])
    return RunComparison(
        a_label,
        b_label,
        rewards,
        rows,
        matrix,
        dict(sorted(reasons.items())),
        mcnemar_exact(matrix["a_only"], matrix["b_only"]) if comparable else None,
        paired_bootstrap(pairs, seed=seed, resamples=resamples),
        side_confidence(a, seed, resamples),
        side_confidence(b, seed, resamples),
        seed,
        list(errors),
        _domains_of(a),
        _domains_of(b),
        side_cost_time(a),
        side_cost_time(b),
        protocols_of(a),
        protocols_of(b),
        Validity.of(o.validity for o in a),
        Validity.of(o.validity for o in b),
    )


def _domains_of(outcomes: Sequence[SideOutcome]) -> list[str]:
    return sorted({o.domain for o in outcomes if o.domain})


def protocols_of(outcomes: Sequence[SideOutcome]) -> list[RecordedProtocol]:
    """The distinct protocols of a side's files, in the order first met."""
    return list(dict.fromkeys(o.protocol for o in outcomes if o.protocol is not None))


def _reward(o: SideOutcome | None) -> str:
    if o is None:
        return "—"
    return "unscored" if o.unscored else f"{o.reward:g}"


def statistics_lines(cmp: RunComparison) -> list[str]:
    """McNemar, the paired interval of B − A, and each side's interval, flip rate and noise floor."""
    m = cmp.matrix
    out = []
    if cmp.mcnemar_p is not None:
        out.append(f"McNemar exact: A-only {m['a_only']}, B-only {m['b_only']}, p = {cmp.mcnemar_p:.4g}")
    if cmp.difference is not None:
        d = cmp.difference
        out.append(
            f"mean reward B − A: {d.estimate * 100:+.1f} points "
            f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}] ({d.level:.0%} paired bootstrap over tasks, "
            f"seed {d.seed}, {d.resamples} resamples)"
        )
    protocol = cmp.protocol_warning()
    if protocol:
        out.append(f"warning: {protocol}")
    out += [f"warning: {line}" for line in cmp.validity_warnings()]
    for name, conf in (("A", cmp.a_confidence), ("B", cmp.b_confidence)):
        out.append(f"{name}: " + "; ".join(conf.lines()[:1] + [conf.flips.text(), conf.noise.text()]))
    for name, spend in (("A", cmp.a_cost), ("B", cmp.b_cost)):
        if spend is not None:
            out.append(f"{name}: recorded {spend.text()}")
    return out


def comparison_lines(cmp: RunComparison, rows: bool = True, tasks: Mapping[str, str] | None = None) -> list[str]:
    """The plain-text report of ``tau-tui compare``: the matrix, the statistics, then one line per pair.

    ``tasks``: each task id as the rows show it (the front end shortens long ids to fit); whole ids without it.
    """
    m = cmp.matrix
    out = [
        f"A: {cmp.a_label}",
        f"B: {cmp.b_label}",
        f"rewards: {cmp.rewards}",
        "",
        f"{'':12}{'B pass':>8}{'B fail':>8}",
        f"{'A pass':12}{m['both_pass']:>8}{m['a_only']:>8}",
        f"{'A fail':12}{m['b_only']:>8}{m['both_fail']:>8}",
    ]
    reasons = ", ".join(f"{n} {reason}" for reason, n in cmp.not_comparable.items())
    out.append(f"not comparable: {m['not_comparable']}" + (f" ({reasons})" if reasons else ""))
    out.append("")
    out += statistics_lines(cmp)
    if rows:
        out.append("")
        shown = {row.task: (tasks or {}).get(row.task, row.task) for row in cmp.rows}
        width = max([4, *(len(task) for task in shown.values())])
        out.append(f"{'task':<{width}} {'#':>3}  {'A':>9}  {'B':>9}  {'db A/B':<9} {'same DB':<8} cell")
        for row in cmp.rows:
            dbs = "/".join(
                "?" if o is None or o.db_match is None else "ok" if o.db_match else "x" for o in (row.a, row.b)
            )
            same = "" if row.same_final_db is None else "yes" if row.same_final_db else "no"
            cell = row.category + (f" ({row.reason})" if row.reason else "")
            out.append(
                f"{shown[row.task]:<{width}} {row.ordinal:>3}  {_reward(row.a):>9}  {_reward(row.b):>9}  "
                f"{dbs:<9} {same:<8} {cell}"
            )
    return out
