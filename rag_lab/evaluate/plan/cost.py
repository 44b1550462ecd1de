"""Token cost of a recorded LLM call in USD, from the one price table (:mod:`rag_lab.models.pricing`,
which the dry run's estimate reads too); local models cost 0.

Unknown cloud models give NaN (unknown), never a silent zero.
"""

from __future__ import annotations


def cost_usd(model_id: str, prompt_tokens: int, completion_tokens: int) -> float:
    """``model_id`` is ``provider:model``, or ``provider@endpoint:model`` elsewhere than the provider's
    default (:func:`rag_lab.models.llm.identity.llm_name`): unpriced, except a region (Bedrock's),
    which keeps the model's list price."""
    from rag_lab.config import LLM_PROVIDERS
    from rag_lab.models.pricing import price_for

    head, _, model = model_id.partition(":")
    provider, _, endpoint = head.partition("@")
    spec = LLM_PROVIDERS.get(provider)
    if endpoint and not (spec and spec.region_endpoint):  # another server behind the name: not the list price
        return float("nan")
    price = price_for(provider, model) if model else None
    if price is None:
        return float("nan")
    return price.cost(prompt_tokens, completion_tokens)
