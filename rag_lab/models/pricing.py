"""List prices of the cloud LLMs, for cost *estimates* before a paid batch job (contextual
retrieval makes one call per chunk). USD per million tokens (input, output), standard tier, no
batch or prompt-caching discount. Prices move: check the provider's page before relying on them.

Sources (as of 2026-11): openai.com/api/pricing, groq.com/pricing, aws.amazon.com/bedrock/pricing
(us-east-1, on-demand).
"""

from __future__ import annotations

from dataclasses import dataclass

PRICES_AS_OF = "2026-11"


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


# (provider, model) → price. The local provider is free (it costs time, not money).
PRICES: dict[tuple[str, str], Price] = {
    ("openai", "gpt-5"): Price(1.25, 10.00),
    ("openai", "gpt-5-mini"): Price(0.25, 2.00),
    ("openai", "gpt-5-nano"): Price(0.05, 0.40),
    ("openai", "gpt-4.1"): Price(2.00, 8.00),
    ("openai", "gpt-4.1-mini"): Price(0.40, 1.60),
    ("openai", "gpt-4.1-nano"): Price(0.10, 0.40),
    ("openai", "gpt-4o"): Price(2.50, 10.00),
    ("openai", "gpt-4o-mini"): Price(0.15, 0.60),
    ("groq", "llama-3.3-70b-versatile"): Price(0.59, 0.79),
    ("groq", "llama-3.1-8b-instant"): Price(0.05, 0.08),
    ("groq", "openai/gpt-oss-120b"): Price(0.15, 0.75),
    ("groq", "openai/gpt-oss-20b"): Price(0.10, 0.50),
    ("bedrock", "amazon.nova-pro-v1:0"): Price(0.80, 3.20),
    ("bedrock", "amazon.nova-lite-v1:0"): Price(0.06, 0.24),
    ("bedrock", "amazon.nova-micro-v1:0"): Price(0.035, 0.14),
    ("bedrock", "anthropic.claude-3-haiku-20240307-v1:0"): Price(0.25, 1.25),
    ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0"): Price(0.80, 4.00),
}


def price_for(provider: str, model: str) -> Price | None:
    """The list price, ``Price(0, 0)`` for the local provider, ``None`` when unknown.

    Bedrock cross-region profiles (``us.amazon.nova-pro-v1:0``) are priced as their base model.
    """
    if provider == "local":
        return Price(0.0, 0.0)
    price = PRICES.get((provider, model))
    if price is None and provider == "bedrock" and model.split(".", 1)[0] in {"us", "eu", "apac", "global"}:
        price = PRICES.get((provider, model.split(".", 1)[1]))
    return price
