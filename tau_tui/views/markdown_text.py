"""An agent's message as Markdown (rich's renderer), turned into a rich ``Text`` that is safe to show.

Agents write Markdown (``**economy**``, lists, tables, code); the trajectory shows it formatted. The
recorded text stays untrusted: raw HTML is shown as text (the parser has HTML off), a link or image is
shown with its address in the text and never becomes a terminal hyperlink (no link style survives),
and the caller passes text already made visible (``tau_tui.textsafe``) and checks the result again.
A line break in the message stays a line break, as in a chat. The result is a ``Text`` so that the
trajectory wraps, highlights search matches and measures it like any other message.

markdown_it and rich's Markdown are imported on first use; results are cached by text and width.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console

MARKDOWN_LIMIT = 20_000  # longer messages are shown as plain text: parsing and layout grow with length
_MARKDOWN_HINT = re.compile(r"[*_`#|>\[~<]|^\s*(?:[-+]|\d+[.)])\s", re.M)
_console: Console | None = None
_parser: Any = None


def looks_like_markdown(text: str) -> bool:
    """Whether ``text`` has anything Markdown would format (plain sentences skip the renderer)."""
    return len(text) <= MARKDOWN_LIMIT and _MARKDOWN_HINT.search(text) is not None


@lru_cache(maxsize=512)
def markdown_text(source: str, width: int) -> Text:
    """``source`` rendered as Markdown at ``width`` cells; copy it before changing it (it is cached)."""
    from rich.console import Console
    from rich.markdown import Markdown

    global _console
    if _console is None:
        import io

        _console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", legacy_windows=False)
    document = Markdown("", hyperlinks=False)
    document.markup, document.parsed = source, _tokens(source)
    out = Text()
    lines = _console.render_lines(document, _console.options.update_width(max(width, 1)), pad=False)
    for n, segments in enumerate(lines):
        line = Text()
        for segment in segments:
            if segment.control:
                continue
            style = segment.style
            line.append(segment.text, style.update_link(None) if style is not None and style.link else style)
        line.rstrip()
        if n:
            out.append("\n")
        out.append_text(line)
    out.rstrip()
    return out


def _tokens(source: str) -> list[Any]:
    """markdown_it tokens of ``source``: HTML off, line breaks kept, images as their alt text and address."""
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt

        _parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    tokens: list[Any] = _parser.parse(source)
    for token in tokens:
        children = token.children or []
        for child in children:
            if child.type == "softbreak":
                child.type = "hardbreak"
            elif child.type == "image":
                child.type, child.tag, child.children = "text", "", None
                child.content = f"[image {child.content}] ({child.attrs.get('src', '')})"
    return tokens
