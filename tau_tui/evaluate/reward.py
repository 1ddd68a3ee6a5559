"""Recomputing a simulation's reward with tau2 1.0.1's rules (``EvaluationType.ALL``).

Order of decisions, as in tau2: a termination other than agent_stop/user_stop
gives 0; a task without evaluation criteria gives 1; otherwise the env (DB and
env assertions), action and communicate components are always computed, the
NL component only when the basis names it, and the reward is the product of
the components the task's ``reward_basis`` names. Where tau2 would need
something we do not have (an LLM judge, the task), the reward is reported as
not computable, never guessed, unless it is decided: when a component of the
basis we did evaluate (DB, ENV_ASSERTION, ACTION, COMMUNICATE) is already 0,
the product is 0 whatever the judge would say, and the reward is 0 with a note.

Each component is one ``RewardComponent`` in ``REWARD_COMPONENTS`` (the
built-in ones in ``components.py``): ``evaluate``, the RewardInfo and checks
records, the explanation and the TUI's Eval tab iterate the registry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tau_tui.evaluate.checks import (
    ActionCheck,
    CommunicateCheck,
    DBCheck,
    EnvAssertionCheck,
    NLCheck,
    action_checks,
    agent_texts,
    communicated,
    db_check,
    env_assertion_checks,
)
from tau_tui.evaluate.judge import Judge, JudgeError
from tau_tui.model.duplex import TICKS, GradedFrom, agent_utterances, speech_conversation
from tau_tui.model.results import INFRASTRUCTURE_ERROR, SCORED_TERMINATIONS, SimulationRun
from tau_tui.model.tasks import (
    DB_PASSES_UNCHECKED,
    EvaluationCriteria,
    Task,
    db_check_rule,
    db_verdict,
    ungraded_fields,
)
from tau_tui.replay import FATAL_IN_TAU2, GoldResult, MismatchClass, Timeline

SUCCESS_TOLERANCE = 1e-6

SCORED, PREMATURE, NO_CRITERIA, NO_TASK, NOT_COMPUTABLE = (
    "scored",
    "premature",
    "no_criteria",
    "no_task",
    "not_computable",
)
# Never re-graded: a row with no trajectory (a summary, a half-written run) and a task with fields tau2 1.0.1
# does not have where they could change the reward (a fork's); the recorded reward is shown for them.
NO_TRAJECTORY, UNGRADED_FIELDS = "no_trajectory", "ungraded_fields"
NO_TRAJECTORY_NOTE = "no trajectory: the recording holds no messages; its recorded reward is shown, not re-graded"
# Why no reward, in the words a one-line summary shows (the TUI's row detail and reward header).
NOT_GRADED_WORDS = {
    NO_TRAJECTORY: "no trajectory: the recorded reward is shown, not re-graded",
    UNGRADED_FIELDS: "the task has fields we do not grade",
}


class Replayed(Protocol):
    """What evaluation needs from a replayed simulation (``SimAnalysis`` has it)."""

    sim: SimulationRun
    task: Task | None
    timeline: Timeline
    gold: GoldResult | None
    assertions: list[tuple[Any, bool | None, str | None]]


@dataclass
class Component:
    """One evaluator's outcome; ``reward`` None means it could not be evaluated.

    ``awaits_judge``: not evaluated only for want of an LLM judge (none given, or it failed), where tau2 would
    have asked one: a reward another component already holds at 0 is decided without it.
    """

    reward: float | None
    breakdown: dict[str, float] | None = None
    info: dict[str, Any] | None = None
    awaits_judge: bool = False


@dataclass
class Evaluation:
    """The recomputed reward of one simulation, every check behind it, and why."""

    reward: float | None
    status: str
    termination: str | None
    reward_basis: list[str] | None = None
    breakdown: dict[str, float] = field(default_factory=dict)
    db_match: bool | None = None  # tau2's db_check verdict (forced true when nothing is checked)
    db: DBCheck | None = None  # the hashes behind it, when compared
    env_assertions: list[EnvAssertionCheck] | None = None
    actions: list[ActionCheck] | None = None
    communicate: list[CommunicateCheck] | None = None
    nl: list[NLCheck] | None = None
    nl_evaluated: bool = True
    not_evaluated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raises: str | None = None  # "Type: message" of the error tau2's evaluator raises on this simulation
    info: dict[str, Any] | None = None
    strict_ok: bool = True
    graded_from: GradedFrom = "messages"  # the recorded view graded: a full-duplex run's ticks, or its messages
    results: dict[str, Any] = field(default_factory=dict)  # component name → its checks, for registered ones
    decided_by: list[str] = field(default_factory=list)  # basis components at 0 that decide it without a judge

    @property
    def computable(self) -> bool:
        return self.reward is not None

    @property
    def success(self) -> bool | None:
        return None if self.reward is None else is_success(self.reward)

    def to_reward_info(self) -> dict[str, Any]:
        """The evaluation in tau2's ``RewardInfo`` shape (reward null when not computable)."""
        out: dict[str, Any] = {"reward": self.reward}
        for component in REWARD_COMPONENTS.values():
            out.update(component.reward_info(self))
        out.update(
            reward_basis=self.reward_basis,
            reward_breakdown=self.breakdown if self.status == SCORED or self.breakdown else None,
            info=self.info,
        )
        return out

    def checks_json(self) -> dict[str, Any]:
        """Every check with its result and the step it was decided at."""
        out: dict[str, Any] = {}
        for component in REWARD_COMPONENTS.values():
            out.update(component.checks_json(self))
        return out


