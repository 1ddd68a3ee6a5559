"""Replay and DB check of recorded simulations: ties run files, domains and replay together.

Used by the CLI, the TUI and the tests, so that all three see the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from tau_tui.domains import Domain, DomainError, DomainRegistry
from tau_tui.env.environment import Environment
from tau_tui.env.upstream import UpstreamFix, apply_upstream_fixes, upstream_fixes
from tau_tui.evaluate import GoldCache, Judge, ScorerConfig, SimReport, assess, scorer_config_for
from tau_tui.evaluate.cost_time import SimCostTime
from tau_tui.evaluate.validity import SimValidity
from tau_tui.model.io import RecordedOnly, RunFile, RunFileError
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task, db_check_rule, db_verdict, ungraded_fields
from tau_tui.recording_gaps import RunResolver
from tau_tui.replay import FindingKind, GoldResult, InitCache, Timeline, Verdict, replay, run_assertions
from tau_tui.replay.facts import Fact, replay_facts, summary_facts
from tau_tui.replay.mismatch import mismatch_detail
from tau_tui.replay.recorded_db import FinalDBComparison, check_recorded_db
from tau_tui.replay.timeline import Finding


@dataclass
class SimAnalysis:
    """Everything replay derives for one simulation."""

    run: RunFile
    index: int
    sim: SimulationRun
    domain: str | None
    task: Task | None
    timeline: Timeline
    gold: GoldResult | None
    assertions: list[tuple[Any, bool | None, str | None]] = field(default_factory=list)

    @property
    def pred_db(self) -> str | None:
        return self.timeline.final.agent_hash()

    @property
    def pred_user_db(self) -> str | None:
        return self.timeline.final.user_hash()

    @property
    def db_rule(self) -> str | None:
        """Which tau2 rule decides the DB check of this simulation's task (``model.tasks.db_check_rule``)."""
        return db_check_rule(self.task)

    @property
    def hashes_match(self) -> bool | None:
        """Whether the final DB hashes (agent and user) equal the gold ones; None without a gold state."""
        if self.gold is None:
            return None
        return self.pred_db == self.gold.agent_hash and self.pred_user_db == self.gold.user_hash

    @property
    def db_match(self) -> bool | None:
        """tau2's ``db_match``: the hash comparison, or what tau2's rule for absent criteria says instead."""
        return db_verdict(self.db_rule, self.hashes_match)

    @cached_property
    def recorded_db_check(self) -> FinalDBComparison | None:
        """The final DB the recording stores (an Inspect log's) against ours; None when it stores none."""
        return check_recorded_db(self.sim.info, self.timeline.final)

    @property
    def findings(self) -> list[Finding]:
        return self.timeline.findings + (self.gold.findings if self.gold else [])

    @property
    def hallucinated(self) -> int:
        return sum(1 for c in self.timeline.calls if c.verdict is Verdict.SKIPPED_UNKNOWN)

    def first_mismatch(self, detail: bool = False) -> dict[str, Any] | None:
        """The first call whose replayed output differs from the recording; ``detail``: field by field too."""
        for record in self.timeline.calls:
            if record.verdict is Verdict.MISMATCH:
                out = {
                    "step": record.result_step,
                    "call_id": record.call.id,
                    "tool": record.name,
                    "arguments": record.call.arguments,
                    "recorded": record.recorded,
                    "replayed": record.replayed,
                    **record.mismatch_json(),
                }
                if detail:
                    out["detail"] = [c.to_json() for c in mismatch_detail(record.recorded, record.replayed)]
                return out
        return None

    def to_json(self, detail: bool = True) -> dict[str, Any]:
        """The ``tau-tui replay --json`` record (``detail``: the first mismatch field by field, with deepdiff)."""
        sim = self.sim
        reward_info = sim.reward_info
        consolidated = sim.consolidated
        recovered = self.run.recovered(self.index)
        return {
            "file": str(self.run.path),
            "sim": sim.id,
            "task": sim.task_id,
            "trial": sim.trial,
            "domain": self.domain,
            "domain_source": self.run.resolution.source if self.run.resolution is not None else None,
            "recovered": list(recovered.how) if recovered is not None else None,
            "termination": sim.termination_reason,
            "graded_from": sim.graded_from,
            "consolidated_messages": len(consolidated) if consolidated is not None else None,
            "strict_ok": self.timeline.strict_ok,
            "first_mismatch": self.first_mismatch(detail=detail),
            "mismatch_classes": self.timeline.mismatch_classes(),
            "verdicts": self.timeline.verdict_counts(),
            "findings": [f.to_json() for f in self.findings],
            "pred_db": self.pred_db,
            "pred_user_db": self.pred_user_db,
            "gold_db": self.gold.agent_hash if self.gold else None,
            "gold_user_db": self.gold.user_hash if self.gold else None,
            "db_match": self.db_match,
            "db_rule": self.db_rule,
            "env_assertions": [met for _, met, _ in self.assertions],
            "recorded_reward": reward_info.reward if reward_info else None,
            "recorded_db_match": reward_info.db_check.db_match if reward_info and reward_info.db_check else None,
            "recorded_final_db": self.recorded_db_check.to_json() if self.recorded_db_check else None,
            "upstream_fixes": list(self.timeline.env.upstream_fixes) if self.timeline.env is not None else [],
        }

    def facts(self, record: dict[str, Any] | None = None, detail: bool = True) -> list[Fact]:
        """What to show about this simulation, in order (``tau_tui.replay.facts``; ``record``: ``to_json()``).

        ``detail=False``: without the first mismatch's field-by-field detail, so without importing deepdiff.
        """
        return replay_facts(self.to_json(detail) if record is None else record, self.timeline, self.gold is not None)

    def summary(self, record: dict[str, Any] | None = None) -> list[Fact]:
        """The one-line counts of the inspector's header (``tau_tui.replay.facts.summary_facts``)."""
        return summary_facts(self.to_json(detail=False) if record is None else record, self.timeline)


