"""Whether a run's score means what it seems: the validity block shown beside every score and difference.

A number rests on its simulations. It says less than it seems when some of them are

- ``inconsistent``: the recording's own checks contradict its task (another task's checks: a mislabelled
  task id, ``mislabelled_task``, counted apart as ``wrong_task_id``) — the recomputed reward grades them
  against a task they did not run, and only the recorded rewards (``--recorded``) are the run's own;
- ``task_changed``: the task the run ran is not the domain's current definition (the recording embeds
  another version, our own run's fingerprint no longer matches, or its checks fit another task-set version);
- ``not_replayed``: no replay could be made, so nothing was recomputed;
- ``infrastructure_error``: the episode never ran (left out of the score);
- ``premature``: ended by a limit or an error before the conversation finished (``max_steps``,
  ``too_many_errors``, …: scored 0 by tau2's rules);
- ``no_trajectory``: the row holds no messages (a summary, a half-written run): not re-graded, its recorded
  reward shown;
- ``ungraded_fields``: its task has fields tau2 1.0.1 does not have where they could change the reward (a
  fork's ``acceptable_outcomes``): no reward computed;
- ``unscored``: no reward could be computed otherwise (left out of the score);
- ``placeholder``: the file's own ``info`` says the recorded reward is a placeholder (the recorded score is no
  result);
- ``unpriced`` / ``untimed``: no cost or no duration recorded (the cost and time lines say less).

``SimValidity`` is one simulation's facts, plain data that travels from worker processes; ``Validity`` sums
them for one run (or side) and gives the warning lines (``warnings``) and ``to_json`` of ``--json``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from tau_tui.config import id_order
from tau_tui.model.results import SCORED_TERMINATIONS

INFRASTRUCTURE_ERROR = "infrastructure_error"
KINDS = (
    "inconsistent",
    "task_changed",
    "not_replayed",
    "no_trajectory",
    "ungraded_fields",
    "infrastructure_error",
    "premature",
    "unscored",
    "placeholder",
)
NO_TRAJECTORY, UNGRADED_FIELDS = "no_trajectory", "ungraded_fields"  # evaluate.reward's statuses of the two
SHOWN_IDS = 5  # task ids named in a warning line; --json lists every simulation


@dataclass(frozen=True)
class SimValidity:
    """One simulation's validity facts (all false: nothing to warn about)."""

    sim_id: str
    task_id: str
    inconsistent: str | None = None  # the first inconsistent recording issue's kind
    task_changed: str | None = None  # how the task differs from the current one
    not_replayed: bool = False
    infrastructure_error: bool = False
    premature: str | None = None  # the termination that ended it early
    unscored: bool = False
    unpriced: bool = False
    untimed: bool = False
    no_trajectory: bool = False
    ungraded_fields: str | None = None  # the task's fields we do not grade, by path
    placeholder: str | None = None  # what the file's info says of its recorded reward being a placeholder

    @classmethod
    def of(
        cls,
        sim_id: str,
        task_id: str,
        *,
        issues: Iterable[Any] = (),
        termination: str | None = None,
        reward: float | None = None,
        replayed: bool = True,
        task_changed: str | None = None,
        agent_cost: float | None = None,
        duration: float | None = None,
        status: str | None = None,
        ungraded_fields: str | None = None,
        placeholder: str | None = None,
    ) -> SimValidity:
        """From a report's recording issues (``RecordingIssue``), its termination, reward and evaluation status
        (``status``: ``evaluate.reward``'s), the fields its task has that we do not grade, and what the file says
        of its recorded reward being a placeholder."""
        inconsistent = [i for i in issues if getattr(i, "inconsistent", False)]
        kinds = [str(getattr(i, "kind", "")) for i in inconsistent]
        first = "mislabelled_task" if "mislabelled_task" in kinds else (kinds[0] if kinds else None)
        if task_changed is None and any(getattr(i, "kind", None) == "task_version" for i in issues):
            task_changed = "its checks fit another version of the task set"
        infra = termination == INFRASTRUCTURE_ERROR
        premature = termination if termination and termination not in SCORED_TERMINATIONS and not infra else None
        bare = status == NO_TRAJECTORY
        fields = (ungraded_fields or "fields we do not grade") if status == UNGRADED_FIELDS else None
        return cls(
            sim_id,
            task_id,
            first,
            task_changed,
            not replayed,
            infra,
            None if bare else premature,
            replayed and reward is None and not infra and not bare and fields is None,
            agent_cost is None,
            duration is None,
            bare,
            fields,
            placeholder,
        )


