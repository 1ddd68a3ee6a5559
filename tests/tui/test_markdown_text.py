"""Agent text is shown as Markdown, and stays recorded text: no control sequences, markup, HTML or
hyperlinks reach the terminal; search matches are highlighted; long messages and tool calls stay as they were."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.style import Style

from tau_tui.model.messages import ParticipantMessage, parse_message
from tau_tui.tui.screens.trajectory import TrajectoryScreen
from tau_tui.views.markdown_text import MARKDOWN_LIMIT
from tau_tui.views.render import RenderContext, render_step
from tau_tui.views.trajectory_doc import TrajectoryDoc
from tests.hostile import EVIL, MARKUP, VISIBLE_MARKS, raw_controls

from .conftest import open_sim, settle

if TYPE_CHECKING:
    from rich.text import Text

    from tests.tui.conftest import MakeApp


def shown(content: str, role: str = "assistant", width: int = 70, terms: tuple[str, ...] = ()) -> Text:
    doc = TrajectoryDoc([parse_message({"role": role, "content": content})])
    return render_step(doc.steps[0], RenderContext(width, terms=terms))


def style_at(text: Text, word: str) -> Style:
    from rich.console import Console

    return text.get_style_at_offset(Console(), text.plain.index(word))


def test_agent_markdown_is_formatted_and_line_breaks_stay() -> None:
    text = shown("We have **economy** and *basic* seats:\n- one `HAT123`\n- two\nThank you.\nBye.")
    plain = text.plain
    assert "**" not in plain and "`" not in plain and "economy" in plain
    assert style_at(text, "economy").bold and style_at(text, "basic").italic
    assert "• one HAT123" in plain and "• two" in plain
    lines = [line.strip() for line in plain.splitlines()]
    assert "Thank you." in lines and "Bye." in lines  # a line break in the message stays one


def test_user_text_and_plain_agent_text_are_left_as_written() -> None:
    assert shown("I want **economy**", role="user").plain == "I want **economy**"
    assert shown("Your flight is booked.").plain == "Your flight is booked."


def test_links_show_their_address_and_never_become_hyperlinks() -> None:
    text = shown("See [the policy](http://evil.example/p) or <http://evil.example/q> ![map](http://evil.example/m.png)")
    plain = text.plain
    assert "the policy (http://evil.example/p)" in plain and "http://evil.example/q" in plain
    assert "http://evil.example/m.png" in plain and "map" in plain
    assert not any(isinstance(span.style, Style) and span.style.link for span in text.spans)


def test_html_and_rich_markup_are_shown_as_text() -> None:
    text = shown("Click <a href='http://evil.example'>here</a> <script>alert(1)</script> **now** " + MARKUP)
    plain = text.plain
    assert "<a href='http://evil.example'>here</a>" in plain and "<script>alert(1)</script>" in plain
    assert MARKUP in plain


def test_control_sequences_in_markdown_are_drawn_visibly() -> None:
    text = shown(f"**Hello** {EVIL}\n- item {EVIL}")
    assert not raw_controls(text.plain)
    assert all(mark in text.plain for mark in VISIBLE_MARKS)


def test_search_terms_are_highlighted_in_formatted_text() -> None:
    text = shown("We have **economy** seats", terms=("economy",))
    start = text.plain.index("economy")
    assert any(span.start <= start < span.end and "yellow" in str(span.style) for span in text.spans)


def test_a_long_agent_message_is_shown_plain_and_fast() -> None:
    long = ("**row** | a | b |\n" * (MARKDOWN_LIMIT // 10))[: MARKDOWN_LIMIT * 3]
    started = time.perf_counter()
    text = shown(long)
    assert time.perf_counter() - started < 2.0
    assert text.plain.startswith("**row** | a | b |")


async def test_the_trajectory_shows_agent_markdown_and_keeps_tool_calls(make_app: MakeApp, tmp_path: Path) -> None:
    import json

    from .conftest import MOCK_DEMO

    data = json.loads(MOCK_DEMO.read_text())
    sim = data["simulations"][0]
    agent = next(m for m in sim["messages"] if m["role"] == "assistant" and m.get("content"))
    agent["content"] = "Done: your task is **created**.\n1. first\n2. second"
    path = tmp_path / "markdown.json"
    path.write_text(json.dumps(data))
    app = make_app([path])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_sim(pilot, sim["id"])
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        assert screen.doc is not None
        step = next(s.index for s in screen.doc.steps if s.message.role == "assistant" and "created" in s.message.text)
        lines = screen.view._blocks[step]
        shown_text = "\n".join(line.plain for line in lines)
        assert "**" not in shown_text and "your task is created." in shown_text and " 2 second" in shown_text
        calls = [
            s
            for s in screen.doc.steps
            if s.message.role == "assistant" and isinstance(s.message, ParticipantMessage) and s.message.tool_calls
        ]
        assert calls and all(
            screen.view._blocks[s.index][0].plain.startswith(("⚒ ", "✎ ", "≠ ", "? ")) for s in calls
        )  # tool calls keep their one-line form
