"""ROUGE-L F1 of the answer against the reference answer (RAGAS ``RougeScore`` from
``ragas.metrics.collections``)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(_ctx):
    from ragas.metrics.collections import RougeScore

    from rag_lab.evaluate.metrics.modern import SampleMetric

    return SampleMetric(RougeScore(name="rouge_l", rouge_type="rougeL", mode="fmeasure"), ("reference", "response"))


SPECS = [MetricSpec("rouge_l", ("response", "reference"), _build, description="ROUGE-L F1 vs the reference")]
