"""The help screen's legend: pills, recorded vs derived, the runs table's columns, the process flags.

Every part comes from its registry (``render.PILL_HELP``, ``columns.COLUMNS``, the detectors), so a new
entry there shows here without an edit.
"""

from __future__ import annotations

from rich.text import Text

from tau_tui.catalog import flag_legend
from tau_tui.views.columns import column_legend
from tau_tui.views.render import PILL_HELP, pill


def help_legend() -> Text:
    text = Text("tool-call pills\n", style="bold underline")
    for name, meaning in PILL_HELP.items():
        text.append_text(pill(name))
        text.append(f"  {meaning}\n")
    text.append("\nrecorded vs derived\n", style="bold underline")
    text.append("Columns and panels marked ")
    text.append("recorded", style="bold blue")
    text.append(" show what the file says; ")
    text.append("derived (*)", style="bold magenta")
    text.append(" shows what tau-tui's own replay and evaluator found. They are never mixed.\n")
    text.append("\nruns-table columns\n", style="bold underline")
    text.append_text(column_legend())
    text.append(
        "\n\nprocess flags (flags* column; ⚑ in a trajectory's footer: the same count)\n", style="bold underline"
    )
    for letter, kind, description in flag_legend():
        text.append(letter, style="bold cyan")
        text.append(f"  {kind}", style="bold")
        text.append(f"  {description}\n")
    text.rstrip()
    return text
