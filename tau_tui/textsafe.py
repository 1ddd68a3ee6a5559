"""Recorded text made safe to show: control characters become visible, never sent to the terminal.

A recording is untrusted input. Its contents, ids, names, arguments and error
texts may carry terminal escape sequences (clear screen, window title, OSC 8
links, OSC 52 clipboard writes), other C0/C1 controls, carriage returns,
backspaces and bidi overrides that reorder what is shown. Every front end (the
CLI's human and JSON output, every TUI renderer) cleans recorded text here,
once, where it is shown.

The convention, one character at a time:

* C0 controls (U+0000–U+001F) and DEL become their Unicode Control Pictures,
  one cell each: ESC → ``␛``, BEL → ``␇``, backspace → ``␈``, CR → ``␍``,
  NUL → ``␀``, DEL → ``␡``. Newline and tab stay in multi-line text
  (:func:`visible`); :func:`one_line` shows them too (``␊``, ``␉``), for
  table cells, ids and other single-line places. A CR directly before a
  newline is a line ending, not an overwrite, and is dropped by
  :func:`visible`.
* C1 controls (U+0080–U+009F), which have no picture, and invisible format
  characters that reorder or hide text (bidi embeddings, overrides and
  isolates, LRM/RLM/ALM, zero-width space, word joiner and invisible
  operators, BOM, interlinear annotations, line and paragraph separators)
  become escape text: ``\\x9b``, ``\\u202e``.

Zero-width joiner and non-joiner stay: emoji sequences and several scripts
need them, and they reorder nothing.

No textual import here (the core and the CLI use it); rich is imported only by
:func:`visible_text`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from rich.text import Text

_FORMAT = (
    [0x061C, 0x180E, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF, 0xE0001]
    + list(range(0x202A, 0x202F))  # LRE RLE PDF LRO RLO
    + list(range(0x2060, 0x2065))  # word joiner, invisible operators
    + list(range(0x2066, 0x2070))  # LRI RLI FSI PDI, deprecated format controls
    + list(range(0xFFF9, 0xFFFC))  # interlinear annotation
)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _table(keep_layout: bool) -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20)}
    table[0x7F] = "\u2421"
    table.update({code: _escape(code) for code in range(0x80, 0xA0)})
    table.update({code: _escape(code) for code in _FORMAT})
    if keep_layout:
        del table[0x0A], table[0x09]
    return table


MULTI_LINE: dict[int, str] = _table(keep_layout=True)
"""``str.translate`` table of :func:`visible` (newline and tab kept)."""
SINGLE_LINE: dict[int, str] = _table(keep_layout=False)
"""``str.translate`` table of :func:`one_line` (newline and tab shown too)."""


def _pattern(table: dict[int, str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(table)) + "]")


_UNSAFE_MULTI = _pattern(MULTI_LINE)
_UNSAFE_SINGLE = _pattern(SINGLE_LINE)


def visible(text: str) -> str:
    """``text`` with every control and reordering character shown (newlines and tabs kept).

    Text without any (nearly all of it) is returned as it is after one regex scan.
    """
    if not _UNSAFE_MULTI.search(text):
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(MULTI_LINE)


def one_line(text: str) -> str:
    """``text`` for a single-line place (a cell, an id, a title): newlines and tabs shown as well."""
    if not _UNSAFE_SINGLE.search(text):
        return text
    return text.translate(SINGLE_LINE)


def one_lines(texts: Iterable[str]) -> list[str]:
    """``one_line`` of each text, with one regex scan over them all when none needs a change (nearly always):
    the runs table measures a million ids this way."""
    listed = list(texts)
    if not _UNSAFE_SINGLE.search("".join(listed)):  # a character class: no match spans two texts
        return listed
    return [one_line(text) for text in listed]


def clip(text: str, limit: int, tail: str = "…", *, say_length: bool = False) -> str:
    """``text`` cut to at most ``limit`` characters, ``tail`` marking the cut (``say_length``: the tail also says
    how long the whole text was). Every clipped text of every front end is clipped here."""
    if len(text) <= limit:
        return text
    if say_length:
        tail = f"{tail} ({len(text)} chars)"
    return text[: max(limit - len(tail), 0)] + tail


def clip_json(value: Any, limit: int) -> str:
    """``value`` as one line of JSON (sorted keys, ``str`` for what JSON has no type for), clipped."""
    import json

    return clip(json.dumps(value, sort_keys=True, default=str), limit)


def has_unsafe(text: str, single_line: bool = False) -> bool:
    """Whether ``text`` holds a character :func:`visible` (or :func:`one_line`) would change."""
    return (_UNSAFE_SINGLE if single_line else _UNSAFE_MULTI).search(text) is not None


def shown(value: Any) -> str:
    """``str(value)`` made visible: for f-strings of the CLI that mix in recorded values."""
    return visible(value if isinstance(value, str) else str(value))


_JSON_UNSAFE = re.compile("[\u007f-\u009f" + "".join(re.escape(chr(c)) for c in _FORMAT) + "]")


def json_visible(serialized: str) -> str:
    """Serialised JSON with DEL, C1 and format characters written as ``\\uXXXX`` escapes.

    ``json.dumps`` and ``orjson`` escape C0 controls (ESC included) but write these raw; outside a
    string they cannot occur, inside one the escape is the same character, so the JSON stays valid and
    loads to the same value.
    """
    if not _JSON_UNSAFE.search(serialized):
        return serialized
    return _JSON_UNSAFE.sub(lambda m: _json_escape(ord(m.group())), serialized)


def _json_escape(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_line(record: Any) -> str:
    """One JSON object on one line (orjson), safe to print: the CLI's ``--json`` writer."""
    import orjson

    return json_visible(orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS).decode())


