"""Normalised Levenshtein similarity of answer and reference (RAGAS ``NonLLMStringSimilarity``)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(_ctx):
    from ragas.metrics import NonLLMStringSimilarity

    return NonLLMStringSimilarity()


SPECS = [MetricSpec("string_similarity", ("response", "reference"), _build,
                    description="1 - normalised Levenshtein distance vs the reference")]
