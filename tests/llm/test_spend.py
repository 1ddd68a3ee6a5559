"""``llm.spend`` and ``litellm_transport.price``: a reply's token counts and litellm's price of it, one reading for a call through litellm
and one straight to its endpoint."""

from __future__ import annotations

from typing import Any

import pytest

from tau_tui.llm import litellm_transport, spend


def _reply(model: str, usage: object) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}],
        "usage": usage,
    }


def test_usage_keeps_whole_token_counts_only() -> None:
    assert spend.usage(_reply("m", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})) == {
        "completion_tokens": 5,
        "prompt_tokens": 10,
    }
    assert spend.usage(_reply("m", {"prompt_tokens": 1.5, "completion_tokens": True})) == {
        "completion_tokens": None,
        "prompt_tokens": None,
    }
    assert spend.usage(_reply("m", "many")) is None and spend.usage({}) is None and spend.usage(None) is None


def test_the_same_reply_reads_alike_as_json_and_as_litellms_response() -> None:
    litellm = litellm_transport.import_litellm()
    reply = _reply("gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000})
    response = litellm.ModelResponse(**reply)
    assert spend.usage(response.to_dict()) == spend.usage(reply) == {"completion_tokens": 1000, "prompt_tokens": 1000}
    priced = litellm.completion_cost(completion_response=response)
    assert priced > 0
    assert litellm_transport.price(reply) == pytest.approx(priced) == litellm_transport.price(response, litellm)


def test_an_unpriced_model_costs_nothing_and_a_price_litellm_gave_is_kept() -> None:
    litellm = litellm_transport.import_litellm()
    assert (
        litellm_transport.price(_reply("no-such-model-anywhere", {"prompt_tokens": 1, "completion_tokens": 1})) == 0.0
    )
    response = litellm.ModelResponse(**_reply("gpt-4o", {"prompt_tokens": 1, "completion_tokens": 1}))
    response._hidden_params = {"response_cost": 0.25}  # custom per-token prices, already applied by litellm
    assert litellm_transport.price(response, litellm) == 0.25
    response._hidden_params = {"response_cost": None}  # litellm found no price
    assert litellm_transport.price(response, litellm) == 0.0
