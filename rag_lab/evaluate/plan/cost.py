"""Token cost of a recorded LLM call in USD, from the one price table (:mod:`rag_lab.models.pricing`,
which the dry run's estimate reads too); local models cost 0.

Unknown cloud models give NaN (unknown), never a silent zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag_lab.models.pricing import Price


def price_of(model_id: str) -> "Price | None":
    """The list price of ``model_id`` — ``provider:model``, or ``provider@endpoint:model`` elsewhere
    than the provider's default (:func:`rag_lab.models.llm.identity.llm_name`): unpriced (None),
    except a region (Bedrock's), which keeps the model's list price."""
    from rag_lab.config import LLM_PROVIDERS
    from rag_lab.models.pricing import price_for

    head, _, model = model_id.partition(":")
    provider, _, endpoint = head.partition("@")
    spec = LLM_PROVIDERS.get(provider)
    if endpoint and not (spec and spec.region_endpoint):  # another server behind the name: not the list price
        return None
    return price_for(provider, model) if model else None


def priced_cost(price: "Price | None", prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of a call at ``price`` (NaN when unpriced)."""
    return float("nan") if price is None else price.cost(prompt_tokens, completion_tokens)


def cost_usd(model_id: str, prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of a call of ``model_id`` (:func:`price_of`)."""
    return priced_cost(price_of(model_id), prompt_tokens, completion_tokens)