def visible_text(text: Text, single_line: bool = False) -> Text:
    """A rich ``Text`` with its plain text made visible and its styles kept on the same characters."""
    pattern = _UNSAFE_SINGLE if single_line else _UNSAFE_MULTI
    plain = text.plain
    if not pattern.search(plain):
        return text
    from rich.text import Span, Text

    table = SINGLE_LINE if single_line else MULTI_LINE
    cuts = sorted({0, len(plain)} | {s.start for s in text.spans} | {s.end for s in text.spans})
    moved: dict[int, int] = {0: 0}
    pieces: list[str] = []
    size = 0
    for start, end in zip(cuts, cuts[1:], strict=False):  # consecutive cuts
        piece = plain[start:end].translate(table)
        pieces.append(piece)
        size += len(piece)
        moved[end] = size
    spans = [Span(moved[s.start], moved[s.end], s.style) for s in text.spans]
    return Text(
        "".join(pieces),
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        spans=spans,
    )


def visible_segments(segments: list[Any], single_line: bool = True) -> list[Any]:
    """Rendered rich ``Segment``s with their text made visible (a screen line's last check).

    The list comes back as it is when nothing needs cleaning; control segments (cursor moves the
    renderer itself made) are kept.
    """
    pattern = _UNSAFE_SINGLE if single_line else _UNSAFE_MULTI
    if not any(pattern.search(segment.text) for segment in segments if not segment.control):
        return segments
    from rich.segment import Segment

    clean = one_line if single_line else visible
    return [segment if segment.control else Segment(clean(segment.text), segment.style) for segment in segments]


class _Visible:
    """Any rich renderable drawn with its control characters visible (segments cleaned as they are made)."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Any, options: Any) -> Any:
        for segment in console.render(self.renderable, options):
            yield (
                segment
                if segment.control or not has_unsafe(segment.text)
                else type(segment)(visible(segment.text), segment.style)
            )

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.renderable)


def visible_renderable(content: Any, single_line: bool = False) -> Any:
    """What a widget should be given to show ``content``: a string as plain text (never markup), a rich
    ``Text`` through :func:`visible_text`, any other renderable wrapped so its drawn text is cleaned."""
    from rich.text import Text

    if isinstance(content, str):
        return Text(one_line(content) if single_line else visible(content))
    if isinstance(content, Text):
        return visible_text(content, single_line=single_line)
    return _Visible(content)