def graded_ticks(replayed: Replayed) -> list[Any] | None:
    """The ticks a full-duplex simulation is graded from (None: it is graded from its messages)."""
    sim = replayed.sim
    return sim.raw_ticks if sim.graded_from == TICKS else None


def agent_said(replayed: Replayed) -> list[tuple[int, str]]:
    """(step, text) of what the agent said, as tau2's communicate check reads it: its messages with text, or a
    full-duplex run's merged utterances."""
    ticks = graded_ticks(replayed)
    if ticks is not None:
        return [(u.step, u.text) for u in agent_utterances(ticks)]
    return agent_texts([step.message for step in replayed.timeline.steps])


def history_in_trajectory(replayed: Replayed) -> int:
    """How many of the trajectory's first messages are the task's history: none in a trajectory from ticks
    (tau2's full-duplex replay leaves the history out), all of it otherwise."""
    if replayed.task is None or replayed.sim.graded_from == TICKS:
        return 0
    return len(replayed.task.history)


def scored_reward(reward: float | None) -> float | None:
    """``reward`` if it is one tau2 can give (a finite number in [0, 1]), else None: a recorded 1e308 or NaN is
    unscored for every statistic, never a term that overflows or poisons it."""
    if reward is None or isinstance(reward, bool) or not math.isfinite(reward) or not 0.0 <= reward <= 1.0:
        return None
    return float(reward)


def is_success(reward: float) -> bool:
    """tau2's success test: the reward is 1 within 1e-6."""
    return abs(reward - 1.0) <= SUCCESS_TOLERANCE


def _product(values: list[float]) -> float:
    out = 1.0
    for value in values:
        out *= value
    return out


def env_component(
    criteria: EvaluationCriteria, replayed: Replayed, basis: list[str], evaluation: Evaluation
) -> Component:
    """DB check and env assertions; tau2 skips both when the task lists neither actions nor assertions."""
    if db_check_rule(replayed.task) == DB_PASSES_UNCHECKED:
        evaluation.db_match = db_verdict(DB_PASSES_UNCHECKED, None)
        return Component(1.0, None, {"note": "No expected actions or env assertions"})
    if replayed.gold is None:
        return Component(None, None, {"note": "no gold state"})
    evaluation.db = db_check(replayed.timeline, replayed.gold)
    evaluation.db_match = evaluation.db.match
    evaluation.env_assertions = env_assertion_checks(replayed.assertions)
    broken = [c for c in evaluation.env_assertions if c.met is None]
    if broken:
        first = broken[0]
        evaluation.raises = evaluation.raises or first.error
        evaluation.notes.append(
            f"env assertion {first.assertion.func_name} could not run ({first.error}); tau2 would raise here"
        )
        return Component(None, None, {"note": "env assertion failed to run"})
    assertion_reward = _product([1.0 if c.met else 0.0 for c in evaluation.env_assertions])
    breakdown: dict[str, float] = {}
    if "DB" in basis:
        breakdown["DB"] = evaluation.db.reward
    if "ENV_ASSERTION" in basis:
        breakdown["ENV_ASSERTION"] = assertion_reward
    return Component(_product(list(breakdown.values())), breakdown, None)


def action_component(criteria: EvaluationCriteria, replayed: Replayed, evaluation: Evaluation) -> Component:
    if not criteria.actions:
        return Component(1.0, {"ACTION": 1.0}, {"note": "No actions to evaluate"})
    evaluation.actions = action_checks(criteria.actions, replayed.timeline.calls, replayed.timeline)
    reward = 1.0 if all(c.matched for c in evaluation.actions) else 0.0
    return Component(reward, {"ACTION": reward}, None)


