"""List prices of the cloud LLMs, for cost *estimates* before a paid batch job (contextual
retrieval makes one call per chunk): each provider's row in :data:`rag_lab.config.LLM_PROVIDERS`
holds its prices (USD per million tokens, input and output; their sources and date there).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_lab.config import LLM_PROVIDERS, PRICES_AS_OF  # noqa: F401 - re-exported


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


# (provider, model) → price, as the table was loaded.
PRICES: dict[tuple[str, str], Price] = {(name, model): Price(*price) for name, spec in LLM_PROVIDERS.items()
                                        for model, price in spec.prices.items()}


def price_for(provider: str, model: str) -> Price | None:
    """The list price, ``Price(0, 0)`` for a free provider (the local one), ``None`` when unknown.

    A model named with one of its provider's regional prefixes (Bedrock's cross-region profiles,
    ``us.amazon.nova-pro-v1:0``) is priced as its base model.
    """
    spec = LLM_PROVIDERS.get(provider)
    if spec is None:
        return None
    if spec.free:
        return Price(0.0, 0.0)
    price = spec.prices.get(model)
    prefix, _, base = model.partition(".")
    if price is None and prefix in spec.regional_prefixes:
        price = spec.prices.get(base)
    return None if price is None else Price(*price)
