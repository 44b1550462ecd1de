"""Cosine similarity of answer and reference embeddings with the configured embedding model
(RAGAS ``SemanticSimilarity`` from ``ragas.metrics.collections`` over the LlamaIndex embedding the
index uses, see :mod:`rag_lab.evaluate.metrics.modern`)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(ctx):
    from ragas.metrics.collections import SemanticSimilarity

    from rag_lab.evaluate.metrics.modern import SampleMetric, settings_embedding

    # one attempt per text: the embedding client's SDK retries (the modern interface adds no retry layer)
    return SampleMetric(SemanticSimilarity(embeddings=settings_embedding(ctx.settings)), ("reference", "response"))


SPECS = [MetricSpec("semantic_similarity", ("response", "reference"), _build,
                    description="embedding cosine similarity vs the reference")]
