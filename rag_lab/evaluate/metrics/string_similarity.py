"""Normalised Levenshtein similarity of answer and reference (RAGAS ``NonLLMStringSimilarity`` from
``ragas.metrics.collections``)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(_ctx):
    from ragas.metrics.collections import NonLLMStringSimilarity

    from rag_lab.evaluate.metrics.modern import SampleMetric

    return SampleMetric(NonLLMStringSimilarity(name="string_similarity"), ("reference", "response"))


SPECS = [MetricSpec("string_similarity", ("response", "reference"), _build,
                    description="1 - normalised Levenshtein distance vs the reference")]
