"""The runs table's columns: how each field of a row is drawn (rich text), in screen order.

What a field means and how it sorts is headless (``tau_tui.catalog.query.FIELDS``);
this module adds the look: width, flex, which columns stay put, and the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable

from rich.text import Text

from tau_tui.catalog.query import FIELD_BY_KEY
from tau_tui.catalog.rows import EvalSummary, ReplaySummary, RunRow
from tau_tui.textsafe import one_line

DASH = Text("—", style="dim")
UNKNOWN_COST = Text("?", style="yellow")  # a side recorded unpriced (null), the other priced: the total is unknown


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


def reward_cell(row: RunRow) -> Text:
    status = row.status
    if status == "infra":
        return Text("infra", style="yellow")
    if status == "unscored":
        return Text("—", style="dim")
    reward = row.entry.reward
    return Text(_reward_text(reward) if reward is not None else "—", style="green" if status == "pass" else "bold red")


def notes_cell(row: RunRow) -> Text:
    """How many notes the simulation has (its own and its steps'), blank when none."""
    return Text(str(len(row.notes)), style="bold yellow") if row.notes else Text("")


def divergences_cell(summary: ReplaySummary) -> Text:
    """Divergences in red; a dim ≈ when every mismatch is only library text or an upstream fix."""
    if not summary.divergences and summary.mismatches:
        return Text("≈", style="dim")
    return _count(summary.divergences, "bold red")


def _cost(row: RunRow) -> Text:
    cost = row.cost
    if cost is None:
        return UNKNOWN_COST if row.partly_unpriced else DASH
    return Text(f"${cost:.3f}" if cost < 10 else f"${cost:.1f}", style="dim")


@dataclass(frozen=True)
class Column:
    """A runs-table column. ``width`` is its minimum; ``flex`` columns share the width left over.

    The registry's order is the order on screen and the order columns give way
    in at narrow widths: ``frozen`` columns (what tells runs apart) stay put,
    the others scroll one column at a time; the outcome (recorded, then
    derived) comes before recorded ``detail``, which also gives way to the
    names when they lack room. ``elide`` text is shortened in the middle,
    keeping the part that differs from other rows. A ``many_files`` column
    shows only while more than one file is loaded (one file's name tells no
    rows apart); its width goes to the other names.
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
    when: Callable[[RunRow], bool] | None = None  # shown only when some loaded row satisfies it (None: always)
    many_files: bool = False  # shown only when more than one file is loaded
    per_file: bool = False  # the cell (and ``when``) is the same for every row of a file: measured once per file
    plain_text: Callable[[RunRow], str] | None = None  # the cell's text, cheaper than drawing it (None: the cell's)

    @property
    def text(self) -> Callable[[RunRow], Any]:
        """What the cell shows, as text or ``Text``, to measure (``plain`` makes it the text drawn)."""
        return self.plain_text if self.plain_text is not None else self.cell


def review_cell(row: RunRow) -> Text:
    """Recorded review errors: ``2a 1u`` (agent, user, ? unknown; red when one is critical), blank when not reviewed."""
    review = row.review
    if not review.reviewed and not review.errors:
        return Text("")
    if not review.errors:
        return Text("0", style="green")
    parts = [
        f"{len(review.errors_by(s))}{mark}"
        for s, mark in (("agent", "a"), ("user", "u"), ("unknown", "?"))
        if review.errors_by(s)
    ]
    return Text(" ".join(parts), style="bold red" if any(e.critical for e in review.errors) else "yellow")


AUTH_MARKS = {"succeeded": ("✓", "green"), "failed": ("✗", "bold red"), "not_needed": ("·", "dim")}


def auth_cell(row: RunRow) -> Text:
    mark = AUTH_MARKS.get(row.review.auth_status or "")
    return Text(mark[0], style=mark[1]) if mark else Text("")


def _column(key: str, width: int, cell: Callable[[RunRow], Any], **layout: Any) -> Column:
    """A column of the field ``key`` (its label, description, sort key and kind come from ``FIELDS``)."""
    spec = FIELD_BY_KEY[key]
    return Column(key, spec.label, width, cell, spec.sort_key, derived=spec.derived, help=spec.help, **layout)


COLUMNS: list[Column] = [
    _column("file", 10, lambda r: r.file_label, flex=2, frozen=True, elide=True, many_files=True, per_file=True),
    _column("task", 10, lambda r: r.task, flex=3, frozen=True, elide=True, plain_text=attrgetter("entry.task_id")),
    _column("sim", 10, lambda r: r.sim_id, flex=2, frozen=True, elide=True, plain_text=attrgetter("entry.id")),
    _column("trial", 2, lambda r: "" if r.entry.trial is None else str(r.entry.trial), frozen=True),
    _column("notes", 1, notes_cell, frozen=True),
    _column("reward", 6, reward_cell),
    _column("db", 2, lambda r: _check(r.entry.db_match)),
    _column("our_reward", 4, recomputed_cell),
    _column("agrees", 2, agrees_cell),
    _column("our_db", 3, lambda r: _derived(r, lambda s: s.db_match, _check)),
    _column("flags", 6, flags_cell),
    _column("mismatches", 2, lambda r: _derived(r, lambda s: s, divergences_cell)),
    _column("writes", 2, lambda r: _derived(r, lambda s: s.replayed + s.mismatches, lambda v: _count(v, ""))),
    _column("hallucinated", 2, lambda r: _derived(r, lambda s: s.hallucinated, lambda v: _count(v, "bold magenta"))),
    _column("findings", 2, lambda r: _derived(r, lambda s: s.findings, lambda v: _count(v, "yellow"))),
    _column("faults", 2, lambda r: _derived(r, lambda s: s.faults, lambda v: _count(v, "bold orange1"))),
    _column("refused", 2, lambda r: _derived(r, lambda s: s.refused, lambda v: _count(v, "bold medium_purple1"))),
    _column("discovered", 2, lambda r: _derived(r, lambda s: s.discovered, lambda v: _count(v, "cyan"))),
    # only a simulation the index saw a review in has one: the others are not parsed to ask
    _column("review", 3, review_cell, detail=True, when=lambda r: r.entry.reviewed and r.review.reviewed),
    _column("auth", 2, auth_cell, detail=True, when=lambda r: r.entry.reviewed and r.review.auth_status is not None),
    _column("errors", 3, lambda r: _count(r.entry.n_tool_errors, "yellow"), detail=True),
    _column(
        "termination",
        11,
        lambda r: Text(r.termination, style=_term_style(r)),
        flex=1,
        elide=True,
        detail=True,
        plain_text=lambda r: r.termination,
    ),
    _column("turns", 4, lambda r: str(r.entry.n_messages), detail=True),
    _column("cost", 6, _cost, detail=True),
    _column(
        "submission",
        10,
        lambda r: r.submission,
        flex=1,
        elide=True,
        detail=True,
        when=lambda r: bool(r.submission),
        per_file=True,
    ),
    _column("model", 11, lambda r: r.model, flex=2, elide=True, detail=True, per_file=True),
    _column("domain", 6, lambda r: r.domain, flex=1, elide=True, detail=True, per_file=True),
    _column(
        "retrieval",
        9,
        lambda r: r.retrieval,
        flex=1,
        elide=True,
        detail=True,
        when=lambda r: bool(r.retrieval),
        per_file=True,
    ),
]
COLUMN_BY_KEY = {c.key: c for c in COLUMNS}


def plain(value: object) -> str:
    """A cell's text as drawn (control characters made visible), to measure and elide."""
    return one_line(value.plain if isinstance(value, Text) else str(value))


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
