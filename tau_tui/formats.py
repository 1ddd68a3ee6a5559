"""How values are written, once, for every front end: rewards, averages, rates, money, durations, sizes.

Each takes ``missing``: what a value that is not there reads as (the TUI's "—", the CLI's "-" or "n/a").
Plain strings only (the TUI styles them). Imports nothing.
"""

from __future__ import annotations

DASH = "—"


def reward(value: float | None, missing: str = DASH) -> str:
    """A reward as recorded: ``1``, ``0``, ``0.5`` (shortest exact form)."""
    return missing if value is None else f"{value:g}"


def short_reward(value: float | None, missing: str = DASH) -> str:
    """A reward for a narrow column: at most two decimals, no trailing zeros (``0.33``, ``1``)."""
    return missing if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def average(value: float | None, missing: str = DASH) -> str:
    """A mean reward: three decimals (``0.667``)."""
    return missing if value is None else f"{value:.3f}"


def rate(value: float | None, missing: str = DASH) -> str:
    """A pass rate or pass^k: two decimals (``0.75``)."""
    return missing if value is None else f"{value:.2f}"


def money(usd: float | None, missing: str = DASH, places: int = 4) -> str:
    """A cost in dollars: ``$0.0123``; ``places`` decimals (fewer for large sums)."""
    if usd is None:
        return missing
    return f"${usd:.{places}f}" if usd < 10 else f"${usd:.1f}"


def seconds(value: float | None, missing: str = DASH) -> str:
    """A duration: ``2.5 s``."""
    return missing if value is None else f"{value:.1f} s"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, plural unless one: ``1 file``, ``3 files`` (``plural`` for irregular nouns)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def size(n: int) -> str:
    """A byte count: ``812 B``, ``3.4 kB``."""
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB"


__all__ = ["DASH", "average", "count", "money", "rate", "reward", "seconds", "short_reward", "size"]
