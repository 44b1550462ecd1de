"""Context recall and context precision by probability verdicts (a judged eval sample, fast).

With probability verdicts faithfulness and factual correctness ask one token per statement; RAGAS's
LLM context recall and LLM context precision still asked generated JSON replies with reasons (one
reply for recall, one per retrieved context for precision) and took most of a judged sample's time
on 2 cores. Both become the same (premise, statement) verdicts, keeping RAGAS's definitions:

- **context recall** = share of the reference's sentences attributable to the contexts: the
  reference split by code (:func:`code_split.split_statements`), each sentence verified against the
  joined contexts as faithfulness verifies an answer's statement (evidence, numbers, negation and
  names rules, P(Yes)); the score is the mean P.
- **context precision** (with reference) = RAGAS's rank-weighted average precision over the contexts'
  0/1 "useful in arriving at the reference" verdicts. Here a context's usefulness is the largest P
  that it supports one of the reference's sentences (a context that states one fact the reference
  uses was useful), and the average precision is taken with those soft verdicts
  (Σᵢ vᵢ · (Σ_{j≤i} vⱼ)/i over Σ vᵢ; RAGAS's formula, which 0/1 verdicts reduce to).

A sentence the numbers rule rejects in a context costs no model call, so precision's sentences ×
contexts pairs are mostly decided by code; the model verdicts are shared with the other metrics
through the verdict store.
"""

from __future__ import annotations

from types import MethodType
from typing import Any

import numpy as np
from ragas.metrics._faithfulness import NLIStatementInput

from rag_lab.evaluate.judge.code_split import split_statements
from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt


def soft_average_precision(verdicts: list[float]) -> float:
    """RAGAS's average precision with verdicts in [0, 1] (0 when every verdict is 0, as RAGAS)."""
    total = float(sum(verdicts))
    if total <= 0:
        return 0.0
    running, numerator = 0.0, 0.0
    for rank, v in enumerate(verdicts, start=1):
        running += v
        numerator += (running / rank) * v
    return numerator / total


async def _probabilities(prompt: ProbabilityNLIPrompt, llm: Any, context: str, statements: list[str]) -> list[float]:
    reply = await prompt.generate(llm, NLIStatementInput(context=context, statements=statements))
    return [float(s.verdict) for s in reply.statements]


def _recall_ascore(prompt: ProbabilityNLIPrompt):
    async def ascore(self: Any, row: dict[str, Any], callbacks: Any) -> float:
        statements = split_statements(row["reference"])
        if not statements:
            return float("nan")
        return float(np.mean(await _probabilities(prompt, self.llm, "\n".join(row["retrieved_contexts"]), statements)))
    return ascore


def _precision_ascore(prompt: ProbabilityNLIPrompt):
    async def ascore(self: Any, row: dict[str, Any], callbacks: Any) -> float:
        statements = split_statements(row["reference"])
        if not statements or not row["retrieved_contexts"]:
            return float("nan")
        useful = []
        for context in row["retrieved_contexts"]:
            useful.append(max(await _probabilities(prompt, self.llm, context, statements)))
        return soft_average_precision(useful)
    return ascore


class ContextRecallProbabilityPrompt(ProbabilityNLIPrompt):
    """The verdict prompt as context recall's prompt (its own name: a judged score's cache key)."""

    name: str = "context_recall_probability"


class ContextPrecisionProbabilityPrompt(ProbabilityNLIPrompt):
    """The verdict prompt as context precision's prompt (its own name: a judged score's cache key)."""

    name: str = "context_precision_probability"


def use_probability_context_verdicts(metric: Any, **options: Any) -> Any:
    """``metric`` (RAGAS's LLM context recall or LLM context precision with reference) scored with
    probability verdicts; ``options`` are :class:`ProbabilityNLIPrompt`'s (evidence, numbers, store,
    negation, names, verbatim, cells). Other metrics are returned as they are."""
    from rag_lab.evaluate.judge.versions import stamp

    name = type(metric).__name__
    if name == "LLMContextRecall":
        prompt = ContextRecallProbabilityPrompt(**options)
        metric.context_recall_prompt = prompt
        metric._ascore = MethodType(_recall_ascore(prompt), metric)
        stamp(metric, "statements", *prompt.rules)  # the reference is split by code
    elif name == "LLMContextPrecisionWithReference":
        prompt = ContextPrecisionProbabilityPrompt(**options)
        metric.context_precision_prompt = prompt
        metric._ascore = MethodType(_precision_ascore(prompt), metric)
        stamp(metric, "statements", *prompt.rules)
    return metric
