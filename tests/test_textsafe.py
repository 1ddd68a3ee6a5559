"""The one helper that makes recorded control characters visible (tau_tui.textsafe)."""

from __future__ import annotations

import json
import time
import unicodedata

import pytest

from tau_tui.textsafe import has_unsafe, json_line, json_visible, one_line, one_lines, visible, visible_text

HOSTILE = (
    "a\x1b[2J\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    "\x9b31m\u202eevil\u2066\b\rX\x7f\x00\x85\u2028"
)


def _raw_controls(text: str, keep: str = "\n\t") -> list[str]:
    return [
        c
        for c in text
        if c not in keep and (unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")) and c not in "\u200c\u200d"
    ]


def test_visible_leaves_no_control_or_reordering_character() -> None:
    out = visible(HOSTILE)
    assert _raw_controls(out) == []
    assert "␛[2J" in out and "␇" in out and "␈" in out and "␍" in out and "␡" in out and "␀" in out
    assert "\\x9b" in out and "\\u202e" in out and "\\u2066" in out and "\\x85" in out and "\\u2028" in out


def test_every_c0_c1_and_bidi_control_is_mapped() -> None:
    every = (
        "".join(map(chr, range(0x20)))
        + "\x7f"
        + "".join(map(chr, range(0x80, 0xA0)))
        + "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff\u200b"
    )
    assert _raw_controls(one_line(every), keep="") == []
    assert _raw_controls(visible(every)) == []


def test_newlines_and_tabs_kept_in_visible_and_shown_in_one_line() -> None:
    assert visible("a\n\tb") == "a\n\tb"
    assert one_line("a\n\tb") == "a␊␉b"
    assert visible("a\r\nb\rc") == "a\nb␍c"  # a CRLF is a line end; a lone CR would overwrite the line


def test_plain_text_unchanged_and_the_same_object() -> None:
    text = "Hello — wörld 👨‍👩‍👧 مرحبا"
    assert visible(text) is text and one_line(text) is text
    assert not has_unsafe(text) and has_unsafe("\x1b") and has_unsafe("\n", single_line=True)


def test_json_line_escapes_esc_c1_and_bidi_and_round_trips() -> None:
    record = {"content": HOSTILE, HOSTILE: [HOSTILE], "n": 1}
    line = json_line(record)
    assert _raw_controls(line, keep="") == []
    assert "\\u001b" in line and "\\u009b" in line and "\\u202e" in line
    assert json.loads(line) == record
    assert json_visible(json.dumps({"x": "\u202e"}, ensure_ascii=False)) == '{"x": "\\u202e"}'


def test_visible_text_keeps_styles_on_the_same_characters() -> None:
    from rich.text import Text

    text = Text.assemble(("ab\x1b", "red"), ("c\u202ed", "blue"), "e")
    out = visible_text(text)
    assert out.plain == "ab␛c\\u202ede"
    assert [(s.start, s.end, s.style) for s in out.spans] == [(0, 3, "red"), (3, 11, "blue")]
    assert visible_text(Text("fine")).plain == "fine"
    assert visible_text(Text("a\nb"), single_line=True).plain == "a␊b"


@pytest.mark.parametrize("dirty", [False, True])
def test_fast_on_a_long_message(dirty: bool) -> None:
    text = "the agent said something long enough " * 30_000 + ("\x1b[2J" if dirty else "")  # ~1 MB
    start = time.perf_counter()
    for _ in range(10):
        visible(text)
    per_call = (time.perf_counter() - start) / 10
    assert per_call < 0.05, f"{per_call * 1000:.1f} ms for {len(text)} chars"


def test_one_lines_is_one_line_of_each_text_scanned_at_once() -> None:
    clean = ["task_1", "sim-2", "ünïcode", ""]
    assert one_lines(clean) == clean
    hostile = ["ok", "a\x1b[31mred", "two\nlines", "tab\there", "bidi\u202eflip", "ok2"]
    assert one_lines(hostile) == [one_line(t) for t in hostile]
    assert one_lines(iter(hostile)) == [one_line(t) for t in hostile]
    assert all("\x1b" not in t and "\n" not in t for t in one_lines(hostile))