@dataclass(frozen=True)
class Validity:
    """The validity of one run's (or one side's) score."""

    simulations: int
    items: tuple[SimValidity, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, items: Iterable[SimValidity | None]) -> Validity:
        known = tuple(i for i in items if i is not None)
        return cls(len(known), known)

    def ids(self, kind: str) -> list[SimValidity]:
        return [i for i in self.items if getattr(i, kind)]

    def count(self, kind: str) -> int:
        return len(self.ids(kind))

    @property
    def wrong_task_id(self) -> int:
        return sum(1 for i in self.items if i.inconsistent == "mislabelled_task")

    @property
    def premature_ends(self) -> dict[str, int]:
        return dict(Counter(i.premature for i in self.items if i.premature))

    @property
    def clean(self) -> bool:
        """Nothing here changes what the score means (cost and time apart)."""
        return not any(self.count(kind) for kind in KINDS)

    def _tasks(self, kind: str, only: str | None = None, exclude: str | None = None) -> str:
        """The task ids of the simulations of ``kind`` (``only``/``exclude``: of that inconsistency kind)."""
        chosen = [
            i
            for i in self.ids(kind)
            if (only is None or i.inconsistent == only) and (exclude is None or i.inconsistent != exclude)
        ]
        tasks = sorted(dict.fromkeys(i.task_id for i in chosen), key=id_order)
        shown = ", ".join(tasks[:SHOWN_IDS])
        more = f" and {len(tasks) - SHOWN_IDS} more" if len(tasks) > SHOWN_IDS else ""
        return f"task{'s' if len(tasks) > 1 else ''} {shown}{more}"

    def warnings(self, recorded: bool = False, who: str = "") -> list[str]:
        """One line per thing that changes what the score means; ``recorded``: the score is of the recorded
        rewards (then an inconsistent recording is the run's own verdict, and only said so); ``who``: a prefix
        naming the run ("B: ")."""
        n = self.simulations
        out: list[str] = []
        if recorded:
            tail = "the recorded rewards are the recording's own verdicts on them"
        else:
            tail = "the recomputed score grades them against tasks they may not have run; --recorded scores the "
            tail += "recorded rewards"
        wrong = self.wrong_task_id
        if wrong:
            out.append(
                f"{wrong} of {n} simulations carry another task's id (their recorded checks are another task's; "
                f"{self._tasks('inconsistent', 'mislabelled_task')}): {tail}"
            )
        other = self.count("inconsistent") - wrong
        if other:
            out.append(
                f"{other} of {n} simulations have recorded checks that contradict their task "
                f"({self._tasks('inconsistent', exclude='mislabelled_task')}): {tail}"
            )
        changed = self.count("task_changed")
        if changed:
            first = self.ids("task_changed")[0].task_changed
            out.append(
                f"{changed} of {n} simulations ran a task that differs from the domain's current definition "
                f"({self._tasks('task_changed')}; {first}): another task-set version"
            )
        missing = self.count("not_replayed")
        if missing:
            out.append(f"{missing} of {n} simulations not replayed: nothing recomputed for them")
        bare = self.count("no_trajectory")
        if bare:
            out.append(
                f"{bare} of {n} simulations have no trajectory ({self._tasks('no_trajectory')}): not re-graded, "
                "left out of the score; their recorded rewards are shown as recorded"
            )
        ungraded = self.count("ungraded_fields")
        if ungraded:
            fields = self.ids("ungraded_fields")[0].ungraded_fields
            out.append(
                f"{ungraded} of {n} simulations ran tasks with fields we do not grade ({fields}; "
                f"{self._tasks('ungraded_fields')}): no reward computed for them, left out of the score"
                + ("" if recorded else "; --recorded scores the recorded rewards")
            )
        infra = self.count("infrastructure_error")
        if infra:
            out.append(f"{infra} of {n} simulations are infrastructure errors: left out of the score")
        early = self.premature_ends
        if early:
            ends = ", ".join(f"{reason} {count}" for reason, count in sorted(early.items()))
            out.append(f"{sum(early.values())} of {n} simulations ended early ({ends}): scored 0")
        unscored = self.count("unscored")
        if unscored:
            out.append(f"{unscored} of {n} simulations unscored (no reward computable): left out of the score")
        placeholders = self.count("placeholder")
        if placeholders:
            said = self.ids("placeholder")[0].placeholder
            out.append(
                f"{placeholders} of {n} recorded rewards are placeholders by the file's own info "
                f'({self._tasks("placeholder")}; "{said}"): the recorded score is no result'
            )
        return [who + line for line in out]

    def cost_warnings(self) -> list[str]:
        """Lines for the cost and time figures: how many simulations record no cost or no duration."""
        n = self.simulations
        out = []
        unpriced, untimed = self.count("unpriced"), self.count("untimed")
        if n and unpriced:
            out.append(f"{unpriced} of {n} simulations unpriced: costs are sums over the others, never $0")
        if n and untimed:
            out.append(f"{untimed} of {n} simulations untimed")
        return out

    def to_json(self, recorded: bool = False) -> dict[str, Any]:
        return {
            "simulations": self.simulations,
            "inconsistent": [i.sim_id for i in self.ids("inconsistent")],
            "wrong_task_id": self.wrong_task_id,
            "task_changed": [i.sim_id for i in self.ids("task_changed")],
            "not_replayed": [i.sim_id for i in self.ids("not_replayed")],
            "infrastructure_errors": [i.sim_id for i in self.ids("infrastructure_error")],
            "premature": self.premature_ends,
            "unscored": [i.sim_id for i in self.ids("unscored")],
            "no_trajectory": [i.sim_id for i in self.ids("no_trajectory")],
            "ungraded_fields": [i.sim_id for i in self.ids("ungraded_fields")],
            "placeholder": [i.sim_id for i in self.ids("placeholder")],
            "unpriced": self.count("unpriced"),
            "untimed": self.count("untimed"),
            "warnings": self.warnings(recorded),
        }
