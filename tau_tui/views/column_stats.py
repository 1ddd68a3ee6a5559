"""What the runs table's text columns hold over every loaded row, kept up to date as rows arrive.

The table fits its name columns to their longest value, shortens a value in
the middle where it starts to differ from the values nearest it in sorted
order (``layout.distinct_starts``), and shows some columns only once a row
has them (a review, a submission). Measuring that afresh over every row on
each rebuild took seconds at a million rows (a new ``Text`` and a regex per
row and column, then a sort of a million ids), so the facts are kept per
loaded file instead: a file's rows are measured once, when they arrive; a
file replaced, removed or resolved again is measured again; and a value's
neighbours are found by bisecting each file's sorted values. Values that are
the same for every row of a file (its name, model, domain) are read from one
row of it.

No textual: the runs table (``tui.widgets.run_table``) draws what this measures.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Collection, Iterable, Mapping, Sequence

from tau_tui.catalog.rows import RunRow
from tau_tui.model.io import RunFile
from tau_tui.textsafe import one_lines
from tau_tui.views.columns import Column, plain
from tau_tui.views.layout import start_after

MAX_NATURAL = 80  # a flex column never grows past this, whatever its longest value
MAX_SEGMENTS = 4  # a growing file's sorted runs of values merged into one past this many


@dataclass
class _FileFacts:
    """One file's part: its rows counted so far, and for each per-row column its values (sorted runs, each
    without repeats) and longest value; for each per-row ``when`` column whether a row has it."""

    run: RunFile
    resolution: object
    first: RunRow | None = None
    count: int = 0
    segments: dict[str, list[list[str]]] = field(default_factory=dict)
    longest: dict[str, int] = field(default_factory=dict)
    present: dict[str, bool] = field(default_factory=dict)


class ColumnStats:
    """Longest values, distinguishing starts and present columns over the rows of the loaded files.

    ``sync`` takes the loaded files' rows (a file key → its rows in order, as the catalog keeps them) and
    measures what is new; ``feed`` measures a plain list of rows (a table shown without a catalog).
    """

    def __init__(self, columns: Sequence[Column]) -> None:
        self.measured = [c for c in columns if c.flex or c.elide]
        self.conditional = [c for c in columns if c.when is not None]
        self._files: dict[str, _FileFacts] = {}
        self._starts: dict[tuple[str, str], int] = {}
        self._natural: dict[str, int] | None = None

    # --- keeping up --------------------------------------------------------------------------------
    def sync(self, files: Mapping[str, RunFile], rows_of: Mapping[str, Sequence[RunRow]]) -> bool:
        """Measure the rows added since the last call; a file whose ``RunFile`` or resolution changed is
        measured again, a file no longer loaded is dropped. Returns whether anything changed."""
        changed = False
        for key in [k for k in self._files if k not in files]:
            del self._files[key]
            changed = True
        for key, run in files.items():
            rows = rows_of.get(key, ())
            facts = self._files.get(key)
            if (
                facts is None
                or facts.run is not run
                or facts.resolution is not run.resolution
                or facts.count > len(rows)
            ):
                facts = self._files[key] = _FileFacts(run, run.resolution)
                changed = True
            if facts.count < len(rows):
                self._add(facts, rows[facts.count :])
                changed = True
        if changed:
            self._forget()
        return changed

    def feed(self, rows: Sequence[RunRow]) -> None:
        """Measure exactly ``rows`` (what was measured before is dropped), grouped by their file."""
        self._files.clear()
        by_file: dict[str, list[RunRow]] = {}
        for row in rows:
            by_file.setdefault(str(row.path), []).append(row)
        for key, group in by_file.items():
            facts = self._files[key] = _FileFacts(group[0].run, group[0].run.resolution)
            self._add(facts, group)
        self._forget()

    def _forget(self) -> None:
        self._starts.clear()
        self._natural = None

    def _add(self, facts: _FileFacts, rows: Sequence[RunRow]) -> None:
        if not rows:
            return
        if facts.first is None:
            facts.first = rows[0]
        facts.count += len(rows)
        for column in self.measured:
            if column.per_file:
                continue
            values = sorted(set(_plain_all(_distinct(map(column.text, rows)))))
            facts.longest[column.key] = max(facts.longest.get(column.key, 0), max(map(len, values), default=0))
            if column.elide:
                runs = facts.segments.setdefault(column.key, [])
                runs.append(values)
                if len(runs) > MAX_SEGMENTS:
                    runs[:] = [sorted({v for run in runs for v in run})]
        for column in self.conditional:
            if not column.per_file and not facts.present.get(column.key):
                when = column.when
                facts.present[column.key] = when is not None and any(when(row) for row in rows)

    # --- what the table asks ---------------------------------------------------------------------
    def shows(self, column: Column) -> bool:
        """Whether a ``when`` column has something to show: some loaded row satisfies it."""
        when = column.when
        if when is None:
            return True
        for facts in self._files.values():
            if column.per_file:
                if facts.first is not None and when(facts.first):
                    return True
            elif facts.present.get(column.key):
                return True
        return False

    def natural(self, column: Column) -> int:
        """The column's longest value (at most ``MAX_NATURAL``)."""
        if self._natural is None:
            self._natural = {}
        if column.key not in self._natural:
            longest = 0
            for facts in self._files.values():
                if column.per_file:
                    if facts.first is not None:
                        longest = max(longest, len(plain(column.text(facts.first))))
                else:
                    longest = max(longest, facts.longest.get(column.key, 0))
            self._natural[column.key] = min(longest, MAX_NATURAL)
        return self._natural[column.key]

    def start(self, column: Column, value: str) -> int:
        """Where ``value`` starts to differ from the column's values nearest it (``distinct_starts``)."""
        key = (column.key, value)
        start = self._starts.get(key)
        if start is None:
            start = self._starts[key] = start_after(value, self._neighbours(column, value))
        return start

    def _neighbours(self, column: Column, value: str) -> list[str]:
        """The nearest other values below and above ``value`` among all the column's values."""
        below: str | None = None
        above: str | None = None
        for run in self._runs(column):
            i = bisect_left(run, value)
            if i and (below is None or run[i - 1] > below):
                below = run[i - 1]
            j = bisect_right(run, value)
            if j < len(run) and (above is None or run[j] < above):
                above = run[j]
        return [v for v in (below, above) if v is not None]

    def _runs(self, column: Column) -> Iterable[list[str]]:
        if column.per_file:
            yield sorted({plain(column.text(f.first)) for f in self._files.values() if f.first is not None})
            return
        for facts in self._files.values():
            yield from facts.segments.get(column.key, ())


def _plain_all(texts: Collection[object]) -> list[str]:
    """``plain`` of each text: plain strings made safe in one scan (``one_lines``), anything else one by one."""
    strings = [t for t in texts if isinstance(t, str)]
    others = [plain(t) for t in texts if not isinstance(t, str)] if len(strings) != len(texts) else []
    return one_lines(strings) + others


def _distinct(texts: Iterable[object]) -> Collection[object]:
    """``texts`` without repeats when they can be hashed (plain strings), so each is made plain once."""
    listed = list(texts)
    try:
        return set(listed)
    except TypeError:  # rich Text
        return listed
