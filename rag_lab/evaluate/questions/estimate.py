"""``synth --dry-run``: the calls, time and cost the run would take, calling nothing.

Cached replies are checked as the run would check them (no call); the rest are estimated with the
acceptance rate of the cached ones (or ``DEFAULT_ACCEPTANCE`` before there are enough), the seconds
per call of the cached replies (or ``LOCAL_SECONDS_PER_CALL``) and the provider's list price.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rag_lab.models.llm.disk_cache import DiskCache
from rag_lab.evaluate.questions.checks import check, tokens
from rag_lab.evaluate.questions.generate import candidate
from rag_lab.evaluate.questions.kinds import REPLY_MAX_TOKENS

# Measured with the 1.5B local model on 2 cores (docs/synthetic-questions.md); refined by the cache.
LOCAL_SECONDS_PER_CALL = 15.0
DEFAULT_ACCEPTANCE = 0.6
MIN_MEASURED = 10


@dataclass(frozen=True)
class SynthEstimate:
    requested: int
    from_cache: int  # questions the cached replies already give
    calls: int
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    acceptance: float
    generator: str

    def summary(self) -> str:
        cost = "unknown (no list price)" if math.isnan(self.cost_usd) else f"${self.cost_usd:.4f}"
        return (f"synth dry run ({self.generator}): {self.requested} question(s) asked, {self.from_cache} from cached "
                f"replies; ≈ {self.calls} LLM call(s) (acceptance {self.acceptance:.0%}), ≈ {self.prompt_tokens:,} prompt + "
                f"{self.completion_tokens:,} completion tokens, ≈ {_duration(self.seconds)}, cost ≈ {cost}")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def estimate(chunks, n: int, *, kinds: tuple[str, ...], generator: str, cache_path, max_overlap: float,
             price: Any) -> SynthEstimate:
    cache = DiskCache(cache_path) if cache_path.exists() else None
    accepted: list[list[str]] = []
    checked = kept = 0
    seconds: list[float] = []
    prompt_words: list[int] = []
    try:
        for chunk in chunks:
            if len(accepted) >= n:
                break
            cand = candidate(chunk, kinds)
            reply = cache.get(cand.key(generator)) if cache is not None else None
            if reply is None:
                prompt_words.append(len(cand.text.split()))
                continue
            checked += 1
            seconds.append(float(reply.get("seconds") or 0.0))
            verdict = check(reply["question"], reply["answer"], chunk.text, max_overlap=max_overlap, accepted=accepted)
            if verdict.reason is None:
                kept += 1
                accepted.append(tokens(reply["question"]))
    finally:
        if cache is not None:
            cache.close()
    acceptance = kept / checked if checked >= MIN_MEASURED else DEFAULT_ACCEPTANCE
    missing = n - len(accepted)
    calls = min(len(prompt_words), math.ceil(missing / max(acceptance, 0.05))) if missing > 0 else 0
    per_call = (sum(seconds) / len(seconds)) if seconds and sum(seconds) > 0 else LOCAL_SECONDS_PER_CALL
    words = sum(prompt_words[:calls])
    prompt_tokens, completion_tokens = int(words * 1.4), calls * REPLY_MAX_TOKENS // 2
    cost = float("nan") if price is None else price.cost(prompt_tokens, completion_tokens)
    return SynthEstimate(n, len(accepted), calls, calls * per_call, prompt_tokens, completion_tokens, cost,
                         acceptance, generator)
