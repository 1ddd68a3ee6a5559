"""A footer that shows only the keys that fit whole: at 80 columns the last ones give way, none is cut mid-word."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Footer


def _outer_width(widget: Widget) -> int:
    """The cells ``widget`` takes in the footer's row: its text, padding, border and margins."""
    content = widget.get_content_width(Size(0, 0), Size(0, 0))
    return content + widget.styles.gutter.width + widget.styles.margin.width


class FittingFooter(Footer):
    """``Footer`` that hides, whole, the keys past its width (they stay in the command palette and on ``?``).

    Textual's footer lets its row run past the edge, so the last key shown is cut in the middle of
    its description; here the keys are kept in order while they fit beside the palette key.
    """

    async def recompose(self) -> None:
        await super().recompose()
        self.fit_keys()

    def on_resize(self) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        items = [child for child in self.children if not child.has_class("-command-palette")]
        palette = [child for child in self.children if child.has_class("-command-palette")]
        room = self.size.width - sum(_outer_width(child) for child in palette)
        for child in items:
            width = _outer_width(child)
            child.display = width <= room
            room = room - width if child.display else -1  # once one does not fit, none after it shows

    @property
    def shown_keys(self) -> list[str]:
        """The keys of the items shown, in order (the palette key last)."""
        return [getattr(child, "key", "") for child in self.children if child.display]
