"""The message list of a trajectory: a Line API scroll view that renders only visible lines.

Each step (message) is rendered by the renderer registry and wrapped once per
width, expansion or search (that fixes its height); its strips are built the
first time it is drawn, and drawing costs the visible lines only, so a
200-message trajectory opens, scrolls and steps as fast as a short one.
A voice run's silent chunks (``TrajectoryDoc.folds``) take no lines and the
cursor steps over them, until ``toggle_silent`` shows them.
"""

from __future__ import annotations

from bisect import bisect_right

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tau_tui.textsafe import visible_text
from tau_tui.views.render import RenderContext, render_step, role_of
from tau_tui.views.trajectory_doc import TrajectoryDoc

GUTTER = 16  # bar (1) + step number (5) + role label (10)


def cursor_bindings(prefix: str) -> list[Binding]:
    """The keys that move a screen's trajectory cursor (its ``step(n)``, ``first`` and ``last`` actions), hidden
    from the footer, with ids under ``prefix``: every screen showing a trajectory moves through it alike."""
    return [
        Binding("j,down", "step(1)", "Next message", id=f"{prefix}.next_message", show=False),
        Binding("k,up", "step(-1)", "Previous message", id=f"{prefix}.prev_message", show=False),
        Binding("g,home", "first", "First message", id=f"{prefix}.first", show=False),
        Binding("G,end", "last", "Last message", id=f"{prefix}.last", show=False),
        Binding("pagedown,ctrl+d", "step(10)", "10 messages down", id=f"{prefix}.page_down", show=False),
        Binding("pageup,ctrl+u", "step(-10)", "10 messages up", id=f"{prefix}.page_up", show=False),
    ]


