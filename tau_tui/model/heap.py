"""The heap policy of long-lived data, in one place.

Loaded runs, their analyses and domain DBs live as long as the process that loaded them (the TUI, a
worker). Left tracked, every full collection walks all of them (about 250 ms with the whole corpus open),
and one landing during a cursor step shows as a stall. Frozen objects are still freed by refcounting when
nothing refers to them any more.
"""

from __future__ import annotations

import gc


def keep_long_lived(collect: bool = False) -> None:
    """Move what is alive now out of the cycle collector's sight; ``collect``: free cycles first (after a
    burst of short-lived work, such as a batch of replays)."""
    if collect:
        gc.collect()
    gc.freeze()
