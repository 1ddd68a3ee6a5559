"""The one CSV writer: every CSV we write (exported tables, notes) goes through ``csv_text``.

A spreadsheet opening a CSV runs a cell that starts like a formula (``=HYPERLINK(…)``,
``+cmd|…``, ``-…``, ``@…``, a full-width ``＝``, or one led by a tab, carriage return or line
feed; spaces before the sign do not stop it). Recorded text, review reasoning and note text
are untrusted, so such a cell gets a leading apostrophe: the spreadsheet shows it as text and
a reader of the file sees what was there, one quote added. Lines end in CRLF (RFC 4180): the
csv module then quotes every cell holding a carriage return or a line feed, so a ``\r`` inside
a cell cannot end its row and start a new one with a formula.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Mapping, Sequence

# What a spreadsheet takes as the start of a formula, after any leading spaces.
FORMULA_SIGNS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# Characters that make a cell start a formula or a new field even before a sign.
FORMULA_LEADS = frozenset("\t\r\n")


def is_formula_like(text: str) -> bool:
    """Whether a spreadsheet could run ``text`` as a formula."""
    if not text:
        return False
    return text[0] in FORMULA_LEADS or text.lstrip()[:1] in FORMULA_SIGNS


def spreadsheet_safe(value: Any) -> Any:
    """A cell as written: text a spreadsheet would run gets a leading apostrophe; other values are kept."""
    if isinstance(value, str) and is_formula_like(value):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """``rows`` as CSV text: a header of ``columns``, one line per row (a missing or None value is empty),
    every cell through ``spreadsheet_safe``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([spreadsheet_safe(c) for c in columns])
    for row in rows:
        writer.writerow(["" if row.get(c) is None else spreadsheet_safe(row.get(c)) for c in columns])
    return buffer.getvalue()
