"""Run labels that give way: the compare screens' one-line titles keep their words and numbers whole and
shorten the run labels (``model (file name)``, often longer than the screen) to what is left.

Pure rich text (no textual); the full labels are the screens' detail lines.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rich.text import Text

from tau_tui.textsafe import one_line
from tau_tui.views.layout import distinct_starts, elide, middle_elide

LABEL_FLOOR = 6  # a label shorter than this says nothing: below it the line itself is cut at its end
FILE_FLOOR = 16  # the fewest cells a file name is shown in beside its model (fewer say nothing)


def shortened(labels: Sequence[str], room: int, each: int | None = None) -> list[str]:
    """``labels`` sharing ``room`` cells (the longest shortened first), none longer than ``each``, each by
    ``short_label``."""
    labels = [one_line(label) for label in labels]
    files = [file for _, file in map(_split, labels) if file]
    starts = {**distinct_starts(labels), **distinct_starts(files)}
    widths = [min(len(label), each if each is not None else len(label)) for label in labels]
    while sum(widths) > room and max(widths) > LABEL_FLOOR:
        longest = widths.index(max(widths))
        widths[longest] -= 1
    out = [short_label(label, width, starts) for label, width in zip(labels, widths, strict=True)]
    spare = room - sum(map(len, out))  # a label may come out shorter than its share: the others take the rest
    cut = [i for i, label in enumerate(labels) if out[i] != label and len(out[i]) == widths[i]]
    if spare > 0 and cut:
        for i in cut:
            wider = min(widths[i] + spare // len(cut), each if each is not None else len(labels[i]))
            out[i] = short_label(labels[i], wider, starts)
    return out


def _split(label: str) -> tuple[str, str]:
    """``model (file name)`` as (model, file name); ("", "") for a label of another shape."""
    model, sep, rest = label.partition(" (")
    return (model, rest[:-1]) if sep and rest.endswith(")") else ("", "")


def short_label(label: str, width: int, starts: Mapping[str, int]) -> str:
    """``label`` in ``width`` cells. A ``model (file name)`` label keeps its model whole while the file name
    can keep a few cells (its part that differs from the others' names kept, as the runs table does); then
    the model is shortened and the file name left out. Other labels are shortened as ``elide`` does."""
    if len(label) <= width:
        return label
    model, file = _split(label)
    if not model:
        return elide(label, width, starts.get(label, 0))
    room = width - len(model) - len(" ()")
    if room >= FILE_FLOOR:
        return f"{model} ({elide(file, room, starts.get(file, 0))})"
    return middle_elide(model, max(width - len(" (…)"), 1)) + " (…)"


def fitted_line(pieces: Sequence[tuple[str, str, bool]], width: int) -> Text:
    """One line of ``(text, style, gives_way)`` pieces in ``width`` cells: the pieces that give way (labels)
    share what the others leave, each at least ``LABEL_FLOOR``; if even that does not fit, the line ends in
    an ellipsis."""
    fixed = sum(len(text) for text, _, gives_way in pieces if not gives_way)
    short = iter(shortened([text for text, _, gives_way in pieces if gives_way], max(width - fixed, 0)))
    line = Text(no_wrap=True, overflow="ellipsis")
    for text, style, gives_way in pieces:
        line.append(next(short) if gives_way else text, style=style)
    line.truncate(max(width, 0), overflow="ellipsis")
    return line
