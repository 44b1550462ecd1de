"""Key-fact recall as a custom RAGAS metric: the share of the reference answer's numbers, money
amounts, percentages and codes (the sparse tokenizer's domain terms) that the answer states.

Defined only when the reference states at least one key fact."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric

from rag_lab.evaluate.key_facts import extract_key_facts, key_fact_recall
from rag_lab.evaluate.metrics.base import MetricSpec


@dataclass
class KeyFactRecall(SingleTurnMetric):
    name: str = "key_fact_recall"
    _required_columns: t.Dict[MetricType, t.Set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "reference"}})
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS

    def init(self, run_config) -> None:  # no model to set up
        pass

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks) -> float:
        score = key_fact_recall(sample.response or "", sample.reference or "")
        return float("nan") if score is None else float(score)


SPECS = [MetricSpec("key_fact_recall", ("response", "reference"), lambda _ctx: KeyFactRecall(),
                    description="share of the reference's numbers, amounts, percentages and codes stated",
                    applies=lambda sample: bool(extract_key_facts(sample.reference or "")))]
