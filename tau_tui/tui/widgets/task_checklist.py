"""A list of tasks to tick: an unticked box is drawn empty.

Textual's ``SelectionList`` draws every box with its ``X``, an unticked one only dimmer, so a list of which
none is ticked reads as all ticked (on many terminals, and in any text capture). Here an unticked box is
blank and a ticked one keeps its ``X``.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

EMPTY_BOX = " "


class TaskChecklist(SelectionList[str]):
    """``SelectionList`` whose unticked boxes are empty."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        if option.value in self._selected:
            return strip
        segments = list(strip)
        if len(segments) > 1 and segments[1].text == Checkbox.BUTTON_INNER:
            segments[1] = Segment(EMPTY_BOX, segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)
