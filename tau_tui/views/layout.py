"""Column widths and names that fit: share a line's width among columns, shorten text in the middle.

Pure Python (no textual, no rich), shared by the runs table, the calibrate
grid, the compare labels and the notes list. Names that tell runs apart
often differ only at their end (``calibrate_20261201_053850`` and
``…_053934``) or deep inside (telecom task ids), so text is shortened in the
middle, keeping the part that differs from its neighbours visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Iterable, Sequence, TypeVar

ELLIPSIS = "…"
# Characters after which a name's distinguishing part may start (a whole token stays readable).
BOUNDARIES = "_-/|.:, [](){}#"
Item = TypeVar("Item")


def at_cursor(items: Sequence[Item], cursor_row: int | None) -> Item | None:
    """The item a table's cursor row shows (the rows drawn from ``items`` in order), or None."""
    if not items or cursor_row is None or not 0 <= cursor_row < len(items):
        return None
    return items[cursor_row]


def middle_elide(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its head and its tail with "…" between them."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[: max(width, 0)]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def distinct_starts(values: Iterable[str]) -> dict[str, int]:
    """Where each value starts to differ from the values closest to it (0: from the start).

    The start is the end of the prefix a value shares with both its
    neighbours in sorted order (so where it leaves either of them stays
    visible), moved back to the last token boundary in that prefix so the
    distinguishing token is kept whole.
    """
    ordered = sorted(set(values))
    return {
        value: start_after(value, ordered[max(i - 1, 0) : i] + ordered[i + 1 : i + 2])
        for i, value in enumerate(ordered)
    }


def start_after(value: str, neighbours: Sequence[str]) -> int:
    """Where ``value`` starts to differ from ``neighbours`` (the values just below and above it in sorted
    order, other than itself), as ``distinct_starts`` counts it."""
    if not neighbours:
        return 0
    shared = min(_common_prefix(value, other) for other in neighbours)
    if shared >= len(value):  # a prefix of another value: nothing of its own to keep
        return 0
    cut = max(value.rfind(ch, 0, shared) for ch in BOUNDARIES)
    return cut + 1 if cut >= 0 else shared


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def elide(text: str, width: int, start: int = 0) -> str:
    """``text`` in at most ``width`` characters, keeping ``text[start:]`` (its distinguishing part) visible.

    A short head, "…", then the distinguishing part; when that part is too long
    itself, it is middle-elided (its head and tail stay, e.g. a trailing
    ``[PERSONA:Hard]``). Without a ``start`` this is ``middle_elide``.
    """
    if len(text) <= width:
        return text
    rest = text[start:] if 0 < start < len(text) else ""
    if not rest or width < 8 or start < width // 2:  # the head middle-elision keeps shows where it differs
        return middle_elide(text, width)
    lead = width - 1 - len(rest)
    if lead >= 1:
        return text[:lead] + ELLIPSIS + rest
    lead = min(start, max(1, width // 6))
    return text[:lead] + ELLIPSIS + middle_elide(rest, width - lead - 1)


def width_apart(values: Collection[str], width: int) -> int:
    """The narrowest width from ``width`` up at which ``elide`` (from ``distinct_starts``) shows no two values alike.

    Where ids differ only deep inside (telecom's), a column too narrow for that is widened rather
    than showing different rows as one; at the longest value's length every value shows whole.
    """
    values = set(values)
    starts = distinct_starts(values)
    longest = max(map(len, values), default=0)
    for candidate in range(max(width, 1), longest):
        if len({elide(value, candidate, starts[value]) for value in values}) == len(values):
            return candidate
    return max(width, longest)


TASK_MIN = 20  # a task column narrower than this only when every task id is shorter
TABLE_FRAME = 4  # a table's border (2) and its vertical scrollbar (2)


def task_column_width(tasks: Collection[str], others: Sequence[int], screen_width: int) -> int:
    """The width of a table's first column, of task ids, beside columns of widths ``others``.

    It takes what the others leave of ``screen_width`` (each cell padded by one on either side), at least
    ``TASK_MIN`` unless no id is that long, at most the longest id, and widened where two ids would read
    the same (``width_apart``).
    """
    available = screen_width - TABLE_FRAME - 2 * (len(others) + 1) - sum(others)
    natural = max([len("task"), *map(len, tasks)])
    return width_apart(tasks, max(min(natural, available), min(natural, TASK_MIN)))


@dataclass(frozen=True)
class Share:
    """How a column takes part in the width: at least ``min``, a ``flex`` share of the rest, at most ``natural``."""

    min: int
    flex: int = 0
    natural: int = 0  # the width its content needs (0: ``min``)


def share_widths(shares: Sequence[Share], available: int) -> list[int]:
    """Widths of columns shown side by side in ``available`` cells (gaps already taken off).

    Every column gets its minimum; what is left goes to the flex columns in
    proportion to their share, none past its natural width (what one cannot
    use goes to the others). Columns narrower than their minimum never occur:
    when the minimums do not fit, the caller shows fewer columns.
    """
    widths = [s.min for s in shares]
    spare = available - sum(widths)
    growing = [i for i, s in enumerate(shares) if s.flex and max(s.natural, s.min) > widths[i]]
    while spare > 0 and growing:
        total = sum(shares[i].flex for i in growing)
        given = 0
        for i in growing:
            room = max(shares[i].natural, shares[i].min) - widths[i]
            add = min(room, max(1, spare * shares[i].flex // total))
            add = min(add, spare - given)
            widths[i] += add
            given += add
        spare -= given
        growing = [i for i in growing if max(shares[i].natural, shares[i].min) > widths[i]]
        if given == 0:
            break
    return widths


def fitting_count(mins: Sequence[int], available: int, gap: int = 1) -> int:
    """How many of the columns (in order, each ``gap`` apart) fit in ``available`` cells at their minimum."""
    used = 0
    for count, width in enumerate(mins):
        used += width + gap
        if used > available:
            return count
    return len(mins)
