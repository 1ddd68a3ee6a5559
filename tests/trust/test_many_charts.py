"""The many-runs charts as Rich text bars (``views.charts``) on a hand-made comparison: bars, the Pareto mark,
termination reasons."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console, RenderableType

from tau_tui.evaluate.cost_time import SimCostTime
from tau_tui.trust import RunSide, SideOutcome, compare_many
from tau_tui.views.charts import bar, cost_score_chart, many_charts, terminations_chart


def side(label: str, rewards: list[float], cost: float | None, termination: str = "user_stop") -> RunSide:
    outcomes = [
        SideOutcome(
            Path(f"{label}.json"),
            i,
            f"{label}-{i}",
            f"t{i // 2}",
            i % 2,
            reward,
            reward,
            termination if i else "max_steps",
            None,
            None,
            None,
            "mock",
            SimCostTime(agent_usd=cost),
        )
        for i, reward in enumerate(rewards)
    ]
    return RunSide(label, f"{label}.json", outcomes)


def text_of(renderable: RenderableType) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(renderable)
    return out.getvalue()


def test_bar_fills_eighths_of_a_cell() -> None:
    assert bar(1.0, 4) == "████" and bar(0.0, 4) == "    " and bar(0.5, 3) == "█▌ "
    assert bar(2.0, 2) == "██"  # clipped to the whole bar


def test_pareto_mark_and_terminations() -> None:
    many = compare_many(
        [
            side("base", [1, 1, 0, 0], 1.0),  # 0.5 for $4: beaten by cheap (better and cheaper)
            side("cheap", [1, 1, 1, 0], 0.5),  # 0.75 for $2: on the front
            side("best", [1, 1, 1, 1], 2.0),  # 1.0 for $8: on the front
            side("free", [1, 0, 0, 0], None),  # no recorded cost: left out
        ]
    )
    lines = text_of(cost_score_chart(many)).splitlines()
    marked = {line.split()[0] for line in lines if "◆" in line and line.startswith("[")}
    assert marked == {"[2]", "[3]"}
    assert "1 run without a recorded cost left out" in text_of(cost_score_chart(many))
    assert many.runs[0].terminations == {"max_steps": 1, "user_stop": 3}
    drawn = text_of(terminations_chart(many))
    assert "max_steps" in drawn and "user_stop" in drawn
    assert "pass^k against k" in text_of(many_charts(many))
