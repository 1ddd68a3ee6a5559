"""Gold sanity check: is a task's reference solution itself sound?

Two checks per task:

(a) **gold agent**: the scripted gold agent (with the scripted user) plays the
    task through the orchestrator and must reach reward 1.0. Tasks whose
    reward needs the NL judge pass (a) when every other component is 1.0
    (``not_evaluated`` says what was not judged) unless a judge is given.
(b) **gold consistency**: the evaluator's gold state (tau2: init + task
    history + the reference actions through ``make_tool_call``, no sync,
    errors swallowed) must equal the state the same actions reach through the
    live environment as in a rollout (each call through ``Environment.call``,
    which syncs, and a sync after it as the orchestrator does). Where they
    differ, the differing paths are listed (gold value → live value).

tau2's telecom tasks differ in (b) for most tasks: its gold path skips the
sync that copies the agent's line state to the user's device.

Where (a) fails, the check also runs the task's env assertions on the gold
state itself. An assertion the gold state does not meet says why: the
reference actions alone cannot meet it (the task has none, or the assertion
needs a step they leave out, such as a user's own tool call), and when DB is
in the reward basis too, no trajectory at all can reach 1.0 (matching the
gold DB and meeting the assertion exclude each other).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from tau_tui.calibrate.fingerprint import Fingerprinter
from tau_tui.domains import Domain
from tau_tui.env.environment import Environment, EnvState
from tau_tui.env.store import to_plain
from tau_tui.evaluate import Evaluation, score
from tau_tui.model.messages import ToolCall
from tau_tui.model.results import SimulationRun
from tau_tui.model.tasks import Task
from tau_tui.replay import (
    Change,
    GoldResult,
    InitCache,
    diff_states,
    gold_state,
    path_text,
    replay,
)
from tau_tui.rollout.factory import ParticipantSpec
from tau_tui.rollout.orchestrator import EpisodeOptions
from tau_tui.rollout.session import Episode

GOLD_AGENT, SCRIPTED_USER = "scripted/gold", "scripted/user"
NL = "NL_ASSERTION"


@dataclass(frozen=True)
class StateDifference:
    """One path where the evaluator's gold state and the live path's state differ."""

    side: str  # "agent" or "user" DB
    change: Change  # before = gold path, after = live path

    @property
    def path(self) -> str:
        return path_text(self.change.path)

    def to_json(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "path": self.path,
            "kind": self.change.kind,
            "gold": to_plain(self.change.before),
            "live": to_plain(self.change.after),
        }


@dataclass
class GoldCheck:
    """Both checks of one task, with the reasons for any failure."""

    task_id: str
    fingerprint: str | None
    # (a) the gold agent's rollout
    gold_reward: float | None
    termination: str | None
    no_reference_actions: bool = False
    reward_basis: list[str] | None = None
    breakdown: dict[str, float] = field(default_factory=dict)
    not_evaluated: list[str] = field(default_factory=list)
    agent_reasons: list[str] = field(default_factory=list)
    # (b) gold state vs live path
    differences: list[StateDifference] = field(default_factory=list)
    gold_hashes: tuple[str | None, str | None] = (None, None)
    live_hashes: tuple[str | None, str | None] = (None, None)
    gold_action_errors: list[tuple[int, str]] = field(default_factory=list)
    live_action_errors: list[tuple[int, str]] = field(default_factory=list)
    setup_problems: list[str] = field(default_factory=list)
    # env assertions that the gold state itself does not meet: (call text, error or None)
    gold_unmet_assertions: list[tuple[str, str | None]] = field(default_factory=list)
    simulation: SimulationRun | None = None

    @property
    def reachable(self) -> bool | None:
        """Whether any trajectory can score 1.0 on DB and ENV_ASSERTION together (None: not decided here).

        False when DB and ENV_ASSERTION are both in the basis and the gold state
        fails an env assertion: matching the gold DB then fails the assertion.
        """
        basis = self.reward_basis or []
        if not self.gold_unmet_assertions or "ENV_ASSERTION" not in basis:
            return None if not self.gold_unmet_assertions else True
        return False if "DB" in basis else True

    @property
    def gold_state_reasons(self) -> list[str]:
        """Why the reference solution cannot reach 1.0, from the gold state (only where (a) failed)."""
        if self.gold_agent_ok or not self.gold_unmet_assertions:
            return []
        unmet = ", ".join(text + (f" ({error})" if error else "") for text, error in self.gold_unmet_assertions)
        if self.reachable is False:
            return [
                f"unreachable task: the gold state fails env assertion {unmet}, and DB is in the reward "
                "basis, so no trajectory can both match the gold DB and meet it"
            ]
        cause = "the task has no reference actions" if self.no_reference_actions else "the reference actions"
        return [f"reference solution incomplete: {cause} and the gold state fails env assertion {unmet}"]

    @property
    def gold_consistent(self) -> bool:
        return self.gold_hashes == self.live_hashes

    @property
    def inconsistency_matters(self) -> bool:
        """The gold state differs from the live path and the reward compares DBs (DB in the basis)."""
        return not self.gold_consistent and "DB" in (self.reward_basis or [])

    @property
    def gold_agent_ok(self) -> bool:
        """The gold agent reached 1.0 on every component that could be evaluated."""
        return not self.agent_reasons

    @property
    def ok(self) -> bool:
        return self.gold_agent_ok and self.gold_consistent and not self.setup_problems

    @property
    def consistency_reasons(self) -> list[str]:
        if self.gold_consistent:
            return []
        sides = [
            side
            for side, g, live in zip(("agent", "user"), self.gold_hashes, self.live_hashes, strict=False)
            if g != live
        ]
        paths = [d.path for d in self.differences]
        shown = ", ".join(paths[:4]) + (f" (+{len(paths) - 4} more)" if len(paths) > 4 else "")
        text = f"gold state differs from the live path ({' and '.join(sides)} DB" + (f": {shown})" if shown else ")")
        out = [text]
        live_only = {i for i, _ in self.live_action_errors} - {i for i, _ in self.gold_action_errors}
        for index, error in self.live_action_errors:
            if index in live_only:
                out.append(f"reference action {index} fails only in the live environment: {error}")
        return out

    @property
    def reasons(self) -> list[str]:
        return [*self.setup_problems, *self.agent_reasons, *self.gold_state_reasons, *self.consistency_reasons]

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) or None

    def to_json(self) -> dict[str, Any]:
        """The ``tau-tui calibrate --gold-check --json`` record of this task."""
        return {
            "task": self.task_id,
            "ok": self.ok,
            "gold_reward": self.gold_reward,
            "gold_agent_ok": self.gold_agent_ok,
            "gold_consistent": self.gold_consistent,
            "inconsistency_matters": self.inconsistency_matters,
            "reason": self.reason,
            "reasons": self.reasons,
            "termination": self.termination,
            "reward_basis": self.reward_basis,
            "breakdown": self.breakdown,
            "not_evaluated": self.not_evaluated,
            "fingerprint": self.fingerprint,
            "gold_db": self.gold_hashes[0],
            "gold_user_db": self.gold_hashes[1],
            "live_db": self.live_hashes[0],
            "live_user_db": self.live_hashes[1],
            "diff": [d.to_json() for d in self.differences],
            "gold_action_errors": [{"action": i, "error": e} for i, e in self.gold_action_errors],
            "live_action_errors": [{"action": i, "error": e} for i, e in self.live_action_errors],
            "gold_unmet_assertions": [{"assertion": a, "error": e} for a, e in self.gold_unmet_assertions],
            "reachable": self.reachable,
        }


_INDEX = re.compile(r"\[\d+\]")


def failure_kind(check: GoldCheck) -> str:
    """A short label grouping failing tasks that fail the same way (list indices left out of paths)."""
    parts = []
    if check.setup_problems:
        parts.append("task setup")
    if check.reachable is False:
        parts.append("unreachable (gold state fails an env assertion, DB in basis)")
    elif check.gold_state_reasons:
        parts.append("reference solution incomplete")
    if not check.gold_agent_ok:
        failed = sorted(k for k, v in check.breakdown.items() if v < 1.0)
        parts.append("gold agent below 1.0" + (f" ({', '.join(failed)})" if failed else ""))
    if not check.gold_consistent:
        paths = sorted({f"{d.side} {_INDEX.sub('[]', d.path)}" for d in check.differences})
        parts.append("gold ≠ live: " + ", ".join(paths))
    return "; ".join(parts) or "ok"


@dataclass
class LivePath:
    """The reference actions run through the live environment, with sync, as a rollout runs them."""

    env: Environment
    errors: list[tuple[int, str]]
    problems: list[str]
    setup_messages: set[str] = field(default_factory=set)


def live_path(task: Task, new_env: Callable[[bool], Environment], cache: InitCache | None = None) -> LivePath:
    """Init and task history (replayed as at the start of an episode), then each action via ``call`` + sync."""
    timeline = replay(task.history, task, new_env, cache=cache, cache_key=task.id if cache is not None else None)
    env = timeline.env
    assert env is not None, "a replay always builds its environment"
    setup_messages = {f.message for f in timeline.findings}
    problems = [f"task setup: {message}" for message in dict.fromkeys(f.message for f in timeline.findings)]
    errors: list[tuple[int, str]] = []
    for index, action in enumerate(task.expected_actions):
        result = env.call(
            ToolCall(id=f"gold_{index}", name=action.name, arguments=action.arguments, requestor=action.requestor)
        )
        if result.error:
            errors.append((index, result.text))
        try:
            env.sync()
        except Exception as exc:  # noqa: BLE001 - a sync failure is a finding of the task, not a crash
            problems.append(f"sync after reference action {index} failed: {type(exc).__name__}: {exc}")
    return LivePath(env, errors, problems, setup_messages)


def compare_gold(gold: GoldResult, state: EnvState) -> list[StateDifference]:
    """Every path where the gold state and the live path's final state differ, agent DB then user DB."""
    out: list[StateDifference] = []
    if gold.agent_hash != state.agent_hash():
        out += [StateDifference("agent", c) for c in diff_states(gold.state.agent, state.agent)]
    if gold.user_hash != state.user_hash():
        out += [StateDifference("user", c) for c in diff_states(gold.state.user, state.user)]
    return out


