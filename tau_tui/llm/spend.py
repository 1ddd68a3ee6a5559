"""What a reply used and what it cost, in one place for both transports.

``usage`` reads the token counts off the reply's JSON (the provider's as it came, or litellm's response as
JSON). ``reply_cost`` is litellm's price of the reply whichever transport carried it, 0.0 for a model
litellm cannot price (as in tau2), so a cost never differs with the way the call went: litellm's own figure
when litellm made the call, else 0.0 for a reply naming a model its map has no price for, else litellm's
price of the JSON reply as a reply of the endpoint's provider, computed off the event loop (it imports litellm).
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

from tau_tui.llm.litellm_transport import maybe_priced, price
from tau_tui.llm.transport import Reply


def usage(reply: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A reply's token counts (whole numbers only) as a message records them; None when the reply has none."""
    counts = reply.get("usage") if reply is not None else None
    if not isinstance(counts, dict):
        return None

    def count(name: str) -> int | None:
        value = counts.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return {"completion_tokens": count("completion_tokens"), "prompt_tokens": count("prompt_tokens")}


async def reply_cost(reply: Reply) -> float:
    """The reply's cost in dollars, as litellm prices it."""
    if reply.cost is not None:
        return reply.cost
    if not maybe_priced(reply.raw.get("model")):
        return 0.0
    return await asyncio.to_thread(price, reply.raw, None, reply.provider)


__all__ = ["reply_cost", "usage"]
