"""Citation precision as a custom RAGAS metric: of the ``[Doc N]`` citations whose sentence
states key facts, the share whose chunk N states them (offline check, see
:mod:`rag_lab.evaluate.facts.citations`). Defined only for answers with at least one checkable citation."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric

from rag_lab.evaluate.facts.citations import check_citations
from rag_lab.evaluate.metrics.base import MetricSpec


@dataclass
class CitationPrecision(SingleTurnMetric):
    name: str = "citation_precision"
    _required_columns: t.Dict[MetricType, t.Set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "retrieved_contexts"}})
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS

    def init(self, run_config) -> None:
        pass

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks) -> float:
        precision = check_citations(sample.response or "", list(sample.retrieved_contexts or [])).precision
        return float("nan") if precision is None else precision


def _checkable(sample) -> bool:
    return check_citations(sample.response or "", list(sample.retrieved_contexts or [])).checked > 0


SPECS = [MetricSpec("citation_precision", ("response", "retrieved_contexts"), lambda _ctx: CitationPrecision(),
                    description="cited chunks that state the citing sentence's key facts", applies=_checkable)]
