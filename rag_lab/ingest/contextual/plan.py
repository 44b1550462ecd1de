"""What an LLM contextualisation run will cost before it starts: calls, time, and money for
cloud providers. Beyond a threshold the caller must confirm (``--yes``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.ingest.contextual.cache import ContextCache
from rag_lab.ingest.contextual.llm_context import (
    MAX_OUTPUT_TOKENS, PROMPT_OVERHEAD_TOKENS, ChunkContextualizer, ContextRequest, cut_document,
    document_budget_chars,
)
from rag_lab.models.pricing import price_for

# Beyond any of these the run needs an explicit --yes.
CONFIRM_CALLS = 200
CONFIRM_SECONDS = 15 * 60
CONFIRM_COST_USD = 0.50
# Estimation constants. Local: SmolLM2-135M on llama.cpp, 2 CPU cores (measured, see README).
LOCAL_PROMPT_TOKENS_PER_S = 900.0
LOCAL_OUTPUT_TOKENS_PER_S = 60.0
REMOTE_SECONDS_PER_CALL = 1.0
REMOTE_OUTPUT_TOKENS_PER_S = 80.0
EXPECTED_OUTPUT_TOKENS = 70  # a one- or two-sentence answer
CHARS_PER_TOKEN = {"local": 2.5}  # SmolLM2 tokenizes numbers finely; cloud tokenizers ~4 chars/token
DEFAULT_CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class ContextPlan:
    provider: str
    model: str
    chunks: int
    cached: int
    calls: int  # first attempts; retries can add up to as many again
    prompt_tokens: int  # estimated, for the calls
    completion_tokens: int  # estimated
    seconds: float  # estimated
    cost_usd: float | None  # None: a paid provider whose price we do not know

    @property
    def needs_confirmation(self) -> bool:
        if self.calls == 0:
            return False
        return (self.calls > CONFIRM_CALLS or self.seconds > CONFIRM_SECONDS
                or self.cost_usd is None or self.cost_usd > CONFIRM_COST_USD)

    def summary(self) -> str:
        if self.calls == 0:
            return f"chunk contexts: all {self.chunks} served from the cache ({self.provider}:{self.model}); no LLM call"
        if self.cost_usd is None:
            cost = "cost unknown (no list price for this model in rag_lab/models/pricing.py)"
        elif is_local(self.provider):
            cost = "no cost (local model)"
        else:
            cost = f"≈ ${self.cost_usd:.2f} at list prices"
        minutes = self.seconds / 60
        return (f"chunk contexts: {self.chunks} chunks, {self.cached} cached → {self.calls} LLM call(s) to "
                f"{self.provider}:{self.model} (+ up to {self.calls} retries); ≈ {self.prompt_tokens:,} prompt + "
                f"{self.completion_tokens:,} completion tokens; ≈ {minutes:.1f} min; {cost}")


def is_local(provider: str) -> bool:
    """The LLM provider's row says it runs here (time, not money)."""
    from rag_lab.config import LLM_PROVIDERS

    spec = LLM_PROVIDERS.get(provider)
    return bool(spec and spec.local)


def plan_contexts(requests: Sequence[ContextRequest], contextualizer: ChunkContextualizer, provider: str,
                  model: str, cache: ContextCache | None = None, context_window: int = 4096,
                  concurrency: int = 1) -> ContextPlan:
    """Estimate without calling (or loading) the model: ``context_window`` is the model's window;
    ``concurrency`` remote calls in flight divide the time (the local model answers one at a time)."""
    chars_per_token = CHARS_PER_TOKEN.get(provider, DEFAULT_CHARS_PER_TOKEN)
    todo = [r for r in requests if cache is None or not cache.contains(contextualizer.key(r))]
    prompt_tokens = 0
    for request in todo:
        budget = document_budget_chars(context_window, request.chunk, contextualizer.max_output_tokens,
                                       contextualizer.max_document_tokens)
        chars = len(cut_document(request.document, request.chunk, budget)) + len(request.chunk)
        prompt_tokens += int(chars / chars_per_token) + PROMPT_OVERHEAD_TOKENS
    completion = len(todo) * min(EXPECTED_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS)
    if is_local(provider):
        seconds = prompt_tokens / LOCAL_PROMPT_TOKENS_PER_S + completion / LOCAL_OUTPUT_TOKENS_PER_S
    else:
        seconds = (len(todo) * REMOTE_SECONDS_PER_CALL + completion / REMOTE_OUTPUT_TOKENS_PER_S) / concurrency
    price = price_for(provider, model)
    cost = price.cost(prompt_tokens, completion) if price is not None else None
    return ContextPlan(provider, model, len(requests), len(requests) - len(todo), len(todo), prompt_tokens,
                       completion, seconds, cost)
