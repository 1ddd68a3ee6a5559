"""A summary above a table: as tall as its content up to a share of the screen, scrolling past that.

The compare screens put their statistics, warnings and legends above the rows they summarise. On a small
terminal all of it would push the rows off the screen (a ``Static`` is as tall as its text, and clipped
past its maximum height), so this pane keeps its first lines (the statistics) in view, scrolls the rest
(tab gives it the focus) and says so in its bottom border.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual import events

from tau_tui.tui.widgets.rich_pane import RichPane

MORE_HINT = "more below: tab, then ↓"


class SummaryPane(RichPane):
    """``RichPane`` whose height follows its content, at most ``max-height``; ``render()`` gives the content."""

    DEFAULT_CSS = """
    SummaryPane {
        height: auto;
        max-height: 40%;
    }
    """

    def show(self, content: RenderableType) -> None:
        rows = len(self.lines)
        super().show(content)
        self._relayout(rows)

    def on_resize(self, event: events.Resize) -> None:
        rows = len(self.lines)
        super().on_resize(event)
        self._relayout(rows)

    def _relayout(self, rows: int) -> None:
        """Lay the screen out again when the number of lines changed (the pane's height follows it)."""
        if len(self.lines) != rows:
            self.refresh(layout=True)
        self.call_after_refresh(self._hint)

    def _hint(self) -> None:
        self.border_subtitle = MORE_HINT if len(self.lines) > self.scrollable_content_region.height else ""

    def render(self) -> RenderableType:
        """The content as given (what ``Static.render`` would give: tests and copying read it)."""
        return self.content
