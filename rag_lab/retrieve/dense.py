"""`dense`: cosine search on the index's named dense vector (whatever engine holds it)."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.index import CorpusIndex
from rag_lab.retrieve.base import LabRetriever
from rag_lab.retrieve.ties import stable_legs


def hit_to_node(hit) -> NodeWithScore:
    return NodeWithScore(node=metadata_dict_to_node(hit.payload), score=float(hit.score))


class DenseRetriever(LabRetriever):
    mode_name = "dense"

    def __init__(self, index: CorpusIndex, top_k: int = 10, score_threshold: float | None = None, **kwargs) -> None:
        self.index = index
        self.score_threshold = score_threshold
        super().__init__(top_k=top_k, **kwargs)

    embeds_queries = True

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        return self._search_vector(query, self.index.embed_model.get_query_embedding(query), top_k)

    def _search_vector(self, query: str, vector: list[float], top_k: int) -> list[NodeWithScore]:
        hits, = stable_legs(lambda n: [self.index.vectors.dense(vector, n, self.score_threshold)], top_k)
        return [hit_to_node(h) for h in hits]  # equal scores by point id: top-p is a prefix of top-P
