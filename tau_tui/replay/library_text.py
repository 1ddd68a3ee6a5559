"""Text a library embeds in tool outputs that changes with the library's version, one registry entry each.

A recorded error such as pydantic's validation error carries pydantic's docs URL
with its version (``https://errors.pydantic.dev/2.12/v/missing``); replayed under
another pydantic the text differs though the tool did the same. Replay keeps
comparing strictly, as tau2 does; ``library_text_only`` says whether a mismatch
differs in nothing but such text. Each ``LibraryText`` rewrites exactly the
embedded text it names, in every string of the parsed outputs, so any other
difference stays a difference. A new library pattern costs one
``register_library_text`` call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from tau_tui.env.jsonify import parse_content


@dataclass(frozen=True)
class LibraryText:
    """One pattern of library-embedded text: what matches ``pattern`` is rewritten to ``replacement``.

    ``describe(recorded, replayed)`` says in a few words what differed, from the
    matches (``re.Match``) found in the recorded and in the replayed output.
    """

    name: str
    library: str
    pattern: re.Pattern[str]
    replacement: str
    describe: Callable[[list[re.Match[str]], list[re.Match[str]]], str]


LIBRARY_TEXTS: dict[str, LibraryText] = {}


def register_library_text(entry: LibraryText) -> LibraryText:
    """Add (or replace, by name) a pattern; entries apply in registration order."""
    LIBRARY_TEXTS[entry.name] = entry
    return entry


def _versions(matches: list[re.Match[str]]) -> str:
    found = sorted({m.group("version") for m in matches})
    return "/".join(found) if found else "none"


register_library_text(
    LibraryText(
        "pydantic_docs_url_version",
        "pydantic",
        re.compile(r"(?<=https://errors\.pydantic\.dev/)(?P<version>\d+(?:\.\d+)*)(?=/v/)"),
        "<version>",
        lambda recorded, replayed: f"pydantic's docs-URL version ({_versions(recorded)} vs {_versions(replayed)})",
    )
)
register_library_text(
    LibraryText(
        "pydantic_further_information",
        "pydantic",
        re.compile(r"\n[ \t]*For further information visit https://errors\.pydantic\.dev/\S*"),
        "",
        lambda recorded, replayed: (
            f'pydantic\'s "For further information visit …" lines ({len(recorded)} recorded, {len(replayed)} replayed)'
        ),
    )
)


def _rewrite(value: Any, entry: LibraryText, found: list[re.Match[str]]) -> Any:
    """``value`` with the entry's pattern rewritten in every string (not in keys); matches go to ``found``."""
    if isinstance(value, str):
        found.extend(entry.pattern.finditer(value))
        return entry.pattern.sub(entry.replacement, value)
    if isinstance(value, dict):
        return {key: _rewrite(item, entry, found) for key, item in value.items()}
    if isinstance(value, list):
        return [_rewrite(item, entry, found) for item in value]
    return value


def _apply(before: Any, after: Any, entries: list[LibraryText]) -> tuple[bool, list[str]]:
    """Whether both sides are equal once ``entries`` are rewritten in turn, and what each rewrite found."""
    said = []
    for entry in entries:
        in_recorded: list[re.Match[str]] = []
        in_replayed: list[re.Match[str]] = []
        before, after = _rewrite(before, entry, in_recorded), _rewrite(after, entry, in_replayed)
        said.append(entry.describe(in_recorded, in_replayed))
    return before == after, said


def library_text_only(recorded: str | None, replayed: str | None) -> list[str] | None:
    """What library text the two outputs differ in, when that is all they differ in; None otherwise.

    Outputs are compared as replay compares them (parsed JSON, else the text).
    The entries apply one after another until both sides are equal; then any
    entry the others do without is dropped, so the answer names only what differed.
    """
    if recorded is None or replayed is None:
        return None
    before, after = parse_content(recorded), parse_content(replayed)
    if before == after:
        return None
    entries = list(LIBRARY_TEXTS.values())
    needed = next((entries[:n] for n in range(1, len(entries) + 1) if _apply(before, after, entries[:n])[0]), None)
    if needed is None:
        return None
    for entry in list(needed):
        fewer = [e for e in needed if e is not entry]
        if fewer and _apply(before, after, fewer)[0]:
            needed = fewer
    return _apply(before, after, needed)[1]
