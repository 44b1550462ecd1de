"""`dense`: cosine search on the collection's named dense vector."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.index import CorpusIndex
from rag_lab.index.manifest import DENSE_VECTOR
from rag_lab.retrieve.base import LabRetriever


def point_to_node(point) -> NodeWithScore:
    return NodeWithScore(node=metadata_dict_to_node(point.payload), score=float(point.score))


class DenseRetriever(LabRetriever):
    mode_name = "dense"

    def __init__(self, index: CorpusIndex, top_k: int = 10, score_threshold: float | None = None, **kwargs) -> None:
        self.index = index
        self.score_threshold = score_threshold
        super().__init__(top_k=top_k, **kwargs)

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        vector = self.index.embed_model.get_query_embedding(query)
        response = self.index.client.query_points(
            self.index.collection, query=vector, using=DENSE_VECTOR, limit=top_k,
            score_threshold=self.score_threshold, with_payload=True,
        )
        return [point_to_node(p) for p in response.points]
