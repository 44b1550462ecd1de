"""`hybrid`: Qdrant-native dense + sparse fusion.

Plain mode sends one query with a dense and a sparse prefetch and RRF fusion, so the fusion runs
where the data is (inside Qdrant Edge in-process, or on the server). Explain mode sends one
batched request for the same two candidate lists and fuses them with the same formula here, so
every result carries both legs' ranks, scores and RRF terms at no extra search cost. Both modes
order equal fused scores by the one tie rule of :func:`rag_lab.fusion.tie_key` (dense leg first),
as ``fusion`` does, so the two fused modes rank identical legs identically on every engine.
``max_per_doc`` caps the chunks per document in the top-k (:mod:`rag_lab.retrieve.diversity`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.fusion import DEFAULT_RRF_K, explain_fusion, qdrant_rrf_k, rank_fused
from rag_lab.index import CorpusIndex
from rag_lab.index.backend import Hit, SparseQuery
from rag_lab.retrieve.base import LabRetriever, check_query, check_top_k
from rag_lab.retrieve.diversity import cap_results, check_max_per_doc
from rag_lab.retrieve.ties import TIE_MARGIN, stable_legs
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
        max_per_doc: int = 0,
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
        self.max_per_doc = check_max_per_doc(max_per_doc)
        super().__init__(top_k=top_k, **kwargs)

    def _query_vectors(self, query: str, dense: list[float] | None = None) -> tuple[list[float], SparseQuery | None]:
        if dense is None:
            dense = self.index.embed_model.get_query_embedding(query)
        indices, values = sparse_query_vector(self.index.tokenizer(query))
        return dense, (SparseQuery(list(indices), list(values)) if indices else None)

    def candidate_legs(self, query: str, dense_vector: list[float] | None = None
                       ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """Both legs' ranked candidates, ``[(node id, score)]`` best first, ``prefetch`` deep each
        (dense cosine, sparse BM25-with-IDF): exactly what the engine fuses. ``dense_vector``: the
        query's embedding when the caller has already computed it (batched)."""
        dense, sparse = self._query_vectors(check_query(query), dense_vector)
        dense_hits, sparse_hits = stable_legs(  # equal scores by point id: a top-p leg is a prefix of top-P
            lambda n: self.index.vectors.legs(dense, sparse, n, self.score_threshold), self.prefetch)
        return [(h.id, h.score) for h in dense_hits], [(h.id, h.score) for h in sparse_hits]

    embeds_queries = True

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        return self._search_vector(query, None, top_k)

    def _search_vector(self, query: str, vector: list[float] | None, top_k: int) -> list[NodeWithScore]:
        dense, sparse = self._query_vectors(query, vector)
        if self.explain:
            return self._search_explained(dense, sparse, top_k)
        # A few extra results, so that a tie at the cut is ordered by the tie rule, not the engine;
        # with a cap, every candidate (the cap refills the top-k from further down the fused list).
        limit = 2 * self.prefetch if self.max_per_doc else top_k + TIE_MARGIN
        hits = self.index.vectors.rrf(dense, sparse, self.prefetch, qdrant_rrf_k(self.rrf_k),
                                      [self.dense_weight, self.sparse_weight], limit, self.score_threshold)
        hits = self._order_ties(hits, dense)
        results = [NodeWithScore(node=metadata_dict_to_node(h.payload), score=float(h.score)) for h in hits]
        return cap_results(results, self.max_per_doc, top_k)

    def _order_ties(self, hits: list[Hit], dense: list[float]) -> list[Hit]:
        """Qdrant orders equal fused scores its own way; this applies the tie rule (dense rank
        first) without a second search: among tied points, a higher dense similarity is a better
        dense rank, and a point outside the dense leg is less similar than every point in it."""
        counts = Counter(h.score for h in hits)
        tied = [h.id for h in hits if counts[h.score] > 1]
        if not tied:
            return hits
        query = np.asarray(dense, dtype=np.float64)
        stored = self.index.vectors.dense_vectors(tied)
        similarity = {i: float(np.dot(query, v) / (np.linalg.norm(query) * np.linalg.norm(v) or 1.0))
                      for i, v in ((i, np.asarray(v, dtype=np.float64)) for i, v in stored.items())}
        return sorted(hits, key=lambda h: (-h.score, -similarity.get(h.id, -2.0), h.id))

    def _search_explained(self, dense, sparse, top_k: int) -> list[NodeWithScore]:
        dense_hits, sparse_hits = stable_legs(
            lambda n: self.index.vectors.legs(dense, sparse, n, self.score_threshold), self.prefetch)
        explained = explain_fusion([(h.id, h.score) for h in dense_hits], [(h.id, h.score) for h in sparse_hits],
                                   self.rrf_k, self.dense_weight, self.sparse_weight)
        ranked = rank_fused(explained)  # the tie rule plain mode applies too
        ranked = ranked if self.max_per_doc else ranked[:top_k]
        payloads = self.index.vectors.payloads([i for i, _ in ranked])
        results = []
        for point_id, explanation in ranked:
            node = metadata_dict_to_node(payloads[point_id])
            node.metadata["explanation"] = explanation.to_dict()
            results.append(NodeWithScore(node=node, score=explanation.fused_score))
        return cap_results(results, self.max_per_doc, top_k)
