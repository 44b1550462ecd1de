"""RAGAS's modern metrics (``ragas.metrics.collections``) and embedding interface, in the scorer's terms.

The scorer asks every metric for ``await metric.single_turn_ascore(sample)`` (the interface of our own
custom metrics too); a collections metric is scored with keyword arguments
(``ascore(reference=..., response=...)``) and returns a ``MetricResult``. :class:`SampleMetric` maps
one onto the other.

:class:`LlamaIndexEmbedding` is RAGAS's modern embedding interface (``BaseRagasEmbedding``, what
collections metrics accept) over the embedding model the index uses, in place of RAGAS 0.4's deprecated
LlamaIndex embeddings wrapper. RAGAS's own providers (OpenAI, Google, LiteLLM, sentence-transformers)
would build a second client (or load a second copy of the local MiniLM) with their own settings, and
have none for Bedrock; this one reuses the configured model, so the embedding a score rests on is the
one :func:`rag_lab.models.embed_model_id` names (and the judged cache key records). It makes one
attempt per text: the embedding client's SDK is the one retry layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no analytics calls
from ragas.embeddings.base import BaseRagasEmbedding  # noqa: E402


@dataclass
class SampleMetric:
    """A ``ragas.metrics.collections`` metric scored from a ``SingleTurnSample``: ``fields`` are the
    sample fields passed to its ``ascore`` as keyword arguments of the same name. The ``response`` is
    read as its statements without citation markers (:mod:`rag_lab.answer.statements`: quoted evidence
    is no part of what an answer says); an answer with no statement scores 0, as a non-answer."""

    metric: Any  # a ragas.metrics.collections.BaseMetric
    fields: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.metric.name

    async def single_turn_ascore(self, sample: Any, callbacks: Any = None) -> float:
        from rag_lab.answer.statements import split_statements
        from rag_lab.evaluate.facts.key_facts import strip_citations

        values = {field: getattr(sample, field) for field in self.fields}
        if "response" in values:
            said = split_statements(values["response"] or "")
            if said.is_non_answer:
                return 0.0
            values["response"] = " ".join(strip_citations(said.statements).split())
        result = await self.metric.ascore(**values)
        return float(result.value)


class LlamaIndexEmbedding(BaseRagasEmbedding):
    """RAGAS's modern embedding interface over a LlamaIndex ``BaseEmbedding``. Texts are embedded as
    documents (``get_text_embedding_batch``), as RAGAS's legacy wrapper did for semantic similarity, so
    scores are unchanged. ``embed_query`` / ``embed_documents`` are what RAGAS's (legacy) judged
    ``ResponseRelevancy`` reads: question as query, generated questions as documents, as before."""

    def __init__(self, model: Any) -> None:
        super().__init__(cache=None)
        self.model = model

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.model.get_text_embedding_batch([text])[0]

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        return (await self.model.aget_text_embedding_batch([text]))[0]

    def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.model.get_text_embedding_batch(list(texts))

    async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await self.model.aget_text_embedding_batch(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.model.get_query_embedding(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.get_text_embedding_batch(list(texts))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__}(...))"


def settings_embedding(settings: Any) -> LlamaIndexEmbedding:
    """The configured embedding model (``settings``) for RAGAS."""
    from rag_lab.models import get_embed_model

    return LlamaIndexEmbedding(get_embed_model(settings))
