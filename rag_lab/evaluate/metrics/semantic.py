"""Cosine similarity of answer and reference embeddings with the configured embedding model
(RAGAS ``SemanticSimilarity`` over the LlamaIndex embedding the index uses)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _build(ctx):
    from ragas.embeddings import LlamaIndexEmbeddingsWrapper
    from ragas.metrics import SemanticSimilarity

    from rag_lab.evaluate.judge.factory import single_attempt
    from rag_lab.models import get_embed_model

    # one attempt: the embedding client's SDK retries; RAGAS's default adds 10 attempts with waits up to 60 s
    return SemanticSimilarity(embeddings=LlamaIndexEmbeddingsWrapper(get_embed_model(ctx.settings),
                                                                     run_config=single_attempt()))


SPECS = [MetricSpec("semantic_similarity", ("response", "reference"), _build,
                    description="embedding cosine similarity vs the reference")]
