"""`hybrid`: Qdrant-native dense + sparse fusion.

Plain mode sends one ``query_points`` with a dense and a sparse ``Prefetch`` and an
``RrfQuery``, so the fusion runs where the data is (server side on a server). Explain mode sends
one batched request for the same two candidate lists and fuses them with the same formula here,
so every result carries both legs' ranks, scores and RRF terms at no extra search cost.
"""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from qdrant_client import models

from rag_lab.fusion import DEFAULT_RRF_K, explain_fusion, qdrant_rrf_k
from rag_lab.index import CorpusIndex
from rag_lab.index.manifest import DENSE_VECTOR, SPARSE_VECTOR
from rag_lab.retrieve.base import LabRetriever, check_top_k
from rag_lab.tokenizer import sparse_query_vector


class HybridRetriever(LabRetriever):
    mode_name = "hybrid"

    def __init__(
        self,
        index: CorpusIndex,
        top_k: int = 10,
        prefetch: int = 100,
        rrf_k: int = DEFAULT_RRF_K,
        dense_weight: float = 1.0,
        sparse_weight: float = 1.0,
        explain: bool = False,
        score_threshold: float | None = None,
        **kwargs,
    ) -> None:
        if rrf_k < 0:
            raise ValueError(f"rrf_k must be ≥ 0, got {rrf_k}")
        self.index = index
        self.prefetch = check_top_k(prefetch, "prefetch")
        self.rrf_k = int(rrf_k)
        self.dense_weight = float(dense_weight)
        self.sparse_weight = float(sparse_weight)
        self.explain = explain
        self.score_threshold = score_threshold
        super().__init__(top_k=top_k, **kwargs)

    def _query_vectors(self, query: str):
        dense = self.index.embed_model.get_query_embedding(query)
        indices, values = sparse_query_vector(self.index.tokenizer(query))
        sparse = models.SparseVector(indices=indices, values=values) if indices else None
        return dense, sparse

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        dense, sparse = self._query_vectors(query)
        if self.explain:
            return self._search_explained(dense, sparse, top_k)
        prefetch = [models.Prefetch(query=dense, using=DENSE_VECTOR, limit=self.prefetch,
                                    score_threshold=self.score_threshold)]
        weights = [self.dense_weight]
        if sparse is not None:
            prefetch.append(models.Prefetch(query=sparse, using=SPARSE_VECTOR, limit=self.prefetch))
            weights.append(self.sparse_weight)
        response = self.index.client.query_points(
            self.index.collection, prefetch=prefetch,
            query=models.RrfQuery(rrf=models.Rrf(k=qdrant_rrf_k(self.rrf_k), weights=weights)),
            limit=top_k, with_payload=True,
        )
        return [NodeWithScore(node=metadata_dict_to_node(p.payload), score=float(p.score)) for p in response.points]

    def _search_explained(self, dense, sparse, top_k: int) -> list[NodeWithScore]:
        client, collection = self.index.client, self.index.collection
        requests = [models.QueryRequest(query=dense, using=DENSE_VECTOR, limit=self.prefetch,
                                        score_threshold=self.score_threshold, with_payload=False)]
        if sparse is not None:
            requests.append(models.QueryRequest(query=sparse, using=SPARSE_VECTOR, limit=self.prefetch,
                                                with_payload=False))
        legs = client.query_batch_points(collection, requests)
        dense_hits = [(p.id, p.score) for p in legs[0].points]
        sparse_hits = [(p.id, p.score) for p in legs[1].points] if sparse is not None else []
        explained = explain_fusion(dense_hits, sparse_hits, self.rrf_k, self.dense_weight, self.sparse_weight)
        # Stable sort: ties keep dense-first order, as Qdrant's fusion does.
        ranked = sorted(explained.items(), key=lambda kv: kv[1].fused_score, reverse=True)[:top_k]
        payloads = {str(p.id): p.payload for p in client.retrieve(collection, [i for i, _ in ranked], with_payload=True)}
        results = []
        for point_id, explanation in ranked:
            node = metadata_dict_to_node(payloads[str(point_id)])
            node.metadata["explanation"] = explanation.to_dict()
            results.append(NodeWithScore(node=node, score=explanation.fused_score))
        return results
