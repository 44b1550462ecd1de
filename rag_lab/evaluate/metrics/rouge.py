"""ROUGE-L F1 of the answer against the reference answer (RAGAS ``RougeScore``)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(_ctx):
    from ragas.metrics import RougeScore

    return RougeScore(rouge_type="rougeL", mode="fmeasure")


SPECS = [MetricSpec("rouge_l", ("response", "reference"), _build, description="ROUGE-L F1 vs the reference")]