class Analyzer:
    """Replays simulations of loaded run files; caches gold states per task.

    ``upstream_fixes``: replay with every registered upstream fix applied (``env/upstream.py``) instead of
    tau2 1.0.1's tools.
    """

    def __init__(self, registry: DomainRegistry, upstream_fixes: bool = False, recording_domain: str | None = None):
        """``recording_domain``: the domain of recordings that name none (``--domain``)."""
        self.registry = registry
        self.upstream_fixes = upstream_fixes
        self.resolver = RunResolver(registry, recording_domain)
        self.golds = GoldCache()
        self._init = InitCache()
        self._scorers: dict[str, ScorerConfig | None] = {}

    def forget(self) -> None:
        """Drop the cached gold and initial states (a cold start, as benchmarks measure it)."""
        self.golds = GoldCache()
        self._init = InitCache()

    def fingerprint(self, task: Task) -> str:
        """The task's ``task_content_digest`` (memoised): what the calibration fingerprint holds."""
        return self.golds.digest(task)

    def prepare(self, run: RunFile) -> list[str]:
        """Work out, once, what ``run`` leaves out (``tau_tui.recording_gaps``: its domain when it names none, the task
        ids, trials and terminations of old uploads); the notices to show, one line each, the first time."""
        if run.resolution is not None:
            return []
        run.resolve(self.resolver.resolve(run))
        return self.resolver.notices(run)

    def domain_of(self, run: RunFile) -> tuple[Domain, str | None]:
        self.prepare(run)
        name = run.domain
        if name is None:
            problem = run.resolution.problem if run.resolution is not None else None
            raise DomainError(f"{run.path}: {problem or 'cannot tell the domain'}")
        try:
            return self.registry.resolve(name)
        except DomainError as exc:
            if str(exc).startswith(f"{run.path}:"):
                raise
            raise DomainError(f"{run.path}: {exc}") from None

    def fixes_of(self, domain: Domain) -> tuple[UpstreamFix, ...]:
        """The upstream fixes registered for ``domain`` (applied or not)."""
        return upstream_fixes(domain.name)

    def env_factory(self, domain: Domain, variant: str | None) -> Callable[[bool], Environment]:
        applied = self.fixes_of(domain) if self.upstream_fixes else ()

        def new_env(solo: bool) -> Environment:
            return apply_upstream_fixes(domain.new_environment(solo=solo, variant=variant), applied)

        return new_env

    def task_for(self, run: RunFile, sim: SimulationRun, domain: Domain) -> Task | None:
        task = run.tasks().get(sim.task_id)
        if task is None:
            try:
                task = domain.tasks().get(sim.task_id)
            except DomainError:
                task = None
        return task

    def gold_for(self, domain_key: str, task: Task, new_env: Callable[[bool], Environment]) -> GoldResult:
        """The task's gold state (cached), built from the initialised state non-solo replays share."""
        return self.golds.get(task, new_env, domain_key, self._init, (domain_key, self.golds.exact_key(task), False))

    def analyze(self, run: RunFile, index: int) -> SimAnalysis:
        """Replay simulation ``index`` of ``run``; raises DomainError/RunFileError when it cannot start (a
        ``RecordedOnly`` one for a run shown as recorded only, such as tau-bench v1's)."""
        if run.recorded_only:
            raise RecordedOnly(run.path, run.recorded_only)
        self.prepare(run)  # before the simulation is built: a recovered task id or trial is part of it
        sim = run.simulation(index)
        domain, variant = self.domain_of(run)
        new_env = self.env_factory(domain, variant)
        task = self.task_for(run, sim, domain)
        fixes = self.fixes_of(domain)
        domain_key = f"{domain.name}-{variant}" + ("+upstream-fixes" if self.upstream_fixes and fixes else "")
        init_key = (domain_key, self.golds.exact_key(task), run.solo) if task is not None else None
        timeline = replay(
            sim.trajectory, task, new_env, solo=run.solo, cache=self._init, cache_key=init_key, fixes=fixes
        )
        gold = None
        if task is not None:
            gold = self.gold_for(domain_key, task, new_env)
            timeline.final.share_hashes(gold.state, gold.agent_hash, gold.user_hash)  # a match costs no hashing
        assertions = run_assertions(timeline, task)
        return SimAnalysis(run, index, sim, run.domain, task, timeline, gold, assertions)

    def scorer_config(self, run: RunFile) -> ScorerConfig | None:
        """The tool-call scorer sidecar beside ``run`` (read once); raises ScorerConfigError if broken."""
        key = str(run.path)
        if key not in self._scorers:
            self._scorers[key] = scorer_config_for(run.path)
        return self._scorers[key]

    def evaluate(
        self, run: RunFile, index: int, judge: Judge | None = None, scorer: ScorerConfig | None = None
    ) -> SimReport:
        """Replay simulation ``index`` and assess it: recomputed reward, explanation, tool-call score, flags.

        ``scorer`` overrides the sidecar file beside the recording.
        """
        return self.assess(self.analyze(run, index), judge=judge, scorer=scorer)

    def assess(
        self, analysis: SimAnalysis, judge: Judge | None = None, scorer: ScorerConfig | None = None
    ) -> SimReport:
        """Assess an analysis already at hand (no second replay); see ``evaluate``."""
        run = analysis.run
        config = scorer if scorer is not None else self.scorer_config(run)
        spec = config.spec_for(analysis.sim.task_id) if config is not None else None
        env_info = run.raw_info.get("environment_info")
        policy = env_info.get("policy") if isinstance(env_info, dict) else None
        in_recording = analysis.sim.task_id in run.tasks()
        return assess(
            analysis,
            judge=judge,
            scorer=spec,
            policy=policy if isinstance(policy, str) else None,
            domain=run.domain,
            task_in_recording=in_recording,
            known_tasks=run.tasks() if in_recording else self._domain_tasks(run),
        )

    def task_changed(self, run: RunFile, task_id: str) -> str | None:
        """How the task ``run`` embeds for ``task_id`` differs from the domain's current one (None: it embeds
        none, the domain has none, or they are the same)."""
        embedded = run.tasks().get(task_id)
        if embedded is None:
            return None
        current = self._domain_tasks(run).get(task_id)
        if current is None or current is embedded or self.fingerprint(current) == self.fingerprint(embedded):
            return None
        return "the recording embeds another version of it"

    def validity(self, analysis: SimAnalysis, report: SimReport, spend: SimCostTime | None = None) -> SimValidity:
        """What of this simulation changes what a score over it means (``evaluate.validity``); ``spend``: its
        recorded cost and time, when the caller has read them already."""
        sim = analysis.sim
        agent_cost, duration = (sim.agent_cost, sim.duration) if spend is None else (spend.agent_usd, spend.duration_s)
        return SimValidity.of(
            analysis.sim.id,
            analysis.sim.task_id,
            issues=report.explanation.recording,
            termination=report.evaluation.termination,
            reward=report.evaluation.reward,
            task_changed=self.task_changed(analysis.run, analysis.sim.task_id),
            agent_cost=agent_cost,
            duration=duration,
            status=report.evaluation.status,
            ungraded_fields=", ".join(ungraded_fields(analysis.task)) if analysis.task is not None else None,
            placeholder=analysis.run.placeholder(analysis.index),
        )

    def _domain_tasks(self, run: RunFile) -> dict[str, Task]:
        try:
            return self.domain_of(run)[0].tasks()
        except DomainError:
            return {}


__all__ = ["Analyzer", "DomainError", "FindingKind", "RunFileError", "SimAnalysis"]
