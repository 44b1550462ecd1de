"""A judged metric that does not apply to a sample says so: NaN with its reason, never 0.

A refusal ("I couldn't find information about that") states no claim, so "the share of its claims
the contexts support" is undefined: scoring it 0 (the negation rule on "couldn't") would rank an
honest refusal below a wrong answer. ``use_claims_required`` makes faithfulness raise
``NotApplicable`` for an answer whose every sentence and clause refuses
(:func:`rag_lab.evaluate.facts.key_facts.claimed_text`); the scorer records the score as missing
with that reason. (Factual correctness of a refusal stays 0: it states none of the reference's facts.)
"""

from __future__ import annotations

from types import MethodType
from typing import Any

from rag_lab.evaluate.facts.key_facts import claimed_text
from rag_lab.evaluate.judge.versions import stamp


class NotApplicable(ValueError):
    """The metric is undefined for this sample (the message says why): a missing score, not a failure
    of the judge, and asking again gives the same answer."""


def claims_nothing(answer: str) -> bool:
    """Whether ``answer`` states no claim: empty, or every sentence and clause a refusal."""
    return not claimed_text(answer or "").replace("…", " ").strip()


def use_claims_required(metric: Any) -> Any:
    """``metric`` (faithfulness) raising :class:`NotApplicable` for an answer that claims nothing;
    other metrics as they are."""
    if type(metric).__name__ != "Faithfulness":
        return metric
    scored = metric._single_turn_ascore

    async def ascore(self: Any, sample: Any, callbacks: Any) -> float:
        if claims_nothing(sample.response):
            raise NotApplicable("faithfulness does not apply: the answer states no claim (a refusal)")
        return await scored(sample, callbacks)

    metric._single_turn_ascore = MethodType(ascore, metric)
    return stamp(metric, "claims_required")