def assertion_text(assertion: Any) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in assertion.arguments.items())
    return f"{assertion.func_name}({args})"


def unmet_on_gold(task: Task, gold: GoldResult, new_env: Callable[[bool], Environment]) -> list[tuple[str, str | None]]:
    """The task's env assertions that the gold state itself does not meet (an error counts as not met)."""
    criteria = task.evaluation_criteria
    if criteria is None or not criteria.env_assertions:
        return []
    env = new_env(False)
    env.restore(gold.state)
    out: list[tuple[str, str | None]] = []
    for assertion in criteria.env_assertions:
        try:
            met = env.run_assertion(assertion)
        except Exception as exc:  # noqa: BLE001 - reported with the assertion
            out.append((assertion_text(assertion), f"{type(exc).__name__}: {exc}"))
            continue
        if met is not True:
            out.append((assertion_text(assertion), None))
    return out


def _describe_failures(evaluation: Evaluation) -> list[str]:
    """What kept the gold agent's reward below 1, check by check."""
    out = []
    breakdown = evaluation.breakdown
    if breakdown.get("DB", 1.0) < 1.0:
        out.append("DB: the rollout's final state is not the gold state")
    if breakdown.get("ENV_ASSERTION", 1.0) < 1.0:
        for check in evaluation.env_assertions or []:
            if not check.met:
                a = check.assertion
                out.append(f"env assertion {assertion_text(a)} is not {a.assert_value} after the rollout")
    if breakdown.get("ACTION", 1.0) < 1.0:
        for action_check in evaluation.actions or []:
            if not action_check.matched:
                action = action_check.action
                out.append(f"expected action {action.name} ({action.action_id}) not matched")
    if breakdown.get("COMMUNICATE", 1.0) < 1.0:
        for said in evaluation.communicate or []:
            if not said.met:
                out.append(f"communicate_info {said.info!r} not said")
    if breakdown.get(NL, 1.0) < 1.0:
        for judged in evaluation.nl or []:
            if not judged.met:
                out.append(f"NL assertion not met: {judged.assertion}")
    return out


