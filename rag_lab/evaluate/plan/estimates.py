"""What an evaluation will cost before it starts: LLM calls, tokens, time and money (``--dry-run``),
and each sample's estimate for ``--max-cost``. Estimates, from list prices
(``rag_lab/models/pricing.py``) and the prompt sizes the engines build; nothing is called or loaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rag_lab.answer.engine import DEFAULT_TOP_K
from rag_lab.answer.rerank import DEFAULT_TOP_N
from rag_lab.retrieve.registry import is_agent, ranks_itself
from rag_lab.models.pricing import price_for

TOKENS_PER_WORD = 1.35
ANSWER_OVERHEAD_TOKENS = 350  # instructions, citations format, the question
EXPECTED_ANSWER_TOKENS = 150
RERANK_COMPLETION_TOKENS = 40
AGENT_CALLS = 3  # plan, search, answer (a typical turn)
# LLM calls per judged RAGAS metric and sample (context precision asks once per context).
JUDGE_CALLS = {"faithfulness": 2, "response_relevancy": 1, "llm_context_recall": 1, "factual_correctness": 3}
JUDGE_PROMPT_TOKENS = 900
JUDGE_COMPLETION_TOKENS = 250
REMOTE_SECONDS_PER_CALL = 1.5
LOCAL_SECONDS_PER_ANSWER = 60.0  # Qwen2.5-Coder-1.5B on 2 CPU cores, a long prompt (benchmarks/answer_latency.py)
# The local judge (the 1.5B GGUF, constrained calls, 2 threads of the 2-core machine) is timed per
# judged metric and sample, not per call (a grounded-NLI judgment's calls are long, and their number
# varies): faithfulness 89 s and factual_correctness 103 s wall per judgment, grounded NLI, dev
# questions 1–10 of judge_validation.jsonl (benchmarks/judge_validation.py --limit 10;
# README "judge validation" table, whose held-out rows measure 109 and 147 s). The three metrics that
# benchmark does not time: from `rag-lab eval texas_childcare --modes bm25 --limit 2 --judge local`
# (docs/evaluation.md): 25.5 min wall for 2 samples × 5 judged metrics, less the 2 answers
# at LOCAL_SECONDS_PER_ANSWER → (1,530 − 120) / 10 ≈ 141 s per judged metric.
LOCAL_JUDGE_SECONDS = {"faithfulness": 89.0, "factual_correctness": 103.0}
LOCAL_JUDGE_SECONDS_OTHER = 141.0


@dataclass(frozen=True)
class CallEstimate:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: CallEstimate) -> CallEstimate:
        return CallEstimate(self.calls + other.calls, self.prompt_tokens + other.prompt_tokens,
                            self.completion_tokens + other.completion_tokens)

    def times(self, n: int) -> CallEstimate:
        return CallEstimate(self.calls * n, self.prompt_tokens * n, self.completion_tokens * n)


def answer_calls(mode: str, *, rerank: bool, top_n: int, top_k: int, chunk_words: int,
                 context_lines: int | None) -> CallEstimate:
    words = min(chunk_words, 12 * context_lines) if context_lines else chunk_words  # compression: ~12 words a line
    prompt = int(top_n * words * TOKENS_PER_WORD) + ANSWER_OVERHEAD_TOKENS
    if is_agent(mode):
        return CallEstimate(AGENT_CALLS, AGENT_CALLS * prompt, AGENT_CALLS * EXPECTED_ANSWER_TOKENS)
    estimate = CallEstimate(1, prompt, EXPECTED_ANSWER_TOKENS)
    if rerank and not ranks_itself(mode):  # as the engine decides (bm25 is reranked too)
        estimate += CallEstimate(1, int(top_k * chunk_words * TOKENS_PER_WORD) + 200, RERANK_COMPLETION_TOKENS)
    return estimate


def judge_calls(metric_names: list[str], *, top_n: int) -> CallEstimate:
    calls = sum(top_n if name == "llm_context_precision_with_reference" else JUDGE_CALLS.get(name, 2)
                for name in metric_names)
    return CallEstimate(calls, calls * JUDGE_PROMPT_TOKENS, calls * JUDGE_COMPLETION_TOKENS)


def judge_seconds(metric_names: list[str], judging: CallEstimate, *, local: bool) -> float:
    """Wall seconds one sample's judged metrics take: the local judge by its measured seconds per
    judged metric (LOCAL_JUDGE_SECONDS), a provider judge by REMOTE_SECONDS_PER_CALL per call."""
    if local:
        return sum(LOCAL_JUDGE_SECONDS.get(name, LOCAL_JUDGE_SECONDS_OTHER) for name in metric_names)
    return judging.calls * REMOTE_SECONDS_PER_CALL


def cost_of(provider: str, model: str, estimate: CallEstimate) -> float | None:
    """USD at list prices, 0 for the local model, None when the model has no list price."""
    price = price_for(provider, model)
    return None if price is None else price.cost(estimate.prompt_tokens, estimate.completion_tokens)


@dataclass(frozen=True)
class EvalPlan:
    samples: int
    cached_answers: int
    generator: str
    judge: str | None
    answers: CallEstimate
    judging: CallEstimate
    answer_cost: float | None
    judge_cost: float | None
    seconds: float
    concurrency: int
    rate_limit_seconds: float = 0.0  # of ``seconds``: waiting for RAG_LAB_LLM_RPM (the calls cannot go faster)
    folder_note: str | None = None  # the run folder holds another run: refused, or moved aside by --force
    folder_refused: bool = False  # the real run would be refused (the folder holds another run, no --force)

    @property
    def cost_usd(self) -> float | None:
        if self.answer_cost is None or self.judge_cost is None:
            return None
        return self.answer_cost + self.judge_cost

    def summary(self) -> str:
        total = self.answers + self.judging
        cost = ("cost unknown (no list price in rag_lab/models/pricing.py for "
                f"{self.generator if self.answer_cost is None else self.judge})" if self.cost_usd is None
                else f"≈ ${self.cost_usd:.4f} at list prices")
        judge = (f"; judge {self.judge}: {self.judging.calls} call(s) (at most; cached scores cost nothing)"
                 if self.judge else "; no judge")
        return (f"dry run: {self.samples} sample(s) to run, {self.cached_answers} answer(s) cached → "
                f"{total.calls} LLM call(s): generator {self.generator}: {self.answers.calls}{judge}; "
                f"≈ {total.prompt_tokens:,} prompt + {total.completion_tokens:,} completion tokens; "
                f"≈ {self.seconds / 60:.1f} min at concurrency {self.concurrency}{self._waiting()}; {cost}. "
                "No call was made." + (f"\nrun folder: {self.folder_note}" if self.folder_note else ""))

    def _waiting(self) -> str:
        if self.rate_limit_seconds <= 0:
            return ""
        return f" (≈ {self.rate_limit_seconds / 60:.1f} min of it waiting for the rate limit, RAG_LAB_LLM_RPM)"


def estimate_seconds(generator_local: bool, answers: CallEstimate, judging: CallEstimate, concurrency: int,
                     judging_seconds: float | None = None) -> float:
    """Wall seconds of a run: answers (local: LOCAL_SECONDS_PER_ANSWER each, one at a time) plus
    judging (``judging_seconds`` from :func:`judge_seconds`; without it, every call at the remote
    rate), both over ``concurrency`` samples in flight (a local model runs one at a time anyway)."""
    parallel = max(1, concurrency)
    judge = judging.calls * REMOTE_SECONDS_PER_CALL if judging_seconds is None else judging_seconds
    answer = answers.calls * LOCAL_SECONDS_PER_ANSWER if generator_local else answers.calls * REMOTE_SECONDS_PER_CALL / parallel
    return answer + judge / parallel


def rate_limited_seconds(settings, judge_cfg, answers: CallEstimate, judging: CallEstimate) -> float:
    """The least time the calls take under ``RAG_LAB_LLM_RPM``: one bucket per endpoint, so a generator and
    a judge on the same server share theirs."""
    budgets: dict[str, list[float]] = {}  # endpoint -> [calls, rpm]
    for cfg, estimate in ((settings, answers), (judge_cfg, judging)):
        if cfg is None or not cfg.llm_rpm or cfg.llm_is_local or not estimate.calls:
            continue
        entry = budgets.setdefault(str(cfg.llm_base_url or cfg.llm_provider), [0.0, cfg.llm_rpm])
        entry[0] += estimate.calls
    return max((60.0 * calls / rpm for calls, rpm in budgets.values()), default=0.0)


def finite_or(value: float | None, default: float) -> float:
    return default if value is None or not math.isfinite(value) else value


class SampleCosts:
    """Per-sample cost estimates of one mode, for ``--max-cost`` (``RunGuard``) and ``--dry-run``."""

    def __init__(self, settings, *, mode: str, rerank: bool, params: dict, judge_cfg, judge_metrics: list[str],
                 answer_cached, answer_model: tuple[str, str]) -> None:
        # the engine's defaults when the run does not set them
        top_n, top_k = int(params.get("top_n") or DEFAULT_TOP_N), int(params.get("top_k") or DEFAULT_TOP_K)
        self.answer = answer_calls(mode, rerank=rerank, top_n=top_n, top_k=top_k, chunk_words=settings.chunk_words,
                                   context_lines=settings.context_lines)
        self.judging = judge_calls(judge_metrics, top_n=top_n) if judge_cfg is not None else CallEstimate()
        self.judge_seconds = (judge_seconds(judge_metrics, self.judging, local=judge_cfg.llm_is_local)
                              if judge_cfg is not None else 0.0)
        self.answer_cost = cost_of(*answer_model, self.answer)
        self.judge_cost = (cost_of(judge_cfg.llm_provider, judge_cfg.llm_model_name, self.judging)
                           if judge_cfg is not None else 0.0)
        self.answer_cached = answer_cached  # question -> bool (a cache lookup, no call)

    @property
    def priced(self) -> bool:
        return self.answer_cost is not None and self.judge_cost is not None

    def estimate(self, item) -> float:
        pair = item[0]
        return (0.0 if self.answer_cached(pair.question) else (self.answer_cost or 0.0)) + (self.judge_cost or 0.0)

    def spent(self, record: dict, estimate: float) -> float:
        """The answer's cost from its real token usage (cached: 0) plus the judge's estimate."""
        answer = 0.0 if record.get("cached") else finite_or(record.get("cost_usd"), self.answer_cost or 0.0)
        return answer + (self.judge_cost or 0.0)
