"""`hybrid`: Qdrant-native dense + sparse fusion.

Plain mode sends one query with a dense and a sparse prefetch and RRF fusion, so the fusion runs
where the data is (inside Qdrant Edge in-process, or on the server). Explain mode sends one
batched request for the same two candidate lists and fuses them with the same formula here, so
every result carries both legs' ranks, scores and RRF terms at no extra search cost. Both modes
fuse the lists exactly as the engine's prefetch returns them (equal leg scores keep the engine's
positions: :meth:`HybridRetriever.engine_legs`), and order equal fused scores by the one tie rule of
:func:`rag_lab.fusion.tie_key` (dense leg first), as ``fusion`` does.
The levers come as one :class:`~rag_lab.retrieve.configuration.RetrievalConfig` (or as its field
names); the fused list goes through the one post-fusion step the ablation grid applies too
(:func:`rag_lab.retrieve.diversity.post_fusion_results`).
"""

from __future__ import annotations

from collections import Counter

from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.fusion import explain_fusion, qdrant_rrf_k, rank_fused
from rag_lab.index import CorpusIndex
from rag_lab.index.backend import Hit, SparseQuery
from rag_lab.retrieve.base import LabRetriever, check_query, checked_levers
from rag_lab.retrieve.configuration import DEFAULTS, RetrievalConfig, check_leg_weights
from rag_lab.retrieve.post_fusion import needs_whole_list
from rag_lab.retrieve.diversity import post_fusion_results
from rag_lab.retrieve.ties import TIE_MARGIN, stable_legs
from rag_lab.tokenizer import sparse_query_vector


class HybridRetriever(LabRetriever):
    mode_name = "hybrid"

    def __init__(
        self,
        index: CorpusIndex,
        config: RetrievalConfig | None = None,
        *,
        explain: bool = False,
        score_threshold: float | None = None,
        callback_manager=None,
        **levers,
    ) -> None:
        self.config = checked_levers((config or DEFAULTS).with_levers(mode=self.mode_name, **levers))
        self.index = index
        self.prefetch = self.config.prefetch
        self.fusion_k = int(self.config.fusion_k)
        self.dense_weight, self.sparse_weight = check_leg_weights(self.config.dense_weight, self.config.sparse_weight)
        self.explain = explain
        self.score_threshold = score_threshold
        self.max_per_doc = self.config.max_per_doc
        self.whole_list = needs_whole_list(self.config.post_fusion_values())
        super().__init__(top_k=self.config.top_k, callback_manager=callback_manager)

    def _post_fusion(self, results: list[NodeWithScore], top_k: int) -> list[NodeWithScore]:
        config = self.config if top_k == self.config.top_k else self.config.with_levers(top_k=top_k)
        return post_fusion_results(results, config)

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
        every = 2 * self.prefetch  # both legs' candidates: the most the engine can return
        limit = every if self.whole_list else min(top_k + TIE_MARGIN, every)
        hits = self._fused(dense, sparse, limit)
        if len(hits) == limit < every and hits[-1].score == hits[min(top_k, limit) - 1].score:
            hits = self._fused(dense, sparse, every)  # a tie runs past what was fetched (e.g. a 0-weight leg's points)
        hits = self._order_ties(hits, dense, sparse)
        results = [NodeWithScore(node=metadata_dict_to_node(h.payload), score=float(h.score)) for h in hits]
        return self._post_fusion(results, top_k)

    def _fused(self, dense, sparse, limit: int) -> list[Hit]:
        return self.index.vectors.rrf(dense, sparse, self.prefetch, qdrant_rrf_k(self.fusion_k),
                                      [self.dense_weight, self.sparse_weight], limit, self.score_threshold)

    def engine_legs(self, dense: list[float], sparse: SparseQuery | None) -> tuple[list[Hit], list[Hit]]:
        """The two lists the engine's prefetch fuses: ``prefetch`` deep each, in the engine's own order.

        Qdrant gives tied leg scores (common in the sparse leg: chunks of one length sharing a
        query term score alike) RRF positions in its own order, and which tied points make a
        top-p cut depends on p — a top-p list is not a prefix of the top-P one, but it is the same
        list every time (measured: benchmarks/grid_vs_engine.py). So the ranks that explain a
        fused score are these lists' own, not a re-sorted copy."""
        return self.index.vectors.legs(dense, sparse, self.prefetch, self.score_threshold)

    def _order_ties(self, hits: list[Hit], dense: list[float], sparse: SparseQuery | None) -> list[Hit]:
        """Qdrant orders equal fused scores at random (an unstable sort over a hash map); this applies
        the tie rule (dense rank, then sparse rank, in the lists the engine fused) with one batched
        request for those lists, made only when scores tie."""
        counts = Counter(h.score for h in hits)
        if all(n == 1 for n in counts.values()):
            return hits
        dense_hits, sparse_hits = self.engine_legs(dense, sparse)
        dense_rank = {h.id: r for r, h in enumerate(dense_hits, start=1)}
        sparse_rank = {h.id: r for r, h in enumerate(sparse_hits, start=1)}
        inf = float("inf")
        return sorted(hits, key=lambda h: (-h.score, dense_rank.get(h.id, inf), sparse_rank.get(h.id, inf), h.id))

    def _search_explained(self, dense, sparse, top_k: int) -> list[NodeWithScore]:
        dense_hits, sparse_hits = self.engine_legs(dense, sparse)  # what plain mode's prefetch fuses
        explained = explain_fusion([(h.id, h.score) for h in dense_hits], [(h.id, h.score) for h in sparse_hits],
                                   self.fusion_k, self.dense_weight, self.sparse_weight)
        ranked = rank_fused(explained)  # the tie rule plain mode applies too
        ranked = ranked if self.whole_list else ranked[:top_k]
        payloads = self.index.vectors.payloads([i for i, _ in ranked])
        results = []
        for point_id, explanation in ranked:
            node = metadata_dict_to_node(payloads[point_id])
            node.metadata["explanation"] = explanation.to_dict()
            results.append(NodeWithScore(node=node, score=explanation.fused_score))
        return self._post_fusion(results, top_k)