def communicate_component(criteria: EvaluationCriteria, replayed: Replayed, evaluation: Evaluation) -> Component:
    if not criteria.communicate_info:
        return Component(1.0, {"COMMUNICATE": 1.0}, {"note": "No communicate_info to evaluate"})
    evaluation.communicate = communicated(criteria.communicate_info, agent_said(replayed))
    reward = 1.0 if all(c.met for c in evaluation.communicate) else 0.0
    return Component(reward, {"COMMUNICATE": reward}, None)


def nl_component(
    criteria: EvaluationCriteria, replayed: Replayed, judge: Judge | None, evaluation: Evaluation
) -> Component:
    if not criteria.nl_assertions:
        evaluation.nl = []
        return Component(1.0, {"NL_ASSERTION": 1.0}, {"note": "No nl_assertions to evaluate"})
    if judge is None:
        evaluation.nl_evaluated = False
        evaluation.notes.append(f"{len(criteria.nl_assertions)} NL assertion(s) not evaluated: no judge given")
        return Component(None, None, {"note": "not evaluated: no judge"}, awaits_judge=True)
    try:
        ticks = graded_ticks(replayed)
        conversation = (
            speech_conversation(ticks) if ticks is not None else [step.message for step in replayed.timeline.steps]
        )
        evaluation.nl = judge(conversation, list(criteria.nl_assertions))
    except JudgeError as exc:
        evaluation.raises = evaluation.raises or exc.raised
        evaluation.nl_evaluated = False
        evaluation.notes.append(f"NL assertions not evaluated: {exc}")
        return Component(None, None, {"note": f"not evaluated: {exc}"}, awaits_judge=True)
    reward = 1.0 if all(c.met for c in evaluation.nl) else 0.0
    return Component(reward, {"NL_ASSERTION": reward}, None)


# --- the registry of reward components ---------------------------------------------------------


@dataclass(frozen=True)
class CheckLine:
    """One check of a component as the Eval tab lists it: our verdict, the recorded one (None: none), what."""

    ours: bool | None
    recorded: bool | None
    text: str


Run = Callable[[EvaluationCriteria, Replayed, list[str], Judge | None, Evaluation], Component | None]


@dataclass(frozen=True)
class RewardComponent:
    """One evaluator of tau2's reward, everything about it in one entry.

    ``run`` computes the component (recording its checks on the evaluation) and
    returns None when it does not apply; ``reward_info`` and ``checks_json``
    give its fields of the tau2 ``RewardInfo`` and of our checks record; ``why``
    its lines of the explanation (from ``evaluate.explain.Reasons``);
    ``check_lines(evaluation, recorded reward_info)`` (optional) its checks for
    the TUI's Eval tab (the built-in components have richer renderers there).
    """

    name: str  # its key in the evaluation's info
    bases: tuple[str, ...]  # the reward_basis names it answers for
    run: Run
    reward_info: Callable[[Evaluation], dict[str, Any]]
    checks_json: Callable[[Evaluation], dict[str, Any]]
    why: Callable[[Evaluation, Any], list[str]]
    check_lines: Callable[[Evaluation, Any], list[CheckLine]] | None = None


# In tau2's order (the order of the breakdown and of RewardInfo); the built-in entries are in
# ``evaluate/components.py``. A new component is one ``register_component`` call.
REWARD_COMPONENTS: dict[str, RewardComponent] = {}


def register_component(component: RewardComponent) -> RewardComponent:
    taken = {b for c in REWARD_COMPONENTS.values() for b in c.bases}
    if component.name in REWARD_COMPONENTS or taken & set(component.bases):
        raise ValueError(f"reward component {component.name!r} or one of its bases {component.bases} is registered")
    REWARD_COMPONENTS[component.name] = component
    return component


def unregister_component(name: str) -> None:
    REWARD_COMPONENTS.pop(name, None)


def reward_types() -> list[str]:
    """Every reward_basis name some component answers for, in registry order."""
    return [b for c in REWARD_COMPONENTS.values() for b in c.bases]


