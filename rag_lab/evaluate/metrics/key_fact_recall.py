"""Key-fact recall and precision as custom RAGAS metrics (see :mod:`rag_lab.evaluate.facts.key_facts`).

Recall: the share of the reference answer's numbers, money amounts, percentages and codes (the
sparse tokenizer's domain terms) that the answer states, less those the question states (echoing the
question earns nothing); defined only when the reference states a fact the question does not.
Precision: the share of the answer's own facts (less the question's) that the reference states (a
dump of every number in the context keeps recall, loses precision); defined when the answer states one.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric

from rag_lab.evaluate.facts.key_facts import answer_facts, has_key_facts, key_fact_precision, key_fact_recall
from rag_lab.evaluate.metrics.base import MetricSpec


@dataclass
class _KeyFactMetric(SingleTurnMetric):
    """A key-fact score of (answer, reference, question); None (not defined) becomes NaN."""

    # "user_input:optional": RAGAS strips a sample to the declared columns before scoring; without it
    # the question (whose facts are left out) never reached the metric.
    _required_columns: t.Dict[MetricType, t.Set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "reference", "user_input:optional"}})
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS
    score_fn: t.ClassVar[t.Callable[[str, str, str], float | None]]

    def init(self, run_config) -> None:  # no model to set up
        pass

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks) -> float:
        score = type(self).score_fn(sample.response or "", sample.reference or "", sample.user_input or "")
        return float("nan") if score is None else float(score)


@dataclass
class KeyFactRecall(_KeyFactMetric):
    name: str = "key_fact_recall"
    score_fn = staticmethod(key_fact_recall)


@dataclass
class KeyFactPrecision(_KeyFactMetric):
    name: str = "key_fact_precision"
    score_fn = staticmethod(key_fact_precision)


SPECS = [
    MetricSpec("key_fact_recall", ("response", "reference"), lambda _ctx: KeyFactRecall(),
               description="share of the reference's numbers, amounts, percentages and codes stated (the question's left out)",
               applies=lambda sample: has_key_facts(sample.reference or "", sample.user_input or "")),
    MetricSpec("key_fact_precision", ("response", "reference"), lambda _ctx: KeyFactPrecision(),
               description="share of the answer's numbers, amounts, percentages and codes (the question's left out) "
                           "that the reference states",
               applies=lambda sample: bool(answer_facts(sample.response or "", sample.user_input or ""))),
]