def agent_verdict(evaluation: Evaluation) -> list[str]:
    """Why the gold agent failed (a), or [] when it passed (NL-only gaps without a judge pass)."""
    termination = evaluation.termination
    if termination not in ("user_stop", "agent_stop"):
        return [f"gold agent: the rollout ended with {termination}"]
    if evaluation.reward is not None:
        if evaluation.reward >= 1.0 - 1e-6:
            return []
        failures = _describe_failures(evaluation)
        return [f"gold agent: reward {evaluation.reward:g} ({'; '.join(failures) or 'no failing check named'})"]
    if any(m != NL for m in evaluation.not_evaluated):
        note = evaluation.notes[-1] if evaluation.notes else "not computable"
        return [f"gold agent: reward not computable ({note})"]
    failures = _describe_failures(evaluation)
    if failures:
        return [f"gold agent: {'; '.join(failures)} (NL assertions not judged)"]
    return []


class GoldChecker:
    """Runs the gold sanity check on tasks of one domain (variant)."""

    def __init__(
        self,
        domain: Domain,
        variant: str | None = None,
        *,
        judge: Any = None,
        keep_simulations: bool = False,
        max_steps: int = 200,
    ):
        self.domain = domain
        self.variant = variant
        self.judge = judge
        self.keep_simulations = keep_simulations
        self.max_steps = max_steps
        self.fingerprints = Fingerprinter(domain, variant)

    @classmethod
    def for_name(cls, registry: Any, name: str, **kwargs: Any) -> "GoldChecker":
        domain, variant = registry.resolve(name)
        return cls(domain, variant, **kwargs)

    def new_env(self, solo: bool = False) -> Environment:
        return self.domain.new_environment(solo=solo, variant=self.variant)

    async def check(self, task: Task) -> GoldCheck:
        gold = gold_state(task, self.new_env)
        init = InitCache()  # the live path and the rollout's replay share the initialised state
        live = live_path(task, self.new_env, init)
        state = live.env.freeze()
        setup = live.problems + [
            f"gold path: {f.message}" for f in gold.findings if f.message not in live.setup_messages
        ]
        result = GoldCheck(
            task_id=task.id,
            fingerprint=self.fingerprints.of_task(task).value,
            gold_reward=None,
            termination=None,
            no_reference_actions=not task.expected_actions,
            differences=compare_gold(gold, state),
            gold_hashes=(gold.agent_hash, gold.user_hash),
            live_hashes=(state.agent_hash(), state.user_hash()),
            gold_action_errors=list(gold.action_errors),
            live_action_errors=live.errors,
            setup_problems=list(dict.fromkeys(setup)),
        )
        try:
            episode = Episode(
                self.domain,
                self.variant,
                task,
                ParticipantSpec(GOLD_AGENT),
                ParticipantSpec(SCRIPTED_USER),
                EpisodeOptions(max_steps=self.max_steps),
            )
            sim = await episode.run(evaluate=False)
        except Exception as exc:  # noqa: BLE001 - a task whose episode cannot start fails the check
            result.agent_reasons = [f"gold agent: the episode cannot start ({type(exc).__name__}: {exc})"]
            return result
        evaluation = score(sim, task, self.new_env, self.judge, gold=gold, init=init, init_key=task.id)
        result.gold_reward = evaluation.reward
        result.termination = sim.termination_reason
        result.reward_basis = evaluation.reward_basis
        result.breakdown = dict(evaluation.breakdown)
        result.not_evaluated = list(evaluation.not_evaluated)
        result.agent_reasons = agent_verdict(evaluation)
        if result.agent_reasons:
            result.gold_unmet_assertions = unmet_on_gold(task, gold, self.new_env)
        result.simulation = sim if self.keep_simulations else None
        return result

    async def check_all(
        self,
        tasks: Iterable[Task],
        on_result: Callable[[GoldCheck], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[GoldCheck]:
        """Check ``tasks`` in order; ``on_result`` sees each result, ``cancelled`` is asked before each task."""
        results = []
        for task in tasks:
            if cancelled is not None and cancelled():
                break
            result = await self.check(task)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results

    def run(
        self,
        tasks: Iterable[Task],
        on_result: Callable[[GoldCheck], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[GoldCheck]:
        """``check_all`` from synchronous code: the CLI, tests, a TUI thread worker (CPU-bound, ~10 ms a task)."""
        return asyncio.run(self.check_all(tasks, on_result, cancelled))
