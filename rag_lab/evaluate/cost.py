"""Token cost of cloud LLMs in USD (per million tokens, list prices 2026-11); local models cost 0.

Unknown cloud models give NaN (unknown), never a silent zero.
"""

from __future__ import annotations

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {  # (input, output)
    "openai:gpt-5-mini": (0.25, 2.00),
    "openai:gpt-5-nano": (0.05, 0.40),
    "openai:gpt-4o-mini": (0.15, 0.60),
    "groq:llama-3.3-70b-versatile": (0.59, 0.79),
    "bedrock:amazon.nova-pro-v1:0": (0.80, 3.20),
}


def cost_usd(model_id: str, prompt_tokens: int, completion_tokens: int) -> float:
    """``model_id`` is ``provider:model`` (``provider@endpoint:model`` elsewhere than the provider's
    default: unpriced, except a Bedrock region, which keeps the model's list price)."""
    if model_id.startswith("local:"):
        return 0.0
    if model_id.startswith("bedrock@"):
        model_id = "bedrock:" + model_id.split(":", 1)[1]
    price = PRICES_PER_MTOK.get(model_id)
    if price is None:
        return float("nan")
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