class TrajectoryView(ScrollView, can_focus=True):
    """Steps of a trajectory with a cursor; posts ``CursorMoved`` when the cursor changes."""

    COMPONENT_CLASSES = {"trajectory-view--cursor", "trajectory-view--cursor-unfocused", "trajectory-view--number"}

    DEFAULT_CSS = """
    TrajectoryView {
        background: $surface;
        overflow-x: hidden;
        scrollbar-gutter: stable;
    }
    TrajectoryView > .trajectory-view--cursor {
        background: $primary 35%;
    }
    TrajectoryView > .trajectory-view--cursor-unfocused {
        background: $primary 18%;
    }
    TrajectoryView > .trajectory-view--number {
        color: $text-muted;
    }
    """

    cursor: reactive[int] = reactive(0, init=False, repaint=False)

    class CursorMoved(Message):
        def __init__(self, view: TrajectoryView, step: int) -> None:
            super().__init__()
            self.view = view
            self.step = step

        @property
        def control(self) -> TrajectoryView:
            return self.view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.doc: TrajectoryDoc | None = None
        self.expanded: set[int] = set()
        self.expand_all = False
        self.show_silent = False
        self.terms: tuple[str, ...] = ()
        self.trailer: Text | None = None
        self._blocks: list[list[Text]] = []  # wrapped body lines of each step
        self._leads: list[int] = []  # blank separator lines at the top of each block
        self._heights: list[int] = []
        self._strips: dict[int, list[Strip]] = {}  # built when first drawn
        self._offsets: list[int] = []
        self._first_shown = 0  # the first step that takes lines: no blank line above it
        self._height = 0
        self._layout_width = 0

    # --- content ---------------------------------------------------------------------
    def set_doc(
        self, doc: TrajectoryDoc, cursor: int = 0, expanded: set[int] | None = None, trailer: Text | None = None
    ) -> None:
        self.doc = doc
        self.expanded = set(expanded or ())
        self.trailer = trailer
        self._layout_width = 0
        self._relayout()
        self.set_reactive(TrajectoryView.cursor, self._shown_near(self._clamp(cursor), 1))
        self._scroll_to_cursor(center=True)
        self.post_message(self.CursorMoved(self, self.cursor))
        self.refresh()

    def clear(self) -> None:
        """Show nothing (while the next simulation loads)."""
        self.doc = None
        self._blocks, self._leads, self._heights, self._offsets = [], [], [], []
        self._strips.clear()
        self.expanded.clear()
        self.expand_all = False
        self.set_reactive(TrajectoryView.cursor, 0)
        self.virtual_size = Size(0, 0)
        self.refresh()

    def set_terms(self, terms: tuple[str, ...]) -> None:
        if terms != self.terms:
            self.terms = terms
            self._layout_width = 0
            self._relayout()

    def toggle_expanded(self, step: int | None = None) -> None:
        step = self.cursor if step is None else step
        self.expanded ^= {step}
        self._rerender_step(step)

    def toggle_expand_all(self) -> None:
        self.expand_all = not self.expand_all
        self.expanded.clear()
        self._layout_width = 0
        self._relayout()

    def toggle_silent(self) -> None:
        """Show or fold a voice run's silent chunks; the cursor stays on its step when that stays shown."""
        self.show_silent = not self.show_silent
        self._layout_width = 0
        self._relayout()
        self.set_reactive(TrajectoryView.cursor, self._shown_near(self.cursor, 1))
        self._scroll_to_cursor(center=True)
        self.post_message(self.CursorMoved(self, self.cursor))

    def folded(self, step: int) -> bool:
        """Whether ``step`` takes no lines (a silent chunk of a voice run, while those are folded)."""
        doc = self.doc
        return not self.show_silent and doc is not None and 0 <= step < len(doc) and doc.folds(step)

    def n_folded(self) -> int:
        return 0 if self.doc is None else sum(self.folded(i) for i in range(len(self.doc)))

    def rerender(self, steps: list[int]) -> None:
        """Render these steps again (their events changed: a note was added or removed)."""
        if self.doc is None or not self._blocks:
            return
        first = self._find_first_shown()
        if first != self._first_shown:
            self._first_shown = first
            self._leads = [self._lead(i) for i in range(len(self.doc))]
        for step in steps:
            if 0 <= step < len(self._blocks):
                self._leads[step] = self._lead(step)
                self._blocks[step] = self._wrap_block(step)
                self._strips.pop(step, None)
        if steps:
            self._reindex()
            self._scroll_to_cursor()

    def is_expanded(self, step: int) -> bool:
        return self.expand_all != (step in self.expanded)

    # --- cursor -------------------------------------------------------------------------
    def _clamp(self, step: int) -> int:
        count = len(self.doc) if self.doc is not None else 0
        return max(0, min(step, count - 1)) if count else 0

    def _shown_near(self, step: int, direction: int) -> int:
        """``step``, or when it is folded the nearest shown step that way (else the other way)."""
        if self.doc is None or not self.folded(step):
            return step
        for way in (direction, -direction):
            index = step + way
            while 0 <= index < len(self.doc):
                if not self.folded(index):
                    return index
                index += way
        return step

    def move_to(self, step: int | None) -> bool:
        """Move the cursor to ``step`` (past folded steps, on the way it moves); False when there is nowhere to go."""
        if step is None or self.doc is None or not len(self.doc):
            return False
        step = self._clamp(step)
        self.cursor = self._shown_near(step, 1 if step >= self.cursor else -1)
        return True

    def watch_cursor(self, old: int, new: int) -> None:
        self._refresh_step(old)
        self._refresh_step(new)
        self._scroll_to_cursor()
        self.post_message(self.CursorMoved(self, new))

    def _scroll_to_cursor(self, center: bool = False) -> None:
        if not self._offsets:
            return
        top = self._offsets[self.cursor]
        bottom = top + self._heights[self.cursor]
        height = self.scrollable_content_region.height or 1
        y = self.scroll_offset.y
        if center:
            target = max(0, top - height // 3)
        elif top < y + 1:
            # going up past the top: jump so the cursor sits two thirds down (fewer full repaints)
            target = max(0, min(top - 1, bottom - (2 * height) // 3))
        elif bottom > y + height - 1:
            # going down past the bottom: jump so the cursor sits a third down, as long as it fits
            target = max(top - height // 3, bottom - height + 1) if bottom - top < height else top - 1
        else:
            return
        self.scroll_to(y=target, animate=False, immediate=True)

    # --- layout ---------------------------------------------------------------------------
    def _body_width(self) -> int:
        return max(self.scrollable_content_region.width - GUTTER, 20)

    def _relayout(self) -> None:
        width = self.scrollable_content_region.width
        if self.doc is None or width <= 0:
            return
        self._layout_width = width
        self._first_shown = self._find_first_shown()
        self._leads = [self._lead(i) for i in range(len(self.doc))]
        self._blocks = [self._wrap_block(i) for i in range(len(self.doc))]
        self._strips.clear()
        self._reindex()

    def _reindex(self) -> None:
        self._heights = [lead + len(block) for lead, block in zip(self._leads, self._blocks, strict=False)]
        offsets, y = [], 0
        for height in self._heights:
            offsets.append(y)
            y += height
        self._offsets = offsets
        trailer = 2 if self.trailer is not None else 0
        self._height = y + trailer
        self.virtual_size = Size(self._layout_width, self._height)
        self.refresh()

    def _rerender_step(self, step: int) -> None:
        if self.doc is None or not (0 <= step < len(self._blocks)):
            return
        self._blocks[step] = self._wrap_block(step)
        self._strips.pop(step, None)
        self._reindex()
        self._scroll_to_cursor()

    def _wrap_block(self, index: int) -> list[Text]:
        """The step's rendered events, wrapped to the body width (this fixes the block's height)."""
        assert self.doc is not None
        if self.folded(index):
            return []
        body_width = self._body_width()
        body = render_step(self.doc.steps[index], RenderContext(body_width, self.is_expanded(index), self.terms))
        return list(body.wrap(self.app.console, body_width, overflow="fold"))

    def _strips_for(self, index: int) -> list[Strip]:
        """The block's lines as strips, with gutter (role bar, number, role); built on first draw.

        The widget's base style is applied when drawing, after the cursor's, so the cursor shows.
        """
        strips = self._strips.get(index)
        if strips is not None:
            return strips
        assert self.doc is not None
        console = self.app.console
        width = self._layout_width
        label, style = role_of(self.doc.steps[index])
        number_style = self.get_component_rich_style("trajectory-view--number", partial=True)
        strips = [Strip.blank(width)] * self._leads[index]
        for n, line in enumerate(self._blocks[index]):
            gutter = Text.assemble(
                ("▌", style),
                (f"{index:>4} " if n == 0 else "     ", number_style),
                (f"{label:<9} " if n == 0 else " " * 10, "bold " + style),
            )
            gutter.append_text(line)
            segments = list(gutter.render(console, end=""))
            strips.append(Strip(segments).extend_cell_length(width))
        self._strips[index] = strips
        return strips

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._layout_width:
            self._relayout()
            self._scroll_to_cursor()

    # --- drawing --------------------------------------------------------------------------
    def _step_at(self, y: int) -> int | None:
        if not self._offsets or y < 0:
            return None
        index = bisect_right(self._offsets, y) - 1
        if index < 0 or y >= self._offsets[index] + self._heights[index]:
            return None
        return index

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        line = scroll_y + y
        width = self.scrollable_content_region.width
        if self.doc is None:
            return Strip.blank(width, self.visual_style.rich_style)
        index = self._step_at(line)
        if index is None:
            if self.trailer is not None and line == self._height - 1:
                segments = list(visible_text(self.trailer, single_line=True).render(self.app.console, end=""))
                return Strip(segments).extend_cell_length(width).apply_style(self.visual_style.rich_style)
            return Strip.blank(width, self.visual_style.rich_style)
        row = line - self._offsets[index]
        strip = self._strips_for(index)[row]
        lead = self._leads[index]
        if index == self.cursor and row >= lead:
            cursor_class = "trajectory-view--cursor" if self.has_focus else "trajectory-view--cursor-unfocused"
            strip = strip.apply_style(self.get_component_rich_style(cursor_class))
            if row == lead:
                strip = self._mark_cursor(strip)
        return strip.apply_style(self.visual_style.rich_style)

    def _lead(self, index: int) -> int:
        """A blank line before each new turn (none before a tool result: it belongs to its call)."""
        assert self.doc is not None
        return 1 if index > self._first_shown and self.doc.steps[index].role != "tool" and not self.folded(index) else 0

    def _find_first_shown(self) -> int:
        assert self.doc is not None
        return next((i for i in range(len(self.doc)) if not self.folded(i)), 0)

    @staticmethod
    def _mark_cursor(strip: Strip) -> Strip:
        """Replace the first cell (the role bar) with a cursor arrow."""
        segments = list(strip)
        if not segments:
            return strip
        first = segments[0]
        if first.text:
            segments[0] = Segment("▶" + first.text[1:], first.style)
        return Strip(segments, strip.cell_length)

    def _refresh_step(self, index: int) -> None:
        if not self._offsets or not (0 <= index < len(self._offsets)):
            return
        top = self._offsets[index] - self.scroll_offset.y
        self.refresh(Region(0, top, self.size.width, self._heights[index]))

    def on_focus(self) -> None:
        self._refresh_step(self.cursor)

    def on_blur(self) -> None:
        self._refresh_step(self.cursor)

    def on_click(self, event: events.Click) -> None:
        index = self._step_at(event.y + self.scroll_offset.y)
        if index is not None:
            if index == self.cursor and event.chain == 2:
                self.toggle_expanded(index)
            self.move_to(index)