def _structural_note(timeline: Timeline) -> str | None:
    """Why tau2's own replay would not go through, if it would not."""
    fatal = [f for f in timeline.findings if f.kind in FATAL_IN_TAU2]
    if fatal:
        where = f" at step {fatal[0].step}" if fatal[0].step is not None else ""
        return (
            f"tau2 cannot replay this trajectory ({fatal[0].kind.value}{where}: {fatal[0].message}); "
            "the reward here is our tolerant replay's reading"
        )
    if timeline.mismatches:
        first = timeline.mismatches[0]
        why = {
            MismatchClass.LIBRARY_TEXT: " (library text only)",
            MismatchClass.UPSTREAM_FIX: f" (upstream fix, {first.upstream.issue if first.upstream else '?'})",
        }
        return (
            f"recorded output of {first.name} at step {first.result_step} differs from the replay"
            f"{why.get(first.mismatch_class, '') if first.mismatch_class is not None else ''}; recomputed with lenient replay (as tau2 evaluate-trajs does)"
        )
    return None


TAU2_INFO_ORDER = ("env", "nl", "communicate", "action")


def evaluate(replayed: Replayed, judge: Judge | None = None) -> Evaluation:
    """Recompute the reward of one replayed simulation (tau2 1.0.1, ``EvaluationType.ALL``), from the view
    tau2 grades (``SimulationRun.graded_from``)."""
    evaluation = _evaluate(replayed, judge)
    evaluation.graded_from = replayed.sim.graded_from
    return evaluation


def _evaluate(replayed: Replayed, judge: Judge | None) -> Evaluation:
    termination = replayed.sim.termination_reason
    if not replayed.sim.trajectory and termination != INFRASTRUCTURE_ERROR:  # tau2's own failed units hold none
        return Evaluation(None, NO_TRAJECTORY, termination, notes=[NO_TRAJECTORY_NOTE])
    fields = ungraded_fields(replayed.task) if replayed.task is not None else []
    if fields:
        note = f"not computed: the task has fields we do not grade: {', '.join(fields)}"
        return Evaluation(None, UNGRADED_FIELDS, termination, notes=[note])
    if termination is None:
        return Evaluation(None, NOT_COMPUTABLE, None, notes=["the recording has no termination_reason"])
    if termination not in SCORED_TERMINATIONS:
        note = f"Simulation terminated prematurely. Termination reason: {termination}"
        return Evaluation(0.0, PREMATURE, termination, info={"note": note})
    task = replayed.task
    if task is None:
        return Evaluation(None, NO_TASK, termination, notes=[f"task {replayed.sim.task_id!r} not found"])
    criteria = task.evaluation_criteria
    if criteria is None:
        return Evaluation(
            1.0, NO_CRITERIA, termination, info={"note": "No evaluation criteria"}, notes=["No evaluation criteria"]
        )

    basis = list(criteria.reward_basis)
    evaluation = Evaluation(None, SCORED, termination, reward_basis=basis, strict_ok=replayed.timeline.strict_ok)
    structural = _structural_note(replayed.timeline)
    if structural:
        evaluation.notes.append(structural)
    results = [
        (entry, entry.run(criteria, replayed, basis, judge, evaluation)) for entry in list(REWARD_COMPONENTS.values())
    ]
    info = {entry.name: component.info if component else None for entry, component in results}
    # tau2 writes reward_info.info in this order (evaluator.py); components registered later follow
    evaluation.info = {**{k: info[k] for k in TAU2_INFO_ORDER if k in info}, **info}

    known = reward_types()
    unknown = [b for b in basis if b not in known]
    if unknown:
        evaluation.notes.append(f"reward_basis names unknown component(s): {', '.join(unknown)}")
    reward = 1.0
    missing = list(unknown)
    awaiting: list[str] = []  # missing only for want of a judge
    failing: list[str] = []  # evaluated basis components at 0
    for entry, component in results:
        named = [b for b in entry.bases if b in basis]
        if not named:
            continue
        if component is None or component.reward is None:
            missing += named
            if component is not None and component.awaits_judge:
                awaiting += named
            continue
        evaluation.breakdown.update(component.breakdown or {})
        reward *= component.reward
        if component.reward == 0.0:
            failing += [b for b in named if (component.breakdown or {}).get(b, 0.0) == 0.0]
    evaluation.not_evaluated = missing
    if missing and failing and missing == awaiting:
        evaluation.reward = 0.0
        evaluation.decided_by = failing
        evaluation.notes.append(
            f"reward 0 whatever a judge would say: {', '.join(failing)} at 0 "
            f"({', '.join(missing)} not evaluated, not needed)"
        )
    elif missing:
        evaluation.status = NOT_COMPUTABLE
        evaluation.notes.append(f"reward not computable: {', '.join(missing)} not evaluated")
    else:
        evaluation.reward = reward
    return evaluation
