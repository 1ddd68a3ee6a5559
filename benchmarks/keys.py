"""Key press → the runs table's cursor moved, timed by the table's own cursor watcher (not Pilot's waiting)."""

from __future__ import annotations

import time
from typing import Any


class CursorTimer:
    """Wraps ``table.watch_cursor_row`` until ``close``; ``press`` gives the seconds one key took to move it."""

    def __init__(self, table: Any):
        self.table = table
        self._watcher = table.watch_cursor_row
        self._moved: list[float] = []

        def timed_watch(old: int, new: int) -> None:
            self._moved.append(time.perf_counter())
            self._watcher(old, new)

        table.watch_cursor_row = timed_watch

    async def press(self, pilot: Any, key: str = "j") -> float | None:
        """Seconds from pressing ``key`` to the cursor moving; None when it did not move."""
        self._moved.clear()
        start = time.perf_counter()
        await pilot.press(key)
        return self._moved[0] - start if self._moved else None

    async def presses(self, pilot: Any, n: int, key: str = "j") -> list[float]:
        times = [await self.press(pilot, key) for _ in range(n)]
        return [t for t in times if t is not None]

    def close(self) -> None:
        self.table.watch_cursor_row = self._watcher
